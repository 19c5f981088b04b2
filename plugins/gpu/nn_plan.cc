// The host side of the GPU nn ops (Note [GPU nn kernels] in nn.h).
#include "nn_plan.h"

#include <algorithm>

namespace tessera {
namespace gpu {
namespace {

int64_t Product(const std::vector<int64_t>& v, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= v[i];
  return p;
}

// Dims [begin, end) of `sizes` as an NnShape.
bool ShapeOf(const std::vector<int64_t>& sizes, size_t begin, size_t end, NnShape* shape,
             std::string* error) {
  if (end - begin > static_cast<size_t>(kMaxDims)) {
    *error = "the GPU kernel takes at most " + std::to_string(kMaxDims) + " dims here, got " +
             std::to_string(end - begin);
    return false;
  }
  shape->ndim = static_cast<int32_t>(end - begin);
  for (size_t i = begin; i < end; ++i) shape->sizes[i - begin] = sizes[i];
  return true;
}

// Strides [begin, end) of `o` into `out` (nothing for an absent operand).
void StridesOf(const NnOperand& o, size_t begin, size_t end, int64_t* out) {
  if (o.data == nullptr) return;
  for (size_t i = begin; i < end && i < o.strides.size(); ++i) out[i - begin] = o.strides[i];
}

// Blocks for `rows` rows, one each (then striding).
uint32_t RowBlocks(int64_t rows) {
  return static_cast<uint32_t>(std::min<int64_t>(rows, kNnMaxBlocks));
}

}  // namespace

bool ElementBlocks(int64_t elements, uint32_t* blocks, std::string* error) {
  if (elements < 0) {
    *error = "negative element count " + std::to_string(elements);
    return false;
  }
  *blocks = static_cast<uint32_t>(
      std::min<int64_t>((elements + kNnThreads - 1) / kNnThreads, kNnMaxBlocks));
  return true;
}

bool MakeLayerNormArgs(const NnOperand& x, const NnOperand& y, const NnOperand& weight,
                       const NnOperand& bias, const NnOperand& mean, const NnOperand& rstd,
                       int64_t axis, double eps, LayerNormArgs* args, uint32_t* blocks,
                       std::string* error) {
  *args = LayerNormArgs{};
  const size_t nd = x.sizes.size(), a = static_cast<size_t>(axis);
  if (axis < 0 || a > nd) {
    *error = "normalized dims start at " + std::to_string(axis) + " of " + std::to_string(nd);
    return false;
  }
  if (!ShapeOf(x.sizes, 0, a, &args->row_shape, error) ||
      !ShapeOf(x.sizes, a, nd, &args->col_shape, error)) {
    return false;
  }
  args->x = x.data;
  args->y = y.data;
  args->weight = weight.data;
  args->bias = bias.data;
  args->mean = mean.data;
  args->rstd = rstd.data;
  args->rows = Product(x.sizes, 0, a);
  args->cols = Product(x.sizes, a, nd);
  args->eps = eps;
  StridesOf(x, 0, a, args->x_row);
  StridesOf(y, 0, a, args->y_row);
  StridesOf(mean, 0, a, args->mean_row);
  StridesOf(rstd, 0, a, args->rstd_row);
  StridesOf(x, a, nd, args->x_col);
  StridesOf(y, a, nd, args->y_col);
  // weight and bias have the normalized shape only.
  StridesOf(weight, 0, nd - a, args->w_col);
  StridesOf(bias, 0, nd - a, args->b_col);
  *blocks = RowBlocks(args->rows);
  return true;
}

bool MakeBatchNormArgs(const NnOperand& x, const NnOperand& y, const NnOperand& weight,
                       const NnOperand& bias, const NnOperand& running_mean,
                       const NnOperand& running_var, const NnOperand& save_mean,
                       const NnOperand& save_invstd, bool training, double momentum, double eps,
                       BatchNormArgs* args, uint32_t* blocks, std::string* error) {
  *args = BatchNormArgs{};
  const size_t nd = x.sizes.size();
  if (nd < 2) {
    *error = "expected an input of at least 2 dims [N, C, ...], got " + std::to_string(nd);
    return false;
  }
  // Absent: no operand (a present one of no elements may have no data either).
  auto absent = [](const NnOperand& o) { return o.data == nullptr && o.sizes.empty(); };
  if (!training && (absent(running_mean) || absent(running_var))) {
    *error = "running_mean and running_var must be defined in evaluation mode";
    return false;
  }
  if (!ShapeOf(x.sizes, 2, nd, &args->inner_shape, error)) return false;
  args->x = x.data;
  args->y = y.data;
  args->weight = weight.data;
  args->bias = bias.data;
  args->running_mean = running_mean.data;
  args->running_var = running_var.data;
  args->save_mean = save_mean.data;
  args->save_invstd = save_invstd.data;
  args->batch = x.sizes[0];
  args->channels = x.sizes[1];
  args->inner = Product(x.sizes, 2, nd);
  args->training = training;
  args->momentum = momentum;
  args->eps = eps;
  args->x_n = x.strides[0];
  args->x_c = x.strides[1];
  args->y_n = y.strides[0];
  args->y_c = y.strides[1];
  auto stride0 = [](const NnOperand& o) {
    return o.data != nullptr && !o.strides.empty() ? o.strides[0] : 0;
  };
  args->weight_s = stride0(weight);
  args->bias_s = stride0(bias);
  args->rm_s = stride0(running_mean);
  args->rv_s = stride0(running_var);
  args->sm_s = stride0(save_mean);
  args->si_s = stride0(save_invstd);
  StridesOf(x, 2, nd, args->x_inner);
  StridesOf(y, 2, nd, args->y_inner);
  *blocks = RowBlocks(args->channels);
  return true;
}

bool MakePool2dArgs(const NnOperand& x, const NnOperand& y, const NnOperand& indices,
                    const PoolWindow& window, bool count_include_pad, int64_t divisor,
                    Pool2dArgs* args, uint32_t* blocks, std::string* error) {
  *args = Pool2dArgs{};
  const size_t nd = x.sizes.size();
  if (nd != 3 && nd != 4) {
    *error = "expected a 3D or 4D input, got " + std::to_string(nd) + " dims";
    return false;
  }
  if (!ShapeOf(x.sizes, 0, nd - 2, &args->plane_shape, error)) return false;
  args->x = x.data;
  args->y = y.data;
  args->indices = indices.data;
  args->planes = Product(x.sizes, 0, nd - 2);
  args->H = x.sizes[nd - 2];
  args->W = x.sizes[nd - 1];
  args->OH = y.sizes[nd - 2];
  args->OW = y.sizes[nd - 1];
  for (int i = 0; i < 2; ++i) {
    args->kernel[i] = window.kernel[i];
    args->stride[i] = window.stride[i];
    args->padding[i] = window.padding[i];
    args->dilation[i] = window.dilation[i];
  }
  args->count_include_pad = count_include_pad;
  args->divisor = divisor;
  StridesOf(x, 0, nd - 2, args->x_plane);
  StridesOf(y, 0, nd - 2, args->y_plane);
  StridesOf(indices, 0, nd - 2, args->i_plane);
  args->x_h = x.strides[nd - 2];
  args->x_w = x.strides[nd - 1];
  args->y_h = y.strides[nd - 2];
  args->y_w = y.strides[nd - 1];
  if (indices.data != nullptr) {
    args->i_h = indices.strides[nd - 2];
    args->i_w = indices.strides[nd - 1];
  }
  return ElementBlocks(PoolElements(*args), blocks, error);
}

bool MakeConvArgs(const NnOperand& x, const NnOperand& weight, const NnOperand& bias,
                  const NnOperand& y, const std::vector<int64_t>& stride,
                  const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation,
                  bool transposed, int64_t groups, ConvArgs* args, uint32_t* blocks,
                  std::string* error) {
  *args = ConvArgs{};
  const int dims = static_cast<int>(weight.sizes.size()) - 2;
  if (dims < 1 || dims > 3 || x.sizes.size() != weight.sizes.size() ||
      y.sizes.size() != weight.sizes.size()) {
    *error = "expected input, weight and output of 3, 4 or 5 dims alike, got " +
             std::to_string(x.sizes.size()) + ", " + std::to_string(weight.sizes.size()) + " and " +
             std::to_string(y.sizes.size());
    return false;
  }
  if (stride.size() != static_cast<size_t>(dims) || padding.size() != stride.size() ||
      dilation.size() != stride.size() || groups <= 0) {
    *error = "expected stride, padding and dilation of " + std::to_string(dims) +
             " values and groups > 0";
    return false;
  }
  args->x = x.data;
  args->w = weight.data;
  args->bias = bias.data;
  args->y = y.data;
  args->N = x.sizes[0];
  args->C = x.sizes[1];
  args->O = y.sizes[1];
  args->groups = groups;
  args->transposed = transposed;
  args->bias_s = bias.data != nullptr && !bias.strides.empty() ? bias.strides[0] : 0;
  for (int d = 0; d < 2; ++d) {
    args->xs[d] = x.strides[d];
    args->ws[d] = weight.strides[d];
    args->ys[d] = y.strides[d];
  }
  // Spatial dims right-aligned in 3 slots; a missing leading one has size 1, stride 0.
  for (int s = 0; s < 3; ++s) {
    const int d = s - (3 - dims);  // the operands' spatial dim, < 0: missing
    const bool missing = d < 0;
    args->I[s] = missing ? 1 : x.sizes[2 + d];
    args->K[s] = missing ? 1 : weight.sizes[2 + d];
    args->Y[s] = missing ? 1 : y.sizes[2 + d];
    args->xs[2 + s] = missing ? 0 : x.strides[2 + d];
    args->ws[2 + s] = missing ? 0 : weight.strides[2 + d];
    args->ys[2 + s] = missing ? 0 : y.strides[2 + d];
    args->stride[s] = missing ? 1 : stride[d];
    args->padding[s] = missing ? 0 : padding[d];
    args->dilation[s] = missing ? 1 : dilation[d];
  }
  if (args->O % groups != 0 || args->C % groups != 0) {
    *error = "expected channels divisible by groups=" + std::to_string(groups);
    return false;
  }
  return ElementBlocks(ConvElements(*args), blocks, error);
}

}  // namespace gpu
}  // namespace tessera
