// The host side of the GPU nn ops (Note [GPU nn kernels] in nn.h): from the operands' shapes and
// strides to one launch's arguments and grid. Plain C++, tested on the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn.h"

namespace tessera {
namespace gpu {

// NnOperand: a tensor argument: its data, sizes and strides in elements. An absent optional
// operand has no data and no sizes (a present one of no elements may have no data either).
struct NnOperand {
  char* data = nullptr;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

// Each Make*Args fills *args from the operands (shapes as the op's meta function sized them)
// and returns false with *error saying why for what the kernels cannot index or run (more
// than kMaxDims dims after merging dense ones, operands of the wrong rank, stride lengths or
// groups that do not fit, batch norm's evaluation without running statistics). No size is
// refused for its grid: *blocks, the launch's grid, is at most kNnMaxBlocks and the kernels
// stride over the rows or elements past it (0: nothing to launch).

// native_layer_norm: `axis`, the first normalized dim of x; mean and rstd of x's rank.
bool MakeLayerNormArgs(const NnOperand& x, const NnOperand& y, const NnOperand& weight,
                       const NnOperand& bias, const NnOperand& mean, const NnOperand& rstd,
                       int64_t axis, double eps, LayerNormArgs* args, uint32_t* blocks,
                       std::string* error);

// native_batch_norm: x [N, C, *]; the optional operands [C] (save_*: [C] in training).
bool MakeBatchNormArgs(const NnOperand& x, const NnOperand& y, const NnOperand& weight,
                       const NnOperand& bias, const NnOperand& running_mean,
                       const NnOperand& running_var, const NnOperand& save_mean,
                       const NnOperand& save_invstd, bool training, double momentum, double eps,
                       BatchNormArgs* args, uint32_t* blocks, std::string* error);

// avg_pool2d (indices.data null) and max_pool2d_with_indices: x [*, H, W] with 1 or 2 plane
// dims, y and indices [*, OH, OW]; kernel, stride, padding, dilation as pairs (resolved).
struct PoolWindow {
  int64_t kernel[2];
  int64_t stride[2];
  int64_t padding[2];
  int64_t dilation[2];
};
bool MakePool2dArgs(const NnOperand& x, const NnOperand& y, const NnOperand& indices,
                    const PoolWindow& window, bool count_include_pad, int64_t divisor,
                    Pool2dArgs* args, uint32_t* blocks, std::string* error);

// convolution: x [N, C, *I], weight [O, C/G, *K] or (transposed) [C, O/G, *K], bias [O] or
// none, y [N, O, *Y]; 1 to 3 spatial dims; stride, padding, dilation one value per spatial dim.
bool MakeConvArgs(const NnOperand& x, const NnOperand& weight, const NnOperand& bias,
                  const NnOperand& y, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                  bool transposed, int64_t groups, ConvArgs* args, uint32_t* blocks,
                  std::string* error);

// ElementBlocks: the blocks of kNnThreads threads that cover `elements` (one thread each),
// capped at kNnMaxBlocks (the kernels' grid-stride loops take the rest); false only for a
// negative count.
bool ElementBlocks(int64_t elements, uint32_t* blocks, std::string* error);

}  // namespace gpu
}  // namespace tessera
