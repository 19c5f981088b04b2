// Op set 1.8's shape ops, composites over the views (core/views.h) and the copy and fill ops, so
// every backend has them without a kernel: constant_pad_nd, repeat and tile (a new tensor whose
// parts are views of it, filled by copy_), alias, the list-returning splits (split,
// split_with_sizes, chunk, unbind: views of self), and the scatter views (select_scatter,
// slice_scatter, diagonal_scatter: a copy of self with src written through the view). Semantics and
// checks are ATen's (PadNd.cpp, TensorShape.cpp); errors name the op called.
#include <algorithm>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

std::string IntsToString(IntArrayRef v) { return "[" + absl::StrJoin(v, ", ") + "]"; }

// CheckPieces: a list return of `pieces` views must stay within kMaxListReturn.
absl::Status CheckPieces(const OperatorHandle& op, int64_t pieces) {
  if (pieces <= kMaxListReturn) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrFormat("%s: %d pieces is more than the %d a Tensor[] return may hold", op.name(),
                      pieces, kMaxListReturn));
}

absl::Status CopyInto(OpRegistry& r, const Tensor& to, const Tensor& from) {
  return CallOne(r, "copy_", {to, from}).status();
}

// constant_pad_nd(self, pad, value): pad[2k], pad[2k+1] pad the start and end of the k-th dim
// from the last; a negative pad crops.
absl::StatusOr<Tensor> ConstantPadOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const IntList& pad = s[1].int_list();
  if (pad.size() % 2 != 0) {
    return Invalid(
        op, absl::StrFormat("Length of pad must be even but instead it equals %d", pad.size()));
  }
  const int64_t nd = self.dim(), padded = static_cast<int64_t>(pad.size() / 2);
  if (padded > nd) {
    return Invalid(op, absl::StrFormat("Length of pad should be no more than twice the number of "
                                       "dimensions of the input. Pad length is %d while the "
                                       "input has %d dimensions.",
                                       pad.size(), nd));
  }
  DimVector shape(self.sizes().begin(), self.sizes().end());
  Tensor inner = self;  // self cropped by the negative pads
  for (int64_t d = nd - padded; d < nd; ++d) {
    const int64_t before = pad[2 * (nd - 1 - d)], after = pad[2 * (nd - 1 - d) + 1];
    const int64_t in = self.sizes()[d];
    int64_t size = 0;
    if (__builtin_add_overflow(in, before, &size) || __builtin_add_overflow(size, after, &size)) {
      return Invalid(op, absl::StrFormat("padding dim %d of size %d by %d and %d overflows int64",
                                         d, in, before, after));
    }
    if (size < 0) {
      return Invalid(op, absl::StrFormat("The input size %d, plus negative padding %d and %d "
                                         "resulted in a negative output size, which is invalid. "
                                         "Check dimension %d of your input.",
                                         in, before, after, d));
    }
    // Each side crops on its own (ATen narrows one side, then the other): neither may take more
    // than the dim holds, even where the other side's padding makes up the size.
    const int64_t crop_before = before < 0 ? (before < -in ? in + 1 : -before) : 0;
    const int64_t crop_after = after < 0 ? (after < -in ? in + 1 : -after) : 0;
    if (crop_before > in || crop_after > in - crop_before) {
      return Invalid(op, absl::StrFormat("padding %d and %d of dim %d crop more than its %d "
                                         "elements",
                                         before, after, d, in));
    }
    shape[d] = size;
    TSR_ASSIGN_OR_RETURN(inner, Narrow(inner, d, crop_before, in - crop_before - crop_after));
  }
  TSR_ASSIGN_OR_RETURN(Tensor out, EmptyOf(r, self, shape));
  TSR_RETURN_IF_ERROR(CallOne(r, "fill_.Scalar", {out, s[2]}).status());
  Tensor window = out;  // where the cropped self goes
  for (int64_t d = nd - padded; d < nd; ++d) {
    const int64_t before = pad[2 * (nd - 1 - d)];
    const int64_t start = std::max<int64_t>(before, 0);
    TSR_ASSIGN_OR_RETURN(window, Narrow(window, d, start, inner.sizes()[d]));
  }
  if (inner.numel() > 0) TSR_RETURN_IF_ERROR(CopyInto(r, window, inner));
  return out;
}

// repeat(self, repeats): self tiled repeats[d] times along each dim, with leading dims added
// when repeats is longer. The result, seen as [r0, s0, r1, s1, ...], is self seen as
// [1, s0, 1, s1, ...] expanded: one copy_ fills it.
absl::StatusOr<Tensor> RepeatOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const IntList& repeats = s[1].int_list();
  const int64_t nd = static_cast<int64_t>(repeats.size());
  if (nd < self.dim()) {
    return Invalid(op, absl::StrFormat("Number of dimensions of repeat dims (%d) can not be "
                                       "smaller than number of dimensions of tensor (%d)",
                                       nd, self.dim()));
  }
  DimVector padded(nd - self.dim(), 1);
  padded.insert(padded.end(), self.sizes().begin(), self.sizes().end());
  DimVector shape(nd), interleaved, tiled;
  for (int64_t d = 0; d < nd; ++d) {
    if (repeats[d] < 0) {
      return Invalid(
          op, absl::StrFormat("repeats must be non-negative, but got %s", IntsToString(repeats)));
    }
    if (__builtin_mul_overflow(padded[d], repeats[d], &shape[d])) {
      return Invalid(op, absl::StrFormat("repeating dim %d of size %d %d times overflows int64", d,
                                         padded[d], repeats[d]));
    }
    interleaved.insert(interleaved.end(), {1, padded[d]});
    tiled.insert(tiled.end(), {repeats[d], padded[d]});
  }
  TSR_RETURN_IF_ERROR(ComputeNumel(shape).status());
  TSR_ASSIGN_OR_RETURN(Tensor out, EmptyOf(r, self, shape));
  if (out.numel() == 0) return out;
  // Size-1 dims interleaved: always a view of self, contiguous or not.
  TSR_ASSIGN_OR_RETURN(
      Tensor spread,
      CallOne(r, "reshape", {self, Value(IntList(interleaved.begin(), interleaved.end()))}));
  TSR_ASSIGN_OR_RETURN(Tensor expanded, Expand(spread, tiled));
  TSR_ASSIGN_OR_RETURN(Tensor target, View(out, tiled));
  TSR_RETURN_IF_ERROR(CopyInto(r, target, expanded));
  return out;
}

// tile(self, dims): repeat, with ones prepended to dims when self has more dims.
absl::StatusOr<Tensor> TileOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const IntList& dims = s[1].int_list();
  for (int64_t d : dims) {  // checked here, so that the error shows the dims as given
    if (d < 0) {
      return Invalid(op,
                     absl::StrFormat("dims must be non-negative, but got %s", IntsToString(dims)));
    }
  }
  IntList repeats;
  for (int64_t d = static_cast<int64_t>(dims.size()); d < self.dim(); ++d) repeats.push_back(1);
  repeats.insert(repeats.end(), dims.begin(), dims.end());
  return CallOne(op.registry(), "repeat", {s[0], Value(std::move(repeats))});
}

// alias(self): self's storage, sizes and strides as a new view.
Out AliasK(const OperatorHandle&, const Stack& s) {
  const Tensor& self = s[0].tensor();
  return One(AsStrided(self, self.sizes(), self.strides(), self.storage_offset()));
}

// The dim a split runs along; a 0-dim self has none.
absl::StatusOr<int64_t> SplitDim(const OperatorHandle& op, const Tensor& self, int64_t dim,
                                 const char* what) {
  if (self.dim() == 0) {
    return Invalid(op, absl::StrFormat("%s expects at least a 1-dimensional tensor", what));
  }
  return WrapDim(dim, self.dim(), op.name());
}

// split.Tensor(self, split_size, dim): pieces of split_size along dim, the last shorter; a
// split_size of 0 only for a dim of size 0 (one empty piece).
Out SplitK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const int64_t split = s[1].to_int();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, SplitDim(op, self, s[2].to_int(), "split"));
  if (split < 0) {
    return Invalid(op, absl::StrFormat("split expects split_size be non-negative, but got "
                                       "split_size=%d",
                                       split));
  }
  const int64_t size = self.sizes()[dim];
  if (split == 0 && size != 0) {
    return Invalid(op, absl::StrFormat("split_size can only be 0 if dimension size is 0, but got "
                                       "dimension size of %d",
                                       size));
  }
  // ceil(size / split), written so that it cannot overflow; at least one (empty) piece.
  const int64_t pieces = split == 0 ? 1 : std::max<int64_t>(size / split + (size % split != 0), 1);
  TSR_RETURN_IF_ERROR(CheckPieces(op, pieces));
  std::vector<Tensor> out;
  for (int64_t i = 0; i < pieces; ++i) {
    const int64_t start = i * split;
    TSR_ASSIGN_OR_RETURN(Tensor piece, Narrow(self, dim, start, std::min(split, size - start)));
    out.push_back(std::move(piece));
  }
  return out;
}

// split_with_sizes(self, split_sizes, dim): pieces of the given sizes, which sum to the dim's.
absl::StatusOr<std::vector<Tensor>> SplitWithSizes(const OperatorHandle& op, const Tensor& self,
                                                   IntArrayRef sizes, int64_t dim_arg) {
  TSR_ASSIGN_OR_RETURN(const int64_t dim, SplitDim(op, self, dim_arg, "split_with_sizes"));
  int64_t total = 0;
  bool overflowed = false;  // sizes past int64 cannot sum to the dim
  for (int64_t size : sizes) {
    if (size < 0) {
      return Invalid(op, absl::StrFormat("split_with_sizes expects split_sizes have only "
                                         "non-negative entries, but got split_sizes=%s",
                                         IntsToString(sizes)));
    }
    overflowed = overflowed || __builtin_add_overflow(total, size, &total);
  }
  if (overflowed || total != self.sizes()[dim]) {
    return Invalid(op, absl::StrFormat("split_with_sizes expects split_sizes to sum exactly to %d "
                                       "(input tensor's size at dimension %d), but got "
                                       "split_sizes=%s",
                                       self.sizes()[dim], dim, IntsToString(sizes)));
  }
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t size : sizes) {
    TSR_ASSIGN_OR_RETURN(Tensor piece, Narrow(self, dim, start, size));
    out.push_back(std::move(piece));
    start += size;
  }
  return out;
}

Out SplitWithSizesK(const OperatorHandle& op, const Stack& s) {
  return SplitWithSizes(op, s[0].tensor(), s[1].int_list(), s[2].to_int());
}

// chunk(self, chunks, dim): at most `chunks` pieces of ceil(size / chunks); a dim of size 0
// gives `chunks` empty pieces.
Out ChunkK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const int64_t chunks = s[1].to_int();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, SplitDim(op, self, s[2].to_int(), "chunk"));
  if (chunks <= 0) {
    return Invalid(op,
                   absl::StrFormat("chunk expects `chunks` to be greater than 0, got: %d", chunks));
  }
  const int64_t size = self.sizes()[dim];
  if (size == 0) {
    TSR_RETURN_IF_ERROR(CheckPieces(op, chunks));
    return SplitWithSizes(op, self, DimVector(chunks, 0), dim);
  }
  const int64_t split = size / chunks + (size % chunks != 0);
  Stack split_args{s[0], Value(split), Value(dim)};
  return SplitK(op, split_args);
}

// unbind.int(self, dim): the selects along dim.
Out UnbindK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (self.dim() == 0) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%s: Dimension specified as %d but tensor has no dimensions", op.name(), s[1].to_int()));
  }
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), self.dim(), op.name()));
  TSR_RETURN_IF_ERROR(CheckPieces(op, self.sizes()[dim]));
  std::vector<Tensor> out;
  for (int64_t i = 0; i < self.sizes()[dim]; ++i) {
    TSR_ASSIGN_OR_RETURN(Tensor piece, Select(self, dim, i));
    out.push_back(std::move(piece));
  }
  return out;
}

// The scatter views: a copy of self with src copied (cast to self's dtype, as copy_ casts)
// through the view ViewOf takes of the copy; src must have the view's shape exactly.
using ViewFn = absl::StatusOr<Tensor> (*)(const Tensor& copy, const Stack& s);

template <ViewFn ViewOf>
absl::StatusOr<Tensor> ScatterViewOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& src = s[1].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor out, CallOne(r, "clone", {s[0], Value(std::nullopt)}));
  TSR_ASSIGN_OR_RETURN(Tensor view, ViewOf(out, s));
  if (!SameDims(view.sizes(), src.sizes())) {
    return Invalid(op, absl::StrFormat("expected src to have a size equal to the slice of self. "
                                       "src size = %s, slice size = %s",
                                       ShapeToString(src.sizes()), ShapeToString(view.sizes())));
  }
  TSR_RETURN_IF_ERROR(CopyInto(r, view, src));
  return out;
}

// select_scatter(self, src, dim, index)
absl::StatusOr<Tensor> SelectView(const Tensor& t, const Stack& s) {
  return Select(t, s[2].to_int(), s[3].to_int());
}
// slice_scatter(self, src, dim=0, start=None, end=None, step=1)
absl::StatusOr<Tensor> SliceView(const Tensor& t, const Stack& s) {
  return Slice(t, s[2].to_int(), OptionalInt(s[3]), OptionalInt(s[4]), s[5].to_int());
}
// diagonal_scatter(self, src, offset=0, dim1=0, dim2=1)
absl::StatusOr<Tensor> DiagonalView(const Tensor& t, const Stack& s) {
  return Diagonal(t, s[2].to_int(), s[3].to_int(), s[4].to_int());
}

}  // namespace

absl::Status DefineShapeOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
           MakeKernel<Named<ComputeOne<ConstantPadOf>>>("core::constant_pad_nd")},
          {"constant_pad_nd.out(Tensor self, SymInt[] pad, Scalar value=0, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<ConstantPadOf, 3>>>("core::constant_pad_nd_out")},
          {"repeat(Tensor self, SymInt[] repeats) -> Tensor",
           MakeKernel<Named<ComputeOne<RepeatOf>>>("core::repeat")},
          {"repeat.out(Tensor self, SymInt[] repeats, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<RepeatOf, 2>>>("core::repeat_out")},
          {"tile(Tensor self, SymInt[] dims) -> Tensor",
           MakeKernel<Named<ComputeOne<TileOf>>>("core::tile")},
          {"alias(Tensor(a) self) -> Tensor(a)", MakeKernel<AliasK>("core::alias")},
          {"split.Tensor(Tensor(a) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
           MakeListKernel<Named<SplitK>>("core::split")},
          {"split_with_sizes(Tensor(a) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
           MakeListKernel<Named<SplitWithSizesK>>("core::split_with_sizes")},
          {"chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor(a)[]",
           MakeListKernel<Named<ChunkK>>("core::chunk")},
          {"unbind.int(Tensor(a) self, int dim=0) -> Tensor(a)[]",
           MakeListKernel<Named<UnbindK>>("core::unbind")},
          {"select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor",
           MakeKernel<Named<ComputeOne<ScatterViewOf<SelectView>>>>("core::select_scatter")},
          {"select_scatter.out(Tensor self, Tensor src, int dim, SymInt index, *, Tensor(a!) out) "
           "-> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<ScatterViewOf<SelectView>, 4>>>(
               "core::select_scatter_out")},
          {"slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? "
           "end=None, SymInt step=1) -> Tensor",
           MakeKernel<Named<ComputeOne<ScatterViewOf<SliceView>>>>("core::slice_scatter")},
          {"slice_scatter.out(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? "
           "end=None, SymInt step=1, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<ScatterViewOf<SliceView>, 6>>>(
               "core::slice_scatter_out")},
          {"diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> "
           "Tensor",
           MakeKernel<Named<ComputeOne<ScatterViewOf<DiagonalView>>>>("core::diagonal_scatter")},
          {"diagonal_scatter.out(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1, "
           "*, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<ScatterViewOf<DiagonalView>, 5>>>(
               "core::diagonal_scatter_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
