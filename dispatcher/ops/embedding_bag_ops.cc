// The embedding-bag ops (op set 1.10), composites over ops every backend has (index_select,
// index_add, scatter_reduce, cumsum), as ATen's EmbeddingBag.cpp computes them on CPU:
// - _embedding_bag_forward_only and _embedding_bag (each with its out= form), embedding_bag and
//   embedding_bag.padding_idx: see Note [embedding_bag's four returns].
// - _embedding_bag_dense_backward and _embedding_bag_per_sample_weights_backward (each with its
//   out= form): the gradients of weight and of per_sample_weights from the forward's returns.
// - _embedding_bag_backward (op set 1.11): ATen's composite over _embedding_bag_dense_backward,
//   rebuilding the sum fast path's empty offset2bag from the offsets; sparse=True is UNIMPLEMENTED
//   (Tessera has no sparse layout, so no _embedding_bag_sparse_backward).
//
// Note [embedding_bag's four returns]
// Bags: offsets[b] is where bag b starts in the 1-D indices (with include_last_offset, the last
// offset only closes the last bag); bag b holds indices[offsets[b] : offsets[b + 1]] and the last
// runs to the end of the indices. Entries equal to padding_idx (when >= 0) are skipped. ATen
// returns (output, offset2bag, bag_size, max_indices):
// - output [bags, D]: mode 0 the sum of the rows (each times its per_sample_weight), mode 1
//   their mean (divided by max(bag_size, 1)), mode 2 their elementwise max (the first largest
//   row wins); an empty bag gives 0.
// - offset2bag [n]: the bag of each index, cumsum of the offsets' marks minus 1 (ATen's
//   make_offset2bag). ATen's sum-mode fast path (float32 and 16-bit weights, no padding_idx)
//   skips it and returns it empty ([0]), and so is it returned here (ATen's path also depends on
//   strides, which a composite's result does not).
// - bag_size: mode 1 and 2 each bag's count of non-padding entries ([bags]); mode 0 zeros
//   (ATen zeroes it "to make it deterministic"), [bags] from _embedding_bag and the offsets'
//   shape from _embedding_bag_forward_only (its bag_size is left at offsets' size).
// - max_indices: mode 2 [bags, D], the index (into weight) each max came from, 0 for an empty
//   bag; modes 0 and 1 a copy of bag_size.
// The index returns have the promoted dtype of indices and offsets. The 16-bit floats sum in
// float32 and round once, as ATen's kernels. The max is scatter_reduce's amax, which propagates
// NaN where ATen's sequential `>` keeps the first NaN-free candidate (a NaN row is the one
// difference). Where current PyTorch differs from 1.13: bfloat16 weights (1.13 refuses them),
// include_last_offset with offsets[-1] < n (1.13 maps the tail indices past the last bag, issue
// 89677; current narrows the offsets first, and its sum fast path drops the tail where its other
// paths, and this composite, fold it into the last bag), and the 1-D/2-D input checks (1.13 has
// none).
// 2-D indices: ATen's CPU kernel takes their first dim as the index count, which only works for
// [n, 1]; those are read as 1-D and the others refused with the kernel's own check.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "core/type_promotion.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

constexpr int64_t kSum = 0, kMean = 1, kMax = 2;

absl::StatusOr<Tensor> Call(OpRegistry& r, std::string_view name, Stack args) {
  return CallOne(r, name, std::move(args));
}
absl::StatusOr<Tensor> ToDtype(OpRegistry& r, const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype) return t;
  return Call(r, "_to_copy", {Value(t), Value(dtype)});
}
absl::StatusOr<Tensor> Unsqueeze1(OpRegistry& r, const Tensor& t) {
  return Call(r, "unsqueeze", {Value(t), Value(int64_t{1})});
}
absl::StatusOr<Tensor> Full(OpRegistry& r, IntList shape, Scalar value, ScalarType dtype,
                            Device device) {
  return Call(
      r, "full",
      {Value(std::move(shape)), Value(value), Value(dtype), Value(), Value(device), Value()});
}
absl::StatusOr<int64_t> ReadInt(OpRegistry& r, const Tensor& t) {
  TSR_ASSIGN_OR_RETURN(Scalar v, ReadScalar(r, t));
  return v.to_int();
}

bool IsIndexType(ScalarType t) { return t == ScalarType::kInt64 || t == ScalarType::kInt32; }
bool IsWeightType(ScalarType t) {
  return t == ScalarType::kFloat64 || t == ScalarType::kFloat32 || t == ScalarType::kFloat16 ||
         t == ScalarType::kBFloat16;
}

// ATen's checkScalarTypes words (forward and backward): argument #1 is what ATen names it.
absl::Status CheckIndexDtype(const OperatorHandle& op, ScalarType t) {
  if (IsIndexType(t)) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("Expected tensor for argument #1 'indices' to have one of the "
                                     "following scalar types: Long, Int; but got %s instead "
                                     "(while checking arguments for embedding_bag)",
                                     ScalarTypeName(t)));
}

absl::Status CheckFloatingDtype(const OperatorHandle& op, std::string_view argument, ScalarType t) {
  if (IsWeightType(t)) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("Expected tensor for argument #1 '%s' to have one of the "
                                     "following scalar types: Half, BFloat16, Float, Double; but "
                                     "got %s instead (while checking arguments for embedding_bag)",
                                     argument, ScalarTypeName(t)));
}

// CheckIndexRange: every index in [0, num_embeddings), ATen's message naming an offending one.
absl::Status CheckIndexRange(const OperatorHandle& op, const Tensor& indices, int64_t num) {
  if (indices.numel() == 0 || indices.device().type == DeviceType::kMeta) return absl::OkStatus();
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor lo,
                       Call(r, "amin", {Value(indices), Value(IntList{}), Value(false)}));
  TSR_ASSIGN_OR_RETURN(Tensor hi,
                       Call(r, "amax", {Value(indices), Value(IntList{}), Value(false)}));
  TSR_ASSIGN_OR_RETURN(const int64_t low, ReadInt(r, lo));
  TSR_ASSIGN_OR_RETURN(const int64_t high, ReadInt(r, hi));
  if (low >= 0 && high < num) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("embedding_bag: Expected idx >= 0 && idx < num_embeddings "
                                     "but found idx to be %d",
                                     low < 0 ? low : high));
}

// OffsetToBag: the bag of each of the n indices (int64), from the bags' start offsets:
// ATen's make_offset2bag (marks at the offsets, cumsum, minus 1).
absl::StatusOr<Tensor> OffsetToBag(OpRegistry& r, const Tensor& starts, int64_t n, Device device) {
  TSR_ASSIGN_OR_RETURN(Tensor marks, Zeros(r, IntList{n + 1}, ScalarType::kInt64, device));
  TSR_ASSIGN_OR_RETURN(Tensor ones, Full(r, IntList{starts.numel()}, Scalar(int64_t{1}),
                                         ScalarType::kInt64, device));
  TSR_ASSIGN_OR_RETURN(marks, Call(r, "index_add",
                                   {Value(marks), Value(int64_t{0}), Value(starts), Value(ones),
                                    Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(marks, Call(r, "cumsum", {Value(marks), Value(int64_t{0}), Value()}));
  TSR_ASSIGN_OR_RETURN(
      marks,
      Call(r, "sub.Scalar", {Value(marks), Value(Scalar(int64_t{1})), Value(Scalar(int64_t{1}))}));
  return Call(r, "narrow", {Value(marks), Value(int64_t{0}), Value(int64_t{0}), Value(n)});
}

// EmbeddingBagImpl: ATen's _embedding_bag_cpu_impl; `requires_grad` tells _embedding_bag
// (true) from _embedding_bag_forward_only (false). See Note [embedding_bag's four returns].
TensorsOr EmbeddingBagImpl(const OperatorHandle& op, const Tensor& weight, const Tensor& indices_in,
                           const Tensor& offsets_in, int64_t mode, const Value& psw_value,
                           bool include_last_offset, int64_t padding_idx, bool requires_grad) {
  OpRegistry& r = op.registry();
  if (indices_in.dim() != 1 && indices_in.dim() != 2) {
    return Invalid(op, absl::StrFormat("input has to be a 1D or 2D Tensor, but got Tensor of "
                                       "dimension %d",
                                       indices_in.dim()));
  }
  if (offsets_in.dim() != 1) {
    return Invalid(op, absl::StrFormat("offsets has to be a 1D Tensor, but got Tensor of "
                                       "dimension %d",
                                       offsets_in.dim()));
  }
  const ScalarType index_dtype = PromoteTypes(offsets_in.dtype(), indices_in.dtype());
  TSR_RETURN_IF_ERROR(CheckIndexDtype(op, index_dtype));
  TSR_RETURN_IF_ERROR(CheckFloatingDtype(op, "weight", weight.dtype()));
  // ATen reads weight.sizes()[1] unchecked (1.13 crashes on a 1-D weight).
  if (weight.dim() != 2) {
    return Invalid(op, absl::StrFormat("weight has to be a 2D Tensor, but got Tensor of "
                                       "dimension %d",
                                       weight.dim()));
  }
  if (mode != kSum && mode != kMean && mode != kMax) {
    return Invalid(op, absl::StrFormat("mode has to be one of sum (0), mean (1) or max (2), "
                                       "but got %d",
                                       mode));
  }
  const int64_t n = indices_in.sizes()[0];
  if (indices_in.numel() != n) {
    return Invalid(op,
                   "Expected select_indices.numel() == add_indices.numel() to be true, but "
                   "got false.");
  }
  TSR_ASSIGN_OR_RETURN(Tensor indices, Call(r, "reshape", {Value(indices_in), Value(IntList{n})}));
  TSR_ASSIGN_OR_RETURN(indices, ToDtype(r, indices, ScalarType::kInt64));
  TSR_ASSIGN_OR_RETURN(Tensor offsets, ToDtype(r, offsets_in, ScalarType::kInt64));
  const int64_t num_offsets = offsets.sizes()[0];
  // A meta tensor has no values to check (the returns' shapes need none).
  if (num_offsets > 0 && offsets.device().type != DeviceType::kMeta) {
    TSR_ASSIGN_OR_RETURN(
        Tensor first,
        Call(r, "select.int", {Value(offsets), Value(int64_t{0}), Value(int64_t{0})}));
    TSR_ASSIGN_OR_RETURN(const int64_t offset0, ReadInt(r, first));
    if (offset0 != 0) {
      return Invalid(op, absl::StrFormat("offsets[0] has to be 0, i.e., the first sequence in the "
                                         "mini-batch has to start from position 0. However, got "
                                         "%d",
                                         offset0));
    }
    TSR_ASSIGN_OR_RETURN(
        Tensor last,
        Call(r, "select.int", {Value(offsets), Value(int64_t{0}), Value(num_offsets - 1)}));
    TSR_ASSIGN_OR_RETURN(const int64_t offset_n, ReadInt(r, last));
    if (offset_n > n) {
      return Invalid(op, absl::StrFormat("offsets[-1] can not be greater than input's length %d "
                                         "but got offsets[-1] of %d",
                                         n, offset_n));
    }
  }
  const bool has_psw = psw_value.is_tensor();
  if (has_psw) {
    const Tensor& psw = psw_value.tensor();
    if (mode != kSum) {
      return Invalid(op, "embedding_bag: per_sample_weights only supported with mode='sum'");
    }
    if (psw.dtype() != weight.dtype()) {
      return Invalid(op,
                     absl::StrFormat("Expected tensor for argument #1 'weight' to have the "
                                     "same type as tensor for argument #1 "
                                     "'per_sample_weights'; but type %s does not equal %s "
                                     "(while checking arguments for embedding_bag)",
                                     ScalarTypeName(weight.dtype()), ScalarTypeName(psw.dtype())));
    }
    if (psw.dim() != 1) {
      return Invalid(op,
                     "Expected per_sample_weights.value().dim() == 1 to be true, but got "
                     "false.");
    }
    if (psw.numel() != n) {
      return Invalid(op,
                     "Expected per_sample_weights.value().numel() == indices.numel() to be "
                     "true, but got false.");
    }
  }
  if (include_last_offset && num_offsets < 1) {
    return Invalid(op, "include_last_offset: number of offset should be at least 1");
  }
  const int64_t num_weights = weight.sizes()[0], D = weight.sizes()[1];
  TSR_RETURN_IF_ERROR(CheckIndexRange(op, indices, num_weights));
  const Device device = weight.device();
  const int64_t bags = num_offsets - (include_last_offset ? 1 : 0);
  TSR_ASSIGN_OR_RETURN(
      const Tensor starts,
      Call(r, "narrow", {Value(offsets), Value(int64_t{0}), Value(int64_t{0}), Value(bags)}));
  TSR_ASSIGN_OR_RETURN(const Tensor bag_of, OffsetToBag(r, starts, n, device));
  const bool padded = padding_idx >= 0;
  const bool fast_sum = mode == kSum && !padded && weight.dtype() != ScalarType::kFloat64;

  // Each bag's count of entries, less its padding entries.
  TSR_ASSIGN_OR_RETURN(Tensor counts, Zeros(r, IntList{bags}, ScalarType::kInt64, device));
  std::optional<Tensor> keep;  // [n] bool: not padding_idx
  if (bags > 0) {
    TSR_ASSIGN_OR_RETURN(Tensor n_tensor,
                         Full(r, IntList{1}, Scalar(n), ScalarType::kInt64, device));
    TSR_ASSIGN_OR_RETURN(
        Tensor later,
        Call(r, "narrow", {Value(offsets), Value(int64_t{0}), Value(int64_t{1}), Value(bags - 1)}));
    TSR_ASSIGN_OR_RETURN(
        Tensor ends,
        Call(r, "cat", {Value(std::vector<Tensor>{later, n_tensor}), Value(int64_t{0})}));
    TSR_ASSIGN_OR_RETURN(
        counts, Call(r, "sub.Tensor", {Value(ends), Value(starts), Value(Scalar(int64_t{1}))}));
    if (padded) {
      TSR_ASSIGN_OR_RETURN(Tensor k,
                           Call(r, "ne.Scalar", {Value(indices), Value(Scalar(padding_idx))}));
      keep = k;
      TSR_ASSIGN_OR_RETURN(Tensor is_pad,
                           Call(r, "eq.Scalar", {Value(indices), Value(Scalar(padding_idx))}));
      TSR_ASSIGN_OR_RETURN(is_pad, ToDtype(r, is_pad, ScalarType::kInt64));
      TSR_ASSIGN_OR_RETURN(Tensor pads, Zeros(r, IntList{bags}, ScalarType::kInt64, device));
      TSR_ASSIGN_OR_RETURN(pads, Call(r, "index_add",
                                      {Value(pads), Value(int64_t{0}), Value(bag_of), Value(is_pad),
                                       Value(Scalar(int64_t{1}))}));
      TSR_ASSIGN_OR_RETURN(
          counts, Call(r, "sub.Tensor", {Value(counts), Value(pads), Value(Scalar(int64_t{1}))}));
    }
  }

  const Opmath math(weight.dtype());
  TSR_ASSIGN_OR_RETURN(Tensor out, Zeros(r, IntList{bags, D}, math.compute, device));
  Tensor max_indices;
  if (bags > 0) {
    TSR_ASSIGN_OR_RETURN(Value w, math.In(r, Value(weight)));
    TSR_ASSIGN_OR_RETURN(Tensor rows,
                         Call(r, "index_select", {w, Value(int64_t{0}), Value(indices)}));
    TSR_ASSIGN_OR_RETURN(Tensor keep2,
                         keep ? Unsqueeze1(r, *keep) : absl::StatusOr<Tensor>(Tensor()));
    if (mode != kMax) {
      if (has_psw) {
        TSR_ASSIGN_OR_RETURN(Value p, math.In(r, psw_value));
        TSR_ASSIGN_OR_RETURN(Tensor p2, Unsqueeze1(r, p.tensor()));
        TSR_ASSIGN_OR_RETURN(rows, Call(r, "mul.Tensor", {Value(rows), Value(p2)}));
      }
      if (keep) {  // where, not a product: a padding row of inf must not give NaN
        TSR_ASSIGN_OR_RETURN(Tensor zero, Zeros(r, IntList{}, math.compute, device));
        TSR_ASSIGN_OR_RETURN(rows, Call(r, "where.self", {Value(keep2), Value(rows), Value(zero)}));
      }
      TSR_ASSIGN_OR_RETURN(out, Call(r, "index_add",
                                     {Value(out), Value(int64_t{0}), Value(bag_of), Value(rows),
                                      Value(Scalar(int64_t{1}))}));
      if (mode == kMean) {
        TSR_ASSIGN_OR_RETURN(Tensor div,
                             Call(r, "clamp_min", {Value(counts), Value(Scalar(int64_t{1}))}));
        TSR_ASSIGN_OR_RETURN(div, ToDtype(r, div, math.compute));
        TSR_ASSIGN_OR_RETURN(div, Unsqueeze1(r, div));
        TSR_ASSIGN_OR_RETURN(out, Call(r, "div.Tensor", {Value(out), Value(div)}));
      }
    } else {
      if (keep) {
        TSR_ASSIGN_OR_RETURN(Tensor low,
                             Full(r, IntList{}, Scalar(-std::numeric_limits<double>::infinity()),
                                  math.compute, device));
        TSR_ASSIGN_OR_RETURN(rows, Call(r, "where.self", {Value(keep2), Value(rows), Value(low)}));
      }
      TSR_ASSIGN_OR_RETURN(Tensor bag_col, Unsqueeze1(r, bag_of));
      TSR_ASSIGN_OR_RETURN(Tensor bag2,
                           Call(r, "expand", {Value(bag_col), Value(IntList{n, D}), Value(false)}));
      TSR_ASSIGN_OR_RETURN(Tensor mx, Call(r, "scatter_reduce.two",
                                           {Value(out), Value(int64_t{0}), Value(bag2), Value(rows),
                                            Value("amax"), Value(false)}));
      TSR_ASSIGN_OR_RETURN(Tensor empty,
                           Call(r, "eq.Scalar", {Value(counts), Value(Scalar(int64_t{0}))}));
      TSR_ASSIGN_OR_RETURN(empty, Unsqueeze1(r, empty));
      TSR_ASSIGN_OR_RETURN(out, Call(r, "where.self", {Value(empty), Value(out), Value(mx)}));
      // The first entry of each bag that holds its max, per column: the least position among
      // the candidates (n where none), then its index; an empty bag's is n, which reads 0.
      TSR_ASSIGN_OR_RETURN(Tensor at,
                           Call(r, "index_select", {Value(mx), Value(int64_t{0}), Value(bag_of)}));
      TSR_ASSIGN_OR_RETURN(Tensor cand, Call(r, "eq.Tensor", {Value(rows), Value(at)}));
      if (keep) {
        TSR_ASSIGN_OR_RETURN(cand, Call(r, "logical_and", {Value(cand), Value(keep2)}));
      }
      TSR_ASSIGN_OR_RETURN(Tensor pos, Call(r, "arange",
                                            {Value(Scalar(n)), Value(ScalarType::kInt64), Value(),
                                             Value(device), Value()}));
      TSR_ASSIGN_OR_RETURN(pos, Unsqueeze1(r, pos));
      TSR_ASSIGN_OR_RETURN(Tensor none, Full(r, IntList{}, Scalar(n), ScalarType::kInt64, device));
      TSR_ASSIGN_OR_RETURN(pos, Call(r, "where.self", {Value(cand), Value(pos), Value(none)}));
      TSR_ASSIGN_OR_RETURN(Tensor first,
                           Full(r, IntList{bags, D}, Scalar(n), ScalarType::kInt64, device));
      TSR_ASSIGN_OR_RETURN(first, Call(r, "scatter_reduce.two",
                                       {Value(first), Value(int64_t{0}), Value(bag2), Value(pos),
                                        Value("amin"), Value(true)}));
      TSR_ASSIGN_OR_RETURN(Tensor zero, Zeros(r, IntList{1}, ScalarType::kInt64, device));
      TSR_ASSIGN_OR_RETURN(
          Tensor padded_indices,
          Call(r, "cat", {Value(std::vector<Tensor>{indices, zero}), Value(int64_t{0})}));
      TSR_ASSIGN_OR_RETURN(first, Call(r, "reshape", {Value(first), Value(IntList{bags * D})}));
      TSR_ASSIGN_OR_RETURN(
          max_indices,
          Call(r, "index_select", {Value(padded_indices), Value(int64_t{0}), Value(first)}));
      TSR_ASSIGN_OR_RETURN(max_indices,
                           Call(r, "reshape", {Value(max_indices), Value(IntList{bags, D})}));
    }
  }
  TSR_ASSIGN_OR_RETURN(Tensor output, math.Out(r, std::move(out)));
  Tensor offset2bag;
  if (fast_sum) {
    TSR_ASSIGN_OR_RETURN(offset2bag, Zeros(r, IntList{0}, index_dtype, device));
  } else {
    TSR_ASSIGN_OR_RETURN(offset2bag, ToDtype(r, bag_of, index_dtype));
  }
  Tensor bag_size;
  if (mode == kSum) {
    const IntList shape = requires_grad ? IntList{bags} : IntList{num_offsets};
    TSR_ASSIGN_OR_RETURN(bag_size, Zeros(r, shape, index_dtype, device));
  } else {
    TSR_ASSIGN_OR_RETURN(bag_size, ToDtype(r, counts, index_dtype));
    // A copy, so that the two returns do not share storage when the dtype is already int64.
    TSR_ASSIGN_OR_RETURN(bag_size, Call(r, "clone", {Value(bag_size), Value()}));
  }
  if (mode == kMax) {
    if (!max_indices.defined()) {
      TSR_ASSIGN_OR_RETURN(max_indices, Zeros(r, IntList{bags, D}, index_dtype, device));
    }
    TSR_ASSIGN_OR_RETURN(max_indices, ToDtype(r, max_indices, index_dtype));
  } else {
    TSR_ASSIGN_OR_RETURN(max_indices, Call(r, "clone", {Value(bag_size), Value()}));
  }
  return std::vector<Tensor>{output, offset2bag, bag_size, max_indices};
}

// _embedding_bag_forward_only / _embedding_bag(weight, indices, offsets, scale_grad_by_freq,
// mode, sparse, per_sample_weights, include_last_offset, padding_idx)
template <bool kRequiresGrad>
TensorsOr EmbeddingBagK(const OperatorHandle& op, const Stack& s) {
  return EmbeddingBagImpl(op, s[0].tensor(), s[1].tensor(), s[2].tensor(), s[4].to_int(), s[6],
                          s[7].to_bool(), s[8].to_int(), kRequiresGrad);
}

// embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
// include_last_offset[, padding_idx]): padding_idx checked and wrapped, then
// _embedding_bag_forward_only (a Tessera tensor never requires grad).
TensorsOr EmbeddingBagPublic(const OperatorHandle& op, const Stack& s) {
  const Tensor& weight = s[0].tensor();
  int64_t padding_idx = -1;
  if (s.size() > 8 && !s[8].is_none()) {
    const int64_t num = weight.dim() > 0 ? weight.sizes()[0] : 0;
    padding_idx = s[8].to_int();
    if (padding_idx < -num || padding_idx >= num) {
      return Invalid(op, absl::StrFormat("padding_idx must be within the number of embeddings, "
                                         "-%d through %d, but got %d",
                                         num, num - 1, padding_idx));
    }
    if (padding_idx < 0) padding_idx += num;
  }
  return EmbeddingBagImpl(op, weight, s[1].tensor(), s[2].tensor(), s[4].to_int(), s[6],
                          s[7].to_bool(), padding_idx, false);
}

// _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
// num_weights, scale_grad_by_freq, mode, per_sample_weights, padding_idx) -> grad_weight
// [num_weights, D], ATen's _embedding_bag_dense_backward_cpu: mode 2 adds each non-empty bag's
// gradient at the rows its max came from; modes 0 and 1 add each non-padding entry's bag
// gradient at its row, scaled by its per_sample_weight, by 1 / its bag's size (mode 1, a
// non-empty bag) and by 1 / its index's count among the indices (scale_grad_by_freq). PyTorch's
// CPU kernel (1.13, and releases since as far as we read) divides by the count of another index
// there: it walks the sorted indices and reads the count at the unique-iteration counter
// instead of at the index. That is an upstream bug; this divides by the index's own count, as
// ATen's CUDA kernel does.
absl::StatusOr<Tensor> EmbeddingBagDenseBackward(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& grad = s[0].tensor();
  const Tensor& indices_in = s[1].tensor();
  const Tensor& offset2bag_in = s[2].tensor();
  const Tensor& bag_size_in = s[3].tensor();
  const int64_t num_weights = s[5].to_int();
  const bool by_freq = s[6].to_bool();
  const int64_t mode = s[7].to_int();
  const int64_t padding_idx = s[9].to_int();
  TSR_RETURN_IF_ERROR(CheckFloatingDtype(op, "grad_", grad.dtype()));
  TSR_RETURN_IF_ERROR(CheckIndexDtype(op, indices_in.dtype()));
  if (grad.dim() != 2) {
    return Invalid(op, absl::StrFormat("grad has to be a 2D Tensor, but got Tensor of dimension %d",
                                       grad.dim()));
  }
  if (num_weights < 0) {
    return Invalid(op,
                   absl::StrFormat("num_weights must be non-negative, but got %d", num_weights));
  }
  if (mode != kSum && mode != kMean && mode != kMax) {
    return Invalid(op, absl::StrFormat("mode has to be one of sum (0), mean (1) or max (2), "
                                       "but got %d",
                                       mode));
  }
  const int64_t bags = grad.sizes()[0], D = grad.sizes()[1];
  const Device device = grad.device();
  const Opmath math(grad.dtype());
  TSR_ASSIGN_OR_RETURN(Value g, math.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(Tensor result, Zeros(r, IntList{num_weights, D}, math.compute, device));
  if (mode == kMax) {
    const Tensor& max_in = s[4].tensor();
    if (!IsIndexType(max_in.dtype()) || max_in.dim() != 2 || max_in.sizes()[0] != bags ||
        max_in.sizes()[1] != D) {
      return Invalid(op, absl::StrFormat("expected maximum_indices of shape [%d, %d] (grad's) "
                                         "and an index dtype, got %s %s",
                                         bags, D, ScalarTypeName(max_in.dtype()),
                                         ShapeToString(max_in.sizes())));
    }
    if (bag_size_in.numel() != bags) {
      return Invalid(op, absl::StrFormat("expected bag_size with %d elements (one per bag of "
                                         "grad), got %s",
                                         bags, ShapeToString(bag_size_in.sizes())));
    }
    if (bags == 0 || D == 0) return math.Out(r, std::move(result));
    TSR_RETURN_IF_ERROR(CheckIndexRange(op, max_in, num_weights));
    // Empty bags' rows drop out: their gradient is masked to 0 (their max index is 0).
    TSR_ASSIGN_OR_RETURN(Tensor sizes,
                         Call(r, "reshape", {Value(bag_size_in), Value(IntList{bags})}));
    TSR_ASSIGN_OR_RETURN(Tensor nonempty,
                         Call(r, "ne.Scalar", {Value(sizes), Value(Scalar(int64_t{0}))}));
    TSR_ASSIGN_OR_RETURN(nonempty, Unsqueeze1(r, nonempty));
    TSR_ASSIGN_OR_RETURN(Tensor zero, Zeros(r, IntList{}, math.compute, device));
    TSR_ASSIGN_OR_RETURN(Tensor src, Call(r, "where.self", {Value(nonempty), g, Value(zero)}));
    TSR_ASSIGN_OR_RETURN(Tensor idx, ToDtype(r, max_in, ScalarType::kInt64));
    TSR_ASSIGN_OR_RETURN(
        result, Call(r, "scatter_add", {Value(result), Value(int64_t{0}), Value(idx), Value(src)}));
    return math.Out(r, std::move(result));
  }
  const int64_t n = indices_in.numel();
  if (indices_in.dim() != 1) {
    return Invalid(op, absl::StrFormat("indices has to be a 1D Tensor, but got Tensor of "
                                       "dimension %d",
                                       indices_in.dim()));
  }
  if (!IsIndexType(offset2bag_in.dtype()) || offset2bag_in.numel() != n) {
    return Invalid(op, absl::StrFormat("expected offset2bag with an index dtype and %d elements "
                                       "(one per index), got %s %s",
                                       n, ScalarTypeName(offset2bag_in.dtype()),
                                       ShapeToString(offset2bag_in.sizes())));
  }
  const bool has_psw = s[8].is_tensor();
  if (has_psw) {
    const Tensor& psw = s[8].tensor();
    if (mode != kSum) {
      return Invalid(op, "embedding_bag: per_sample_weights only supported with mode='sum'");
    }
    if (psw.dtype() != grad.dtype() || psw.numel() != n) {
      return Invalid(op, absl::StrFormat("expected per_sample_weights of grad's dtype %s with %d "
                                         "elements (one per index), got %s %s",
                                         ScalarTypeName(grad.dtype()), n,
                                         ScalarTypeName(psw.dtype()), ShapeToString(psw.sizes())));
    }
  }
  if (n == 0 || D == 0) return math.Out(r, std::move(result));
  TSR_RETURN_IF_ERROR(CheckIndexRange(op, indices_in, num_weights));
  TSR_ASSIGN_OR_RETURN(Tensor indices, ToDtype(r, indices_in, ScalarType::kInt64));
  TSR_ASSIGN_OR_RETURN(Tensor bag_of, ToDtype(r, offset2bag_in, ScalarType::kInt64));
  // Each entry's gradient row, then its scale [n, 1].
  TSR_ASSIGN_OR_RETURN(Tensor rows, Call(r, "index_select", {g, Value(int64_t{0}), Value(bag_of)}));
  TSR_ASSIGN_OR_RETURN(Tensor scale, Full(r, IntList{n}, Scalar(1.0), math.compute, device));
  if (mode == kMean) {
    TSR_ASSIGN_OR_RETURN(Tensor sizes, ToDtype(r, bag_size_in, math.compute));
    TSR_ASSIGN_OR_RETURN(sizes,
                         Call(r, "reshape", {Value(sizes), Value(IntList{bag_size_in.numel()})}));
    TSR_ASSIGN_OR_RETURN(Tensor per,
                         Call(r, "index_select", {Value(sizes), Value(int64_t{0}), Value(bag_of)}));
    TSR_ASSIGN_OR_RETURN(per, Call(r, "clamp_min", {Value(per), Value(Scalar(1.0))}));
    TSR_ASSIGN_OR_RETURN(scale, Call(r, "div.Tensor", {Value(scale), Value(per)}));
  }
  if (has_psw) {
    TSR_ASSIGN_OR_RETURN(Value p, math.In(r, s[8]));
    TSR_ASSIGN_OR_RETURN(Tensor flat, Call(r, "reshape", {p, Value(IntList{n})}));
    TSR_ASSIGN_OR_RETURN(scale, Call(r, "mul.Tensor", {Value(scale), Value(flat)}));
  }
  if (by_freq) {
    TSR_ASSIGN_OR_RETURN(Tensor ones, Full(r, IntList{n}, Scalar(1.0), math.compute, device));
    TSR_ASSIGN_OR_RETURN(Tensor freq, Zeros(r, IntList{num_weights}, math.compute, device));
    TSR_ASSIGN_OR_RETURN(freq, Call(r, "index_add",
                                    {Value(freq), Value(int64_t{0}), Value(indices), Value(ones),
                                     Value(Scalar(int64_t{1}))}));
    TSR_ASSIGN_OR_RETURN(Tensor per,
                         Call(r, "index_select", {Value(freq), Value(int64_t{0}), Value(indices)}));
    TSR_ASSIGN_OR_RETURN(scale, Call(r, "div.Tensor", {Value(scale), Value(per)}));
  }
  if (padding_idx >= 0) {
    TSR_ASSIGN_OR_RETURN(Tensor keep,
                         Call(r, "ne.Scalar", {Value(indices), Value(Scalar(padding_idx))}));
    TSR_ASSIGN_OR_RETURN(Tensor zero, Zeros(r, IntList{}, math.compute, device));
    TSR_ASSIGN_OR_RETURN(scale, Call(r, "where.self", {Value(keep), Value(scale), Value(zero)}));
  }
  TSR_ASSIGN_OR_RETURN(scale, Unsqueeze1(r, scale));
  TSR_ASSIGN_OR_RETURN(rows, Call(r, "mul.Tensor", {Value(rows), Value(scale)}));
  TSR_ASSIGN_OR_RETURN(result, Call(r, "index_add",
                                    {Value(result), Value(int64_t{0}), Value(indices), Value(rows),
                                     Value(Scalar(int64_t{1}))}));
  return math.Out(r, std::move(result));
}

// _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode,
// padding_idx) -> [n]: ATen's _embedding_bag_per_sample_weights_backward_cpu, each entry's
// gradient row dotted with its weight row (0 for padding_idx). An empty offset2bag (the sum fast
// path's) is rebuilt from the offsets, as ATen does.
absl::StatusOr<Tensor> EmbeddingBagPerSampleWeightsBackward(const OperatorHandle& op,
                                                            const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& grad = s[0].tensor();
  const Tensor& weight = s[1].tensor();
  const Tensor& indices_in = s[2].tensor();
  const Tensor& offsets_in = s[3].tensor();
  const Tensor& offset2bag_in = s[4].tensor();
  const int64_t mode = s[5].to_int();
  const int64_t padding_idx = s[6].to_int();
  if (mode != kSum) {
    return Invalid(op, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
  }
  if (!IsWeightType(grad.dtype())) return NotFloating(op, grad.dtype());
  if (grad.dim() != 2 || weight.dim() != 2 || weight.sizes()[1] != grad.sizes()[1] ||
      weight.dtype() != grad.dtype()) {
    return Invalid(op,
                   absl::StrFormat("expected a 2-D grad and a 2-D weight of grad's dtype and "
                                   "embedding size, got grad %s %s and weight %s %s",
                                   ScalarTypeName(grad.dtype()), ShapeToString(grad.sizes()),
                                   ScalarTypeName(weight.dtype()), ShapeToString(weight.sizes())));
  }
  const ScalarType index_dtype = PromoteTypes(offsets_in.dtype(), indices_in.dtype());
  if (!IsIndexType(index_dtype)) {
    return Invalid(op, absl::StrFormat("Expected tensor for argument #1 'indices' to have one of "
                                       "the following scalar types: Long, Int; but got %s "
                                       "instead (while checking arguments for "
                                       "_embedding_bag_per_sample_weights_backward)",
                                       ScalarTypeName(index_dtype)));
  }
  if (indices_in.dim() != 1 || offsets_in.dim() != 1) {
    return Invalid(
        op, absl::StrFormat("expected 1-D indices and offsets, got %s and %s",
                            ShapeToString(indices_in.sizes()), ShapeToString(offsets_in.sizes())));
  }
  const int64_t n = indices_in.numel();
  const Device device = grad.device();
  const Opmath math(grad.dtype());
  if (n == 0) return Zeros(r, IntList{0}, grad.dtype(), device);
  TSR_RETURN_IF_ERROR(CheckIndexRange(op, indices_in, weight.sizes()[0]));
  TSR_ASSIGN_OR_RETURN(Tensor indices, ToDtype(r, indices_in, ScalarType::kInt64));
  Tensor bag_of;
  if (offset2bag_in.numel() == 0) {
    TSR_ASSIGN_OR_RETURN(Tensor offsets, ToDtype(r, offsets_in, ScalarType::kInt64));
    TSR_ASSIGN_OR_RETURN(bag_of, OffsetToBag(r, offsets, n, device));
  } else {
    if (!IsIndexType(offset2bag_in.dtype()) || offset2bag_in.numel() != n) {
      return Invalid(op, absl::StrFormat("expected offset2bag with an index dtype and %d "
                                         "elements (one per index), got %s %s",
                                         n, ScalarTypeName(offset2bag_in.dtype()),
                                         ShapeToString(offset2bag_in.sizes())));
    }
    TSR_ASSIGN_OR_RETURN(bag_of, ToDtype(r, offset2bag_in, ScalarType::kInt64));
    TSR_ASSIGN_OR_RETURN(bag_of, Call(r, "reshape", {Value(bag_of), Value(IntList{n})}));
  }
  TSR_ASSIGN_OR_RETURN(Value g, math.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(Value w, math.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(Tensor grad_rows,
                       Call(r, "index_select", {g, Value(int64_t{0}), Value(bag_of)}));
  TSR_ASSIGN_OR_RETURN(Tensor weight_rows,
                       Call(r, "index_select", {w, Value(int64_t{0}), Value(indices)}));
  TSR_ASSIGN_OR_RETURN(Tensor prod, Call(r, "mul.Tensor", {Value(grad_rows), Value(weight_rows)}));
  TSR_ASSIGN_OR_RETURN(
      Tensor result,
      Call(r, "sum.dim_IntList", {Value(prod), Value(IntList{1}), Value(false), Value()}));
  if (padding_idx >= 0) {
    TSR_ASSIGN_OR_RETURN(Tensor keep,
                         Call(r, "ne.Scalar", {Value(indices), Value(Scalar(padding_idx))}));
    TSR_ASSIGN_OR_RETURN(Tensor zero, Zeros(r, IntList{}, math.compute, device));
    TSR_ASSIGN_OR_RETURN(result, Call(r, "where.self", {Value(keep), Value(result), Value(zero)}));
  }
  return math.Out(r, std::move(result));
}

// _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices,
// num_weights, scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx) -> grad_weight,
// as ATen's _embedding_bag_backward_symint: indices and offsets promoted together and checked as
// index tensors (both reported as 'indices', as ATen checks them after promoting); an empty
// offset2bag with indices (the forward's sum fast path) rebuilt from all the offsets, as ATen's
// make_offset2bag (marks at every offset, the include_last_offset one included, cumsum, minus
// 1), else checked as an index tensor; then _embedding_bag_dense_backward. sparse=True would
// call _embedding_bag_sparse_backward, whose sparse COO result Tessera cannot represent.
absl::StatusOr<Tensor> EmbeddingBagBackward(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& indices_in = s[1].tensor();
  const Tensor& offsets_in = s[2].tensor();
  const Tensor& offset2bag_in = s[3].tensor();
  const ScalarType index_dtype = PromoteTypes(offsets_in.dtype(), indices_in.dtype());
  if (!IsIndexType(index_dtype)) {
    return Invalid(op, absl::StrFormat("Expected tensor for argument #1 'indices' to have one of "
                                       "the following scalar types: Long, Int; but got %s "
                                       "instead (while checking arguments for embedding_bag)",
                                       ScalarTypeName(index_dtype)));
  }
  TSR_ASSIGN_OR_RETURN(Tensor indices, ToDtype(r, indices_in, index_dtype));
  TSR_ASSIGN_OR_RETURN(Tensor offsets, ToDtype(r, offsets_in, index_dtype));
  Tensor offset2bag = offset2bag_in;
  if (indices.numel() != 0 && offset2bag_in.numel() == 0) {
    // index_add needs a vector of offsets; ATen's refusal says the same (an IndexError there).
    if (offsets.dim() != 1) {
      return OutOfRange(op, absl::StrFormat("index_add_(): Index is supposed to be a vector, but "
                                            "got dim: %d",
                                            offsets.dim()));
    }
    if (indices.dim() == 0) {
      return Invalid(op, "indices has to be a 1D Tensor, but got Tensor of dimension 0");
    }
    const int64_t n = indices.sizes()[0];
    TSR_ASSIGN_OR_RETURN(Tensor starts, ToDtype(r, offsets, ScalarType::kInt64));
    TSR_ASSIGN_OR_RETURN(Tensor bag_of, OffsetToBag(r, starts, n, s[0].tensor().device()));
    TSR_ASSIGN_OR_RETURN(offset2bag, ToDtype(r, bag_of, index_dtype));
  } else if (!IsIndexType(offset2bag_in.dtype())) {
    return Invalid(op, absl::StrFormat("Expected tensor for argument #1 'offset2bag' to have one "
                                       "of the following scalar types: Long, Int; but got %s "
                                       "instead (while checking arguments for embedding_bag)",
                                       ScalarTypeName(offset2bag_in.dtype())));
  }
  if (s[9].to_bool()) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s: sparse gradients (sparse=True) are not supported: Tessera has no sparse layout; "
        "pass sparse=False for a dense gradient of weight",
        op.name()));
  }
  return Call(
      r, "_embedding_bag_dense_backward",
      {s[0], Value(indices), Value(offset2bag), s[4], s[5], s[6], s[7], s[8], s[10], s[11]});
}

#define TSR_EMBEDDING_BAG_ARGS_                                                                 \
  "(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, " \
  "bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int "    \
  "padding_idx=-1"
#define TSR_EMBEDDING_BAG_OUTS_                                                               \
  ", *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2, Tensor(d!) out3) -> (Tensor(a!), " \
  "Tensor(b!), Tensor(c!), Tensor(d!))"
#define TSR_EMBEDDING_BAG_DENSE_ARGS_                                                          \
  "(Tensor grad, Tensor indices, Tensor offset2bag, Tensor bag_size, Tensor maximum_indices, " \
  "SymInt num_weights, bool scale_grad_by_freq, int mode, Tensor? per_sample_weights, int "    \
  "padding_idx=-1"
#define TSR_EMBEDDING_BAG_PSW_ARGS_                                                            \
  "(Tensor grad, Tensor weight, Tensor indices, Tensor offsets, Tensor offset2bag, int mode, " \
  "int padding_idx=-1"

}  // namespace

absl::Status DefineEmbeddingBagOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"_embedding_bag_forward_only" TSR_EMBEDDING_BAG_ARGS_
           ") -> (Tensor, Tensor, Tensor, Tensor)",
           MakeKernel<Named<EmbeddingBagK<false>>>("core::_embedding_bag_forward_only")},
          {"_embedding_bag_forward_only.out" TSR_EMBEDDING_BAG_ARGS_ TSR_EMBEDDING_BAG_OUTS_,
           MakeKernel<Named<ComputeIntoOuts<EmbeddingBagK<false>, 9, 4>>>(
               "core::_embedding_bag_forward_only_out")},
          {"_embedding_bag" TSR_EMBEDDING_BAG_ARGS_ ") -> (Tensor, Tensor, Tensor, Tensor)",
           MakeKernel<Named<EmbeddingBagK<true>>>("core::_embedding_bag")},
          {"_embedding_bag.out" TSR_EMBEDDING_BAG_ARGS_ TSR_EMBEDDING_BAG_OUTS_,
           MakeKernel<Named<ComputeIntoOuts<EmbeddingBagK<true>, 9, 4>>>(
               "core::_embedding_bag_out")},
          {"embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool "
           "scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? "
           "per_sample_weights=None, bool include_last_offset=False) -> (Tensor, Tensor, Tensor, "
           "Tensor)",
           MakeKernel<Named<EmbeddingBagPublic>>("core::embedding_bag")},
          {"embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool "
           "scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool "
           "include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)",
           MakeKernel<Named<EmbeddingBagPublic>>("core::embedding_bag_padding_idx")},
          {"_embedding_bag_dense_backward" TSR_EMBEDDING_BAG_DENSE_ARGS_ ") -> Tensor",
           MakeKernel<Named<ComputeOne<EmbeddingBagDenseBackward>>>(
               "core::_embedding_bag_dense_backward")},
          {"_embedding_bag_dense_backward.out" TSR_EMBEDDING_BAG_DENSE_ARGS_
           ", *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<EmbeddingBagDenseBackward, 10>>>(
               "core::_embedding_bag_dense_backward_out")},
          {"_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor "
           "offset2bag, Tensor bag_size, Tensor maximum_indices, SymInt num_weights, bool "
           "scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, int "
           "padding_idx=-1) -> Tensor",
           MakeKernel<Named<ComputeOne<EmbeddingBagBackward>>>("core::_embedding_bag_backward")},
          {"_embedding_bag_per_sample_weights_backward" TSR_EMBEDDING_BAG_PSW_ARGS_ ") -> Tensor",
           MakeKernel<Named<ComputeOne<EmbeddingBagPerSampleWeightsBackward>>>(
               "core::_embedding_bag_per_sample_weights_backward")},
          {"_embedding_bag_per_sample_weights_backward.out" TSR_EMBEDDING_BAG_PSW_ARGS_
           ", *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<EmbeddingBagPerSampleWeightsBackward, 7>>>(
               "core::_embedding_bag_per_sample_weights_backward_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
