// The random ops of op set 1.5 (Note [Random numbers] in core/generator.h).
//
// Two are backend kernels, with meta functions here: uniform_ and normal_, each drawing once
// per call from the call's generator. Everything else is a composite over them and ordinary
// ops, so that a backend with those two kernels (or the CPU fallback) has all of them, with
// the same bits for the same seed: rand and randn (their .generator and out= forms), rand_like
// and randn_like, bernoulli (a tensor of probabilities, a float p, in place), native_dropout and
// its backward, and dropout. A composite passes its `generator` argument on unchanged: None
// means the default generator of the device its random kernel runs on.
#include <cmath>

#include "absl/strings/str_format.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

absl::Status ExpectFloating(const OperatorHandle& op, std::string_view what, ScalarType dtype) {
  if (IsFloatingType(dtype)) return absl::OkStatus();
  return Invalid(
      op, absl::StrFormat("expected a floating-point %s, got %s", what, ScalarTypeName(dtype)));
}

// uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None)
TensorsOr UniformMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "tensor", self.dtype()));
  const double from = s[1].to_double(), to = s[2].to_double();
  if (!(from <= to)) {
    return Invalid(op, absl::StrFormat("expects to return a [from, to) range, but found from=%g "
                                       "> to=%g",
                                       from, to));
  }
  if (!std::isfinite(to - from)) {
    return Invalid(op, absl::StrFormat("expects to-from to be finite, but found to=%g and "
                                       "from=%g",
                                       to, from));
  }
  return std::vector<Tensor>{self};
}

// normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None)
TensorsOr NormalMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "tensor", self.dtype()));
  const double std = s[2].to_double();
  if (!(std >= 0.0)) {
    return Invalid(op, absl::StrFormat("expects std >= 0.0, but found std %g", std));
  }
  return std::vector<Tensor>{self};
}

// Fill calls the random kernel `kernel` ("uniform_" or "normal_") on `t` with its two
// parameters and the generator value `generator` (None or a Generator).
absl::Status Fill(OpRegistry& r, std::string_view kernel, const Tensor& t, double a, double b,
                  const Value& generator) {
  TSR_ASSIGN_OR_RETURN(Tensor filled, CallOne(r, kernel, {t, Value(a), Value(b), generator}));
  return absl::OkStatus();
}

// What rand and randn fill with: uniform [0, 1) or standard normal.
enum class Dist { kUniform, kNormal };
constexpr std::string_view KernelOf(Dist d) { return d == Dist::kUniform ? "uniform_" : "normal_"; }
constexpr double kSecondParameter = 1.0;  // to=1 or std=1

// rand / randn (size, *, dtype, layout, device, pin_memory) and their .generator forms (size, *,
// generator, dtype, layout, device, pin_memory).
template <Dist kDist, bool kGenerator>
TensorsOr RandK(const OperatorHandle& op, const Stack& s) {
  const int base = kGenerator ? 2 : 1;
  const ScalarType dtype = s[base].is_none() ? ScalarType::kFloat32 : s[base].scalar_type();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "dtype", dtype));
  const Device device = s[base + 2].is_none() ? Device(DeviceType::kCPU) : s[base + 2].device();
  TSR_ASSIGN_OR_RETURN(Tensor t, Empty(s[0].int_list(), dtype, device));
  TSR_RETURN_IF_ERROR(
      Fill(op.registry(), KernelOf(kDist), t, 0.0, kSecondParameter, kGenerator ? s[1] : Value()));
  return std::vector<Tensor>{t};
}

// rand.out / randn.out (size, *, out) and rand.generator_out / randn.generator_out (size, *,
// generator, out).
template <Dist kDist, bool kGenerator>
TensorsOr RandOutK(const OperatorHandle& op, const Stack& s) {
  const Tensor& out = s[kGenerator ? 2 : 1].tensor();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "out", out.dtype()));
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), s[0].int_list()));
  TSR_RETURN_IF_ERROR(Fill(op.registry(), KernelOf(kDist), out, 0.0, kSecondParameter,
                           kGenerator ? s[1] : Value()));
  return std::vector<Tensor>{out};
}

// rand_like / randn_like (self, *, dtype, layout, device, pin_memory, memory_format): empty_like
// with the same arguments, then filled.
template <Dist kDist>
TensorsOr RandLikeK(const OperatorHandle& op, const Stack& s) {
  const ScalarType dtype = s[1].is_none() ? s[0].tensor().dtype() : s[1].scalar_type();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "dtype", dtype));
  TSR_ASSIGN_OR_RETURN(Tensor t, CallOne(op.registry(), "empty_like", Stack(s.begin(), s.end())));
  TSR_RETURN_IF_ERROR(Fill(op.registry(), KernelOf(kDist), t, 0.0, kSecondParameter, Value()));
  return std::vector<Tensor>{t};
}

// UniformLike: a float64 tensor of `like`'s shape on its device, uniform in [0, 1): what the
// Bernoulli draws compare against (53 bits: a probability's resolution, whatever its dtype).
absl::StatusOr<Tensor> UniformLike(OpRegistry& r, const Tensor& like, const Value& generator) {
  TSR_ASSIGN_OR_RETURN(Tensor u, Empty(like.sizes(), ScalarType::kFloat64, like.device()));
  TSR_RETURN_IF_ERROR(Fill(r, "uniform_", u, 0.0, 1.0, generator));
  return u;
}

absl::Status CheckProbability(const OperatorHandle& op, double p) {
  if (p >= 0.0 && p <= 1.0) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("expects p to be in [0, 1], but got p=%g", p));
}

// bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None): each element 1
// with probability p (u < p), else 0, in self's dtype.
TensorsOr BernoulliFloatInplaceK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const double p = s[1].to_double();
  TSR_RETURN_IF_ERROR(CheckProbability(op, p));
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor u, UniformLike(r, self, s[2]));
  TSR_ASSIGN_OR_RETURN(Tensor hit, CallOne(r, "lt.Scalar", {u, Value(Scalar(p))}));
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {self, hit}));
  return std::vector<Tensor>{self};
}

// bernoulli.p(Tensor self, float p, *, Generator? generator=None): the same into a new tensor
// like self.
TensorsOr BernoulliPK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_RETURN_IF_ERROR(CheckProbability(op, s[1].to_double()));
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(self.sizes(), self.dtype(), self.device()));
  TSR_ASSIGN_OR_RETURN(Tensor filled, CallOne(op.registry(), "bernoulli_.float",
                                              {out, Value(s[1].to_double()), s[2]}));
  return std::vector<Tensor>{out};
}

// bernoulli(Tensor self, *, Generator? generator=None): self holds probabilities; each element
// 1 where u < self, in self's dtype (a probability outside [0, 1] acts as 0 or 1: PyTorch's CPU
// kernel does not check them either).
TensorsOr BernoulliK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "tensor of probabilities", self.dtype()));
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor u, UniformLike(r, self, s[1]));
  TSR_ASSIGN_OR_RETURN(Tensor hit, CallOne(r, "lt.Tensor", {u, self}));
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(self.sizes(), self.dtype(), self.device()));
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {out, hit}));
  return std::vector<Tensor>{out};
}

// native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor), as ATen's
// native_dropout_cpu: in training (train None or true) the mask keeps each element with
// probability 1 - p (a bool tensor) and the output is input * mask * (1 / (1 - p)), 0 for p = 1;
// otherwise a copy of the input and an all-true mask. An empty input gives an empty output and
// an empty mask of the input's dtype, as ATen's.
TensorsOr NativeDropoutK(const OperatorHandle& op, const Stack& s) {
  const Tensor& input = s[0].tensor();
  const double p = s[1].to_double();
  const bool train = s[2].is_none() || s[2].to_bool();
  OpRegistry& r = op.registry();
  if (input.numel() == 0) {
    TSR_ASSIGN_OR_RETURN(Tensor out, Empty(input.sizes(), input.dtype(), input.device()));
    TSR_ASSIGN_OR_RETURN(Tensor mask, Empty(input.sizes(), input.dtype(), input.device()));
    return std::vector<Tensor>{out, mask};
  }
  TSR_ASSIGN_OR_RETURN(Tensor mask, Empty(input.sizes(), ScalarType::kBool, input.device()));
  if (!train) {
    TSR_ASSIGN_OR_RETURN(Tensor ones, CallOne(r, "fill_.Scalar", {mask, Value(Scalar(true))}));
    TSR_ASSIGN_OR_RETURN(Tensor copy, CallOne(r, "clone", {input, Value()}));
    return std::vector<Tensor>{copy, mask};
  }
  const double keep = 1.0 - p;
  const double scale = keep == 0.0 ? 0.0 : 1.0 / keep;
  TSR_ASSIGN_OR_RETURN(Tensor drawn, CallOne(r, "bernoulli_.float", {mask, Value(keep), Value()}));
  // In place, as ATen's `input.mul(mask).mul_(scale)`: an integral input is refused (a float
  // scale cannot be cast into it) rather than promoted.
  TSR_ASSIGN_OR_RETURN(Tensor kept, CallOne(r, "mul.Tensor", {input, mask}));
  TSR_ASSIGN_OR_RETURN(Tensor out, CallOne(r, "mul_.Scalar", {kept, Value(Scalar(scale))}));
  return std::vector<Tensor>{out, mask};
}

// native_dropout_backward(Tensor grad_output, Tensor mask, float scale): grad * mask * scale.
absl::StatusOr<Tensor> NativeDropoutBackward(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor kept, CallOne(r, "mul.Tensor", {s[0].tensor(), s[1].tensor()}));
  return CallOne(r, "mul.Scalar", {kept, Value(Scalar(s[2].to_double()))});
}

// dropout(Tensor input, float p, bool train), as ATen's: the input itself outside training, for
// p = 0 or an empty input; input times a zero of its dtype for p = 1; else native_dropout's
// output (which refuses an integral input, as ATen's; a float16 one it computes, where ATen's
// CPU kernel has no float16 bernoulli_).
TensorsOr DropoutK(const OperatorHandle& op, const Stack& s) {
  const Tensor& input = s[0].tensor();
  const double p = s[1].to_double();
  if (!(p >= 0.0 && p <= 1.0)) {
    return Invalid(op,
                   absl::StrFormat("dropout probability has to be between 0 and 1, but got %g", p));
  }
  if (p == 0.0 || !s[2].to_bool() || input.numel() == 0) return std::vector<Tensor>{input};
  OpRegistry& r = op.registry();
  if (p == 1.0) {  // times a 0-dim zero of the input's dtype: the dtype stays (bool too)
    TSR_ASSIGN_OR_RETURN(Tensor zero, Zeros(r, {}, input.dtype(), input.device()));
    return One(CallOne(r, "mul.Tensor", {input, zero}));
  }
  TSR_ASSIGN_OR_RETURN(OperatorHandle native, r.Find("native_dropout"));
  Stack call{input, Value(p), Value(true)};
  TSR_RETURN_IF_ERROR(r.Call(native, &call));
  return std::vector<Tensor>{call[0].tensor()};
}

}  // namespace

absl::Status DefineRandomOps(OpRegistry& registry) {
  const std::string opts =
      "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None";
  const std::string like = "Tensor self, *, " + opts + ", MemoryFormat? memory_format=None";
  const std::vector<std::string> schemas = {
      "rand(SymInt[] size, *, " + opts + ") -> Tensor",
      "rand.generator(SymInt[] size, *, Generator? generator, " + opts + ") -> Tensor",
      "randn(SymInt[] size, *, " + opts + ") -> Tensor",
      "randn.generator(SymInt[] size, *, Generator? generator, " + opts + ") -> Tensor",
      "rand_like(" + like + ") -> Tensor",
      "randn_like(" + like + ") -> Tensor",
  };
  TSR_RETURN_IF_ERROR(DefineAll(
      registry,
      {
          {schemas[0].c_str(), MakeKernel<RandK<Dist::kUniform, false>>("core::rand")},
          {schemas[1].c_str(), MakeKernel<RandK<Dist::kUniform, true>>("core::rand")},
          {schemas[2].c_str(), MakeKernel<RandK<Dist::kNormal, false>>("core::randn")},
          {schemas[3].c_str(), MakeKernel<RandK<Dist::kNormal, true>>("core::randn")},
          {schemas[4].c_str(), MakeKernel<RandLikeK<Dist::kUniform>>("core::rand_like")},
          {schemas[5].c_str(), MakeKernel<RandLikeK<Dist::kNormal>>("core::randn_like")},
          {"rand.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<RandOutK<Dist::kUniform, false>>("core::rand_out")},
          {"rand.generator_out(SymInt[] size, *, Generator? generator, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<RandOutK<Dist::kUniform, true>>("core::rand_out")},
          {"randn.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<RandOutK<Dist::kNormal, false>>("core::randn_out")},
          {"randn.generator_out(SymInt[] size, *, Generator? generator, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<RandOutK<Dist::kNormal, true>>("core::randn_out")},
          {"bernoulli(Tensor self, *, Generator? generator=None) -> Tensor",
           MakeKernel<BernoulliK>("core::bernoulli")},
          {"bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor",
           MakeKernel<BernoulliPK>("core::bernoulli")},
          {"bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> "
           "Tensor(a!)",
           MakeKernel<BernoulliFloatInplaceK>("core::bernoulli_")},
          {"native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
           MakeKernel<NativeDropoutK>("core::native_dropout")},
          {"native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor",
           MakeKernel<ComputeOne<NativeDropoutBackward>>("core::native_dropout_backward")},
          {"dropout(Tensor input, float p, bool train) -> Tensor",
           MakeKernel<DropoutK>("core::dropout")},
      },
      KernelSlot::kComposite));
  return DefineAll(
      registry,
      {{"uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) -> "
        "Tensor(a!)",
        MakeKernel<UniformMeta>("meta::uniform_")},
       {"normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> "
        "Tensor(a!)",
        MakeKernel<NormalMeta>("meta::normal_")}},
      KernelSlot::kMeta);
}

}  // namespace ops
}  // namespace tessera
