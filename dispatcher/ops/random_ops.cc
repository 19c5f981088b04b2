// The random ops of op set 1.5 (Note [Random numbers] in core/generator.h).
//
// Two are backend kernels, with meta functions here: uniform_ and normal_, each drawing once
// per call from the call's generator. Everything else is a composite over them and ordinary
// ops, so that a backend with those two kernels (or the CPU fallback) has all of them, with
// the same bits for the same seed: rand and randn (their .generator and out= forms), rand_like
// and randn_like, bernoulli (a tensor of probabilities, a float p, a tensor p, in place and
// out=), native_dropout and its backward, and dropout. A composite passes its `generator` argument
// on unchanged: None means the default generator of the device its random kernel runs on.
#include <climits>
#include <cmath>
#include <utility>

#include "absl/strings/str_format.h"
#include "core/host_copy.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/random_support.h"

namespace tessera {
namespace ops {
namespace {

// uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None), with
// ATen's checks (check_uniform_bounds): from <= to, both within self's dtype, and to - from
// within it too (the kernel computes in float for the 16-bit and 32-bit dtypes).
TensorsOr UniformMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "tensor", self.dtype()));
  const double from = s[1].to_double(), to = s[2].to_double();
  if (!(from <= to)) {
    return Invalid(op, absl::StrFormat("expects to return a [from, to) range, but found from=%g "
                                       "> to=%g",
                                       from, to));
  }
  const double max = MaxFinite(self.dtype());
  for (const auto& [name, v] : {std::pair<const char*, double>{"from", from}, {"to", to}}) {
    if (!(v >= -max && v <= max)) {
      return Invalid(op, absl::StrFormat("%s is out of bounds for %s (got %g; its finite values "
                                         "are within +-%g)",
                                         name, ScalarTypeName(self.dtype()), v, max));
    }
  }
  if (!(to - from <= max)) {
    return Invalid(op, absl::StrFormat("expects to-from <= the largest %s (%g), but found to=%g "
                                       "and from=%g",
                                       ScalarTypeName(self.dtype()), max, to, from));
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
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "argument 'out'", out.dtype()));
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

// CheckProbabilities: every element of `p` in [0, 1] (NaN is not), as ATen's
// bernoulli_distribution checks each one; one read of a 0-dim bool back to the host.
absl::Status CheckProbabilities(const OperatorHandle& op, const Tensor& p) {
  if (p.device().type == DeviceType::kMeta) return absl::OkStatus();  // no values to check
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor low, CallOne(r, "ge.Scalar", {p, Value(Scalar(0.0))}));
  TSR_ASSIGN_OR_RETURN(Tensor high, CallOne(r, "le.Scalar", {p, Value(Scalar(1.0))}));
  TSR_ASSIGN_OR_RETURN(Tensor in_range, CallOne(r, "logical_and", {low, high}));
  TSR_ASSIGN_OR_RETURN(Tensor all, CallOne(r, "all", {in_range}));
  bool ok = false;
  TSR_RETURN_IF_ERROR(CopyTensorToHost(all, &ok));
  if (ok) return absl::OkStatus();
  return Invalid(op, "expects all elements of p to be in [0, 1] (found one outside, or NaN)");
}

// bernoulli(Tensor self, *, Generator? generator=None): self holds probabilities, each in
// [0, 1]; each element 1 where u < self, in self's dtype.
TensorsOr BernoulliK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "tensor of probabilities", self.dtype()));
  OpRegistry& r = op.registry();
  TSR_RETURN_IF_ERROR(CheckProbabilities(op, self));
  TSR_ASSIGN_OR_RETURN(Tensor u, UniformLike(r, self, s[1]));
  TSR_ASSIGN_OR_RETURN(Tensor hit, CallOne(r, "lt.Tensor", {u, self}));
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(self.sizes(), self.dtype(), self.device()));
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {out, hit}));
  return std::vector<Tensor>{out};
}

// BernoulliInto: ATen's bernoulli_(self, p) with a tensor p (bernoulli_impl_ and its CPU
// kernel): p expands to self's shape (expand_inplace: p to self, never self to p), is
// floating-point and holds probabilities in [0, 1] (NaN is not); element i of self (row-major
// over self's shape) becomes 1 where u_i < p_i, else 0, in self's dtype, u one float64 uniform
// draw over self's shape and p_i compared in float64 (every floating p widens exactly). An empty
// self is returned at once, unchecked, as current PyTorch's CHECK_EMPTY_AND_RETURN does (1.13
// still expanded p and refused one that does not expand to self's empty shape).
absl::Status BernoulliInto(const OperatorHandle& op, const Tensor& self, const Tensor& p,
                           const Value& generator) {
  if (self.numel() == 0) return absl::OkStatus();
  // The expansion is the shape check only: lt broadcasts p itself, so a 0-dim CPU p stays
  // 0-dim and joins a self on any device (an expanded one would be a CPU tensor of self's shape,
  // refused beside it).
  TSR_RETURN_IF_ERROR(Expand(p, self.sizes()).status());
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "tensor of probabilities", p.dtype()));
  TSR_RETURN_IF_ERROR(CheckProbabilities(op, p));
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor u, UniformLike(r, self, generator));
  TSR_ASSIGN_OR_RETURN(Tensor hit, CallOne(r, "lt.Tensor", {u, p}));
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {self, hit}));
  return absl::OkStatus();
}

// bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None): BernoulliInto.
TensorsOr BernoulliTensorInplaceK(const OperatorHandle& op, const Stack& s) {
  TSR_RETURN_IF_ERROR(BernoulliInto(op, s[0].tensor(), s[1].tensor(), s[2]));
  return std::vector<Tensor>{s[0].tensor()};
}

// bernoulli.Tensor(Tensor self, Tensor p, *, Generator? generator=None): ATen's generated
// functional form of bernoulli_.Tensor, on a new tensor like self.
absl::StatusOr<Tensor> BernoulliTensorOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(self.sizes(), self.dtype(), self.device()));
  TSR_RETURN_IF_ERROR(BernoulliInto(op, out, s[1].tensor(), s[2]));
  return out;
}

// IntoAnyOut: `result` into the out= argument `out`, resized to its shape; 0s and 1s go into an
// out of any dtype (ATen's bernoulli out= forms cast: copy_, no can_cast check).
TensorsOr IntoAnyOut(const OperatorHandle& op, const Tensor& result, const Tensor& out) {
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), result.sizes()));
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(op.registry(), "copy_", {out, result}));
  return std::vector<Tensor>{out};
}

// bernoulli.Tensor_out(Tensor self, Tensor p, *, Generator? generator=None, Tensor(a!) out):
// ATen's generated out= form: the functional result, then copied into out.
TensorsOr BernoulliTensorOutK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(Tensor result, BernoulliTensorOf(op, s));
  return IntoAnyOut(op, result, s[3].tensor());
}

// bernoulli.float_out(Tensor self, float p=0.5, *, Generator? generator=None, Tensor(a!) out):
// ATen's generated out= form of bernoulli_.float: bernoulli.p's result copied into out.
TensorsOr BernoulliFloatOutK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> result, BernoulliPK(op, s));
  return IntoAnyOut(op, result[0], s[3].tensor());
}

// bernoulli.out(Tensor self, *, Generator? generator=None, Tensor(a!) out): ATen's
// bernoulli_out_impl: out resized to self's shape, then bernoulli_(out, self) (self the
// probabilities) in out's own dtype; an empty self checks nothing, as there.
TensorsOr BernoulliOutK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const Tensor& out = s[2].tensor();
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), self.sizes()));
  TSR_RETURN_IF_ERROR(BernoulliInto(op, out, self, s[1]));
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

// Integers drawn through a float64 uniform: floor(u * (high - low)) + low with u in [0, 1) of 53
// bits, every step exact in double while |low|, |high| <= 2^53 (the limit checked), so every
// backend computes the same integers. A range past 2^53 values would need more bits than one
// draw's u has: refused rather than drawn unevenly.
constexpr int64_t kMaxRandintBound = int64_t{1} << 53;

absl::Status CheckRandintRange(const OperatorHandle& op, int64_t low, int64_t high,
                               ScalarType dtype) {
  if (!(low < high)) {
    return Invalid(op, absl::StrFormat("random_ expects 'from' to be less than 'to', but got "
                                       "from=%d >= to=%d",
                                       low, high));
  }
  if (low < -kMaxRandintBound || high > kMaxRandintBound) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s: bounds beyond +-2^53 are not supported (got low=%d, high=%d): one draw holds 53 "
        "random bits",
        op.name(), low, high));
  }
  if (dtype == ScalarType::kBool) {
    return Invalid(op, "expected a numeric dtype, got bool");
  }
  // Every value in [low, high) must fit the dtype exactly.
  const auto [min, max] = ExactIntegerRange(dtype);
  if (low < min || high - 1 > max) {
    return Invalid(op, absl::StrFormat("[%d, %d) does not fit dtype %s (it holds [%d, %d] exactly)",
                                       low, high, ScalarTypeName(dtype), min, max));
  }
  return absl::OkStatus();
}

// randint (high, size, *, dtype=long, layout, device, pin_memory), randint.low (low, high,
// size, *, ...), and their _generator forms (the generator before dtype).
template <bool kLow, bool kGenerator>
TensorsOr RandintK(const OperatorHandle& op, const Stack& s) {
  const int first = kLow ? 1 : 0;  // index of high
  const int64_t low = kLow ? s[0].to_int() : 0;
  const int64_t high = s[first].to_int();
  const int base = first + 2 + (kGenerator ? 1 : 0);  // dtype
  const ScalarType dtype = s[base].is_none() ? ScalarType::kInt64 : s[base].scalar_type();
  TSR_RETURN_IF_ERROR(CheckRandintRange(op, low, high, dtype));
  const Device device = s[base + 2].is_none() ? Device(DeviceType::kCPU) : s[base + 2].device();
  const Value generator = kGenerator ? s[first + 2] : Value();
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor u, Empty(s[first + 1].int_list(), ScalarType::kFloat64, device));
  TSR_RETURN_IF_ERROR(Fill(r, "uniform_", u, 0.0, 1.0, generator));
  TSR_ASSIGN_OR_RETURN(
      Tensor scaled, CallOne(r, "mul.Scalar", {u, Value(Scalar(static_cast<double>(high - low)))}));
  TSR_ASSIGN_OR_RETURN(Tensor floored, CallOne(r, "floor_", {scaled}));
  TSR_ASSIGN_OR_RETURN(Tensor shifted, CallOne(r, "add_.Scalar",
                                               {floored, Value(Scalar(static_cast<double>(low))),
                                                Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(s[first + 1].int_list(), dtype, device));
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {out, shifted}));
  return std::vector<Tensor>{out};
}

// randperm (n, *, dtype=long, layout, device, pin_memory) and randperm.generator (n, *,
// generator, dtype, ...): the indices that sort n float64 uniforms, stably (so equal draws,
// about n^2 / 2^54 likely, still order alike on every backend).
template <bool kGenerator>
TensorsOr RandpermK(const OperatorHandle& op, const Stack& s) {
  const int64_t n = s[0].to_int();
  const int base = kGenerator ? 2 : 1;
  const ScalarType dtype = s[base].is_none() ? ScalarType::kInt64 : s[base].scalar_type();
  if (n < 0) return Invalid(op, absl::StrFormat("n must be non-negative, got %d", n));
  if (dtype == ScalarType::kBool) return Invalid(op, "expected a numeric dtype, got bool");
  const auto [min, max] = ExactIntegerRange(dtype);
  (void)min;
  if (n > 0 && n - 1 > max) {
    return Invalid(op, absl::StrFormat("n=%d does not fit dtype %s (its indices up to n - 1 = %d; "
                                       "it holds integers up to %d exactly)",
                                       n, ScalarTypeName(dtype), n - 1, max));
  }
  const Device device = s[base + 2].is_none() ? Device(DeviceType::kCPU) : s[base + 2].device();
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor keys, Empty({n}, ScalarType::kFloat64, device));
  TSR_RETURN_IF_ERROR(Fill(r, "uniform_", keys, 0.0, 1.0, kGenerator ? s[1] : Value()));
  TSR_ASSIGN_OR_RETURN(OperatorHandle sort, r.Find("sort.stable"));
  Stack call{keys, Value(true), Value(int64_t{0}), Value(false)};
  TSR_RETURN_IF_ERROR(r.Call(sort, &call));
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty({n}, dtype, device));
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {out, call[1].tensor()}));
  return std::vector<Tensor>{out};
}

}  // namespace

double MaxFinite(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::kFloat16:
      return 65504.0;
    case ScalarType::kBFloat16:
      return 3.3895313892515355e38;
    case ScalarType::kFloat32:
      return 3.4028234663852886e38;
    default:
      return 1.7976931348623157e308;
  }
}

absl::Status ExpectFloating(const OperatorHandle& op, std::string_view what, ScalarType dtype) {
  if (IsFloatingType(dtype)) return absl::OkStatus();
  return Invalid(
      op, absl::StrFormat("expected a floating-point %s, got %s", what, ScalarTypeName(dtype)));
}

absl::Status Fill(OpRegistry& r, std::string_view kernel, const Tensor& t, double a, double b,
                  const Value& generator) {
  TSR_ASSIGN_OR_RETURN(Tensor filled, CallOne(r, kernel, {t, Value(a), Value(b), generator}));
  return absl::OkStatus();
}

std::pair<int64_t, int64_t> ExactIntegerRange(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::kUInt8:
      return {0, 255};
    case ScalarType::kInt8:
      return {-128, 127};
    case ScalarType::kInt16:
      return {-32768, 32767};
    case ScalarType::kInt32:
      return {INT32_MIN, INT32_MAX};
    case ScalarType::kFloat16:
      return {-(int64_t{1} << 11), int64_t{1} << 11};
    case ScalarType::kBFloat16:
      return {-(int64_t{1} << 8), int64_t{1} << 8};
    case ScalarType::kFloat32:
      return {-(int64_t{1} << 24), int64_t{1} << 24};
    default:  // int64, float64: the draws' own limit, 2^53, is checked first
      return {INT64_MIN, INT64_MAX};
  }
}

absl::StatusOr<Tensor> UniformLike(OpRegistry& r, const Tensor& like, const Value& generator) {
  TSR_ASSIGN_OR_RETURN(Tensor u, Empty(like.sizes(), ScalarType::kFloat64, like.device()));
  TSR_RETURN_IF_ERROR(Fill(r, "uniform_", u, 0.0, 1.0, generator));
  return u;
}

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
  // randint and randperm default to int64 (ATen's `dtype=long`).
  const std::string long_opts =
      "ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None";
  const std::vector<std::string> integer_schemas = {
      "randint(SymInt high, SymInt[] size, *, " + long_opts + ") -> Tensor",
      "randint.generator(SymInt high, SymInt[] size, *, Generator? generator, " + long_opts +
          ") -> Tensor",
      "randint.low(SymInt low, SymInt high, SymInt[] size, *, " + long_opts + ") -> Tensor",
      "randint.low_generator(SymInt low, SymInt high, SymInt[] size, *, Generator? generator, " +
          long_opts + ") -> Tensor",
      "randperm(SymInt n, *, " + long_opts + ") -> Tensor",
      "randperm.generator(SymInt n, *, Generator? generator, " + long_opts + ") -> Tensor",
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
          {integer_schemas[0].c_str(), MakeKernel<RandintK<false, false>>("core::randint")},
          {integer_schemas[1].c_str(), MakeKernel<RandintK<false, true>>("core::randint")},
          {integer_schemas[2].c_str(), MakeKernel<RandintK<true, false>>("core::randint")},
          {integer_schemas[3].c_str(), MakeKernel<RandintK<true, true>>("core::randint")},
          {integer_schemas[4].c_str(), MakeKernel<RandpermK<false>>("core::randperm")},
          {integer_schemas[5].c_str(), MakeKernel<RandpermK<true>>("core::randperm")},
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
          // Op set 1.11: the tensor-p forms and the out= forms (Expand's refusal is named).
          {"bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) -> "
           "Tensor(a!)",
           MakeKernel<Named<BernoulliTensorInplaceK>>("core::bernoulli_")},
          {"bernoulli.Tensor(Tensor self, Tensor p, *, Generator? generator=None) -> Tensor",
           MakeKernel<Named<ComputeOne<BernoulliTensorOf>>>("core::bernoulli")},
          {"bernoulli.Tensor_out(Tensor self, Tensor p, *, Generator? generator=None, Tensor(a!) "
           "out) -> Tensor(a!)",
           MakeKernel<Named<BernoulliTensorOutK>>("core::bernoulli_out")},
          {"bernoulli.float_out(Tensor self, float p=0.5, *, Generator? generator=None, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<BernoulliFloatOutK>>("core::bernoulli_out")},
          {"bernoulli.out(Tensor self, *, Generator? generator=None, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<BernoulliOutK>>("core::bernoulli_out")},
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
