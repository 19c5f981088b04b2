// Op set 1.9's value-selected indexing, composites over index_select, scatter and the
// pointwise ops so every backend has them: nonzero, masked_select, masked_scatter, and
// PyTorch's advanced indexing, index.Tensor (x[i, :, j]) and index_put (x[i, :, j] = v).
//
// Advanced indexing (ATen's TensorAdvancedIndexing.cpp, IndexingUtils.h) as one index_select:
//   1. a bool (or uint8) mask index stands for the coordinates of its true elements, one
//      int64 index per dim it covers (nonzero);
//   2. the index tensors broadcast together to one shape B, and each wraps its negative
//      values (checked against its dim's size, read back: IndexRange);
//   3. self is permuted so the indexed dims are consecutive: where they already are, in place;
//      otherwise moved to the front (then B comes first in the result, as PyTorch puts it);
//   4. the indices fold into one linear position within the indexed dims (row-major), and
//      self, seen as [before, indexed, after], is gathered along its middle dim;
//      index_put scatters (index_copy, or index_add to accumulate) the same way and copies
//      the block back through the permuted view.
// nonzero and masked_select have shapes that depend on values: they read a count back to
// the host (FlatNonzero), and refuse the meta device (UNIMPLEMENTED), as ATen's meta does.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/index_support.h"

namespace tessera {
namespace ops {
namespace {

int64_t Product(const DimVector& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;  // sizes of one tensor: their product is its numel
  return n;
}

absl::StatusOr<Tensor> AsMask(OpRegistry& r, const Tensor& self) {
  if (self.dtype() == ScalarType::kBool) return self;
  return CallOne(r, "ne.Scalar", {Value(self), Value(Scalar(int64_t{0}))});
}

// ---- nonzero(self) -> int64 [n, self.dim()] ----

absl::StatusOr<Tensor> NonzeroOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor mask, AsMask(r, self));
  TSR_ASSIGN_OR_RETURN(Tensor positions, FlatNonzero(op, mask));
  const int64_t n = positions.numel(), nd = self.dim();
  if (n == 0 || nd == 0) return Zeros(r, {n, nd}, ScalarType::kInt64, self.device());
  TSR_ASSIGN_OR_RETURN(DimVector strides, ContiguousStrides(self.sizes()));
  // Coordinate d of a flat position p: (p / stride_d) mod size_d.
  std::vector<Tensor> coordinates;
  for (int64_t d = 0; d < nd; ++d) {
    TSR_ASSIGN_OR_RETURN(
        Tensor c, CallOne(r, "floor_divide.Scalar", {Value(positions), Value(Scalar(strides[d]))}));
    if (d > 0) {
      TSR_ASSIGN_OR_RETURN(
          c, CallOne(r, "remainder.Scalar", {Value(c), Value(Scalar(self.sizes()[d]))}));
    }
    coordinates.push_back(std::move(c));
  }
  return CallOne(r, "stack", {Value(std::move(coordinates)), Value(int64_t{1})});
}

// ---- masked_select(self, mask), masked_scatter(self, mask, source) ----

// Broadcast: self and mask expanded to their common shape (mask bool; `what` is ATen's
// message where it is not).
absl::StatusOr<std::pair<Tensor, Tensor>> Broadcast(const OperatorHandle& op, const Tensor& self,
                                                    const Tensor& mask, const std::string& what) {
  if (mask.dtype() != ScalarType::kBool) return Invalid(op, what);
  absl::StatusOr<DimVector> shape = BroadcastShapes(self.sizes(), mask.sizes());
  if (!shape.ok()) return Invalid(op, std::string(shape.status().message()));
  TSR_ASSIGN_OR_RETURN(Tensor x, Expand(self, *shape));
  TSR_ASSIGN_OR_RETURN(Tensor m, Expand(mask, *shape));
  return std::make_pair(x, m);
}

absl::StatusOr<Tensor> MaskedSelectOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(auto xm,
                       Broadcast(op, s[0].tensor(), s[1].tensor(), "expected BoolTensor for mask"));
  TSR_ASSIGN_OR_RETURN(Tensor positions, FlatNonzero(op, xm.second));
  TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {Value(xm.first), Value(IntList{-1})}));
  return CallOne(r, "index_select", {Value(flat), Value(int64_t{0}), Value(positions)});
}

absl::StatusOr<Tensor> MaskedScatterOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const Tensor& mask = s[1].tensor();
  const Tensor& source = s[2].tensor();
  if (self.dtype() != source.dtype()) {
    return Invalid(op,
                   absl::StrFormat("expected self and source to have same dtypes but got %s "
                                   "and %s",
                                   ScalarTypeName(self.dtype()), ScalarTypeName(source.dtype())));
  }
  TSR_ASSIGN_OR_RETURN(
      auto xm, Broadcast(op, self, mask,
                         absl::StrCat("masked_scatter_ only supports boolean masks, but got mask "
                                      "with dtype ",
                                      std::string(ScalarTypeName(mask.dtype())))));
  TSR_ASSIGN_OR_RETURN(Tensor out,
                       CallOne(r, "clone", {Value(xm.first), Value(kMemoryFormatContiguous)}));
  if (out.device().type == DeviceType::kMeta) return out;  // its shape needs no values
  TSR_ASSIGN_OR_RETURN(Tensor positions, FlatNonzero(op, xm.second));
  const int64_t n = positions.numel();
  if (n > source.numel())
    return Invalid(op, "Number of elements of source < number of ones in mask");
  if (n == 0) return out;
  TSR_ASSIGN_OR_RETURN(Tensor flat_source,
                       CallOne(r, "reshape", {Value(source), Value(IntList{-1})}));
  TSR_ASSIGN_OR_RETURN(Tensor used, Narrow(flat_source, 0, 0, n));
  TSR_ASSIGN_OR_RETURN(Tensor flat, View(out, {out.numel()}));
  TSR_ASSIGN_OR_RETURN(
      Tensor placed,
      CallOne(r, "scatter.src", {Value(flat), Value(int64_t{0}), Value(positions), Value(used)}));
  return CallOne(r, "reshape", {Value(placed), Value(ToIntList(out.sizes()))});
}

// ---- advanced indexing ----

// Indexed: self seen through its indices, steps 1-3 above.
struct Indexed {
  Tensor permuted;                   // self, the indexed dims consecutive (a view)
  DimVector before, indexed, after;  // permuted's sizes: around and in the indexed block
  DimVector broadcast;               // B, the indices' common shape
  Tensor linear;                     // int64 of shape B: positions within the indexed block
  bool any = false;                  // false: every index None (nothing selects)

  DimVector ResultShape() const {
    DimVector shape = before;
    shape.insert(shape.end(), broadcast.begin(), broadcast.end());
    shape.insert(shape.end(), after.begin(), after.end());
    return shape;
  }
  // Block: [before, indexed, after] products, for a 3-D view or copy of `permuted`.
  IntList Block() const { return {Product(before), Product(indexed), Product(after)}; }
};

absl::Status TooMany(const OperatorHandle& op, int64_t dims, int64_t got) {
  return OutOfRange(
      op, absl::StrFormat("too many indices for tensor of dimension %d (got %d)", dims, got));
}

// Expand (step 1): one int index (or None) per dim of self, masks replaced by their
// coordinates.
absl::StatusOr<std::vector<Tensor>> ExpandMasks(const OperatorHandle& op, const Tensor& self,
                                                const std::vector<Tensor>& indices) {
  if (static_cast<int64_t>(indices.size()) > self.dim()) {
    return TooMany(op, self.dim(), indices.size());
  }
  std::vector<Tensor> out;
  for (const Tensor& index : indices) {
    if (!index.defined()) {
      out.push_back(index);
      continue;
    }
    const ScalarType t = index.dtype();
    if (t == ScalarType::kInt64 || t == ScalarType::kInt32) {
      out.push_back(index);
      continue;
    }
    if (t != ScalarType::kBool && t != ScalarType::kUInt8) {
      return OutOfRange(op, "tensors used as indices must be long, int, byte or bool tensors");
    }
    if (index.dim() == 0) {  // x[True]: Python's indexing unsqueezes self for it; ATen asserts
      return Invalid(op,
                     "a 0-dim bool index selects nothing here: unsqueeze self and index it "
                     "with a 1-element mask instead (as PyTorch's x[True] does)");
    }
    const int64_t at = out.size();
    if (at + index.dim() > self.dim()) return TooMany(op, self.dim(), at + index.dim());
    for (int64_t j = 0; j < index.dim(); ++j) {
      if (index.sizes()[j] != self.sizes()[at + j]) {
        return OutOfRange(op, absl::StrFormat("The shape of the mask %s at index %d does not match "
                                              "the shape of the indexed tensor %s at index %d",
                                              ShapeToString(index.sizes()), j,
                                              ShapeToString(self.sizes()), at + j));
      }
    }
    TSR_ASSIGN_OR_RETURN(Tensor mask, AsMask(op.registry(), index));
    TSR_ASSIGN_OR_RETURN(Tensor positions, NonzeroOf(op, {Value(mask)}));
    for (int64_t j = 0; j < index.dim(); ++j) {
      TSR_ASSIGN_OR_RETURN(Tensor column, Select(positions, 1, j));
      out.push_back(std::move(column));
    }
  }
  return out;
}

absl::StatusOr<Indexed> Index(const OperatorHandle& op, const Tensor& self,
                              const std::vector<Tensor>& given) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> indices, ExpandMasks(op, self, given));
  std::vector<int64_t> dims;  // the indexed dims of self, in order
  for (size_t d = 0; d < indices.size(); ++d) {
    if (indices[d].defined()) dims.push_back(d);
  }
  Indexed ix;
  ix.permuted = self;
  ix.before = DimVector(self.sizes().begin(), self.sizes().end());
  if (dims.empty()) return ix;
  ix.any = true;
  // Step 2: a common shape, and every index within its dim.
  DimVector shape = DimVector(indices[dims[0]].sizes().begin(), indices[dims[0]].sizes().end());
  for (int64_t d : dims) {
    absl::StatusOr<DimVector> b = BroadcastShapes(shape, indices[d].sizes());
    if (!b.ok()) {
      std::vector<std::string> shapes;
      for (int64_t e : dims) shapes.push_back(ShapeToString(indices[e].sizes()));
      return OutOfRange(op, absl::StrCat("shape mismatch: indexing tensors could not be broadcast "
                                         "together with shapes ",
                                         absl::StrJoin(shapes, ", ")));
    }
    shape = *b;
  }
  ix.broadcast = shape;
  std::vector<Tensor> wrapped;
  // An empty broadcast shape selects nothing: no index is read (as ATen's kernel reads none).
  // Its count is checked: indices of [n, 1] and [1, n] broadcast to n^2, past int64 on Meta.
  absl::StatusOr<int64_t> selected = ComputeNumel(shape);
  if (!selected.ok()) {
    return OutOfRange(op, absl::StrCat("the indices broadcast to ", ShapeToString(shape), ": ",
                                       selected.status().message()));
  }
  const bool selects = *selected > 0;
  for (size_t k = 0; k < dims.size(); ++k) {  // ATen's message counts the indexed dims only
    const int64_t d = dims[k];
    const int64_t size = self.sizes()[d];
    const Tensor& index = indices[d];
    if (selects && index.numel() > 0) {
      if (size == 0) return OutOfRange(op, "index is out of bounds for dimension with size 0");
      TSR_ASSIGN_OR_RETURN(std::optional<Range> range, IndexRange(r, index));
      if (range && (range->min < -size || range->max >= size)) {
        return OutOfRange(op,
                          absl::StrFormat("index %d is out of bounds for dimension %d with size %d",
                                          range->min < -size ? range->min : range->max, k, size));
      }
    }
    TSR_ASSIGN_OR_RETURN(Tensor as_long, AsLong(r, index));
    TSR_ASSIGN_OR_RETURN(Tensor w, WrapNegative(r, as_long, size));
    wrapped.push_back(std::move(w));
  }
  // Step 3: the permutation.
  const bool adjacent = dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  DimVector order;
  if (adjacent) {
    for (int64_t d = 0; d < self.dim(); ++d) order.push_back(d);
  } else {
    order.assign(dims.begin(), dims.end());
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (!std::count(dims.begin(), dims.end(), d)) order.push_back(d);
    }
  }
  TSR_ASSIGN_OR_RETURN(ix.permuted, Permute(self, order));
  const int64_t first = adjacent ? dims.front() : 0;
  const int64_t last = first + dims.size();  // one past the block
  const IntArrayRef sizes = ix.permuted.sizes();
  ix.before = DimVector(sizes.begin(), sizes.begin() + first);
  ix.indexed = DimVector(sizes.begin() + first, sizes.begin() + last);
  ix.after = DimVector(sizes.begin() + last, sizes.end());
  // Step 4: linear = ((i0 * s1 + i1) * s2 + i2) ..., broadcast to B.
  Tensor linear = wrapped[0];
  for (size_t k = 1; k < wrapped.size(); ++k) {
    TSR_ASSIGN_OR_RETURN(linear,
                         CallOne(r, "mul.Scalar", {Value(linear), Value(Scalar(ix.indexed[k]))}));
    TSR_ASSIGN_OR_RETURN(
        linear,
        CallOne(r, "add.Tensor", {Value(linear), Value(wrapped[k]), Value(Scalar(int64_t{1}))}));
  }
  TSR_ASSIGN_OR_RETURN(ix.linear, Expand(linear, shape));
  return ix;
}

// index.Tensor(self, indices)
absl::StatusOr<Tensor> IndexOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(Indexed ix, Index(op, self, s[1].tensor_list()));
  // Every index None: nothing selects, self whole (a new tensor, as every other case).
  if (!ix.any) return CallOne(r, "clone", {Value(self), Value(kMemoryFormatContiguous)});
  TSR_ASSIGN_OR_RETURN(Tensor block,
                       CallOne(r, "reshape", {Value(ix.permuted), Value(ix.Block())}));
  TSR_ASSIGN_OR_RETURN(Tensor linear,
                       CallOne(r, "reshape", {Value(ix.linear), Value(IntList{-1})}));
  TSR_ASSIGN_OR_RETURN(
      Tensor picked, CallOne(r, "index_select", {Value(block), Value(int64_t{1}), Value(linear)}));
  return CallOne(r, "reshape", {Value(picked), Value(ToIntList(ix.ResultShape()))});
}

// index_put(self, indices, values, accumulate=False)
absl::StatusOr<Tensor> IndexPutOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const Tensor& values = s[2].tensor();
  const bool accumulate = s[3].to_bool();
  if (self.dtype() != values.dtype()) {
    return Invalid(op,
                   absl::StrFormat("Index put requires the source and destination dtypes "
                                   "match, got %s for the destination and %s for the source.",
                                   ScalarTypeName(self.dtype()), ScalarTypeName(values.dtype())));
  }
  TSR_ASSIGN_OR_RETURN(Tensor out,
                       CallOne(r, "clone", {Value(self), Value(kMemoryFormatContiguous)}));
  TSR_ASSIGN_OR_RETURN(Indexed ix, Index(op, out, s[1].tensor_list()));
  const DimVector shape = ix.any ? ix.ResultShape() : ix.before;
  absl::StatusOr<DimVector> fits = BroadcastShapes(values.sizes(), shape);
  if (!fits.ok() || !SameDims(*fits, shape)) {
    return Invalid(op, absl::StrFormat("shape mismatch: value tensor of shape %s cannot be "
                                       "broadcast to indexing result of shape %s",
                                       ShapeToString(values.sizes()), ShapeToString(shape)));
  }
  TSR_ASSIGN_OR_RETURN(Tensor spread, Expand(values, shape));
  if (!ix.any) {  // every index None: all of self
    if (accumulate) {
      return CallOne(r, "add.Tensor", {Value(out), Value(spread), Value(Scalar(int64_t{1}))});
    }
    TSR_RETURN_IF_ERROR(CallOne(r, "copy_", {Value(out), Value(spread)}).status());
    return out;
  }
  TSR_ASSIGN_OR_RETURN(const int64_t result_numel, ComputeNumel(shape));
  if (result_numel == 0) return out;
  const IntList block_shape = ix.Block();
  TSR_ASSIGN_OR_RETURN(Tensor block,
                       CallOne(r, "reshape", {Value(ix.permuted), Value(block_shape)}));
  TSR_ASSIGN_OR_RETURN(Tensor linear,
                       CallOne(r, "reshape", {Value(ix.linear), Value(IntList{-1})}));
  TSR_ASSIGN_OR_RETURN(
      Tensor rows,
      CallOne(r, "reshape",
              {Value(spread), Value(IntList{block_shape[0], ix.linear.numel(), block_shape[2]})}));
  TSR_ASSIGN_OR_RETURN(Tensor written,
                       CallOne(r, accumulate ? "index_add" : "index_copy",
                               {Value(block), Value(int64_t{1}), Value(linear), Value(rows)}));
  // Back through the permuted view of `out` (block may be a copy of it).
  TSR_ASSIGN_OR_RETURN(
      Tensor unblocked,
      CallOne(r, "reshape", {Value(written), Value(ToIntList(ix.permuted.sizes()))}));
  TSR_RETURN_IF_ERROR(CallOne(r, "copy_", {Value(ix.permuted), Value(unblocked)}).status());
  return out;
}

}  // namespace

absl::Status DefineAdvancedIndexOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"nonzero(Tensor self) -> Tensor",
           MakeKernel<Named<ComputeOne<NonzeroOf>>>("core::nonzero")},
          {"nonzero.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<NonzeroOf, 1>>>("core::nonzero_out")},
          {"masked_select(Tensor self, Tensor mask) -> Tensor",
           MakeKernel<Named<ComputeOne<MaskedSelectOf>>>("core::masked_select")},
          {"masked_select.out(Tensor self, Tensor mask, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<MaskedSelectOf, 2>>>("core::masked_select_out")},
          {"masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",
           MakeKernel<Named<ComputeOne<MaskedScatterOf>>>("core::masked_scatter")},
          {"masked_scatter.out(Tensor self, Tensor mask, Tensor source, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<MaskedScatterOf, 3, /*kCastable=*/true>>>(
               "core::masked_scatter_out")},
          {"masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)",
           MakeKernel<Named<IntoSelf<MaskedScatterOf>>>("core::masked_scatter_")},
          {"index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
           MakeKernel<Named<ComputeOne<IndexOf>>>("core::index")},
          {"index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<IndexOf, 2, /*kCastable=*/true>>>("core::index_out")},
          {"index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> "
           "Tensor",
           MakeKernel<Named<ComputeOne<IndexPutOf>>>("core::index_put")},
          {"index_put.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, "
           "*, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<IndexPutOf, 4, /*kCastable=*/true>>>(
               "core::index_put_out")},
          {"index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool "
           "accumulate=False) -> Tensor(a!)",
           MakeKernel<Named<IntoSelf<IndexPutOf>>>("core::index_put_")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
