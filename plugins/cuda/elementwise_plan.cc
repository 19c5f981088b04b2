#include "elementwise_plan.h"

#include <algorithm>

#include "shape_text.h"

namespace tessera {
namespace gpu {
namespace {

// A dimension of the iteration: its size and each operand's byte stride.
struct Dim {
  int64_t size;
  int64_t stride[kMaxOperands];
};

// Split appends chunks covering `dims` (outermost first) from `data`, halving the outermost
// dimension while a chunk's element count or an operand's largest byte offset exceeds `limit`.
void Split(const std::vector<Dim>& dims, char* const* data, int n, int64_t limit,
           std::vector<ElementwiseChunk>* chunks) {
  int64_t numel = 1;
  int64_t max_offset[kMaxOperands] = {};
  for (const Dim& d : dims) {
    numel *= d.size;
    for (int k = 0; k < n; ++k) max_offset[k] += (d.size - 1) * d.stride[k];
  }
  bool fits = numel <= limit;
  for (int k = 0; k < n; ++k) fits = fits && max_offset[k] <= limit;
  if (fits || dims.empty() || (dims.size() == 1 && dims[0].size == 1)) {
    ElementwiseChunk chunk;
    chunk.numel = numel;
    chunk.ndim = static_cast<int32_t>(dims.size());
    for (int k = 0; k < n; ++k) chunk.data[k] = data[k];
    for (size_t i = 0; i < dims.size(); ++i) {
      const Dim& d = dims[dims.size() - 1 - i];  // innermost first
      chunk.sizes[i] = d.size;
      for (int k = 0; k < n; ++k) chunk.strides[i][k] = d.stride[k];
    }
    chunks->push_back(chunk);
    return;
  }
  // The outermost dimension of size > 1 (a leading size-1 one cannot be split).
  size_t outer = 0;
  while (dims[outer].size == 1) ++outer;
  std::vector<Dim> part(dims.begin() + static_cast<std::ptrdiff_t>(outer), dims.end());
  const int64_t size = part[0].size;
  const int64_t half = size / 2;
  char* moved[kMaxOperands];
  part[0].size = half;
  Split(part, data, n, limit, chunks);
  for (int k = 0; k < n; ++k) moved[k] = data[k] ? data[k] + half * part[0].stride[k] : nullptr;
  part[0].size = size - half;
  Split(part, moved, n, limit, chunks);
}

}  // namespace

int64_t ElementwiseSizeOf(int32_t dtype) {
  switch (dtype) {
    case TSR_DTYPE_BOOL:
    case TSR_DTYPE_UINT8:
    case TSR_DTYPE_INT8:
      return 1;
    case TSR_DTYPE_INT16:
    case TSR_DTYPE_FLOAT16:
    case TSR_DTYPE_BFLOAT16:
      return 2;
    case TSR_DTYPE_INT32:
    case TSR_DTYPE_FLOAT32:
      return 4;
    case TSR_DTYPE_INT64:
    case TSR_DTYPE_FLOAT64:
      return 8;
    default:
      return 0;
  }
}

bool MakeElementwisePlan(const std::vector<int64_t>& shape,
                         const std::vector<OperandSpec>& operands, ElementwisePlan* plan,
                         std::string* error, int64_t max_index) {
  const int n = static_cast<int>(operands.size());
  if (n < 1 || n > kMaxOperands) {
    *error =
        "expected 1 to " + std::to_string(kMaxOperands) + " operands, got " + std::to_string(n);
    return false;
  }
  *plan = ElementwisePlan();
  plan->num_operands = n;
  plan->numel = 1;
  for (int64_t s : shape) plan->numel *= s;
  const int ndim = static_cast<int>(shape.size());
  std::vector<Dim> dims(static_cast<size_t>(ndim));
  for (int d = 0; d < ndim; ++d) dims[d].size = shape[d];
  for (int k = 0; k < n; ++k) {
    const OperandSpec& op = operands[k];
    plan->dtype[k] = op.dtype;
    plan->constant[k] = op.constant;
    plan->value[k] = op.value;
    const int64_t item = ElementwiseSizeOf(op.dtype);
    if (item == 0) {
      *error = "operand " + std::to_string(k) + " has an invalid dtype " + std::to_string(op.dtype);
      return false;
    }
    if (op.constant) {
      for (Dim& d : dims) d.stride[k] = 0;
      continue;
    }
    const int rank = static_cast<int>(op.sizes.size());
    if (rank > ndim || op.strides.size() != op.sizes.size() || (k == 0 && rank != ndim)) {
      *error = "operand " + std::to_string(k) + " of shape " + ShapeText(op.sizes) +
               " does not broadcast to " + ShapeText(shape);
      return false;
    }
    for (int d = 0; d < ndim; ++d) {
      const int od = d - (ndim - rank);  // the operand's dimension, aligned from the right
      int64_t stride = 0;
      if (od >= 0) {
        const int64_t size = op.sizes[od];
        if (size != shape[d] && size != 1) {
          *error = "operand " + std::to_string(k) + " of shape " + ShapeText(op.sizes) +
                   " does not broadcast to " + ShapeText(shape);
          return false;
        }
        if (op.strides[od] < 0) {
          *error =
              "operand " + std::to_string(k) + " has a negative stride " + ShapeText(op.strides);
          return false;
        }
        stride = size == 1 ? 0 : op.strides[od] * item;
      }
      dims[d].stride[k] = stride;
    }
  }
  if (plan->numel == 0) return true;  // nothing to launch

  // 1. Drop size-1 dimensions and merge neighbours (outermost first in `dims`).
  std::vector<Dim> merged;
  for (const Dim& d : dims) {
    if (d.size == 1) continue;
    if (!merged.empty()) {
      Dim& outer = merged.back();
      bool mergeable = true;
      for (int k = 0; k < n; ++k) mergeable = mergeable && outer.stride[k] == d.stride[k] * d.size;
      if (mergeable) {
        outer.size *= d.size;
        for (int k = 0; k < n; ++k) outer.stride[k] = d.stride[k];
        continue;
      }
    }
    merged.push_back(d);
  }
  if (merged.size() > static_cast<size_t>(kMaxDims)) {
    *error = "the operands need " + std::to_string(merged.size()) +
             " dimensions after merging, more than the GPU iterator's " + std::to_string(kMaxDims);
    return false;
  }

  // 2. The fast path: every tensor operand dense and of one dtype.
  bool contiguous = merged.size() <= 1;
  int32_t dtype = -1;
  for (int k = 0; k < n && contiguous; ++k) {
    if (operands[k].constant) continue;
    if (dtype >= 0 && operands[k].dtype != dtype) contiguous = false;
    dtype = operands[k].dtype;
    if (!merged.empty() && merged[0].stride[k] != ElementwiseSizeOf(operands[k].dtype)) {
      contiguous = false;
    }
  }
  plan->contiguous = contiguous;
  plan->dense_dtype = contiguous ? dtype : -1;

  // 3. 32-bit chunks.
  char* data[kMaxOperands] = {};
  for (int k = 0; k < n; ++k) data[k] = operands[k].constant ? nullptr : operands[k].data;
  Split(merged, data, n, max_index, &plan->chunks);
  return true;
}

}  // namespace gpu
}  // namespace tessera
