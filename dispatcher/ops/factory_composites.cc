// Op set 1.8's fills and factories that ATen writes over others, defined the same way so every
// backend has them: fill (a new tensor like self, filled; fill_.Tensor, a 0-dim value copied
// into self, cast as copy_ casts, with no sync to read it), scalar_tensor (full of shape [],
// float32 unless a dtype is given, whatever the Scalar's kind), logspace (as ATen's CPU kernel
// computes it, below), and new_empty / new_zeros / new_ones / new_full
// (self's dtype and device unless given).
#include <cmath>
#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/half.h"
#include "core/scalar.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

// fill.Scalar(self, value)
absl::StatusOr<Tensor> FillScalarOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor out, EmptyOf(r, s[0].tensor(), s[0].tensor().sizes()));
  return CallOne(r, "fill_.Scalar", {Value(out), s[1]});
}

// `value` of fill.Tensor: one element, 0-dim (ATen's rule).
absl::Status CheckFillValue(const OperatorHandle& op, const Tensor& value) {
  if (value.dim() == 0) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("fill_ only supports 0-dimension value tensor but got tensor "
                                     "with %d dimensions",
                                     value.dim()));
}

// fill_.Tensor(self, value): value broadcast over self by copy_, which casts it to self's dtype.
absl::StatusOr<Tensor> FillInto(const OperatorHandle& op, const Tensor& self, const Tensor& value) {
  TSR_RETURN_IF_ERROR(CheckFillValue(op, value));
  if (self.numel() == 0) return self;
  Tensor source = value;
  if (value.IsSameStorage(self)) {  // x.fill_(x[2]): a copy first, as ATen's fill_ makes one
    TSR_ASSIGN_OR_RETURN(source, CallOne(op.registry(), "clone", {value, Value(std::nullopt)}));
  }
  TSR_ASSIGN_OR_RETURN(Tensor spread, Expand(source, self.sizes()));
  return CallOne(op.registry(), "copy_", {self, spread});
}

Out FillInplaceTensorK(const OperatorHandle& op, const Stack& s) {
  return One(FillInto(op, s[0].tensor(), s[1].tensor()));
}

// fill.Tensor(self, value)
absl::StatusOr<Tensor> FillTensorOf(const OperatorHandle& op, const Stack& s) {
  TSR_RETURN_IF_ERROR(CheckFillValue(op, s[1].tensor()));
  TSR_ASSIGN_OR_RETURN(Tensor out, EmptyOf(op.registry(), s[0].tensor(), s[0].tensor().sizes()));
  return FillInto(op, out, s[1].tensor());
}

// scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None): full of [],
// float32 by default (the default dtype, not the Scalar's).
Out ScalarTensorK(const OperatorHandle& op, const Stack& s) {
  const Value dtype = s[1].is_none() ? Value(ScalarType::kFloat32) : s[1];
  return One(CallOne(op.registry(), "full", {Value(IntList{}), s[0], dtype, s[2], s[3], s[4]}));
}

// scalar_tensor.out(s, *, out): out resized to [] and filled.
Out ScalarTensorOutK(const OperatorHandle& op, const Stack& s) {
  return One(CallOne(op.registry(), "full.out", {Value(IntList{}), s[0], s[1]}));
}

// InDtype: `v` as `dtype` holds it (checked: a value the dtype cannot hold is refused, as ATen's
// Scalar::to), back as a double: truncated for the integral dtypes, rounded for the floating.
absl::StatusOr<double> InDtype(const OperatorHandle& op, const Scalar& v, ScalarType dtype,
                               const char* arg) {
  TSR_RETURN_IF_ERROR(CheckScalarFits(v, dtype, op.name(), arg));
  switch (dtype) {
    case ScalarType::kFloat64:
      return v.to_double();
    case ScalarType::kFloat32:
      return static_cast<double>(static_cast<float>(v.to_double()));
    case ScalarType::kFloat16:
      return static_cast<double>(static_cast<float>(Half(static_cast<float>(v.to_double()))));
    case ScalarType::kBFloat16:
      return static_cast<double>(static_cast<float>(BFloat16(static_cast<float>(v.to_double()))));
    default:
      return static_cast<double>(v.to_int());
  }
}

// logspace(start, end, steps, base=10, *, dtype, ...), as ATen's CPU kernel computes it: one
// step is base ** start, converted (checked) to the dtype; with more, start and end are first
// converted to the dtype and their difference rounded there, element i is
// base ** (start + step * i) in the first half and base ** (end - step * (steps - 1 - i)) in the
// second, in float64 (base as a float32 for the integral dtypes), then cast to the dtype.
absl::StatusOr<Tensor> Logspace(const OperatorHandle& op, const Scalar& start, const Scalar& end,
                                int64_t steps, double base, ScalarType dtype, const Value& device) {
  OpRegistry& r = op.registry();
  if (steps < 0) return Invalid(op, "number of steps must be non-negative");
  const Value no_layout = Value(std::nullopt);
  if (steps <= 1) {
    const Scalar value = Scalar(std::pow(base, start.to_double()));
    if (steps == 1) TSR_RETURN_IF_ERROR(CheckScalarFits(value, dtype, op.name(), "base ** start"));
    return CallOne(r, "full",
                   {Value(IntList{steps}), Value(value), Value(dtype), no_layout, device});
  }
  if (dtype == ScalarType::kBool) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: not implemented for dtype bool with more than one step", op.name()));
  }
  TSR_ASSIGN_OR_RETURN(const double from, InDtype(op, start, dtype, "start"));
  TSR_ASSIGN_OR_RETURN(const double to, InDtype(op, end, dtype, "end"));
  double difference = to - from;
  if (IsFloatingType(dtype)) {
    TSR_ASSIGN_OR_RETURN(difference, InDtype(op, Scalar(difference), dtype, "end - start"));
  }
  const double step = difference / static_cast<double>(steps - 1);
  const double power_base =
      IsFloatingType(dtype) ? base : static_cast<double>(static_cast<float>(base));
  // The exponents in one float64 buffer, each half computed in place: the first
  // from + step * i, the second to + step * (i - (steps - 1)), as ATen's kernel writes them.
  const Value f64 = Value(ScalarType::kFloat64);
  TSR_ASSIGN_OR_RETURN(Tensor exponents,
                       CallOne(r, "arange", {Value(Scalar(steps)), f64, no_layout, device}));
  const int64_t half = steps / 2;
  auto in_place = [&](const char* name, const Tensor& t, double v) -> absl::Status {
    Stack args{Value(t), Value(Scalar(v))};
    if (std::string_view(name) == "add_.Scalar") args.push_back(Value(Scalar(int64_t{1})));
    return CallOne(r, name, std::move(args)).status();
  };
  TSR_ASSIGN_OR_RETURN(Tensor first, Narrow(exponents, 0, 0, half));
  TSR_RETURN_IF_ERROR(in_place("mul_.Scalar", first, step));
  TSR_RETURN_IF_ERROR(in_place("add_.Scalar", first, from));
  TSR_ASSIGN_OR_RETURN(Tensor second, Narrow(exponents, 0, half, steps - half));
  TSR_RETURN_IF_ERROR(in_place("add_.Scalar", second, -static_cast<double>(steps - 1)));
  TSR_RETURN_IF_ERROR(in_place("mul_.Scalar", second, step));
  TSR_RETURN_IF_ERROR(in_place("add_.Scalar", second, to));
  TSR_ASSIGN_OR_RETURN(Tensor powers,
                       CallOne(r, "pow.Scalar", {Value(Scalar(power_base)), Value(exponents)}));
  exponents = Tensor();  // freed before the cast's buffer is made
  if (dtype == ScalarType::kFloat64) return powers;
  return CallOne(r, "_to_copy", {Value(powers), Value(dtype)});
}

absl::StatusOr<Tensor> LogspaceOf(const OperatorHandle& op, const Stack& s) {
  const ScalarType dtype = s[4].is_none() ? ScalarType::kFloat32 : s[4].scalar_type();
  return Logspace(op, s[0].scalar(), s[1].scalar(), s[2].to_int(), s[3].to_double(), dtype, s[6]);
}

// logspace.out(start, end, steps, base=10, *, out): computed in out's dtype, on its device.
Out LogspaceOutK(const OperatorHandle& op, const Stack& s) {
  const Tensor& out = s[4].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor result, Logspace(op, s[0].scalar(), s[1].scalar(), s[2].to_int(),
                                               s[3].to_double(), out.dtype(), Value(out.device())));
  TSR_RETURN_IF_ERROR(CopyIntoOut(op, 4, result, out, /*castable=*/false));
  return std::vector<Tensor>{out};
}

// new_empty / new_zeros / new_ones (self, size, *, dtype, layout, device, pin_memory) and
// new_full (self, size, fill_value, *, ...): the factory `factory`, with self's dtype and device
// where the call gives none.
enum class NewFill { kEmpty, kZeros, kOnes, kFull };

template <NewFill kFill>
Out NewK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  constexpr bool kFull = kFill == NewFill::kFull;
  const size_t options = kFull ? 3 : 2;  // where dtype is (new_full has fill_value before it)
  const Value dtype = s[options].is_none() ? Value(self.dtype()) : s[options];
  const Value device = s[options + 2].is_none() ? Value(self.device()) : s[options + 2];
  Stack args{s[1]};
  if constexpr (kFull) args.push_back(s[2]);
  args.insert(args.end(), {dtype, s[options + 1], device, s[options + 3]});
  const char* factory = kFill == NewFill::kEmpty   ? "empty.memory_format"
                        : kFill == NewFill::kZeros ? "zeros"
                        : kFill == NewFill::kOnes  ? "ones"
                                                   : "full";
  return One(CallOne(op.registry(), factory, std::move(args)));
}

}  // namespace

absl::Status DefineFactoryComposites(OpRegistry& registry) {
  const std::string opts =
      "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None";
  const std::string texts[] = {
      "scalar_tensor(Scalar s, " + opts + ") -> Tensor",
      "logspace(Scalar start, Scalar end, int steps, float base=10., " + opts + ") -> Tensor",
      "new_empty(Tensor self, SymInt[] size, " + opts + ") -> Tensor",
      "new_zeros(Tensor self, SymInt[] size, " + opts + ") -> Tensor",
      "new_ones(Tensor self, SymInt[] size, " + opts + ") -> Tensor",
      "new_full(Tensor self, SymInt[] size, Scalar fill_value, " + opts + ") -> Tensor",
  };
  TSR_RETURN_IF_ERROR(DefineAll(
      registry,
      {
          {"fill.Scalar(Tensor self, Scalar value) -> Tensor",
           MakeKernel<Named<ComputeOne<FillScalarOf>>>("core::fill")},
          {"fill.Scalar_out(Tensor self, Scalar value, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<FillScalarOf, 2>>>("core::fill_out")},
          {"fill.Tensor(Tensor self, Tensor value) -> Tensor",
           MakeKernel<Named<ComputeOne<FillTensorOf>>>("core::fill")},
          {"fill.Tensor_out(Tensor self, Tensor value, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<FillTensorOf, 2>>>("core::fill_out")},
          {"fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)",
           MakeKernel<Named<FillInplaceTensorK>>("core::fill_")},
          {texts[0].c_str(), MakeKernel<Named<ScalarTensorK>>("core::scalar_tensor")},
          {"scalar_tensor.out(Scalar s, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ScalarTensorOutK>>("core::scalar_tensor_out")},
          {texts[1].c_str(), MakeKernel<Named<ComputeOne<LogspaceOf>>>("core::logspace")},
          {"logspace.out(Scalar start, Scalar end, int steps, float base=10., *, Tensor(a!) out) "
           "-> Tensor(a!)",
           MakeKernel<Named<LogspaceOutK>>("core::logspace_out")},
          {texts[2].c_str(), MakeKernel<Named<NewK<NewFill::kEmpty>>>("core::new_empty")},
          {texts[3].c_str(), MakeKernel<Named<NewK<NewFill::kZeros>>>("core::new_zeros")},
          {texts[4].c_str(), MakeKernel<Named<NewK<NewFill::kOnes>>>("core::new_ones")},
          {texts[5].c_str(), MakeKernel<Named<NewK<NewFill::kFull>>>("core::new_full")},
      },
      KernelSlot::kComposite));
  // fill_.Tensor reads its value (copying it when it is an element of self) before it writes.
  return registry.SetOutputAliasing("fill_.Tensor", OutputAliasing::kReadsFirst);
}

}  // namespace ops
}  // namespace tessera
