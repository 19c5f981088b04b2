// Indexing, sorting and joining ops of op set v1: index_select, gather, scatter (src, value),
// scatter_add, scatter with reduce, topk, sort (and sort.stable), argsort, cat, stack, flip, tril,
// triu. Schemas and meta functions
// with PyTorch's checks; cat, stack and argsort are composites.
#include "absl/strings/str_format.h"
#include "core/type_promotion.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;
const Device kMetaDevice(DeviceType::kMeta);

absl::Status CheckIndexDtype(const OperatorHandle& op, const Tensor& index, bool allow_int32) {
  if (index.dtype() == ScalarType::kInt64 || (allow_int32 && index.dtype() == ScalarType::kInt32)) {
    return absl::OkStatus();
  }
  return Invalid(op,
                 absl::StrFormat("expected 'index' to be an int64%s tensor, got %s",
                                 allow_int32 ? " or int32" : "", ScalarTypeName(index.dtype())));
}

// index_select(self, dim, index): index is 1D (or 0-dim).
Out IndexSelectMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const Tensor& index = s[2].tensor();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), self.dim(), op.name()));
  TSR_RETURN_IF_ERROR(CheckIndexDtype(op, index, true));
  if (index.dim() > 1) {
    return Invalid(op, absl::StrFormat("expected 'index' to be 1D, got %dD", index.dim()));
  }
  DimVector shape(self.sizes().begin(), self.sizes().end());
  if (self.dim() > 0) shape[dim] = index.numel();
  return One(Empty(shape, self.dtype(), kMetaDevice));
}

// gather(self, dim, index, *, sparse_grad=False): index has self's rank and fits in it outside
// `dim`; the result has index's shape.
// As in PyTorch, an empty index is not checked at all (neither its dtype nor its shape):
// gather(self, 0, uint8[0]) is an empty result.
absl::Status CheckScatterGatherShapes(const OperatorHandle& op, const Tensor& self, int64_t dim,
                                      const Tensor& index, const Tensor* src) {
  if (index.numel() == 0) return absl::OkStatus();
  TSR_RETURN_IF_ERROR(CheckIndexDtype(op, index, false));
  const int64_t rank = std::max<int64_t>(self.dim(), 1);
  if (std::max<int64_t>(index.dim(), 1) != rank) {
    return Invalid(op, absl::StrFormat("index tensor must have the same number of dimensions as "
                                       "input tensor (%dD vs %dD)",
                                       index.dim(), self.dim()));
  }
  // A 0-dim tensor counts as one of size [1] (PyTorch's ensure_nonempty_size): a 0-dim src
  // beside a 1-D index was read past its sizes (found by the op_meta fuzzer).
  auto size_at = [](const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.sizes()[d]; };
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (d != dim && index.sizes()[d] > size_at(self, d)) {
      return Invalid(
          op, absl::StrFormat("size of dimension %d of index (%d) must not exceed "
                              "that of self (%d); index %s, self %s",
                              d, index.sizes()[d], size_at(self, d), ShapeToString(index.sizes()),
                              ShapeToString(self.sizes())));
    }
    if (src != nullptr && index.sizes()[d] > size_at(*src, d)) {
      return Invalid(op, absl::StrFormat("size of dimension %d of index (%d) must not exceed "
                                         "that of src (%d)",
                                         d, index.sizes()[d], size_at(*src, d)));
    }
  }
  return absl::OkStatus();
}

Out GatherMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const Tensor& index = s[2].tensor();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), self.dim(), op.name()));
  TSR_RETURN_IF_ERROR(CheckScatterGatherShapes(op, self, dim, index, nullptr));
  return One(Empty(index.sizes(), self.dtype(), kMetaDevice));
}

// scatter.src / scatter_add (self, dim, index, src) and scatter.value (self, dim, index, value);
// scatter.reduce and scatter.value_reduce add `*, str reduce` ('add' or 'multiply').
Out ScatterMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (s.size() > 4 && s[4].is_string() && s[4].string() != "add" && s[4].string() != "multiply") {
    return Invalid(op, absl::StrFormat("reduce argument must be either add or multiply, got '%s'",
                                       s[4].string()));
  }
  const Tensor& index = s[2].tensor();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), self.dim(), op.name()));
  const Tensor* src = s[3].is_tensor() ? &s[3].tensor() : nullptr;
  if (src != nullptr && src->dtype() != self.dtype()) {
    return Invalid(op,
                   absl::StrFormat("expected self and src to have the same dtype, got %s and %s",
                                   ScalarTypeName(self.dtype()), ScalarTypeName(src->dtype())));
  }
  if (src != nullptr && std::max<int64_t>(src->dim(), 1) != std::max<int64_t>(self.dim(), 1)) {
    return Invalid(op, "src must have the same number of dimensions as self");
  }
  TSR_RETURN_IF_ERROR(CheckScatterGatherShapes(op, self, dim, index, src));
  return One(Empty(self.sizes(), self.dtype(), kMetaDevice));
}

// sort(self, dim=-1, descending=False) and sort.stable(self, *, stable, dim=-1,
// descending=False) -> (values, indices); kDim is where dim is.
template <int kDim>
Out SortMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[kDim].to_int(), self.dim(), op.name()));
  (void)dim;
  TSR_ASSIGN_OR_RETURN(Tensor values, Empty(self.sizes(), self.dtype(), kMetaDevice));
  TSR_ASSIGN_OR_RETURN(Tensor indices, Empty(self.sizes(), ScalarType::kInt64, kMetaDevice));
  return std::vector<Tensor>{values, indices};
}

// topk(self, k, dim=-1, largest=True, sorted=True) -> (values, indices)
Out TopkMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[2].to_int(), self.dim(), op.name()));
  const int64_t k = s[1].to_int();
  const int64_t size = self.dim() == 0 ? 1 : self.sizes()[dim];
  if (k < 0 || k > size) {
    return Invalid(op, absl::StrFormat("selected index k out of range (k = %d, dimension %d has "
                                       "size %d)",
                                       k, dim, size));
  }
  DimVector shape(self.sizes().begin(), self.sizes().end());
  if (self.dim() > 0) shape[dim] = k;
  TSR_ASSIGN_OR_RETURN(Tensor values, Empty(shape, self.dtype(), kMetaDevice));
  TSR_ASSIGN_OR_RETURN(Tensor indices, Empty(shape, ScalarType::kInt64, kMetaDevice));
  return std::vector<Tensor>{values, indices};
}

// flip(self, dims)
Out FlipMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  std::vector<bool> seen(std::max<int64_t>(self.dim(), 1), false);
  for (int64_t d : s[1].int_list()) {
    TSR_ASSIGN_OR_RETURN(const int64_t w, WrapDim(d, self.dim(), op.name()));
    if (seen[w]) return Invalid(op, absl::StrFormat("dim %d appears multiple times in dims", w));
    seen[w] = true;
  }
  return One(Empty(self.sizes(), self.dtype(), kMetaDevice));
}

// tril / triu(self, diagonal=0): at least 2D.
Out TriMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (self.dim() < 2) {
    return Invalid(
        op, absl::StrFormat("input tensor must have at least 2 dimensions, got %dD", self.dim()));
  }
  return One(Empty(self.sizes(), self.dtype(), kMetaDevice));
}

// cat(tensors, dim=0): composite over copy_ into slices of the result, on any device.
absl::StatusOr<Tensor> Cat(const OperatorHandle& op, const std::vector<Tensor>& tensors,
                           int64_t dim_arg, const Tensor* out) {
  if (tensors.empty()) return Invalid(op, "expected a non-empty list of tensors");
  // Legacy rule: 1D tensors of size 0 are skipped.
  std::vector<const Tensor*> parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    if (!(t.dim() == 1 && t.numel() == 0)) parts.push_back(&t);
  }
  const Tensor& first = parts.empty() ? tensors[0] : *parts[0];
  if (first.dim() == 0) return Invalid(op, "zero-dimensional tensor cannot be concatenated");
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(dim_arg, first.dim(), op.name()));
  ScalarType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) dtype = PromoteTypes(dtype, t.dtype());
  DimVector shape(first.sizes().begin(), first.sizes().end());
  shape[dim] = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& t = *parts[i];
    if (t.dim() != first.dim()) {
      return Invalid(op, absl::StrFormat("tensors must have the same number of dimensions: got %d "
                                         "and %d (tensor %d)",
                                         first.dim(), t.dim(), i));
    }
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d != dim && t.sizes()[d] != first.sizes()[d]) {
        return Invalid(op, absl::StrFormat("sizes of tensors must match except in dimension %d. "
                                           "Expected size %d but got size %d for tensor number %d "
                                           "in the list",
                                           dim, first.sizes()[d], t.sizes()[d], i));
      }
    }
    // Sizes of empty tensors may sum past int64 (found by the op_meta fuzzer).
    TSR_ASSIGN_OR_RETURN(shape[dim], CheckedAdd(shape[dim], t.sizes()[dim], op.name(),
                                                "the concatenated dimension"));
  }
  Tensor result;
  if (out != nullptr) {
    if (!CanCast(dtype, out->dtype())) {
      return Invalid(op, absl::StrFormat("result type %s can't be cast to the desired output "
                                         "type %s",
                                         ScalarTypeName(dtype), ScalarTypeName(out->dtype())));
    }
    TSR_RETURN_IF_ERROR(out->impl()->ResizeOutput(op.name(), shape));
    result = *out;
  } else {
    TSR_ASSIGN_OR_RETURN(result, Empty(shape, dtype, first.device()));
  }
  int64_t offset = 0;
  TSR_ASSIGN_OR_RETURN(const OperatorHandle copy, op.registry().Find("copy_"));  // once per cat
  for (const Tensor* t : parts) {
    TSR_ASSIGN_OR_RETURN(Tensor slice, Narrow(result, dim, offset, t->sizes()[dim]));
    Stack stack{Value(std::move(slice)), Value(*t)};
    TSR_RETURN_IF_ERROR(op.registry().Call(copy, &stack));
    offset += t->sizes()[dim];
  }
  return result;
}
Out CatK(const OperatorHandle& op, const Stack& s) {
  return One(Cat(op, s[0].tensor_list(), s[1].to_int(), nullptr));
}
Out CatOutK(const OperatorHandle& op, const Stack& s) {
  return One(Cat(op, s[0].tensor_list(), s[1].to_int(), &s[2].tensor()));
}

// stack(tensors, dim=0): cat of the tensors each unsqueezed at dim; all shapes equal.
absl::StatusOr<std::vector<Tensor>> Unsqueezed(const OperatorHandle& op, const Stack& s) {
  const std::vector<Tensor>& tensors = s[0].tensor_list();
  if (tensors.empty()) return Invalid(op, "expected a non-empty list of tensors");
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), tensors[0].dim() + 1, op.name()));
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].sizes() != tensors[0].sizes()) {
      return Invalid(op, absl::StrFormat("stack expects each tensor to be equal size, but got %s "
                                         "at entry 0 and %s at entry %d",
                                         ShapeToString(tensors[0].sizes()),
                                         ShapeToString(tensors[i].sizes()), i));
    }
    TSR_ASSIGN_OR_RETURN(Tensor u, Unsqueeze(tensors[i], dim));
    parts.push_back(std::move(u));
  }
  return parts;
}
Out StackK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> parts, Unsqueezed(op, s));
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), parts[0].dim(), op.name()));
  return One(Cat(op, parts, dim, nullptr));
}
Out StackOutK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> parts, Unsqueezed(op, s));
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), parts[0].dim(), op.name()));
  return One(Cat(op, parts, dim, &s[2].tensor()));
}

// argsort(self, dim=-1, descending=False) -> sort's indices.
Out ArgsortK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(OperatorHandle sort, op.registry().Find("sort"));
  Stack stack{s[0], s[1], s[2]};
  TSR_RETURN_IF_ERROR(op.registry().Call(sort, &stack));
  return std::vector<Tensor>{stack[1].tensor()};
}

}  // namespace

absl::Status DefineIndexOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(DefineAll(
      registry,
      {
          {"index_select(Tensor self, int dim, Tensor index) -> Tensor",
           MakeKernel<IndexSelectMeta>("meta::index_select")},
          {"gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
           MakeKernel<GatherMeta>("meta::gather")},
          {"scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
           MakeKernel<ScatterMeta>("meta::scatter")},
          {"scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
           MakeKernel<ScatterMeta>("meta::scatter")},
          {"scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
           MakeKernel<ScatterMeta>("meta::scatter_add")},
          {"scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> "
           "Tensor",
           MakeKernel<ScatterMeta>("meta::scatter")},
          {"scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str "
           "reduce) -> Tensor",
           MakeKernel<ScatterMeta>("meta::scatter")},
          {"sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor "
           "indices)",
           MakeKernel<SortMeta<1>>("meta::sort")},
          {"sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
           "(Tensor values, Tensor indices)",
           MakeKernel<SortMeta<2>>("meta::sort")},
          {"topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
           "(Tensor values, Tensor indices)",
           MakeKernel<TopkMeta>("meta::topk")},
          {"flip(Tensor self, int[] dims) -> Tensor", MakeKernel<FlipMeta>("meta::flip")},
          {"tril(Tensor self, SymInt diagonal=0) -> Tensor", MakeKernel<TriMeta>("meta::tril")},
          {"triu(Tensor self, SymInt diagonal=0) -> Tensor", MakeKernel<TriMeta>("meta::triu")},
      },
      KernelSlot::kMeta));
  struct Variant {
    const char *functional, *out, *inplace;
    OutputAliasing aliasing = OutputAliasing::kDisjoint;
  };
  for (const Variant& v :
       {Variant{"index_select", "index_select.out", ""}, Variant{"gather", "gather.out", ""},
        Variant{"scatter.src", "scatter.src_out", "scatter_.src"},
        Variant{"scatter.value", "scatter.value_out", "scatter_.value"},
        Variant{"scatter_add", "scatter_add.out", "scatter_add_"},
        Variant{"scatter.reduce", "scatter.reduce_out", "scatter_.reduce"},
        Variant{"scatter.value_reduce", "scatter.value_reduce_out", "scatter_.value_reduce"},
        Variant{"sort", "sort.values", ""}, Variant{"sort.stable", "sort.values_stable", ""},
        Variant{"topk", "topk.values", ""}, Variant{"flip", "flip.out", ""},
        // Element i of tril/triu is self's element i or zero.
        Variant{"tril", "tril.out", "tril_", OutputAliasing::kElementwise},
        Variant{"triu", "triu.out", "triu_", OutputAliasing::kElementwise}}) {
    TSR_RETURN_IF_ERROR(
        registry.DefineVariants(v.functional, v.out, v.inplace, OutDtypeRule::kExact, v.aliasing));
  }
  return DefineAll(
      registry,
      {
          {"cat(Tensor[] tensors, int dim=0) -> Tensor", MakeKernel<CatK>("core::cat")},
          {"cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<CatOutK>("core::cat_out")},
          {"stack(Tensor[] tensors, int dim=0) -> Tensor", MakeKernel<StackK>("core::stack")},
          {"stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<StackOutK>("core::stack_out")},
          {"argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor",
           MakeKernel<ArgsortK>("core::argsort")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
