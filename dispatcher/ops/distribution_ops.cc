// The distributions of op set 1.6 (docs/random.md, "The numbers"), each a composite over the
// two random kernels and ordinary ops, so that every backend with uniform_ and normal_ (or the
// CPU fallback) has them with the same bits for the same seed:
//   exponential_, geometric_, log_normal_, cauchy_: ATen's transformations of one uniform or
//     normal float64 draw, computed in float64 and cast into self;
//   random_ (.from, .to, and the dtype's whole range): integers, from one draw where the range
//     is at most 2^53 values (randint's formula, so random_ and randint agree), from two draws
//     where it is larger (63 bits);
//   randint_like: empty_like and random_;
//   normal with a tensor mean or std, and normal.float_float: a standard normal draw, scaled and
//     shifted, as ATen's normal_out_impl;
//   multinomial: ATen's exponential trick without replacement, the inverse CDF with it.
// Each checks its parameters as ATen's DistributionTemplates.h does, with its messages.
#include <cmath>
#include <cstdint>
#include <optional>

#include "absl/strings/str_format.h"
#include "core/half.h"
#include "core/host_copy.h"
#include "core/shape.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/random_support.h"

namespace tessera {
namespace ops {
namespace {

// Float64Like: an empty float64 tensor of `like`'s shape on its device.
absl::StatusOr<Tensor> Float64Like(const Tensor& like) {
  return Empty(like.sizes(), ScalarType::kFloat64, like.device());
}

// Into copies the float64 values `v` into `self` (cast to its dtype) and returns self.
TensorsOr Into(OpRegistry& r, const Tensor& self, const Tensor& v) {
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {self, v}));
  return std::vector<Tensor>{self};
}

// exponential_(Tensor(a!) self, float lambd=1, *, Generator? generator=None):
// -1/lambd * log1p(-u), u uniform in [0, 1) (ATen's CPU transformation).
TensorsOr ExponentialK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const double lambd = s[1].to_double();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "tensor", self.dtype()));
  if (!(lambd > 0.0)) {
    return Invalid(op, absl::StrFormat("expects lambda > 0.0, but found lambda=%g", lambd));
  }
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor u, UniformLike(r, self, s[2]));
  TSR_ASSIGN_OR_RETURN(Tensor neg, CallOne(r, "neg_", {u}));
  TSR_ASSIGN_OR_RETURN(Tensor log, CallOne(r, "log1p_", {neg}));
  TSR_ASSIGN_OR_RETURN(Tensor v, CallOne(r, "mul_.Scalar", {log, Value(Scalar(-1.0 / lambd))}));
  return Into(r, self, v);
}

// geometric_(Tensor(a!) self, float p, *, Generator? generator=None): the number of Bernoulli(p)
// trials to the first success, ceil(log1p(-u) / log1p(-p)); the one draw u = 0 (which would
// give 0, outside the support) gives 1.
TensorsOr GeometricK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const double p = s[1].to_double();
  if (self.dtype() == ScalarType::kBool) return Invalid(op, "expected a numeric tensor, got bool");
  if (!(p > 0.0 && p < 1.0)) {
    return Invalid(op, absl::StrFormat("expects p to be in (0, 1), but got p=%g", p));
  }
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor u, UniformLike(r, self, s[2]));
  TSR_ASSIGN_OR_RETURN(Tensor neg, CallOne(r, "neg_", {u}));
  TSR_ASSIGN_OR_RETURN(Tensor log, CallOne(r, "log1p_", {neg}));
  TSR_ASSIGN_OR_RETURN(Tensor ratio,
                       CallOne(r, "div_.Scalar", {log, Value(Scalar(std::log1p(-p)))}));
  TSR_ASSIGN_OR_RETURN(Tensor trials, CallOne(r, "ceil_", {ratio}));
  TSR_ASSIGN_OR_RETURN(Tensor v, CallOne(r, "clamp_", {trials, Value(Scalar(1.0)), Value()}));
  return Into(r, self, v);
}

// log_normal_(Tensor(a!) self, float mean=1, float std=2, *, Generator? generator=None):
// exp of a normal(mean, std) float64 draw.
TensorsOr LogNormalK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const double mean = s[1].to_double(), std = s[2].to_double();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "tensor", self.dtype()));
  if (!(std > 0.0)) return Invalid(op, absl::StrFormat("expects std > 0.0, but found std=%g", std));
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor z, Float64Like(self));
  TSR_RETURN_IF_ERROR(Fill(r, "normal_", z, mean, std, s[3]));
  TSR_ASSIGN_OR_RETURN(Tensor v, CallOne(r, "exp_", {z}));
  return Into(r, self, v);
}

// cauchy_(Tensor(a!) self, float median=0, float sigma=1, *, Generator? generator=None):
// median + sigma * tan(pi * (u - 0.5)).
TensorsOr CauchyK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const double median = s[1].to_double(), sigma = s[2].to_double();
  if (!(sigma > 0.0)) {
    return Invalid(op, absl::StrFormat("expects sigma > 0.0, but found sigma=%g", sigma));
  }
  if (!IsFloatingType(self.dtype())) {
    return Invalid(op, absl::StrFormat("Cauchy distribution is a continuous probability "
                                       "distribution. dtype must be a floating point but you "
                                       "specified %s",
                                       ScalarTypeName(self.dtype())));
  }
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor u, UniformLike(r, self, s[3]));
  const Value one(Scalar(int64_t{1}));
  TSR_ASSIGN_OR_RETURN(Tensor centered, CallOne(r, "sub_.Scalar", {u, Value(Scalar(0.5)), one}));
  TSR_ASSIGN_OR_RETURN(Tensor angle, CallOne(r, "mul_.Scalar", {centered, Value(Scalar(M_PI))}));
  TSR_ASSIGN_OR_RETURN(Tensor t, CallOne(r, "tan_", {angle}));
  TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "mul_.Scalar", {t, Value(Scalar(sigma))}));
  TSR_ASSIGN_OR_RETURN(Tensor v, CallOne(r, "add_.Scalar", {scaled, Value(Scalar(median)), one}));
  return Into(r, self, v);
}

// ---- random_ ----

// Digits: the significand bits of a floating dtype (its integers are exact up to 2^digits).
int Digits(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::kFloat16:
      return 11;
    case ScalarType::kBFloat16:
      return 8;
    case ScalarType::kFloat32:
      return 24;
    default:
      return 53;
  }
}

// RoundsTo: `v` cast to floating `dtype` and back (what copy_ into self makes of it).
// Values past int64 (2^63 itself, which float32 rounds INT64_MAX to) saturate.
int64_t RoundsTo(ScalarType dtype, int64_t v) {
  const double d = static_cast<double>(v);
  double rounded;
  switch (dtype) {
    case ScalarType::kFloat16:
      rounded = static_cast<float>(Half(static_cast<float>(d)));
      break;
    case ScalarType::kBFloat16:
      rounded = static_cast<float>(BFloat16(static_cast<float>(d)));
      break;
    case ScalarType::kFloat32:
      rounded = static_cast<float>(d);
      break;
    default:
      rounded = d;
  }
  constexpr double kTwo63 = 9223372036854775808.0;
  if (rounded >= kTwo63) return INT64_MAX;
  if (rounded <= -kTwo63) return INT64_MIN;
  return static_cast<int64_t>(rounded);
}

// For a floating self, ATen moves `from` up and `to` down to the nearest values that stay in
// [from, to) once cast to the dtype (update_from, update_to in DistributionTemplates.h): a
// value just below `to` may round to `to` itself.
int64_t FromForDtype(ScalarType dtype, int64_t from) {
  if (from == INT64_MAX || RoundsTo(dtype, from + 1) >= from) return from;
  int n = 0;
  for (int64_t m = std::abs(from + 1); m >>= 1;) ++n;
  return RoundsTo(dtype, from + 1) + (int64_t{1} << (n - Digits(dtype) + 1));
}
int64_t ToForDtype(ScalarType dtype, int64_t to) {
  if (RoundsTo(dtype, to - 1) < to) return to;
  int n = 0;
  for (int64_t m = std::abs(to - 1); m >>= 1;) ++n;
  return RoundsTo(dtype, to - 1) - (int64_t{1} << (n - Digits(dtype) + 1));
}

// The most values one float64 draw gives evenly: its 53 bits.
constexpr uint64_t kOneDrawRange = uint64_t{1} << 53;
constexpr uint64_t kTwoDrawRange = uint64_t{1} << 63;

// RandomFill writes integers uniform in [from, from + range) into self (range >= 1):
//   range <= 2^53: floor(u * range) + from, u one float64 draw (randint's formula; the sum in
//     int64);
//   range <= 2^63: (floor(u1 * 2^31) * 2^32 + floor(u2 * 2^32)) mod range + from, u1 and u2
//     two draws in that order: 63 random bits (the modulo's bias, as ATen's, below 2^-63 *
//     range).
absl::Status RandomFill(const OperatorHandle& op, const Tensor& self, int64_t from, uint64_t range,
                        const Value& generator) {
  OpRegistry& r = op.registry();
  const Value one(Scalar(int64_t{1}));
  Tensor v;
  if (range <= kOneDrawRange) {
    TSR_ASSIGN_OR_RETURN(Tensor u, UniformLike(r, self, generator));
    TSR_ASSIGN_OR_RETURN(Tensor scaled,
                         CallOne(r, "mul_.Scalar", {u, Value(Scalar(static_cast<double>(range)))}));
    TSR_ASSIGN_OR_RETURN(Tensor floored, CallOne(r, "floor_", {scaled}));
    // `from` added as an integer: as a double it would round beyond 2^53.
    TSR_ASSIGN_OR_RETURN(Tensor offsets, Empty(self.sizes(), ScalarType::kInt64, self.device()));
    TSR_ASSIGN_OR_RETURN(Tensor exact, CallOne(r, "copy_", {offsets, floored}));
    TSR_ASSIGN_OR_RETURN(v, CallOne(r, "add_.Scalar", {offsets, Value(Scalar(from)), one}));
  } else if (range <= kTwoDrawRange) {
    Tensor words[2];
    const double scales[2] = {std::ldexp(1.0, 31), std::ldexp(1.0, 32)};
    for (int k = 0; k < 2; ++k) {
      TSR_ASSIGN_OR_RETURN(Tensor u, UniformLike(r, self, generator));
      TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "mul_.Scalar", {u, Value(Scalar(scales[k]))}));
      TSR_ASSIGN_OR_RETURN(Tensor floored, CallOne(r, "floor_", {scaled}));
      TSR_ASSIGN_OR_RETURN(words[k], Empty(self.sizes(), ScalarType::kInt64, self.device()));
      TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {words[k], floored}));
    }
    TSR_ASSIGN_OR_RETURN(Tensor high,
                         CallOne(r, "mul_.Scalar", {words[0], Value(Scalar(int64_t{1} << 32))}));
    TSR_ASSIGN_OR_RETURN(Tensor bits, CallOne(r, "add_.Tensor", {high, words[1], one}));
    if (range < kTwoDrawRange) {
      TSR_ASSIGN_OR_RETURN(
          bits, CallOne(r, "remainder.Scalar", {bits, Value(Scalar(static_cast<int64_t>(range)))}));
    }
    TSR_ASSIGN_OR_RETURN(v, CallOne(r, "add_.Scalar", {bits, Value(Scalar(from)), one}));
  } else {
    return absl::UnimplementedError(absl::StrFormat(
        "%s: a range of more than 2^63 values is not supported (from=%d, %d values): the draws "
        "give 63 random bits",
        op.name(), from, range));
  }
  TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {self, v}));
  return absl::OkStatus();
}

// CheckInDtype: [from, to_inc] within what self's dtype holds (ATen's check_from_to_in_range).
absl::Status CheckInDtype(const OperatorHandle& op, ScalarType dtype, int64_t from,
                          int64_t to_inc) {
  double min, max;
  if (IsFloatingType(dtype)) {
    max = MaxFinite(dtype);
    min = -max;
  } else if (dtype == ScalarType::kBool) {
    min = 0;
    max = 1;
  } else {
    const auto [lo, hi] = ExactIntegerRange(dtype);
    min = static_cast<double>(lo);
    max = static_cast<double>(hi);
  }
  for (const auto& [name, v] :
       {std::pair<const char*, int64_t>{"from", from}, {"to - 1", to_inc}}) {
    if (static_cast<double>(v) < min || static_cast<double>(v) > max) {
      return Invalid(op, absl::StrFormat("%s is out of bounds for %s (got %d)", name,
                                         ScalarTypeName(dtype), v));
    }
  }
  return absl::OkStatus();
}

// RandomFromTo: random_ over [from, to), or, without `to`, [from, the dtype's largest integer]
// (a floating dtype's: 2^digits; bool's: 1), as ATen's random_from_to_impl.
TensorsOr RandomFromTo(const OperatorHandle& op, const Tensor& self, int64_t from,
                       std::optional<int64_t> to, const Value& generator) {
  const ScalarType dtype = self.dtype();
  const bool floating = IsFloatingType(dtype);
  int64_t to_inc;
  if (to) {
    if (!(from < *to)) {
      return Invalid(op, absl::StrFormat("random_ expects 'from' to be less than 'to', but got "
                                         "from=%d >= to=%d",
                                         from, *to));
    }
    int64_t high = *to;
    if (floating) {
      from = FromForDtype(dtype, from);
      high = ToForDtype(dtype, high);
      if (!(from < high)) {
        return Invalid(op, absl::StrFormat("random_ expects 'from' casted to dtype to be less "
                                           "than 'to' casted to dtype, but got from=%d >= to=%d",
                                           from, high));
      }
    }
    to_inc = high - 1;
  } else {
    if (floating) {
      to_inc = int64_t{1} << Digits(dtype);
      from = FromForDtype(dtype, from);
      if (!(from < to_inc)) {
        return Invalid(op, absl::StrFormat("random_ expects 'from' casted to dtype to be less "
                                           "than or equal to 'to_inc' casted to dtype, but got "
                                           "from=%d > to_inc=%d",
                                           from, to_inc));
      }
    } else {
      to_inc = dtype == ScalarType::kBool ? 1 : ExactIntegerRange(dtype).second;
    }
  }
  TSR_RETURN_IF_ERROR(CheckInDtype(op, dtype, from, to_inc));
  if (self.numel() > 0 || self.device().type == DeviceType::kMeta) {
    const uint64_t range = static_cast<uint64_t>(to_inc) - static_cast<uint64_t>(from) + 1;
    if (range == 0) {  // 2^64 values: [INT64_MIN, INT64_MAX]
      return absl::UnimplementedError(absl::StrFormat(
          "%s: a range of more than 2^63 values is not supported (from=%d, 2^64 values): the "
          "draws give 63 random bits",
          op.name(), from));
    }
    TSR_RETURN_IF_ERROR(RandomFill(op, self, from, range, generator));
  }
  return std::vector<Tensor>{self};
}

// random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None)
TensorsOr RandomFromK(const OperatorHandle& op, const Stack& s) {
  return RandomFromTo(op, s[0].tensor(), s[1].to_int(), OptionalInt(s[2]), s[3]);
}
// random_.to(Tensor(a!) self, int to, *, Generator? generator=None): [0, to).
TensorsOr RandomToK(const OperatorHandle& op, const Stack& s) {
  return RandomFromTo(op, s[0].tensor(), 0, s[1].to_int(), s[2]);
}
// random_(Tensor(a!) self, *, Generator? generator=None): [0, the dtype's largest integer].
TensorsOr RandomK(const OperatorHandle& op, const Stack& s) {
  return RandomFromTo(op, s[0].tensor(), 0, std::nullopt, s[1]);
}

// randint_like(self, high, *, dtype, layout, device, pin_memory, memory_format) and
// randint_like.low_dtype(self, low, high, *, ...): empty_like, then random_ over [low, high).
template <bool kLow>
TensorsOr RandintLikeK(const OperatorHandle& op, const Stack& s) {
  const int64_t low = kLow ? s[1].to_int() : 0;
  const int64_t high = s[kLow ? 2 : 1].to_int();
  Stack like{s[0]};
  like.insert(like.end(), s.begin() + (kLow ? 3 : 2), s.end());
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor out, CallOne(r, "empty_like", std::move(like)));
  TSR_ASSIGN_OR_RETURN(OperatorHandle random, r.Find("random_.from"));
  Stack call{out, Value(low), Value(high), Value()};
  TSR_RETURN_IF_ERROR(r.Call(random, &call));
  return std::vector<Tensor>{out};
}

// ---- normal with tensor parameters ----

absl::Status CheckStd(const OperatorHandle& op, double std) {
  if (std >= 0.0) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("normal expects std >= 0.0, but found std %g", std));
}

// CheckStdTensor: every element of a std tensor >= 0 (one read of a 0-dim bool back to the
// host, as ATen's CHECK_NORMAL_TENSOR_STD reads its min).
absl::Status CheckStdTensor(const OperatorHandle& op, const Tensor& std) {
  if (std.numel() == 0 || std.device().type == DeviceType::kMeta) return absl::OkStatus();
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor nonneg, CallOne(r, "ge.Scalar", {std, Value(Scalar(0.0))}));
  TSR_ASSIGN_OR_RETURN(Tensor all, CallOne(r, "all", {nonneg}));
  bool ok = false;
  TSR_RETURN_IF_ERROR(CopyTensorToHost(all, &ok));
  if (ok) return absl::OkStatus();
  return Invalid(op, "normal expects all elements of std >= 0.0");
}

// The parameters of a normal call: each a tensor or a float.
struct NormalParameters {
  std::optional<Tensor> mean, std;
  double mean_value = 0, std_value = 1;
};

// NormalInto fills `out` (already of the result's shape) with mean + std * z, z a standard
// normal draw (ATen: normal_(out, 0, std) then add_(mean) for a float std; normal_(out, 0, 1),
// mul_(std), add_(mean) for a tensor std).
absl::Status NormalInto(const OperatorHandle& op, const Tensor& out, const NormalParameters& p,
                        const Value& generator) {
  OpRegistry& r = op.registry();
  const Value one(Scalar(int64_t{1}));
  TSR_RETURN_IF_ERROR(Fill(r, "normal_", out, 0.0, p.std ? 1.0 : p.std_value, generator));
  if (p.std) {
    TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "mul_.Tensor", {out, *p.std}));
  }
  if (p.mean) {
    TSR_ASSIGN_OR_RETURN(Tensor shifted, CallOne(r, "add_.Tensor", {out, *p.mean, one}));
  } else {
    TSR_ASSIGN_OR_RETURN(Tensor shifted,
                         CallOne(r, "add_.Scalar", {out, Value(Scalar(p.mean_value)), one}));
  }
  return absl::OkStatus();
}

// ReadNormal: the parameters of normal.Tensor_float (mean tensor, std float), .float_Tensor
// (mean float, std tensor) or .Tensor_Tensor, checked; the result's shape (the two broadcast)
// and dtype (the tensor parameter's; the mean's for two).
struct NormalCall {
  NormalParameters p;
  DimVector shape;
  ScalarType dtype = ScalarType::kFloat32;
  Device device{DeviceType::kCPU};
};
template <bool kMeanTensor, bool kStdTensor>
absl::StatusOr<NormalCall> ReadNormal(const OperatorHandle& op, const Stack& s) {
  NormalCall c;
  if (kMeanTensor) {
    c.p.mean = s[0].tensor();
  } else {
    c.p.mean_value = s[0].to_double();
  }
  if (kStdTensor) {
    c.p.std = s[1].tensor();
    TSR_RETURN_IF_ERROR(CheckStdTensor(op, *c.p.std));
  } else {
    c.p.std_value = s[1].to_double();
    TSR_RETURN_IF_ERROR(CheckStd(op, c.p.std_value));
  }
  const Tensor& lead = kMeanTensor ? *c.p.mean : *c.p.std;
  c.dtype = lead.dtype();
  c.device = lead.device();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, kMeanTensor ? "mean" : "std", c.dtype));
  c.shape = DimVector(lead.sizes().begin(), lead.sizes().end());
  if (kMeanTensor && kStdTensor) {
    absl::StatusOr<DimVector> shape = BroadcastShapes(c.p.mean->sizes(), c.p.std->sizes());
    if (!shape.ok()) return Invalid(op, std::string(shape.status().message()));
    c.shape = *std::move(shape);
  }
  return c;
}

template <bool kMeanTensor, bool kStdTensor>
TensorsOr NormalK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(const NormalCall c, (ReadNormal<kMeanTensor, kStdTensor>(op, s)));
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(c.shape, c.dtype, c.device));
  TSR_RETURN_IF_ERROR(NormalInto(op, out, c.p, s[2]));
  return std::vector<Tensor>{out};
}

// The out= forms: (mean, std, *, generator, out); out resized to the result's shape.
template <bool kMeanTensor, bool kStdTensor>
TensorsOr NormalOutK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(const NormalCall c, (ReadNormal<kMeanTensor, kStdTensor>(op, s)));
  const Tensor& out = s[3].tensor();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "argument 'out'", out.dtype()));
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), c.shape));
  TSR_RETURN_IF_ERROR(NormalInto(op, out, c.p, s[2]));
  return std::vector<Tensor>{out};
}

// normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None,
// ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None).
TensorsOr NormalFloatFloatK(const OperatorHandle& op, const Stack& s) {
  const double mean = s[0].to_double(), std = s[1].to_double();
  TSR_RETURN_IF_ERROR(CheckStd(op, std));
  const ScalarType dtype = s[4].is_none() ? ScalarType::kFloat32 : s[4].scalar_type();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "dtype", dtype));
  const Device device = s[6].is_none() ? Device(DeviceType::kCPU) : s[6].device();
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(s[2].int_list(), dtype, device));
  TSR_RETURN_IF_ERROR(Fill(op.registry(), "normal_", out, mean, std, s[3]));
  return std::vector<Tensor>{out};
}

// normal.float_float_out(float mean, float std, SymInt[] size, *, Generator? generator=None,
// Tensor(a!) out).
TensorsOr NormalFloatFloatOutK(const OperatorHandle& op, const Stack& s) {
  const double mean = s[0].to_double(), std = s[1].to_double();
  TSR_RETURN_IF_ERROR(CheckStd(op, std));
  const Tensor& out = s[4].tensor();
  TSR_RETURN_IF_ERROR(ExpectFloating(op, "argument 'out'", out.dtype()));
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name(), s[2].int_list()));
  TSR_RETURN_IF_ERROR(Fill(op.registry(), "normal_", out, mean, std, s[3]));
  return std::vector<Tensor>{out};
}

// ---- multinomial ----

// ReadBack: a 0-dim bool's value (one synchronization).
absl::StatusOr<bool> ReadBack(const Tensor& flag) {
  bool v = false;
  TSR_RETURN_IF_ERROR(CopyTensorToHost(flag, &v));
  return v;
}

// CheckDistribution: every probability finite and >= 0, every row's sum > 0 (ATen's messages;
// two reads back from the device).
absl::Status CheckDistribution(const OperatorHandle& op, const Tensor& p) {
  if (p.device().type == DeviceType::kMeta) return absl::OkStatus();
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor finite, CallOne(r, "isfinite", {p}));
  TSR_ASSIGN_OR_RETURN(Tensor nonneg, CallOne(r, "ge.Scalar", {p, Value(Scalar(0.0))}));
  TSR_ASSIGN_OR_RETURN(Tensor valid, CallOne(r, "logical_and", {finite, nonneg}));
  TSR_ASSIGN_OR_RETURN(Tensor all_valid, CallOne(r, "all", {valid}));
  TSR_ASSIGN_OR_RETURN(const bool ok, ReadBack(all_valid));
  if (!ok) return Invalid(op, "probability tensor contains either `inf`, `nan` or element < 0");
  TSR_ASSIGN_OR_RETURN(
      Tensor sums, CallOne(r, "sum.dim_IntList", {p, Value(IntList{-1}), Value(false), Value()}));
  TSR_ASSIGN_OR_RETURN(Tensor positive, CallOne(r, "gt.Scalar", {sums, Value(Scalar(0.0))}));
  TSR_ASSIGN_OR_RETURN(Tensor all_positive, CallOne(r, "all", {positive}));
  TSR_ASSIGN_OR_RETURN(const bool rows_ok, ReadBack(all_positive));
  if (!rows_ok) return Invalid(op, "invalid multinomial distribution (sum of probabilities <= 0)");
  return absl::OkStatus();
}

// Multinomial: `n` category indices per row of `p` (1-D: one row), int64.
//   without replacement, or n = 1: ATen's exponential trick, the indices of the n largest
//     p / q with q an Exp(1) draw per category (exponential_ into float64: one draw); n = 1 is
//     argmax, and more are a stable descending sort (equal ratios, zero probabilities when n
//     exceeds the non-zero categories, in index order on every backend);
//   with replacement: inverse CDF, index = #{j : cdf_j < (1 - u) * total} with cdf the float64
//     cumulative sum of the row and u one uniform draw per sample: each index has p_j > 0 (the
//     target is in (0, total]); it compares every sample with every category (n * k).
absl::StatusOr<Tensor> Multinomial(const OperatorHandle& op, const Tensor& p, int64_t n,
                                   bool replacement, const Value& generator) {
  if (!(p.dim() == 1 || p.dim() == 2)) {
    return Invalid(op, absl::StrFormat("prob_dist must be 1 or 2 dim, got %d dims", p.dim()));
  }
  if (!IsFloatingType(p.dtype())) {
    return Invalid(op, absl::StrFormat("multinomial only supports floating-point dtypes for "
                                       "input, got: %s",
                                       ScalarTypeName(p.dtype())));
  }
  if (n <= 0)
    return Invalid(op, absl::StrFormat("cannot sample n_sample <= 0 samples (got %d)", n));
  const int64_t categories = p.sizes().back();
  if (!replacement && n > categories) {
    return Invalid(op, absl::StrFormat("cannot sample n_sample > prob_dist.size(-1) samples "
                                       "without replacement (%d > %d)",
                                       n, categories));
  }
  if (categories > (int64_t{1} << 24)) {
    return Invalid(op,
                   absl::StrFormat("number of categories cannot exceed 2^24 (got %d)", categories));
  }
  TSR_RETURN_IF_ERROR(CheckDistribution(op, p));
  OpRegistry& r = op.registry();
  const Value last(int64_t{-1});
  if (!replacement || n == 1) {
    TSR_ASSIGN_OR_RETURN(Tensor q, Float64Like(p));
    TSR_ASSIGN_OR_RETURN(OperatorHandle exponential, r.Find("exponential_"));
    Stack draw{q, Value(1.0), generator};
    TSR_RETURN_IF_ERROR(r.Call(exponential, &draw));
    TSR_ASSIGN_OR_RETURN(Tensor ratio, CallOne(r, "div.Tensor", {p, q}));
    if (n == 1) return CallOne(r, "argmax", {ratio, last, Value(true)});
    TSR_ASSIGN_OR_RETURN(OperatorHandle sort, r.Find("sort.stable"));
    Stack sorted{ratio, Value(true), last, Value(true)};
    TSR_RETURN_IF_ERROR(r.Call(sort, &sorted));
    TSR_ASSIGN_OR_RETURN(Tensor first, CallOne(r, "slice.Tensor",
                                               {sorted[1].tensor(), last, Value(int64_t{0}),
                                                Value(n), Value(int64_t{1})}));
    return CallOne(r, "clone", {first, Value()});
  }
  TSR_ASSIGN_OR_RETURN(Tensor wide, CallOne(r, "_to_copy", {p, Value(ScalarType::kFloat64)}));
  TSR_ASSIGN_OR_RETURN(Tensor cdf, CallOne(r, "cumsum", {wide, last, Value()}));
  TSR_ASSIGN_OR_RETURN(Tensor total,
                       CallOne(r, "slice.Tensor", {cdf, last, last, Value(), Value(int64_t{1})}));
  DimVector samples(p.sizes().begin(), p.sizes().end());
  samples.back() = n;
  TSR_ASSIGN_OR_RETURN(Tensor u, Empty(samples, ScalarType::kFloat64, p.device()));
  TSR_RETURN_IF_ERROR(Fill(r, "uniform_", u, 0.0, 1.0, generator));
  const Value one(Scalar(int64_t{1}));
  // (1 - u) * total, exactly representable steps: 1 - u is exact for u's 53-bit values.
  TSR_ASSIGN_OR_RETURN(Tensor negated, CallOne(r, "neg_", {u}));
  TSR_ASSIGN_OR_RETURN(Tensor rest, CallOne(r, "add_.Scalar", {negated, Value(Scalar(1.0)), one}));
  TSR_ASSIGN_OR_RETURN(Tensor target, CallOne(r, "mul.Tensor", {rest, total}));
  TSR_ASSIGN_OR_RETURN(Tensor cdf3, CallOne(r, "unsqueeze", {cdf, Value(int64_t{-2})}));
  TSR_ASSIGN_OR_RETURN(Tensor target3, CallOne(r, "unsqueeze", {target, last}));
  TSR_ASSIGN_OR_RETURN(Tensor below, CallOne(r, "lt.Tensor", {cdf3, target3}));
  return CallOne(r, "sum.dim_IntList",
                 {below, Value(IntList{-1}), Value(false), Value(ScalarType::kInt64)});
}

// multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None)
TensorsOr MultinomialK(const OperatorHandle& op, const Stack& s) {
  return One(Multinomial(op, s[0].tensor(), s[1].to_int(), s[2].to_bool(), s[3]));
}

// multinomial.out(..., *, Generator? generator=None, Tensor(a!) out): out must be int64.
TensorsOr MultinomialOutK(const OperatorHandle& op, const Stack& s) {
  const Tensor& out = s[4].tensor();
  if (out.dtype() != ScalarType::kInt64) {
    return Invalid(op, absl::StrFormat("multinomial expects Long tensor out, got: %s",
                                       ScalarTypeName(out.dtype())));
  }
  TSR_ASSIGN_OR_RETURN(Tensor result,
                       Multinomial(op, s[0].tensor(), s[1].to_int(), s[2].to_bool(), s[3]));
  TSR_RETURN_IF_ERROR(CopyIntoOut(op, 4, result, out, /*castable=*/false));
  return std::vector<Tensor>{out};
}

}  // namespace

absl::Status DefineDistributionOps(OpRegistry& registry) {
  const std::string gen = "*, Generator? generator=None";
  const std::string like =
      "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
      "pin_memory=None, MemoryFormat? memory_format=None";
  const std::vector<std::string> schemas = {
      "exponential_(Tensor(a!) self, float lambd=1, " + gen + ") -> Tensor(a!)",
      "geometric_(Tensor(a!) self, float p, " + gen + ") -> Tensor(a!)",
      "log_normal_(Tensor(a!) self, float mean=1, float std=2, " + gen + ") -> Tensor(a!)",
      "cauchy_(Tensor(a!) self, float median=0, float sigma=1, " + gen + ") -> Tensor(a!)",
      "random_.from(Tensor(a!) self, int from, int? to, " + gen + ") -> Tensor(a!)",
      "random_.to(Tensor(a!) self, int to, " + gen + ") -> Tensor(a!)",
      "random_(Tensor(a!) self, " + gen + ") -> Tensor(a!)",
      "randint_like(Tensor self, SymInt high, " + like + ") -> Tensor",
      "randint_like.low_dtype(Tensor self, SymInt low, SymInt high, " + like + ") -> Tensor",
      "normal.Tensor_float(Tensor mean, float std=1, " + gen + ") -> Tensor",
      "normal.Tensor_float_out(Tensor mean, float std=1, " + gen +
          ", Tensor(a!) out) -> Tensor(a!)",
      "normal.float_Tensor(float mean, Tensor std, " + gen + ") -> Tensor",
      "normal.float_Tensor_out(float mean, Tensor std, " + gen + ", Tensor(a!) out) -> Tensor(a!)",
      "normal.Tensor_Tensor(Tensor mean, Tensor std, " + gen + ") -> Tensor",
      "normal.Tensor_Tensor_out(Tensor mean, Tensor std, " + gen +
          ", Tensor(a!) out) -> Tensor(a!)",
      "normal.float_float(float mean, float std, SymInt[] size, " + gen +
          ", ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
          "pin_memory=None) -> Tensor",
      "normal.float_float_out(float mean, float std, SymInt[] size, " + gen +
          ", Tensor(a!) out) -> Tensor(a!)",
      "multinomial(Tensor self, int num_samples, bool replacement=False, " + gen + ") -> Tensor",
      "multinomial.out(Tensor self, int num_samples, bool replacement=False, " + gen +
          ", Tensor(a!) out) -> Tensor(a!)",
  };
  return DefineAll(
      registry,
      {
          {schemas[0].c_str(), MakeKernel<Named<ExponentialK>>("core::exponential_")},
          {schemas[1].c_str(), MakeKernel<Named<GeometricK>>("core::geometric_")},
          {schemas[2].c_str(), MakeKernel<Named<LogNormalK>>("core::log_normal_")},
          {schemas[3].c_str(), MakeKernel<Named<CauchyK>>("core::cauchy_")},
          {schemas[4].c_str(), MakeKernel<Named<RandomFromK>>("core::random_")},
          {schemas[5].c_str(), MakeKernel<Named<RandomToK>>("core::random_")},
          {schemas[6].c_str(), MakeKernel<Named<RandomK>>("core::random_")},
          {schemas[7].c_str(), MakeKernel<Named<RandintLikeK<false>>>("core::randint_like")},
          {schemas[8].c_str(), MakeKernel<Named<RandintLikeK<true>>>("core::randint_like")},
          {schemas[9].c_str(), MakeKernel<Named<NormalK<true, false>>>("core::normal")},
          {schemas[10].c_str(), MakeKernel<Named<NormalOutK<true, false>>>("core::normal_out")},
          {schemas[11].c_str(), MakeKernel<Named<NormalK<false, true>>>("core::normal")},
          {schemas[12].c_str(), MakeKernel<Named<NormalOutK<false, true>>>("core::normal_out")},
          {schemas[13].c_str(), MakeKernel<Named<NormalK<true, true>>>("core::normal")},
          {schemas[14].c_str(), MakeKernel<Named<NormalOutK<true, true>>>("core::normal_out")},
          {schemas[15].c_str(), MakeKernel<Named<NormalFloatFloatK>>("core::normal")},
          {schemas[16].c_str(), MakeKernel<Named<NormalFloatFloatOutK>>("core::normal_out")},
          {schemas[17].c_str(), MakeKernel<Named<MultinomialK>>("core::multinomial")},
          {schemas[18].c_str(), MakeKernel<Named<MultinomialOutK>>("core::multinomial_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
