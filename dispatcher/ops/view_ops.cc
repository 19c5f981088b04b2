// The view ops as dispatcher ops: composites over core/views.h, so they run on every device
// without backend code. reshape and flatten copy (through the `clone` op of the tensor's
// backend) only when no view can express the new shape.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

IntArrayRef Ints(const Value& v) { return v.int_list(); }

Out ViewK(const OperatorHandle&, const Stack& s) { return One(View(s[0].tensor(), Ints(s[1]))); }
Out PermuteK(const OperatorHandle&, const Stack& s) {
  return One(Permute(s[0].tensor(), Ints(s[1])));
}
Out TransposeK(const OperatorHandle&, const Stack& s) {
  return One(Transpose(s[0].tensor(), s[1].to_int(), s[2].to_int()));
}
Out TK(const OperatorHandle&, const Stack& s) { return One(T(s[0].tensor())); }
Out ExpandK(const OperatorHandle&, const Stack& s) {
  return One(Expand(s[0].tensor(), Ints(s[1])));
}
Out SliceK(const OperatorHandle&, const Stack& s) {
  return One(
      Slice(s[0].tensor(), s[1].to_int(), OptionalInt(s[2]), OptionalInt(s[3]), s[4].to_int()));
}
Out SelectK(const OperatorHandle&, const Stack& s) {
  return One(Select(s[0].tensor(), s[1].to_int(), s[2].to_int()));
}
Out NarrowK(const OperatorHandle&, const Stack& s) {
  return One(Narrow(s[0].tensor(), s[1].to_int(), s[2].to_int(), s[3].to_int()));
}
Out SqueezeK(const OperatorHandle&, const Stack& s) { return One(Squeeze(s[0].tensor())); }
Out SqueezeDimK(const OperatorHandle&, const Stack& s) {
  const int64_t dim = s[1].to_int();
  return One(SqueezeDims(s[0].tensor(), IntArrayRef(&dim, 1)));
}
Out SqueezeDimsK(const OperatorHandle&, const Stack& s) {
  return One(SqueezeDims(s[0].tensor(), Ints(s[1])));
}
Out UnsqueezeK(const OperatorHandle&, const Stack& s) {
  return One(Unsqueeze(s[0].tensor(), s[1].to_int()));
}
Out AsStridedK(const OperatorHandle&, const Stack& s) {
  return One(AsStrided(s[0].tensor(), Ints(s[1]), Ints(s[2]), OptionalInt(s[3])));
}
// detach(self): an alias of self (Tessera has no autograd graph to detach it from).
Out DetachK(const OperatorHandle&, const Stack& s) {
  const Tensor& self = s[0].tensor();
  return One(AsStrided(self, self.sizes(), self.strides(), self.storage_offset()));
}
// _reshape_alias(self, size, stride): self's storage seen with these sizes and strides from
// self's offset, as ATen's (what reshape and view trace to in PyTorch 1.13).
Out ReshapeAliasK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  absl::StatusOr<Tensor> alias = AsStrided(self, Ints(s[1]), Ints(s[2]), self.storage_offset());
  if (!alias.ok()) {  // AsStrided's message names as_strided: say which op the caller called
    return absl::Status(alias.status().code(),
                        absl::StrCat(op.name(), ": ", alias.status().message()));
  }
  return One(*std::move(alias));
}
Out DiagonalK(const OperatorHandle&, const Stack& s) {
  return One(Diagonal(s[0].tensor(), s[1].to_int(), s[2].to_int(), s[3].to_int()));
}
Out UnfoldK(const OperatorHandle&, const Stack& s) {
  return One(Unfold(s[0].tensor(), s[1].to_int(), s[2].to_int(), s[3].to_int()));
}

// Reshape: a view when strides allow it, else a contiguous clone viewed (PyTorch's rule).
absl::StatusOr<Tensor> Reshape(const OperatorHandle& op, const Tensor& self, IntArrayRef shape) {
  TSR_ASSIGN_OR_RETURN(DimVector sizes, InferViewSizes(shape, self.numel()));
  if (ComputeViewStrides(self.sizes(), self.strides(), sizes)) return View(self, sizes);
  TSR_ASSIGN_OR_RETURN(OperatorHandle clone, op.registry().Find("clone"));
  Stack stack{Value(self), Value(int64_t{kMemoryFormatContiguous})};
  TSR_RETURN_IF_ERROR(op.registry().Call(clone, &stack));
  return View(stack[0].tensor(), sizes);
}

Out ReshapeK(const OperatorHandle& op, const Stack& s) {
  return One(Reshape(op, s[0].tensor(), Ints(s[1])));
}

Out FlattenK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (self.dim() == 0) return One(Reshape(op, self, {1}));
  TSR_ASSIGN_OR_RETURN(const int64_t start, WrapDim(s[1].to_int(), self.dim(), "flatten"));
  TSR_ASSIGN_OR_RETURN(const int64_t end, WrapDim(s[2].to_int(), self.dim(), "flatten"));
  if (start > end) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "flatten: start_dim (%d) cannot come after end_dim (%d)", s[1].to_int(), s[2].to_int()));
  }
  DimVector shape(self.sizes().begin(), self.sizes().begin() + start);
  // An empty tensor's dims outside the 0 may multiply past int64 (found by the op_meta fuzzer).
  absl::StatusOr<int64_t> merged =
      ComputeNumel(IntArrayRef(self.sizes().data() + start, end - start + 1));
  if (!merged.ok()) {
    return absl::Status(merged.status().code(), absl::StrCat("flatten: dims ", start, " to ", end,
                                                             ": ", merged.status().message()));
  }
  shape.push_back(*merged);
  shape.insert(shape.end(), self.sizes().begin() + end + 1, self.sizes().end());
  return One(Reshape(op, self, shape));
}

}  // namespace

absl::Status DefineViewOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"view(Tensor(a) self, SymInt[] size) -> Tensor(a)", MakeKernel<ViewK>("core::view")},
          {"reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
           MakeKernel<ReshapeK>("core::reshape")},
          {"permute(Tensor(a) self, int[] dims) -> Tensor(a)",
           MakeKernel<PermuteK>("core::permute")},
          {"transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
           MakeKernel<TransposeK>("core::transpose")},
          {"t(Tensor(a) self) -> Tensor(a)", MakeKernel<TK>("core::t")},
          {"expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
           MakeKernel<ExpandK>("core::expand")},
          {"slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
           "SymInt step=1) -> Tensor(a)",
           MakeKernel<SliceK>("core::slice")},
          {"select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
           MakeKernel<SelectK>("core::select")},
          {"narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
           MakeKernel<NarrowK>("core::narrow")},
          {"squeeze(Tensor(a) self) -> Tensor(a)", MakeKernel<SqueezeK>("core::squeeze")},
          {"squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
           MakeKernel<SqueezeDimK>("core::squeeze.dim")},
          {"squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
           MakeKernel<SqueezeDimsK>("core::squeeze.dims")},
          {"unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
           MakeKernel<UnsqueezeK>("core::unsqueeze")},
          {"as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? "
           "storage_offset=None) -> Tensor(a)",
           MakeKernel<AsStridedK>("core::as_strided")},
          {"detach(Tensor(a) self) -> Tensor(a)", MakeKernel<DetachK>("core::detach")},
          {"_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> Tensor(a)",
           MakeKernel<ReshapeAliasK>("core::_reshape_alias")},
          {"diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
           MakeKernel<DiagonalK>("core::diagonal")},
          {"unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)",
           MakeKernel<UnfoldK>("core::unfold")},
          {"flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
           MakeKernel<FlattenK>("core::flatten")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
