// Factories and conversions of op set v1 as composites, so that every backend with an
// allocator, copy_ and fill_ gets them: zeros, ones, full, arange, linspace, eye (and their
// out= forms), zero_, _to_copy and to (dtype, device), and from op set 1.4 empty_like,
// zeros_like, ones_like and full_like. fill_ itself is a backend kernel with a meta function here.
#include <cmath>

#include "absl/strings/str_format.h"
#include "core/host_copy.h"
#include "core/memory_overlap.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

Device DeviceOr(const Value& v) { return v.is_none() ? Device(DeviceType::kCPU) : v.device(); }

absl::Status Fill(const OperatorHandle& op, const Tensor& t, const Scalar& value) {
  TSR_ASSIGN_OR_RETURN(Tensor ignored, CallOne(op.registry(), "fill_.Scalar", {t, Value(value)}));
  return absl::OkStatus();
}

// zeros / ones (size, *, dtype, layout, device, pin_memory) and full (size, fill_value, *, ...).
template <int kValue>  // 0, 1, or -1 for full
Out ConstantK(const OperatorHandle& op, const Stack& s) {
  const int base = kValue < 0 ? 2 : 1;
  Scalar value = kValue < 0 ? s[1].scalar() : Scalar(int64_t{kValue});
  ScalarType dtype = ScalarType::kFloat32;
  if (!s[base].is_none()) {
    dtype = s[base].scalar_type();
  } else if (kValue < 0 && !value.is_floating_point()) {
    dtype = value.is_bool() ? ScalarType::kBool : ScalarType::kInt64;  // full infers it
  }
  // Checked here too, so that the error names full's own argument (fill_'s meta would name
  // fill_.Scalar's).
  TSR_RETURN_IF_ERROR(CheckScalarFits(value, dtype, op.name(), "fill_value"));
  TSR_ASSIGN_OR_RETURN(Tensor t, Empty(s[0].int_list(), dtype, DeviceOr(s[base + 2])));
  TSR_RETURN_IF_ERROR(Fill(op, t, value));
  return std::vector<Tensor>{t};
}

// zeros.out / ones.out (size, *, out) and full.out (size, fill_value, *, out).
template <int kValue>
Out ConstantOutK(const OperatorHandle& op, const Stack& s) {
  const Tensor& out = s[kValue < 0 ? 2 : 1].tensor();
  const Scalar value = kValue < 0 ? s[1].scalar() : Scalar(int64_t{kValue});
  TSR_RETURN_IF_ERROR(CheckScalarFits(value, out.dtype(), op.name(), "fill_value"));
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), s[0].int_list()));
  TSR_RETURN_IF_ERROR(Fill(op, out, value));
  return std::vector<Tensor>{out};
}

Out ZeroK(const OperatorHandle& op, const Stack& s) {
  TSR_RETURN_IF_ERROR(Fill(op, s[0].tensor(), Scalar(int64_t{0})));
  return std::vector<Tensor>{s[0].tensor()};
}

// (push_back, not an initializer list: gcc 12 warns falsely on the latter here,
// -Wfree-nonheap-object)
Out FillMeta(const OperatorHandle& op, const Stack& s) {
  // Refused before any backend runs, also for an empty self (as PyTorch's Scalar::to<T>).
  TSR_RETURN_IF_ERROR(CheckScalarFits(s[1].scalar(), s[0].tensor().dtype(), op.name(), "value"));
  std::vector<Tensor> self;
  self.push_back(s[0].tensor());
  return self;
}

// Indices: [0, 1, ..., n - 1] as a `dtype` tensor on `device`, computed by ops that every
// backend has (cumsum over int64 ones, exact for any n, then converted), so the factories below
// need no kernel of their own.
absl::StatusOr<Tensor> Indices(OpRegistry& r, int64_t n, ScalarType dtype, Device device) {
  TSR_ASSIGN_OR_RETURN(Tensor ones, Empty({n}, ScalarType::kInt64, device));
  TSR_ASSIGN_OR_RETURN(Tensor filled,
                       CallOne(r, "fill_.Scalar", {ones, Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(Tensor csum, CallOne(r, "cumsum", {ones, Value(int64_t{0})}));
  TSR_ASSIGN_OR_RETURN(Tensor ramp, CallOne(r, "sub.Scalar", {csum, Value(Scalar(int64_t{1}))}));
  if (dtype == ScalarType::kInt64) return ramp;
  TSR_ASSIGN_OR_RETURN(Tensor converted, Empty({n}, dtype, device));
  return CallOne(r, "copy_", {converted, ramp});
}

// AccumulateType: the type PyTorch's CPU range factories compute in for an output dtype
// (at::acc_type<T, /*is_cuda=*/false>): int64 for the integers, float32 for the 16-bit floats,
// float64 otherwise.
ScalarType AccumulateType(ScalarType dtype) {
  if (IsIntegralType(dtype, /*include_bool=*/true)) return ScalarType::kInt64;
  if (dtype == ScalarType::kFloat16 || dtype == ScalarType::kBFloat16) return ScalarType::kFloat32;
  return ScalarType::kFloat64;
}

// AsAccumulate: a bound or step converted to the accumulate type, as PyTorch's
// `Scalar::to<accscalar_t>()` does before anything is computed (integers truncate).
Scalar AsAccumulate(const Scalar& v, ScalarType acc) {
  if (acc == ScalarType::kInt64) return Scalar(v.to_int());
  if (acc == ScalarType::kFloat32)
    return Scalar(static_cast<double>(static_cast<float>(v.to_double())));
  return Scalar(v.to_double());
}

absl::Status CheckArange(const OperatorHandle& op, double start, double end, double step) {
  if (step == 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: step must be nonzero", op.name()));
  }
  if (!std::isfinite(start) || !std::isfinite(end)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: unsupported range: %g -> %g (bounds must be finite)", op.name(), start, end));
  }
  if ((step > 0 && end < start) || (step < 0 && end > start)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: upper bound and larger bound inconsistent with step sign (start %g, end %g, step %g)",
        op.name(), start, end, step));
  }
  return absl::OkStatus();
}

// ArangeLength: the number of elements of arange(start, end, step) for `dtype`, with
// PyTorch's two rules (Note [arange in the accumulate type]).
absl::StatusOr<int64_t> ArangeLength(const OperatorHandle& op, const Scalar& start,
                                     const Scalar& end, const Scalar& step, ScalarType dtype) {
  const ScalarType acc = AccumulateType(dtype);
  for (const Scalar* v : {&start, &end, &step}) {
    // Converted to the accumulate type (int64 for every integral output), not to `dtype`.
    TSR_RETURN_IF_ERROR(CheckScalarFits(*v, acc, op.name(),
                                        v == &start ? "start"
                                        : v == &end ? "end"
                                                    : "step"));
  }
  const Scalar xstart = AsAccumulate(start, acc), xend = AsAccumulate(end, acc),
               xstep = AsAccumulate(step, acc);
  TSR_RETURN_IF_ERROR(CheckArange(op, xstart.to_double(), xend.to_double(), xstep.to_double()));
  if (dtype == ScalarType::kInt64) {
    // Exact in int64: ceil((end - start) / step) as (end - start + step - sign(step)) / step.
    const int64_t a = xstart.to_int(), b = xend.to_int(), st = xstep.to_int();
    const int64_t sign = st > 0 ? 1 : -1;
    int64_t span = 0;
    if (__builtin_sub_overflow(b, a, &span) || __builtin_add_overflow(span, st - sign, &span)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: invalid size, possible overflow? (start %d, end %d, step %d)", op.name(), a, b, st));
    }
    return span / st;
  }
  const double length = std::ceil((end.to_double() - start.to_double()) / step.to_double());
  if (!(length >= 0 && length <= 9.2e18)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: invalid size, possible overflow? (%g elements)", op.name(), length));
  }
  return static_cast<int64_t>(length);
}

// Note [arange in the accumulate type]
// PyTorch's CPU arange converts start, end and step to the output dtype's accumulate type
// (AccumulateType) and writes start + i * step computed there. Its length comes from the
// float64 values of the arguments, ceil((end - start) / step), except for int64 outputs, whose
// length is computed exactly in int64 from the converted values: arange(1.0, 5.000001, 2.0,
// dtype=int64) is [1, 3] (end truncates to 5), while the same with dtype=int32 is [1, 3, 5].
// ArangeInto resizes `out` to the range's length and writes the values.
absl::Status ArangeInto(const OperatorHandle& op, const Scalar& start, const Scalar& end,
                        const Scalar& step, const Tensor& out) {
  TSR_ASSIGN_OR_RETURN(const int64_t n, ArangeLength(op, start, end, step, out.dtype()));
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), {n}));
  if (n == 0) return absl::OkStatus();
  OpRegistry& r = op.registry();
  const ScalarType acc = AccumulateType(out.dtype());
  TSR_ASSIGN_OR_RETURN(Tensor i, Indices(r, n, acc, out.device()));
  TSR_ASSIGN_OR_RETURN(Tensor scaled,
                       CallOne(r, "mul.Scalar", {i, Value(AsAccumulate(step, acc))}));
  TSR_ASSIGN_OR_RETURN(
      Tensor values, CallOne(r, "add.Scalar",
                             {scaled, Value(AsAccumulate(start, acc)), Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {out, values}));
  return absl::OkStatus();
}

ScalarType ArangeDtype(const Value& dtype, std::initializer_list<Scalar> bounds) {
  if (!dtype.is_none()) return dtype.scalar_type();
  for (const Scalar& b : bounds) {
    if (b.is_floating_point()) return ScalarType::kFloat32;
  }
  return ScalarType::kInt64;
}

// arange(end, *, dtype, layout, device, pin_memory), arange.start(start, end, *, ...),
// arange.start_step(start, end, step, *, ...).
template <int kArgs>
Out ArangeK(const OperatorHandle& op, const Stack& s) {
  const Scalar start = kArgs == 1 ? Scalar(int64_t{0}) : s[0].scalar();
  const Scalar end = kArgs == 1 ? s[0].scalar() : s[1].scalar();
  const Scalar step = kArgs == 3 ? s[2].scalar() : Scalar(int64_t{1});
  const ScalarType dtype = ArangeDtype(s[kArgs], {start, end, step});
  if (dtype == ScalarType::kBool) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: not implemented for dtype bool", op.name()));
  }
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty({0}, dtype, DeviceOr(s[kArgs + 2])));
  TSR_RETURN_IF_ERROR(ArangeInto(op, start, end, step, out));
  return std::vector<Tensor>{out};
}
Out ArangeOutK(const OperatorHandle& op, const Stack& s) {
  TSR_RETURN_IF_ERROR(
      ArangeInto(op, Scalar(int64_t{0}), s[0].scalar(), Scalar(int64_t{1}), s[1].tensor()));
  return std::vector<Tensor>{s[1].tensor()};
}
Out ArangeStartOutK(const OperatorHandle& op, const Stack& s) {
  TSR_RETURN_IF_ERROR(ArangeInto(op, s[0].scalar(), s[1].scalar(), s[2].scalar(), s[3].tensor()));
  return std::vector<Tensor>{s[3].tensor()};
}

// LinspaceInto: PyTorch's symmetric formula (start + i * step for the first half, end - (n - 1 -
// i) * step for the second), so both ends are exact. As in PyTorch, one step is `start` alone,
// and for an integral output start and end are converted to it before the step is computed
// (linspace(0.5, 3, 3, dtype=int64) runs from 0 to 3; an int -5 wraps into uint8 as 251, so
// linspace(-5, 5, 3, dtype=uint8) is [251, 128, 5]).
absl::Status LinspaceInto(const OperatorHandle& op, const Scalar& start, const Scalar& end,
                          int64_t steps, const Tensor& out) {
  if (steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: number of steps must be non-negative, got %d", op.name(), steps));
  }
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), {steps}));
  if (steps == 0) return absl::OkStatus();
  TSR_RETURN_IF_ERROR(CheckScalarFits(start, out.dtype(), op.name(), "start"));
  if (steps == 1) return Fill(op, out, start);  // end is never converted (PyTorch fills start)
  TSR_RETURN_IF_ERROR(CheckScalarFits(end, out.dtype(), op.name(), "end"));
  OpRegistry& r = op.registry();
  const bool integral = IsIntegralType(out.dtype(), /*include_bool=*/true);
  // After CheckScalarFits only uint8 can take a value out of its range: a negative int, which
  // wraps.
  auto converted = [&](const Scalar& v) {
    const int64_t i = v.to_int();
    return static_cast<double>(out.dtype() == ScalarType::kUInt8 ? static_cast<uint8_t>(i) : i);
  };
  const double a = integral ? converted(start) : start.to_double();
  const double b = integral ? converted(end) : end.to_double();
  const double step = (b - a) / static_cast<double>(steps - 1);
  TSR_ASSIGN_OR_RETURN(Tensor i, Indices(r, steps, ScalarType::kFloat64, out.device()));
  TSR_ASSIGN_OR_RETURN(Tensor lo, CallOne(r, "mul.Scalar", {i, Value(Scalar(step))}));
  TSR_ASSIGN_OR_RETURN(lo,
                       CallOne(r, "add.Scalar", {lo, Value(Scalar(a)), Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(Tensor back, CallOne(r, "sub.Scalar",
                                            {i, Value(Scalar(static_cast<double>(steps - 1))),
                                             Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(Tensor hi, CallOne(r, "mul.Scalar", {back, Value(Scalar(step))}));
  TSR_ASSIGN_OR_RETURN(hi,
                       CallOne(r, "add.Scalar", {hi, Value(Scalar(b)), Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(Tensor first_half,
                       CallOne(r, "lt.Scalar", {i, Value(Scalar(static_cast<double>(steps / 2)))}));
  TSR_ASSIGN_OR_RETURN(Tensor values, CallOne(r, "where.self", {first_half, lo, hi}));
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {out, values}));
  return absl::OkStatus();
}

// linspace(start, end, steps, *, dtype, layout, device, pin_memory)
Out LinspaceK(const OperatorHandle& op, const Stack& s) {
  const ScalarType dtype = s[3].is_none() ? ScalarType::kFloat32 : s[3].scalar_type();
  if (dtype == ScalarType::kBool) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: not implemented for dtype bool", op.name()));
  }
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty({0}, dtype, DeviceOr(s[5])));
  TSR_RETURN_IF_ERROR(LinspaceInto(op, s[0].scalar(), s[1].scalar(), s[2].to_int(), out));
  return std::vector<Tensor>{out};
}
Out LinspaceOutK(const OperatorHandle& op, const Stack& s) {
  TSR_RETURN_IF_ERROR(LinspaceInto(op, s[0].scalar(), s[1].scalar(), s[2].to_int(), s[3].tensor()));
  return std::vector<Tensor>{s[3].tensor()};
}

// EyeInto: zeros, then ones on the diagonal (a view of the sum of out's two strides). A
// diagonal of one element is out's first element: the strides' sum may pass int64 there
// (1 x INT64_MAX, found by op_meta); with two or more rows and columns n * m fits, so it does.
absl::Status EyeInto(const OperatorHandle& op, int64_t n, int64_t m, const Tensor& out) {
  if (n < 0 || m < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected n >= 0 and m >= 0, got n = %d, m = %d", op.name(), n, m));
  }
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), {n, m}));
  TSR_RETURN_IF_ERROR(Fill(op, out, Scalar(int64_t{0})));
  if (n == 0 || m == 0) return absl::OkStatus();
  // The diagonal through out's own strides (an out= of the result's shape keeps them); one
  // element is out's first, whatever its strides.
  TSR_ASSIGN_OR_RETURN(Tensor diagonal, std::min(n, m) == 1
                                            ? AsStrided(out, {1}, {1}, out.storage_offset())
                                            : Diagonal(out, 0, 0, 1));
  return Fill(op, diagonal, Scalar(int64_t{1}));
}
// eye(n, *, dtype, layout, device, pin_memory), eye.m(n, m, *, ...)
template <bool kM>
Out EyeK(const OperatorHandle& op, const Stack& s) {
  const int base = kM ? 2 : 1;
  const ScalarType dtype = s[base].is_none() ? ScalarType::kFloat32 : s[base].scalar_type();
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty({0, 0}, dtype, DeviceOr(s[base + 2])));
  TSR_RETURN_IF_ERROR(EyeInto(op, s[0].to_int(), kM ? s[1].to_int() : s[0].to_int(), out));
  return std::vector<Tensor>{out};
}
template <bool kM>
Out EyeOutK(const OperatorHandle& op, const Stack& s) {
  const Tensor& out = s[kM ? 2 : 1].tensor();
  TSR_RETURN_IF_ERROR(EyeInto(op, s[0].to_int(), kM ? s[1].to_int() : s[0].to_int(), out));
  return std::vector<Tensor>{out};
}

// What a *_like op puts in the tensor it makes.
enum class LikeFill { kNothing, kZeros, kOnes, kFillValue };

Scalar LikeValue(LikeFill fill, const Stack& s) {
  return fill == LikeFill::kFillValue ? s[1].scalar()
                                      : Scalar(int64_t{fill == LikeFill::kOnes ? 1 : 0});
}

// empty_like / zeros_like / ones_like (self, *, dtype, layout, device, pin_memory,
// memory_format) and full_like (self, fill_value, *, ...): a tensor of self's shape, with its
// dtype and device unless given, laid out as clone lays out memory_format (None or
// preserve_format: self's strides where they are dense, else contiguous).
template <LikeFill kFill>
Out LikeK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  // dtype, layout, device, pin_memory, memory_format follow self (and fill_value).
  const int base = kFill == LikeFill::kFillValue ? 2 : 1;
  const ScalarType dtype = s[base].is_none() ? self.dtype() : s[base].scalar_type();
  const Device device = s[base + 2].is_none() ? self.device() : s[base + 2].device();
  const int64_t format = s[base + 4].is_none() ? kMemoryFormatPreserve : s[base + 4].to_int();
  const Scalar value = LikeValue(kFill, s);
  if (kFill != LikeFill::kNothing) {
    TSR_RETURN_IF_ERROR(CheckScalarFits(value, dtype, op.name(), "fill_value"));
  }
  TSR_ASSIGN_OR_RETURN(Tensor t, format == kMemoryFormatPreserve && IsNonOverlappingAndDense(self)
                                     ? EmptyStrided(self.sizes(), self.strides(), dtype, device)
                                     : Empty(self.sizes(), dtype, device));
  if (kFill != LikeFill::kNothing) TSR_RETURN_IF_ERROR(Fill(op, t, value));
  return std::vector<Tensor>{t};
}

// The out= forms (self, [fill_value,] *, memory_format, out): out resized to self's shape.
template <LikeFill kFill>
Out LikeOutK(const OperatorHandle& op, const Stack& s) {
  const Tensor& out = s[kFill == LikeFill::kFillValue ? 3 : 2].tensor();
  const Scalar value = LikeValue(kFill, s);
  if (kFill != LikeFill::kNothing) {
    TSR_RETURN_IF_ERROR(CheckScalarFits(value, out.dtype(), op.name(), "fill_value"));
  }
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), s[0].tensor().sizes()));
  if (kFill != LikeFill::kNothing) TSR_RETURN_IF_ERROR(Fill(op, out, value));
  return std::vector<Tensor>{out};
}

// _to_copy(self, *, dtype, layout, device, pin_memory, non_blocking, memory_format): a copy on
// the target device with the target dtype, laid out as clone lays out memory_format (None:
// preserve a dense layout). Another device is reached by copy_ between devices, which goes
// through host memory and converts the dtype on the CPU side; the copy is then contiguous.
absl::StatusOr<Tensor> Convert(OpRegistry& r, const Tensor& source, ScalarType dtype,
                               const Value& memory_format) {
  TSR_ASSIGN_OR_RETURN(Tensor like, CallOne(r, "clone", {source, memory_format}));
  if (like.dtype() == dtype) return like;
  TSR_ASSIGN_OR_RETURN(Tensor out,
                       EmptyStrided(like.sizes(), like.strides(), dtype, like.device()));
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {out, source}));
  return out;
}

Out ToCopyK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const ScalarType dtype = s[1].is_none() ? self.dtype() : s[1].scalar_type();
  const Device device = s[3].is_none() ? self.device() : s[3].device();
  OpRegistry& r = op.registry();
  if (device == self.device()) return One(Convert(r, self, dtype, s[6]));
  TSR_ASSIGN_OR_RETURN(Tensor moved, Empty(self.sizes(), dtype, device));
  return One(CallOne(r, "copy_", {moved, self}));
}

// to.dtype(self, dtype, non_blocking, copy, memory_format) and to.device(self, device, dtype,
// non_blocking, copy, memory_format): self itself when nothing changes and no copy is asked.
Out ToDtypeK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (self.dtype() == s[1].scalar_type() && !s[3].to_bool()) return std::vector<Tensor>{self};
  return One(CallOne(op.registry(), "_to_copy", {self, s[1]}));
}
Out ToDeviceK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (self.device() == s[1].device() && self.dtype() == s[2].scalar_type() && !s[4].to_bool()) {
    return std::vector<Tensor>{self};
  }
  return One(CallOne(op.registry(), "_to_copy", {self, s[2], Value(std::nullopt), s[1]}));
}

constexpr const char* kFactoryOptions =
    "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None";

}  // namespace

absl::Status DefineFactoryOps(OpRegistry& registry) {
  const std::string opts = kFactoryOptions;
  static std::vector<std::string>* schemas = new std::vector<std::string>{
      "zeros(SymInt[] size, " + opts + ") -> Tensor",
      "ones(SymInt[] size, " + opts + ") -> Tensor",
      "full(SymInt[] size, Scalar fill_value, " + opts + ") -> Tensor",
      "arange(Scalar end, " + opts + ") -> Tensor",
      "arange.start(Scalar start, Scalar end, " + opts + ") -> Tensor",
      "arange.start_step(Scalar start, Scalar end, Scalar step=1, " + opts + ") -> Tensor",
      "linspace(Scalar start, Scalar end, int steps, " + opts + ") -> Tensor",
      "eye(SymInt n, " + opts + ") -> Tensor",
      "eye.m(SymInt n, SymInt m, " + opts + ") -> Tensor",
      "empty_like(Tensor self, " + opts + ", MemoryFormat? memory_format=None) -> Tensor",
      "zeros_like(Tensor self, " + opts + ", MemoryFormat? memory_format=None) -> Tensor",
      "ones_like(Tensor self, " + opts + ", MemoryFormat? memory_format=None) -> Tensor",
      "full_like(Tensor self, Scalar fill_value, " + opts +
          ", MemoryFormat? memory_format=None) -> Tensor",
  };
  const std::vector<std::string>& sc = *schemas;
  TSR_RETURN_IF_ERROR(DefineAll(
      registry,
      {
          {sc[0].c_str(), MakeKernel<ConstantK<0>>("core::zeros")},
          {sc[1].c_str(), MakeKernel<ConstantK<1>>("core::ones")},
          {sc[2].c_str(), MakeKernel<ConstantK<-1>>("core::full")},
          {sc[3].c_str(), MakeKernel<ArangeK<1>>("core::arange")},
          {sc[4].c_str(), MakeKernel<ArangeK<2>>("core::arange")},
          {sc[5].c_str(), MakeKernel<ArangeK<3>>("core::arange")},
          {sc[6].c_str(), MakeKernel<LinspaceK>("core::linspace")},
          {sc[7].c_str(), MakeKernel<EyeK<false>>("core::eye")},
          {sc[8].c_str(), MakeKernel<EyeK<true>>("core::eye")},
          {sc[9].c_str(), MakeKernel<LikeK<LikeFill::kNothing>>("core::empty_like")},
          {sc[10].c_str(), MakeKernel<LikeK<LikeFill::kZeros>>("core::zeros_like")},
          {sc[11].c_str(), MakeKernel<LikeK<LikeFill::kOnes>>("core::ones_like")},
          {sc[12].c_str(), MakeKernel<LikeK<LikeFill::kFillValue>>("core::full_like")},
          {"empty_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<LikeOutK<LikeFill::kNothing>>("core::empty_like_out")},
          {"zeros_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<LikeOutK<LikeFill::kZeros>>("core::zeros_like_out")},
          {"ones_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<LikeOutK<LikeFill::kOnes>>("core::ones_like_out")},
          {"full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? memory_format=None, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<LikeOutK<LikeFill::kFillValue>>("core::full_like_out")},
          {"zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<ConstantOutK<0>>("core::zeros_out")},
          {"ones.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<ConstantOutK<1>>("core::ones_out")},
          {"full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<ConstantOutK<-1>>("core::full_out")},
          {"arange.out(Scalar end, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<ArangeOutK>("core::arange_out")},
          {"arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<ArangeStartOutK>("core::arange_out")},
          {"linspace.out(Scalar start, Scalar end, int steps, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<LinspaceOutK>("core::linspace_out")},
          {"eye.out(SymInt n, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<EyeOutK<false>>("core::eye_out")},
          {"eye.m_out(SymInt n, SymInt m, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<EyeOutK<true>>("core::eye_out")},
          {"zero_(Tensor(a!) self) -> Tensor(a!)", MakeKernel<ZeroK>("core::zero_")},
          {"_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
           "device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? "
           "memory_format=None) -> Tensor",
           MakeKernel<ToCopyK>("core::_to_copy")},
          {"to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
           "MemoryFormat? memory_format=None) -> Tensor(a)",
           MakeKernel<ToDtypeK>("core::to")},
          {"to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, "
           "bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
           MakeKernel<ToDeviceK>("core::to")},
      },
      KernelSlot::kComposite));
  return DefineAll(registry,
                   {{"fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
                     MakeKernel<FillMeta>("meta::fill_")}},
                   KernelSlot::kMeta);
}

}  // namespace ops
}  // namespace tessera
