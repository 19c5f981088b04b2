// Op set 1.9's fold ops and scatter variants, as composites so every backend has them:
//   - im2col (nn.functional.unfold): self padded (constant_pad_nd), then one as_strided view
//     that lays every kernel offset and every block position out as dims, copied out;
//   - col2im (nn.functional.fold), im2col's adjoint: a zero padded image, and for each kernel
//     offset in order the columns of that offset added (add_) into the strided view of the
//     positions they came from, then the padding cropped;
//   - scatter_reduce.two: sum and prod on scatter_add and scatter.reduce, mean on those and a
//     count, amax and amin by grouping (Note [scatter_reduce amax and amin]);
//   - as_strided_scatter: a copy of self with src copied into an as_strided view of the copy.
// Checks, their order and messages are ATen's (Im2Col.cpp, Col2Im.cpp, im2col_shape_check.h,
// ScatterGatherChecks.h, TensorAdvancedIndexing.cpp, TensorShape.cpp).
#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/index_support.h"

namespace tessera {
namespace ops {
namespace {

// NotImplementedFor: ATen's AT_DISPATCH refusal of a dtype its kernel `kernel` has no loop for
// (the dtype named as Tessera names it).
absl::Status NotImplementedFor(const OperatorHandle& op, const char* kernel, ScalarType t) {
  return absl::UnimplementedError(
      absl::StrFormat("%s: \"%s\" not implemented for '%s'", op.name(), kernel, ScalarTypeName(t)));
}

// DivRtn: floor division (ATen's div_rtn), for a positive divisor.
int64_t DivRtn(int64_t x, int64_t y) {
  int64_t q = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
  return q;
}

// ListOf2: ATen's "It is expected <name> equals to 2" check of an int[2] argument.
absl::Status ListOf2(const OperatorHandle& op, const IntList& l, const char* name) {
  if (l.size() == 2) return absl::OkStatus();
  return Invalid(op,
                 absl::StrFormat("It is expected %s equals to 2, but got size %d", name, l.size()));
}

// The window arguments im2col and col2im share, (height, width) each.
struct Window {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
};

// CheckWindow: ATen's checks of the window's values, in the op's order (im2col checks padding
// before stride, col2im stride before dilation).
absl::Status CheckWindow(const OperatorHandle& op, const Window& w, bool col2im) {
  if (!(w.kw > 0 && w.kh > 0)) {
    return Invalid(op, absl::StrFormat("kernel size should be greater than zero, but got "
                                       "kernel_height: %d kernel_width: %d",
                                       w.kh, w.kw));
  }
  const auto stride = [&]() -> absl::Status {
    if (w.sw > 0 && w.sh > 0) return absl::OkStatus();
    return Invalid(op, absl::StrFormat("stride should be greater than zero, but got "
                                       "stride_height: %d stride_width: %d",
                                       w.sh, w.sw));
  };
  if (col2im) TSR_RETURN_IF_ERROR(stride());
  if (!(w.dw > 0 && w.dh > 0)) {
    return Invalid(op, absl::StrFormat("dilation should be greater than zero, but got "
                                       "dilation_height: %d dilation_width: %d",
                                       w.dh, w.dw));
  }
  if (!(w.pw >= 0 && w.ph >= 0)) {
    return Invalid(op, absl::StrFormat("padding should be non-negative, but got pad_height: %d "
                                       "pad_width: %d",
                                       w.ph, w.pw));
  }
  if (!col2im) TSR_RETURN_IF_ERROR(stride());
  return absl::OkStatus();
}

absl::StatusOr<Window> ReadWindow(const OperatorHandle& op, const Stack& s, size_t first) {
  const IntList& k = s[first].int_list();
  const IntList& d = s[first + 1].int_list();
  const IntList& p = s[first + 2].int_list();
  const IntList& st = s[first + 3].int_list();
  TSR_RETURN_IF_ERROR(ListOf2(op, k, "kernel_size"));
  TSR_RETURN_IF_ERROR(ListOf2(op, d, "dilation"));
  TSR_RETURN_IF_ERROR(ListOf2(op, p, "padding"));
  TSR_RETURN_IF_ERROR(ListOf2(op, st, "stride"));
  return Window{k[0], k[1], d[0], d[1], p[0], p[1], st[0], st[1]};
}

// Blocks: how many positions the (dilated) kernel takes along a dim of `size` (ATen's
// formula, floor division), computed wide and saturated to int64: padding, dilation and stride
// are the caller's, any int64 (the checks after it then refuse the result).
int64_t Blocks(int64_t size, int64_t pad, int64_t dilation, int64_t kernel, int64_t stride) {
  const __int128 reach = static_cast<__int128>(dilation) * (kernel - 1) + 1;
  const __int128 x = static_cast<__int128>(size) + 2 * static_cast<__int128>(pad) - reach;
  __int128 q = x / stride;
  if (x % stride != 0 && x < 0) --q;  // floor, as DivRtn (stride > 0)
  return static_cast<int64_t>(std::clamp<__int128>(q + 1, INT64_MIN, INT64_MAX));
}

std::string WindowText(const Window& w) {
  return absl::StrFormat("kernel_size=(%d, %d), dilation=(%d, %d), padding=(%d, %d)", w.kh, w.kw,
                         w.dh, w.dw, w.ph, w.pw);
}

// im2col(self, kernel_size, dilation, padding, stride): [N,] C, H, W -> [N,] C*kh*kw, L, the
// columns of every kernel position, channel-major then kernel row then kernel column.
absl::StatusOr<Tensor> Im2colOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(const Window w, ReadWindow(op, s, 1));
  TSR_RETURN_IF_ERROR(CheckWindow(op, w, /*col2im=*/false));
  const int64_t nd = self.dim();
  // ATen reads sizes 1 and 2 before it looks at the rank: a smaller input is an IndexError.
  TSR_RETURN_IF_ERROR(WrapDim(1, nd, op.name()).status());
  if (self.sizes()[1] != 0) TSR_RETURN_IF_ERROR(WrapDim(2, nd, op.name()).status());
  const auto size = [&](int64_t d) { return self.sizes()[d]; };
  const bool valid = (nd == 3 && size(0) != 0 && size(1) != 0 && size(2) != 0) ||
                     (nd == 4 && size(1) != 0 && size(2) != 0 && size(3) != 0);
  if (!valid) {
    return Invalid(op, absl::StrFormat("Expected 3D or 4D (batch mode) tensor with possibly 0 "
                                       "batch size and other non-zero dimensions for input, but "
                                       "got: %s",
                                       ShapeToString(self.sizes())));
  }
  const int64_t batch_dim = nd == 3 ? -1 : 0;
  const int64_t height = size(batch_dim + 2), width = size(batch_dim + 3);
  const int64_t bh = Blocks(height, w.ph, w.dh, w.kh, w.sh);
  const int64_t bw = Blocks(width, w.pw, w.dw, w.kw, w.sw);
  if (bh < 1 || bw < 1) {
    return Invalid(op, absl::StrFormat("Given input with spatial size (%d, %d), %s, calculated "
                                       "shape of the array of sliding blocks as (%d, %d), but its "
                                       "components must be at least one.",
                                       height, width, WindowText(w), bh, bw));
  }
  if (!IsFloatingType(self.dtype()) && self.dtype() != ScalarType::kBool) {
    return NotImplementedFor(op, "im2col_out_cpu", self.dtype());
  }
  Tensor x = self;
  if (nd == 3) {
    TSR_ASSIGN_OR_RETURN(x, Unsqueeze(self, 0));
  }
  const int64_t batch = x.sizes()[0], channels = x.sizes()[1];
  TSR_ASSIGN_OR_RETURN(Tensor padded, CallOne(r, "constant_pad_nd",
                                              {Value(x), Value(IntList{w.pw, w.pw, w.ph, w.ph}),
                                               Value(Scalar(int64_t{0}))}));
  // [N, C, kh, kw, bh, bw] over the padded image: kernel offsets step by the dilation, block
  // positions by the stride.
  const IntArrayRef st = padded.strides();
  TSR_ASSIGN_OR_RETURN(
      Tensor windows,
      AsStrided(padded, {batch, channels, w.kh, w.kw, bh, bw},
                // a dim of size 1 is never stepped along: its
                // stride may be the caller's (any int64)
                {st[0], st[1], w.kh > 1 ? w.dh * st[2] : 0, w.kw > 1 ? w.dw * st[3] : 0,
                 bh > 1 ? w.sh * st[2] : 0, bw > 1 ? w.sw * st[3] : 0},
                padded.storage_offset()));
  TSR_ASSIGN_OR_RETURN(Tensor cols,
                       CallOne(r, "clone", {Value(windows), Value(kMemoryFormatContiguous)}));
  if (nd == 3) return View(cols, {channels * w.kh * w.kw, bh * bw});
  return View(cols, {batch, channels * w.kh * w.kw, bh * bw});
}

// col2im(self, output_size, kernel_size, dilation, padding, stride): [N,] C*kh*kw, L ->
// [N,] C, H, W, each column entry summed into the image position it covers.
absl::StatusOr<Tensor> Col2imOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const IntList& output_size = s[1].int_list();
  TSR_RETURN_IF_ERROR(ListOf2(op, output_size, "output_size"));
  TSR_ASSIGN_OR_RETURN(const Window w, ReadWindow(op, s, 2));
  TSR_RETURN_IF_ERROR(CheckWindow(op, w, /*col2im=*/true));
  const int64_t height = output_size[0], width = output_size[1];
  const int64_t nd = self.dim();
  const auto size = [&](int64_t d) { return self.sizes()[d]; };
  const bool valid =
      (nd == 2 && size(0) != 0 && size(1) != 0) || (nd == 3 && size(1) != 0 && size(2) != 0);
  if (!valid) {
    return Invalid(op, absl::StrFormat("Expected 2D or 3D (batch mode) tensor for input with "
                                       "possibly 0 batch size and non-zero dimensions for input, "
                                       "but got: %s",
                                       ShapeToString(self.sizes())));
  }
  const int64_t batch_dim = nd == 3 ? 0 : -1;
  const int64_t planes = size(batch_dim + 1);
  int64_t kernel_elements = 0;
  if (__builtin_mul_overflow(w.kw, w.kh, &kernel_elements)) {
    return Invalid(op, absl::StrFormat("Given kernel_width = %d and kernel_height = %d the "
                                       "product of kernel_width and kernel_height overflowed.",
                                       w.kw, w.kh));
  }
  if (planes % kernel_elements != 0) {
    return Invalid(op, absl::StrFormat("Expected size of input's dimension 1 to be divisible by "
                                       "the product of kernel_size, but got input.size(1)=%d and "
                                       "kernel_size=(%d, %d).",
                                       planes, w.kh, w.kw));
  }
  const int64_t length = size(batch_dim + 2);
  const int64_t bh = Blocks(height, w.ph, w.dh, w.kh, w.sh);
  const int64_t bw = Blocks(width, w.pw, w.dw, w.kw, w.sw);
  const std::string given = absl::StrFormat("Given output_size=(%d, %d), %s, stride=(%d, %d), ",
                                            height, width, WindowText(w), w.sh, w.sw);
  if (static_cast<__int128>(bh) * bw != length) {
    return Invalid(op, absl::StrFormat("%sexpected size of input's dimension 2 to match the "
                                       "calculated number of sliding blocks %d * %d = %d, but got "
                                       "input.size(2)=%d.",
                                       given, bh, bw,
                                       static_cast<int64_t>(std::clamp<__int128>(
                                           static_cast<__int128>(bh) * bw, INT64_MIN, INT64_MAX)),
                                       length));
  }
  if (bh < 1 || bw < 1) {
    return Invalid(op, absl::StrFormat("%scalculated shape of the array of sliding blocks as (%d, "
                                       "%d), which is too small (non-positive)",
                                       given, bh, bw));
  }
  if (width < 1 || height < 1) {
    return Invalid(op, absl::StrFormat("Expected output spatial size to be positive, but got: "
                                       "output_size=(%d, %d).",
                                       height, width));
  }
  if (!IsFloatingType(self.dtype()) && self.dtype() != ScalarType::kBool) {
    return NotImplementedFor(op, "col2im_out_cpu", self.dtype());
  }
  Tensor x = self;
  if (nd == 2) {
    TSR_ASSIGN_OR_RETURN(x, Unsqueeze(self, 0));
  }
  const int64_t batch = x.sizes()[0], channels = planes / kernel_elements;
  TSR_ASSIGN_OR_RETURN(
      Tensor cols,
      CallOne(r, "reshape", {Value(x), Value(IntList{batch, channels, w.kh, w.kw, bh, bw})}));
  TSR_ASSIGN_OR_RETURN(const int64_t pad_h, CheckedMul(2, w.ph, op.name(), "padding"));
  TSR_ASSIGN_OR_RETURN(const int64_t pad_w, CheckedMul(2, w.pw, op.name(), "padding"));
  TSR_ASSIGN_OR_RETURN(const int64_t padded_h, CheckedAdd(height, pad_h, op.name(), "height"));
  TSR_ASSIGN_OR_RETURN(const int64_t padded_w, CheckedAdd(width, pad_w, op.name(), "width"));
  TSR_ASSIGN_OR_RETURN(
      Tensor image, Zeros(r, {batch, channels, padded_h, padded_w}, self.dtype(), self.device()));
  const IntArrayRef st = image.strides();
  // Kernel offsets in ATen's order (row-major), so that every image position receives its
  // terms in the order ATen's loop adds them: the same sum, rounding for rounding.
  for (int64_t i = 0; i < w.kh && batch * channels > 0; ++i) {
    for (int64_t j = 0; j < w.kw; ++j) {
      TSR_ASSIGN_OR_RETURN(
          Tensor covered,
          AsStrided(image, {batch, channels, bh, bw}, {st[0], st[1], w.sh * st[2], w.sw * st[3]},
                    image.storage_offset() + i * w.dh * st[2] + j * w.dw * st[3]));
      TSR_ASSIGN_OR_RETURN(Tensor row, Select(cols, 2, i));
      TSR_ASSIGN_OR_RETURN(Tensor term, Select(row, 2, j));
      TSR_RETURN_IF_ERROR(
          CallOne(r, "add_.Tensor", {Value(covered), Value(term), Value(Scalar(int64_t{1}))})
              .status());
    }
  }
  Tensor out = image;
  if (w.ph > 0 || w.pw > 0) {
    TSR_ASSIGN_OR_RETURN(out, Narrow(out, 2, w.ph, height));
    TSR_ASSIGN_OR_RETURN(out, Narrow(out, 3, w.pw, width));
    TSR_ASSIGN_OR_RETURN(out, CallOne(r, "clone", {Value(out), Value(kMemoryFormatContiguous)}));
  }
  if (nd == 2) return View(out, {channels, height, width});
  return out;
}

// ---- scatter_reduce.two(self, dim, index, src, reduce, *, include_self=True) ----

enum class Reduction { kSum, kProd, kMean, kMax, kMin };

// ParseReduction: ATen's get_reduction_enum. Current ATen also takes "max" and "min" for amax
// and amin (PyTorch 1.13 refused them).
std::optional<Reduction> ParseReduction(const std::string& reduce) {
  if (reduce == "sum") return Reduction::kSum;
  if (reduce == "prod") return Reduction::kProd;
  if (reduce == "mean") return Reduction::kMean;
  if (reduce == "amax" || reduce == "max") return Reduction::kMax;
  if (reduce == "amin" || reduce == "min") return Reduction::kMin;
  return std::nullopt;
}

int64_t NonemptyDim(const Tensor& t) { return std::max<int64_t>(t.dim(), 1); }
int64_t NonemptySize(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.sizes()[d]; }

// Note [scatter_reduce amax and amin]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// No op of the set reduces by max into scattered positions, and scatter.src with repeated
// positions keeps an unspecified one on parallel backends. So the src elements are grouped by
// the (row-major) position of self they go to, each group ordered so that its extreme comes
// last: a stable sort by value (ascending for amax, NaN last; for amin descending, then a
// stable sort by isnan that moves NaN to the end, so NaN wins as in ATen's kernel, which
// propagates NaN), then a stable sort by position. Each group's last element is scattered
// into a flat copy of self; the others go to one spare slot past the end, cut off after, so
// that no real position is written twice. With include_self, self's value joins through
// maximum/minimum (which propagate NaN too). Equal values (0.0 and -0.0) may resolve to the
// other one than ATen's sequential kernel keeps.
absl::StatusOr<Tensor> ScatterExtreme(OpRegistry& r, const Tensor& self, int64_t dim,
                                      const Tensor& index, const Tensor& src, bool is_max,
                                      bool include_self) {
  const int64_t nd = self.dim();
  // src's elements that index reaches: its leading [index.size(d)] block.
  Tensor values = src;
  for (int64_t d = 0; d < nd; ++d) {
    TSR_ASSIGN_OR_RETURN(values, Narrow(values, d, 0, index.sizes()[d]));
  }
  DimVector cstrides(nd, 1);
  for (int64_t d = nd - 2; d >= 0; --d) cstrides[d] = cstrides[d + 1] * self.sizes()[d + 1];
  // pos: the row-major position in self of each index element.
  TSR_ASSIGN_OR_RETURN(Tensor pos,
                       CallOne(r, "mul.Scalar", {Value(index), Value(Scalar(cstrides[dim]))}));
  for (int64_t d = 0; d < nd; ++d) {
    if (d == dim || index.sizes()[d] == 1) continue;
    TSR_ASSIGN_OR_RETURN(
        Tensor along, CallOne(r, "arange",
                              {Value(Scalar(index.sizes()[d])), Value(ScalarType::kInt64),
                               Value(std::nullopt), Value(index.device()), Value(std::nullopt)}));
    TSR_ASSIGN_OR_RETURN(along,
                         CallOne(r, "mul.Scalar", {Value(along), Value(Scalar(cstrides[d]))}));
    DimVector lone(nd, 1);
    lone[d] = index.sizes()[d];
    TSR_ASSIGN_OR_RETURN(along, View(along, lone));
    TSR_ASSIGN_OR_RETURN(
        pos, CallOne(r, "add.Tensor", {Value(pos), Value(along), Value(Scalar(int64_t{1}))}));
  }
  const Value flat_shape = Value(IntList{-1});
  TSR_ASSIGN_OR_RETURN(pos, CallOne(r, "reshape", {Value(pos), flat_shape}));
  TSR_ASSIGN_OR_RETURN(values, CallOne(r, "reshape", {Value(values), flat_shape}));
  auto sort = [&](const Tensor& t, bool descending) -> absl::StatusOr<std::vector<Tensor>> {
    TSR_ASSIGN_OR_RETURN(OperatorHandle h, r.Find("sort.stable"));
    Stack st{Value(t), Value(true), Value(int64_t{0}), Value(descending)};
    TSR_RETURN_IF_ERROR(r.Call(h, &st));
    return std::vector<Tensor>{st[0].tensor(), st[1].tensor()};
  };
  auto gather = [&](const Tensor& t, const Tensor& order) {
    return CallOne(r, "gather", {Value(t), Value(int64_t{0}), Value(order), Value(false)});
  };
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> by_value, sort(values, /*descending=*/!is_max));
  Tensor sorted = by_value[0], order = by_value[1];
  if (!is_max && IsFloatingType(self.dtype())) {
    TSR_ASSIGN_OR_RETURN(Tensor nan, CallOne(r, "isnan", {Value(sorted)}));
    TSR_ASSIGN_OR_RETURN(std::vector<Tensor> nan_last, sort(nan, false));
    TSR_ASSIGN_OR_RETURN(sorted, gather(sorted, nan_last[1]));
    TSR_ASSIGN_OR_RETURN(order, gather(order, nan_last[1]));
  }
  TSR_ASSIGN_OR_RETURN(Tensor pos_by_value, gather(pos, order));
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> by_pos, sort(pos_by_value, false));
  const Tensor& grouped = by_pos[0];
  TSR_ASSIGN_OR_RETURN(Tensor extremes, gather(sorted, by_pos[1]));
  const int64_t count = grouped.numel();
  const int64_t spare = self.numel();
  // next[i]: the position of element i + 1 (-1 past the end); a group ends where it differs.
  TSR_ASSIGN_OR_RETURN(Tensor next, Narrow(grouped, 0, 1, count - 1));
  TSR_ASSIGN_OR_RETURN(next,
                       CallOne(r, "constant_pad_nd",
                               {Value(next), Value(IntList{0, 1}), Value(Scalar(int64_t{-1}))}));
  TSR_ASSIGN_OR_RETURN(Tensor inside, CallOne(r, "eq.Tensor", {Value(grouped), Value(next)}));
  TSR_ASSIGN_OR_RETURN(Tensor dest, CallOne(r, "masked_fill.Scalar",
                                            {Value(grouped), Value(inside), Value(Scalar(spare))}));
  TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {Value(self), flat_shape}));
  TSR_ASSIGN_OR_RETURN(flat,
                       CallOne(r, "constant_pad_nd",
                               {Value(flat), Value(IntList{0, 1}), Value(Scalar(int64_t{0}))}));
  if (include_self) {
    TSR_ASSIGN_OR_RETURN(Tensor current, gather(flat, grouped));
    TSR_ASSIGN_OR_RETURN(
        extremes, CallOne(r, is_max ? "maximum" : "minimum", {Value(current), Value(extremes)}));
  }
  TSR_ASSIGN_OR_RETURN(
      flat,
      CallOne(r, "scatter.src", {Value(flat), Value(int64_t{0}), Value(dest), Value(extremes)}));
  TSR_ASSIGN_OR_RETURN(flat, Narrow(flat, 0, 0, spare));
  return View(flat, self.sizes());
}

absl::StatusOr<Tensor> ScatterReduceOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self_arg = s[0].tensor();
  const Tensor& index_arg = s[2].tensor();
  const Tensor& src_arg = s[3].tensor();
  const bool include_self = s[5].to_bool();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), self_arg.dim(), op.name()));
  // ATen's scatter_gather_dtype_check("scatter", ...) and scatter_shape_check.
  if (index_arg.numel() != 0 && index_arg.dtype() != ScalarType::kInt64) {
    return Invalid(op, "scatter(): Expected dtype int64 for index");
  }
  if (self_arg.dtype() != src_arg.dtype()) {
    return Invalid(op, "scatter(): Expected self.dtype to be equal to src.dtype");
  }
  if (index_arg.numel() != 0) {
    const int64_t nd = NonemptyDim(self_arg);
    if (NonemptyDim(index_arg) != nd) {
      return Invalid(op, "Index tensor must have the same number of dimensions as self tensor");
    }
    bool wrong = NonemptyDim(src_arg) != nd;  // ATen would index src past its dims
    for (int64_t d = 0; d < nd && !wrong; ++d) {
      const int64_t n = NonemptySize(index_arg, d);
      wrong = (d != dim && n > NonemptySize(self_arg, d)) || n > NonemptySize(src_arg, d);
    }
    if (wrong) {
      return Invalid(
          op, absl::StrFormat("Expected index %s to be smaller than self %s apart from "
                              "dimension %d and to be smaller size than src %s",
                              ShapeToString(index_arg.sizes()), ShapeToString(self_arg.sizes()),
                              dim, ShapeToString(src_arg.sizes())));
    }
  }
  const std::optional<Reduction> reduction = ParseReduction(s[4].string());
  if (!reduction) {
    return Invalid(op, absl::StrFormat("reduce argument must be either sum, prod, mean, amax or "
                                       "amin, got %s",
                                       s[4].string()));
  }
  if (*reduction == Reduction::kMean && self_arg.dtype() == ScalarType::kBool) {
    return NotImplementedFor(op, "scatter_gather_tensor_cpu_reduce_mean", self_arg.dtype());
  }
  if (index_arg.numel() == 0) {
    return CallOne(r, "clone", {Value(self_arg), Value(kMemoryFormatContiguous)});
  }
  TSR_ASSIGN_OR_RETURN(const std::optional<Range> range, IndexRange(r, index_arg));
  const int64_t dim_size = NonemptySize(self_arg, dim);
  if (range && (range->max >= dim_size || range->min < 0)) {
    const int64_t bad = range->max >= dim_size ? range->max : range->min;
    return Invalid(op, absl::StrFormat("index %d is out of bounds for dimension %d with size %d",
                                       bad, dim, dim_size));
  }
  TSR_ASSIGN_OR_RETURN(const Tensor self, AtLeast1d(self_arg));
  TSR_ASSIGN_OR_RETURN(const Tensor index, AtLeast1d(index_arg));
  TSR_ASSIGN_OR_RETURN(const Tensor src, AtLeast1d(src_arg));
  const Value d(dim);
  // Positions src reaches start from the reduction's identity where self is left out.
  auto base = [&](int64_t identity) -> absl::StatusOr<Tensor> {
    if (include_self) return self;
    return CallOne(r, "scatter.value", {Value(self), d, Value(index), Value(Scalar(identity))});
  };
  Tensor result;
  switch (*reduction) {
    case Reduction::kSum:
    case Reduction::kMean: {
      TSR_ASSIGN_OR_RETURN(Tensor start, base(0));
      TSR_ASSIGN_OR_RETURN(result,
                           CallOne(r, "scatter_add", {Value(start), d, Value(index), Value(src)}));
      if (*reduction == Reduction::kSum) break;
      // ATen's count: 1 for self where it is included, + 1 per src element, at least 1; in
      // self's dtype; integers divide with floor rounding.
      const Value none(std::nullopt);
      TSR_ASSIGN_OR_RETURN(Tensor ones,
                           CallOne(r, "ones_like", {Value(src), none, none, none, none, none}));
      TSR_ASSIGN_OR_RETURN(
          Tensor count, include_self
                            ? CallOne(r, "ones_like", {Value(self), none, none, none, none, none})
                            : Zeros(r, self.sizes(), self.dtype(), self.device()));
      TSR_ASSIGN_OR_RETURN(count,
                           CallOne(r, "scatter_add", {Value(count), d, Value(index), Value(ones)}));
      TSR_ASSIGN_OR_RETURN(Tensor empty,
                           CallOne(r, "eq.Scalar", {Value(count), Value(Scalar(int64_t{0}))}));
      TSR_ASSIGN_OR_RETURN(count, CallOne(r, "masked_fill.Scalar",
                                          {Value(count), Value(empty), Value(Scalar(int64_t{1}))}));
      if (IsFloatingType(self.dtype())) {
        TSR_ASSIGN_OR_RETURN(result, CallOne(r, "div.Tensor", {Value(result), Value(count)}));
      } else {
        TSR_ASSIGN_OR_RETURN(
            result, CallOne(r, "div.Tensor_mode", {Value(result), Value(count), Value("floor")}));
      }
      break;
    }
    case Reduction::kProd: {
      TSR_ASSIGN_OR_RETURN(Tensor start, base(1));
      TSR_ASSIGN_OR_RETURN(result,
                           CallOne(r, "scatter.reduce",
                                   {Value(start), d, Value(index), Value(src), Value("multiply")}));
      break;
    }
    case Reduction::kMax:
    case Reduction::kMin: {
      TSR_ASSIGN_OR_RETURN(result, ScatterExtreme(r, self, dim, index, src,
                                                  *reduction == Reduction::kMax, include_self));
      break;
    }
  }
  if (self_arg.dim() == 0) return View(result, {});
  return result;
}

// ---- as_strided_scatter(self, src, size, stride, storage_offset=None) ----

// ATen copies self's whole storage with its strides (clone_preserve_strides), so its result
// depends on how self is laid out in memory. Here the copy is contiguous from offset 0, the
// storage of self's numel elements: the same as ATen's for a contiguous self that owns its
// storage (what as_strided_scatter is meant for), and one answer for every layout of self.
absl::StatusOr<Tensor> AsStridedScatterOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const Tensor& src = s[1].tensor();
  const IntList& size = s[2].int_list();
  const IntList& stride = s[3].int_list();
  const int64_t offset = s[4].is_none() ? 0 : s[4].to_int();
  // ATen's setStrided and checkInBoundsForStorage, in order.
  if (size.size() != stride.size()) return Invalid(op, "mismatch in length of strides and shape");
  for (int64_t st : stride) {
    if (st < 0) {
      return Invalid(op, absl::StrFormat("as_strided: Negative strides are not supported at the "
                                         "moment, got strides: %s",
                                         ShapeToString(stride)));
    }
  }
  const int64_t itemsize = static_cast<int64_t>(ElementSize(self.dtype()));
  int64_t span = 1;  // 1 + the last element's distance from the first
  bool overflowed = false, empty = false;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] < 0) overflowed = true;
    if (size[i] == 0) empty = true;
  }
  for (size_t i = 0; i < size.size() && !overflowed && !empty; ++i) {
    int64_t reach = 0;
    overflowed = __builtin_mul_overflow(size[i] - 1, stride[i], &reach) ||
                 __builtin_add_overflow(span, reach, &span);
  }
  int64_t bytes = 0;
  if (!overflowed && !empty) overflowed = __builtin_mul_overflow(span, itemsize, &bytes);
  if (overflowed) {
    return Invalid(op, absl::StrFormat("Storage size calculation overflowed with sizes=%s and "
                                       "strides=%s",
                                       ShapeToString(size), ShapeToString(stride)));
  }
  const int64_t storage_bytes = self.numel() * itemsize;
  int64_t offset_bytes = 0, needed = 0;  // offset * itemsize + bytes, wide where it overflows
  const bool past = __builtin_mul_overflow(offset, itemsize, &offset_bytes) ||
                    __builtin_add_overflow(bytes, offset_bytes, &needed);
  if (bytes != 0 && (past || needed > storage_bytes)) {
    return Invalid(op, absl::StrFormat("setStorage: sizes %s, strides %s, storage offset %d, and "
                                       "itemsize %d requiring a storage size of %d are out of "
                                       "bounds for storage of size %d",
                                       ShapeToString(size), ShapeToString(stride), offset, itemsize,
                                       past ? INT64_MAX : needed, storage_bytes));
  }
  if (offset < 0) return Invalid(op, absl::StrFormat("Tensor: invalid storage offset %d", offset));
  TSR_ASSIGN_OR_RETURN(Tensor output,
                       CallOne(r, "clone", {Value(self), Value(kMemoryFormatContiguous)}));
  TSR_ASSIGN_OR_RETURN(Tensor slice, AsStrided(output, size, stride, offset));
  if (!std::equal(slice.sizes().begin(), slice.sizes().end(), src.sizes().begin(),
                  src.sizes().end())) {
    return Invalid(op, absl::StrFormat("expected src to have a size equal to the slice of self. "
                                       "src size = %s, slice size = %s",
                                       ShapeToString(src.sizes()), ShapeToString(slice.sizes())));
  }
  if (slice.numel() > 0) {
    TSR_RETURN_IF_ERROR(CallOne(r, "copy_", {Value(slice), Value(src), Value(false)}).status());
  }
  return output;
}

}  // namespace

absl::Status DefineFoldScatterOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] "
           "stride) -> Tensor",
           MakeKernel<Named<ComputeOne<Im2colOf>>>("core::im2col")},
          {"im2col.out(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] "
           "stride, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<Im2colOf, 5>>>("core::im2col_out")},
          {"col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] "
           "padding, int[2] stride) -> Tensor",
           MakeKernel<Named<ComputeOne<Col2imOf>>>("core::col2im")},
          {"col2im.out(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
           "int[2] padding, int[2] stride, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<Col2imOf, 6>>>("core::col2im_out")},
          {"scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, "
           "bool include_self=True) -> Tensor",
           MakeKernel<Named<ComputeOne<ScatterReduceOf>>>("core::scatter_reduce")},
          {"scatter_reduce.two_out(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, "
           "bool include_self=True, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<ScatterReduceOf, 6>>>("core::scatter_reduce_out")},
          {"scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, "
           "*, bool include_self=True) -> Tensor(a!)",
           MakeKernel<Named<IntoSelf<ScatterReduceOf>>>("core::scatter_reduce_")},
          {"as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? "
           "storage_offset=None) -> Tensor",
           MakeKernel<Named<ComputeOne<AsStridedScatterOf>>>("core::as_strided_scatter")},
          {"as_strided_scatter.out(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, "
           "SymInt? storage_offset=None, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AsStridedScatterOf, 5, /*kCastable=*/true>>>(
               "core::as_strided_scatter_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
