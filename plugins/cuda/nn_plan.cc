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

// DimsOf: an operand reading dims [begin, end) of an index space through its strides from
// `first` on, and where its merged strides go.
struct DimsOf {
  const NnOperand* operand;
  size_t first;
  int64_t* out;
};

// MergeDims: dims [begin, end) of `sizes` as an NnShape, fewest dims first: dims of size 1
// dropped, and a dim merged into the one before it where every operand steps through both as
// one (stride[d - 1] == stride[d] * size[d]), so that a dense group is one dim (one division
// per element). Absent operands (no strides) do not constrain the merge.
bool MergeDims(const std::vector<int64_t>& sizes, size_t begin, size_t end,
               const std::vector<DimsOf>& operands, NnShape* shape, std::string* error) {
  const size_t n = end - begin;
  auto present = [n](const DimsOf& o) { return o.operand->strides.size() >= o.first + n; };
  std::vector<int64_t> merged_sizes;
  std::vector<std::vector<int64_t>> merged_strides(operands.size());
  for (size_t d = begin; d < end; ++d) {
    if (sizes[d] == 1) continue;
    bool merge = !merged_sizes.empty();
    for (size_t k = 0; k < operands.size() && merge; ++k) {
      if (!present(operands[k])) continue;
      const int64_t stride = operands[k].operand->strides[operands[k].first + d - begin];
      merge = merged_strides[k].back() == stride * sizes[d];
    }
    if (!merge) merged_sizes.push_back(sizes[d]);
    for (size_t k = 0; k < operands.size(); ++k) {
      const int64_t stride =
          present(operands[k]) ? operands[k].operand->strides[operands[k].first + d - begin] : 0;
      if (merge) {
        merged_strides[k].back() = stride;
      } else {
        merged_strides[k].push_back(stride);
      }
    }
    if (merge) merged_sizes.back() *= sizes[d];
  }
  if (merged_sizes.size() > static_cast<size_t>(kMaxDims)) {
    *error = "the GPU kernel takes at most " + std::to_string(kMaxDims) +
             " dims here (after merging dense ones), got " + std::to_string(merged_sizes.size());
    return false;
  }
  shape->ndim = static_cast<int32_t>(merged_sizes.size());
  for (size_t i = 0; i < merged_sizes.size(); ++i) {
    shape->sizes[i] = merged_sizes[i];
    for (size_t k = 0; k < operands.size(); ++k) operands[k].out[i] = merged_strides[k][i];
  }
  return true;
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
  // weight and bias have the normalized shape only; mean and rstd the input's rank.
  if (!MergeDims(x.sizes, 0, a,
                 {{&x, 0, args->x_row},
                  {&y, 0, args->y_row},
                  {&mean, 0, args->mean_row},
                  {&rstd, 0, args->rstd_row}},
                 &args->row_shape, error) ||
      !MergeDims(x.sizes, a, nd,
                 {{&x, a, args->x_col},
                  {&y, a, args->y_col},
                  {&weight, 0, args->w_col},
                  {&bias, 0, args->b_col}},
                 &args->col_shape, error)) {
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
  if (!MergeDims(x.sizes, 2, nd, {{&x, 2, args->x_inner}, {&y, 2, args->y_inner}},
                 &args->inner_shape, error)) {
    return false;
  }
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
  if (!MergeDims(x.sizes, 0, nd - 2,
                 {{&x, 0, args->x_plane}, {&y, 0, args->y_plane}, {&indices, 0, args->i_plane}},
                 &args->plane_shape, error)) {
    return false;
  }
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
             " values each and groups > 0, got " + std::to_string(stride.size()) + ", " +
             std::to_string(padding.size()) + " and " + std::to_string(dilation.size()) +
             " values and groups=" + std::to_string(groups);
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
    *error = "expected input and output channels divisible by groups=" + std::to_string(groups) +
             ", got " + std::to_string(args->C) + " input and " + std::to_string(args->O) +
             " output channels";
    return false;
  }
  return ElementBlocks(ConvElements(*args), blocks, error);
}

}  // namespace gpu
}  // namespace tessera
