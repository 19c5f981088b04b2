#include "index_plan.h"

#include <algorithm>
#include <cstring>

namespace tessera {
namespace gpu {
namespace {

// A dimension of the iteration: its size, each operand's byte stride, whether it stays apart.
struct Dim {
  int64_t size;
  int64_t strides[3];
  bool keep;
};

// Coalesce drops size-1 dimensions (unless kept) and merges an inner dimension into its outer
// neighbour where every operand steps through the pair as one. `dims` is innermost first.
std::vector<Dim> Coalesce(const std::vector<Dim>& dims, int operands) {
  std::vector<Dim> out;
  for (const Dim& d : dims) {
    if (d.size == 1 && !d.keep) continue;
    if (!out.empty() && !d.keep && !out.back().keep) {
      Dim& inner = out.back();
      bool mergeable = true;
      for (int k = 0; k < operands; ++k) {
        if (d.strides[k] != inner.strides[k] * inner.size) mergeable = false;
      }
      if (mergeable) {
        inner.size *= d.size;
        continue;
      }
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace

std::vector<int64_t> ByteStrides(const std::vector<int64_t>& strides, int64_t itemsize) {
  std::vector<int64_t> out(strides.size());
  for (size_t i = 0; i < strides.size(); ++i) out[i] = strides[i] * itemsize;
  return out;
}

bool MakeIndexArgs(const std::vector<int64_t>& shape, const IndexOperandSpec operands[3],
                   const std::vector<bool>& keep, IndexArgs* args, std::string* error) {
  IndexArgs a;
  a.numel = 1;
  for (int64_t s : shape) a.numel *= s;
  for (int k = 0; k < kIndexOperands; ++k) a.data[k] = operands[k].data;
  std::vector<Dim> dims;
  for (size_t i = shape.size(); i-- > 0;) {
    Dim d{shape[i], {0, 0, 0}, !keep.empty() && keep[i]};
    for (int k = 0; k < kIndexOperands; ++k) {
      if (i < operands[k].strides.size()) d.strides[k] = operands[k].strides[i];
    }
    dims.push_back(d);
  }
  if (a.numel == 0) {
    *args = a;
    return true;
  }
  dims = Coalesce(dims, kIndexOperands);
  if (dims.size() > static_cast<size_t>(kMaxDims)) {
    *error = "an iteration of " + std::to_string(dims.size()) +
             " dimensions after merging (the GPU kernels take at most " + std::to_string(kMaxDims) +
             ")";
    return false;
  }
  a.ndim = static_cast<int32_t>(dims.size());
  a.narrow = a.numel <= INT32_MAX;
  std::vector<int32_t> kept;
  for (int32_t d = 0; d < a.ndim; ++d) {
    a.sizes[d] = dims[d].size;
    if (a.narrow) a.fast[d] = FastDivmod(static_cast<uint32_t>(dims[d].size));
    for (int k = 0; k < kIndexOperands; ++k) a.strides[d][k] = dims[d].strides[k];
    if (dims[d].keep) kept.push_back(d);
  }
  // Innermost first: the last kept dimension of the shape (the columns) comes first.
  if (kept.size() >= 2) {
    a.col_dim = kept[0];
    a.row_dim = kept[1];
  }
  *args = a;
  return true;
}

namespace {

IndexOperandSpec Operand(const TensorSpec& t) {
  return {t.data, ByteStrides(t.strides, t.itemsize)};
}

// Restrided: t's operand with stride 0 along dim; *step receives the stride (bytes) it had.
IndexOperandSpec Restrided(const TensorSpec& t, int64_t dim, int64_t* step) {
  IndexOperandSpec o = Operand(t);
  *step = o.strides[static_cast<size_t>(dim)];
  o.strides[static_cast<size_t>(dim)] = 0;
  return o;
}

}  // namespace

bool PlanGather(const TensorSpec& out, const TensorSpec& self, const TensorSpec& index, int64_t dim,
                IndexArgs* args, std::string* error) {
  int64_t step = 0;
  const IndexOperandSpec ops[3] = {Operand(out), Restrided(self, dim, &step), Operand(index)};
  if (!MakeIndexArgs(index.sizes, ops, {}, args, error)) return false;
  args->step = step;
  args->dim_size = self.sizes[static_cast<size_t>(dim)];
  args->index_dtype = TSR_DTYPE_INT64;
  return true;
}

bool PlanIndexSelect(const TensorSpec& out, const TensorSpec& self, const TensorSpec& index,
                     int32_t index_dtype, int64_t dim, IndexArgs* args, std::string* error) {
  int64_t step = 0;
  // The index runs along `dim` only.
  IndexOperandSpec idx{index.data, std::vector<int64_t>(out.sizes.size(), 0)};
  idx.strides[static_cast<size_t>(dim)] =
      index.strides.empty() ? 0 : index.strides[0] * index.itemsize;
  const IndexOperandSpec ops[3] = {Operand(out), Restrided(self, dim, &step), idx};
  if (!MakeIndexArgs(out.sizes, ops, {}, args, error)) return false;
  args->step = step;
  args->dim_size = self.sizes[static_cast<size_t>(dim)];
  args->index_dtype = index_dtype;
  return true;
}

bool PlanScatter(const TensorSpec& out, const TensorSpec& index, const TensorSpec* src, int64_t dim,
                 IndexArgs* args, std::string* error) {
  int64_t step = 0;
  const IndexOperandSpec ops[3] = {Restrided(out, dim, &step),
                                   src != nullptr ? Operand(*src) : IndexOperandSpec{},
                                   Operand(index)};
  const uint64_t value = args->value;
  if (!MakeIndexArgs(index.sizes, ops, {}, args, error)) return false;
  args->step = step;
  args->dim_size = out.sizes[static_cast<size_t>(dim)];
  args->index_dtype = TSR_DTYPE_INT64;
  args->src_is_value = src == nullptr;
  args->value = value;
  return true;
}

bool PlanCopy(const TensorSpec& dst, const TensorSpec& src, IndexArgs* args, std::string* error) {
  const IndexOperandSpec ops[3] = {Operand(dst), Operand(src), {}};
  return MakeIndexArgs(dst.sizes, ops, {}, args, error);
}

bool PlanFlip(const TensorSpec& out, const TensorSpec& self, const std::vector<bool>& flipped,
              IndexArgs* args, std::string* error) {
  IndexOperandSpec in = Operand(self);
  for (size_t d = 0; d < self.sizes.size(); ++d) {
    if (d >= flipped.size() || !flipped[d] || self.sizes[d] <= 1) continue;
    in.data += (self.sizes[d] - 1) * in.strides[d];
    in.strides[d] = -in.strides[d];
  }
  const IndexOperandSpec ops[3] = {Operand(out), in, {}};
  return MakeIndexArgs(out.sizes, ops, {}, args, error);
}

bool PlanTri(const TensorSpec& out, const TensorSpec& self, int64_t diagonal, IndexArgs* args,
             std::string* error) {
  const size_t nd = out.sizes.size();
  std::vector<bool> keep(nd, false);
  if (nd >= 2) keep[nd - 2] = keep[nd - 1] = true;
  const IndexOperandSpec ops[3] = {Operand(out), Operand(self), {}};
  if (!MakeIndexArgs(out.sizes, ops, keep, args, error)) return false;
  args->diagonal = diagonal;
  return true;
}

uint64_t ScalarBits(ScalarKind kind, int64_t i, double d, int32_t dtype) {
  uint64_t bits = 0;
  auto as = [&](auto tag) {
    using T = decltype(tag);
    const T v = kind == ScalarKind::kDouble ? Convert<T>(d)
                : kind == ScalarKind::kBool ? Convert<T>(i != 0)
                                            : Convert<T>(i);
    std::memcpy(&bits, &v, sizeof v);
  };
  switch (dtype) {
    case TSR_DTYPE_BOOL:
      as(bool{});
      break;
    case TSR_DTYPE_UINT8:
      as(uint8_t{});
      break;
    case TSR_DTYPE_INT8:
      as(int8_t{});
      break;
    case TSR_DTYPE_INT16:
      as(int16_t{});
      break;
    case TSR_DTYPE_INT32:
      as(int32_t{});
      break;
    case TSR_DTYPE_INT64:
      as(int64_t{});
      break;
    case TSR_DTYPE_FLOAT16:
      as(Half{});
      break;
    case TSR_DTYPE_BFLOAT16:
      as(BFloat16{});
      break;
    case TSR_DTYPE_FLOAT32:
      as(float{});
      break;
    default:
      as(double{});
      break;
  }
  return bits;
}

bool MakeSortArgs(const TensorSpec& self, int64_t dim, const TensorSpec& values,
                  const TensorSpec& indices, int64_t count, bool descending, SortArgs* args,
                  int64_t* rows, std::string* error) {
  SortArgs a;
  a.self = self.data;
  a.values = values.data;
  a.indices = indices.data;
  a.descending = descending;
  a.count = count;
  const TensorSpec* t[3] = {&self, &values, &indices};
  const std::vector<int64_t>& sizes = self.sizes;
  a.n = sizes[static_cast<size_t>(dim)];
  if (a.n >= INT32_MAX) {
    *error = "rows of " + std::to_string(a.n) + " elements (the GPU sort takes below 2^31)";
    return false;
  }
  while (a.padded < a.n) a.padded *= 2;
  int64_t r = 1;
  std::vector<Dim> outer;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (static_cast<int64_t>(i) == dim) {
      for (int k = 0; k < 3; ++k) a.along[k] = t[k]->strides[i] * t[k]->itemsize;
      continue;
    }
    Dim d{sizes[i], {0, 0, 0}, false};
    for (int k = 0; k < 3; ++k) d.strides[k] = t[k]->strides[i] * t[k]->itemsize;
    outer.push_back(d);
    r *= sizes[i];
  }
  outer = Coalesce(outer, 3);
  if (outer.size() > static_cast<size_t>(kMaxDims)) {
    *error = "a sort over " + std::to_string(outer.size()) +
             " other dimensions after merging (the GPU kernel takes at most " +
             std::to_string(kMaxDims) + ")";
    return false;
  }
  a.outer_ndim = static_cast<int32_t>(outer.size());
  for (int32_t d = 0; d < a.outer_ndim; ++d) {
    a.outer_sizes[d] = outer[d].size;
    for (int k = 0; k < 3; ++k) a.outer_strides[d][k] = outer[d].strides[k];
  }
  *rows = a.n == 0 ? 0 : r;
  *args = a;
  return true;
}

}  // namespace gpu
}  // namespace tessera
