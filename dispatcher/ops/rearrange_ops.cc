// Op set 1.8's ops that move elements without computing on them, as composites over the views,
// cat, flip, zeros and copy_, so every backend has them: roll (narrow + cat per rolled dim),
// rot90 (flip + transpose), diag and diag_embed (a zero tensor with self copied into its
// diagonal view, or a diagonal copied out). Semantics and
// checks are ATen's (TensorTransformations.cpp, TensorShape.cpp); errors name the op called.
#include "absl/strings/str_format.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

// roll along one dim: the last `shift` (mod size) elements first.
absl::StatusOr<Tensor> RollDim(OpRegistry& r, const Tensor& self, int64_t shift, int64_t dim) {
  const int64_t size = self.sizes()[dim];
  if (size == 0) return self;
  // shift % size first: shift may be anything, INT64_MIN included.
  const int64_t start = (size - shift % size) % size;
  if (start == 0) return self;
  TSR_ASSIGN_OR_RETURN(Tensor tail, Narrow(self, dim, start, size - start));
  TSR_ASSIGN_OR_RETURN(Tensor head, Narrow(self, dim, 0, start));
  return CallOne(r, "cat", {Value(std::vector<Tensor>{tail, head}), Value(dim)});
}

// roll(self, shifts, dims=[]): without dims, self flattened, rolled and viewed back.
absl::StatusOr<Tensor> RollOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const IntList& shifts = s[1].int_list();
  const IntList& dims = s[2].int_list();
  if (shifts.empty()) return Invalid(op, "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {
    TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {s[0], Value(IntList{-1})}));
    TSR_ASSIGN_OR_RETURN(Tensor rolled, RollDim(r, flat, shifts[0], 0));
    if (rolled.impl() == flat.impl()) return CallOne(r, "clone", {s[0], Value(std::nullopt)});
    return CallOne(r, "reshape",
                   {Value(rolled), Value(IntList(self.sizes().begin(), self.sizes().end()))});
  }
  if (shifts.size() != dims.size()) {
    return Invalid(op, absl::StrFormat("shifts and dimensions must align. shifts: %d, dims: %d",
                                       shifts.size(), dims.size()));
  }
  if (self.dim() == 0) {  // ATen's dim wrap: a 0-dim tensor has no dim to roll along
    return absl::OutOfRangeError(absl::StrFormat(
        "%s: Dimension specified as %d but tensor has no dimensions", op.name(), dims[0]));
  }
  Tensor out = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(dims[i], self.dim(), op.name()));
    TSR_ASSIGN_OR_RETURN(out, RollDim(r, out, shifts[i], dim));
  }
  // Nothing rolled (empty, or every shift a multiple of its size): a new tensor all the same.
  if (out.impl() == self.impl()) return CallOne(r, "clone", {s[0], Value(std::nullopt)});
  return out;
}

// rot90(self, k=1, dims=[0, 1]): k quarter turns from dims[0] towards dims[1].
absl::StatusOr<Tensor> Rot90Of(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const IntList& dims = s[2].int_list();
  const int64_t nd = self.dim();
  if (dims.size() != 2) {
    return Invalid(
        op, absl::StrFormat("expected total rotation dims == 2, but got dims = %d", dims.size()));
  }
  if (nd < 2) {
    return Invalid(op, absl::StrFormat("expected total dims >= 2, but got total dims = %d", nd));
  }
  int64_t apart = 0;  // |dims[0] - dims[1]|, where it fits in an int64
  const bool overflows = __builtin_sub_overflow(dims[0], dims[1], &apart);
  if (dims[0] == dims[1] || (!overflows && (apart == nd || apart == -nd))) {
    return Invalid(op, absl::StrFormat("expected rotation dims to be different, but got dim0 = %d "
                                       "and dim1 = %d",
                                       dims[0], dims[1]));
  }
  for (int i = 0; i < 2; ++i) {
    if (dims[i] >= nd || dims[i] < -nd) {
      return Invalid(op, absl::StrFormat("Rotation dim%d out of range, dim%d = %d", i, i, dims[i]));
    }
  }
  const int64_t k = ((s[1].to_int() % 4) + 4) % 4;
  auto flip = [&](IntList along) { return CallOne(r, "flip", {s[0], Value(std::move(along))}); };
  switch (k) {
    case 1: {
      TSR_ASSIGN_OR_RETURN(Tensor flipped, flip({dims[1]}));
      return Transpose(flipped, dims[0], dims[1]);
    }
    case 2:
      return flip(dims);
    case 3: {
      TSR_ASSIGN_OR_RETURN(Tensor flipped, flip({dims[0]}));
      return Transpose(flipped, dims[0], dims[1]);
    }
    default:
      // A contiguous copy, as ATen's (the other turns give a new tensor's view).
      return CallOne(r, "clone", {s[0], Value(kMemoryFormatContiguous)});
  }
}

// diag_embed(self, offset=0, dim1=-2, dim2=-1): self's last dim laid along the offset diagonal
// of dims (dim1, dim2) of a zero tensor one dim larger.
absl::StatusOr<Tensor> DiagEmbed(const OperatorHandle& op, const Tensor& self, int64_t offset,
                                 int64_t dim1_arg, int64_t dim2_arg) {
  OpRegistry& r = op.registry();
  if (self.dim() == 0) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%s: expected a tensor with at least 1 dim (its last is the diagonal), got a 0-dim one",
        op.name()));
  }
  const int64_t nd = self.dim() + 1;
  TSR_ASSIGN_OR_RETURN(const int64_t dim1, WrapDim(dim1_arg, nd, op.name()));
  TSR_ASSIGN_OR_RETURN(const int64_t dim2, WrapDim(dim2_arg, nd, op.name()));
  if (dim1 == dim2) {
    return Invalid(
        op, absl::StrFormat("diagonal dimensions cannot be identical %d, %d", dim1_arg, dim2_arg));
  }
  int64_t length = 0;  // |offset| + the last dim's size
  if (offset == INT64_MIN ||
      __builtin_add_overflow(offset < 0 ? -offset : offset, self.sizes().back(), &length)) {
    return Invalid(op,
                   absl::StrFormat("offset %d makes the diagonal's dims overflow int64", offset));
  }
  DimVector shape(self.sizes().begin(), self.sizes().end() - 1);
  shape.insert(shape.begin() + std::min(dim1, dim2), length);
  shape.insert(shape.begin() + std::max(dim1, dim2), length);
  TSR_ASSIGN_OR_RETURN(Tensor out, Zeros(r, shape, self.dtype(), self.device()));
  TSR_ASSIGN_OR_RETURN(Tensor diagonal, Diagonal(out, offset, dim1, dim2));
  if (diagonal.numel() > 0) TSR_RETURN_IF_ERROR(CallOne(r, "copy_", {diagonal, self}).status());
  return out;
}

absl::StatusOr<Tensor> DiagEmbedOf(const OperatorHandle& op, const Stack& s) {
  return DiagEmbed(op, s[0].tensor(), s[1].to_int(), s[2].to_int(), s[3].to_int());
}

// diag(self, diagonal=0): a vector onto a matrix's diagonal, or a matrix's diagonal copied out.
absl::StatusOr<Tensor> DiagOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const int64_t offset = s[1].to_int();
  if (self.dim() == 1) return DiagEmbed(op, self, offset, 0, 1);
  if (self.dim() != 2) {
    return Invalid(op, absl::StrFormat("Supports 1D or 2D tensors. Got %dD", self.dim()));
  }
  TSR_ASSIGN_OR_RETURN(Tensor diagonal, Diagonal(self, offset, 0, 1));
  return CallOne(op.registry(), "clone", {Value(diagonal), Value(std::nullopt)});
}

}  // namespace

absl::Status DefineRearrangeOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor",
           MakeKernel<Named<ComputeOne<RollOf>>>("core::roll")},
          {"roll.out(Tensor self, SymInt[1] shifts, int[1] dims=[], *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<RollOf, 3>>>("core::roll_out")},
          {"rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor",
           MakeKernel<Named<ComputeOne<Rot90Of>>>("core::rot90")},
          {"rot90.out(Tensor self, int k=1, int[] dims=[0, 1], *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<Rot90Of, 3>>>("core::rot90_out")},
          {"diag(Tensor self, int diagonal=0) -> Tensor",
           MakeKernel<Named<ComputeOne<DiagOf>>>("core::diag")},
          {"diag.out(Tensor self, int diagonal=0, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<DiagOf, 2>>>("core::diag_out")},
          {"diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor",
           MakeKernel<Named<ComputeOne<DiagEmbedOf>>>("core::diag_embed")},
          {"diag_embed.out(Tensor self, int offset=0, int dim1=-2, int dim2=-1, *, Tensor(a!) "
           "out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<DiagEmbedOf, 4>>>("core::diag_embed_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
