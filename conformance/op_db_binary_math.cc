// Op set 1.7's binary ops, in the pointwise family: copysign, fmax, fmin, heaviside, hypot,
// nextafter, logaddexp, logaddexp2, xlogy, gcd, lcm, bitwise_left_shift, bitwise_right_shift,
// and the composites rsub, floor_divide, clamp_min, clamp_max. References in double from the
// definitions (nextafter's bfloat16 neighbour found by stepping floats until the rounding
// changes, the shifts wrapped to the dtype's width by hand).
#include <cmath>
#include <cstdint>
#include <limits>

#include "conformance/op_db.h"
#include "conformance/op_db_binary.h"

namespace tessera {
namespace conformance {
namespace {

using pointwise::AddBinary;
using pointwise::BinarySamples;
using pointwise::BinarySpec;
using pointwise::Result;

double MaxNan(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double MinNan(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

double LogAddExp(double a, double b, double base) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (std::isinf(a) && a == b) return a;
  const double m = std::max(a, b);
  return m + std::log(1 + std::pow(base, -std::fabs(a - b))) / std::log(base);
}

double Xlogy(double x, double y) {
  if (std::isnan(y)) return NAN;
  return x == 0 ? 0 : x * std::log(y);
}

double Gcd(double a, double b) {
  int64_t x = std::llabs(static_cast<int64_t>(a)), y = std::llabs(static_cast<int64_t>(b));
  while (y != 0) {
    const int64_t r = x % y;
    x = y;
    y = r;
  }
  return static_cast<double>(x);
}

double Lcm(double a, double b) {
  const double g = Gcd(a, b);
  return g == 0 ? 0 : std::fabs(a / g * b);
}

// The value after a toward b in `dtype` (float32, float64 or bfloat16).
double NextAfter(tsr_dtype dtype, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (a == b) return b;
  if (dtype == TSR_DTYPE_FLOAT64) return std::nextafter(a, b);
  const float fa = static_cast<float>(a), fb = static_cast<float>(b);
  if (dtype == TSR_DTYPE_FLOAT32) return std::nextafterf(fa, fb);
  // bfloat16: step through the floats toward b until one rounds to another bfloat16.
  float x = fa;
  for (int i = 0; i < (1 << 17); ++i) {
    x = std::nextafterf(x, fb);
    const double rounded = RoundTo(TSR_DTYPE_BFLOAT16, x);
    if (rounded != a || std::signbit(rounded) != std::signbit(a)) return rounded;
  }
  return b;  // not reached: 2^16 steps cross any bfloat16 gap
}

int Width(tsr_dtype dtype) {
  switch (dtype) {
    case TSR_DTYPE_UINT8:
    case TSR_DTYPE_INT8:
      return 8;
    case TSR_DTYPE_INT16:
      return 16;
    case TSR_DTYPE_INT32:
      return 32;
    default:
      return 64;
  }
}

// a << b or a >> b in `dtype`, as PyTorch: a shift by a negative amount or by the width or more
// gives 0 (left) or the sign (right); the left shift wraps to the width.
double Shift(tsr_dtype dtype, bool left, double a, double b) {
  const int width = Width(dtype);
  const int64_t x = static_cast<int64_t>(a), s = static_cast<int64_t>(b);
  const bool out_of_range = s < 0 || s >= width;
  if (!left) {  // x is held exactly in int64, whose shift is arithmetic
    return static_cast<double>(out_of_range ? x >> (width - 1) : x >> s);
  }
  if (out_of_range) return 0;
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  uint64_t bits = (static_cast<uint64_t>(x) << s) & mask;
  const bool is_unsigned = dtype == TSR_DTYPE_UINT8;
  if (!is_unsigned && width < 64 && (bits >> (width - 1)) != 0) {
    return static_cast<double>(static_cast<int64_t>(bits) - (int64_t{1} << width));
  }
  return static_cast<double>(static_cast<int64_t>(bits));
}

void AddShifts(std::vector<OpInfo>& db) {
  for (const bool left : {true, false}) {
    const std::string name = left ? "bitwise_left_shift" : "bitwise_right_shift";
    auto reference = [left](const Sample& s, size_t self, size_t other) {
      const tsr_dtype promoted = ResultDtype({&s.args[0], &s.args[1]});
      return std::vector<HostTensor>{
          Elementwise({&s.args[0], &s.args[1]}, promoted,
                      [=](const double* x) { return Shift(promoted, left, x[self], x[other]); })};
    };
    auto errors = [](Rng& rng) {
      return std::vector<ErrorInput>{{{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                                        Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT32, rng))},
                                       "float32 by int32"},
                                      TSR_INVALID_ARGUMENT,
                                      "a floating operand"}};
    };
    {
      OpInfo op;
      op.name = name + ".Tensor";
      op.out = name + ".Tensor_out";
      op.inplace = name + "_.Tensor";
      op.dtypes = kIntegralMask;
      op.elementwise = true;
      op.samples = [](tsr_dtype dtype, Rng& rng) {
        return BinarySamples(dtype, rng, false, false);
      };
      op.reference = [reference](const Sample& s) { return reference(s, 0, 1); };
      op.errors = errors;
      db.push_back(std::move(op));
    }
    {
      OpInfo op;
      op.name = name + ".Tensor_Scalar";
      op.out = name + ".Tensor_Scalar_out";
      op.inplace = name + "_.Tensor_Scalar";
      op.dtypes = kIntegralMask | Bit(TSR_DTYPE_BOOL);  // bool with an int Scalar gives int64
      op.elementwise = true;
      op.samples = [](tsr_dtype dtype, Rng& rng) {
        std::vector<Sample> out;
        for (int64_t amount : {0, 3, 7, 8, -1}) {
          out.push_back({{Arg::Tensor(MakeTensor({7, 11}, dtype, rng)), Arg::ScalarInt(amount)},
                         "[7, 11] by " + std::to_string(amount)});
        }
        return out;
      };
      op.reference = [reference](const Sample& s) { return reference(s, 0, 1); };
      db.push_back(std::move(op));
    }
    {
      OpInfo op;
      op.name = name + ".Scalar_Tensor";
      op.out = name + ".Scalar_Tensor_out";
      op.dtypes = kIntegralMask | Bit(TSR_DTYPE_BOOL);
      op.elementwise = true;
      op.samples = [](tsr_dtype dtype, Rng& rng) {
        std::vector<Sample> out;
        for (int64_t value : {1, 5, 100}) {  // held by every integral dtype
          out.push_back({{Arg::ScalarInt(value), Arg::Tensor(MakeTensor({7, 11}, dtype, rng))},
                         std::to_string(value) + " by [7, 11]"});
        }
        return out;
      };
      op.reference = [reference](const Sample& s) { return reference(s, 0, 1); };
      db.push_back(std::move(op));
    }
  }
}

// heaviside: the two tensors of one dtype (PyTorch refuses two dtypes).
void AddHeaviside(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "heaviside";
  op.out = "heaviside.out";
  op.inplace = "heaviside_";
  op.dtypes = kAllMask;
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> out;
    for (Sample& s : BinarySamples(dtype, rng, false, false)) {
      if (s.args[0].tensor.dtype == s.args[1].tensor.dtype) out.push_back(std::move(s));
    }
    // Zeros in self, where values show through.
    HostTensor zeros = Full({4}, dtype, 0);
    out.push_back({{Arg::Tensor(zeros), Arg::Tensor(MakeTensor({4}, dtype, rng))}, "zeros"});
    return out;
  };
  op.reference = [](const Sample& s) {
    const tsr_dtype dtype = s.args[0].tensor.dtype;
    return std::vector<HostTensor>{Elementwise(
        {&s.args[0], &s.args[1]}, dtype,
        [](const double* x) { return x[0] == 0 ? x[1] : static_cast<double>(x[0] > 0); })};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{{{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                                      Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT64, rng))},
                                     "float32 with float64"},
                                    TSR_INVALID_ARGUMENT,
                                    "two dtypes"}};
  };
  db.push_back(std::move(op));
}

void AddNextafter(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "nextafter";
  op.out = "nextafter.out";
  op.inplace = "nextafter_";
  // float16 is refused, as PyTorch's CPU backend refuses it
  op.dtypes = Bit(TSR_DTYPE_BFLOAT16) | Bit(TSR_DTYPE_FLOAT32) | Bit(TSR_DTYPE_FLOAT64);
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> out = BinarySamples(dtype, rng, false, false);
    HostTensor zeros = Full({4}, dtype, 0);
    HostTensor toward = Full({4}, dtype, 1);
    toward.values = {1, -1, 0, -0.0};
    out.push_back({{Arg::Tensor(zeros), Arg::Tensor(toward)}, "from zero"});
    return out;
  };
  op.reference = [](const Sample& s) {
    const tsr_dtype promoted = ResultDtype({&s.args[0], &s.args[1]});
    return std::vector<HostTensor>{
        Elementwise({&s.args[0], &s.args[1]}, promoted, [promoted](const double* x) {
          return NextAfter(promoted, RoundTo(promoted, x[0]), RoundTo(promoted, x[1]));
        })};
  };
  db.push_back(std::move(op));
}

void AddXlogyScalarSelf(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "xlogy.Scalar_Self";
  op.out = "xlogy.OutScalar_Self";
  op.dtypes = kAllMask;
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    MakeOptions positive;
    positive.positive = true;
    std::vector<Sample> out;
    for (const Arg& self : {Arg::ScalarDouble(2.5), Arg::ScalarInt(0), Arg::ScalarInt(-3)}) {
      out.push_back({{self, Arg::Tensor(MakeTensor({7, 11}, dtype, rng, positive))},
                     self.ToString() + " * log [7, 11]"});
    }
    if (IsFloating(dtype)) {
      out.push_back({{Arg::ScalarInt(0), Arg::Tensor(ExtremeTensor(dtype))}, "0 * log extremes"});
    }
    return out;
  };
  op.reference = [](const Sample& s) {
    const tsr_dtype promoted = ResultDtype({&s.args[0], &s.args[1]});
    const tsr_dtype result = pointwise::ResultOf(Result::kFloat, promoted);
    return std::vector<HostTensor>{Elementwise(
        {&s.args[0], &s.args[1]}, result,
        [result](const double* x) { return Xlogy(RoundTo(result, x[0]), RoundTo(result, x[1])); })};
  };
  db.push_back(std::move(op));
}

}  // namespace

void AddBinaryMathOps(std::vector<OpInfo>& db) {
  const auto copysign = [](double a, double b) { return std::copysign(a, b); };
  const auto fmax = [](double a, double b) { return std::fmax(a, b); };
  const auto fmin = [](double a, double b) { return std::fmin(a, b); };
  const auto hypot = [](double a, double b) { return std::hypot(a, b); };
  const auto logaddexp = [](double a, double b) { return LogAddExp(a, b, M_E); };
  const auto logaddexp2 = [](double a, double b) { return LogAddExp(a, b, 2); };
  const auto rsub = [](double self, double other) { return other - self; };
  const auto floor_divide = [](double a, double b) { return std::floor(a / b); };
  const std::vector<BinarySpec> binary = {
      {"copysign.Tensor", "copysign.out", "copysign_.Tensor", copysign, Result::kFloat, kAllMask},
      {"copysign.Scalar", "copysign.Scalar_out", "copysign_.Scalar", copysign, Result::kFloat,
       kAllMask, false, true},
      {"fmax", "fmax.out", "", fmax, Result::kSame, kAllMask},
      {"fmin", "fmin.out", "", fmin, Result::kSame, kAllMask},
      {"hypot", "hypot.out", "hypot_", hypot, Result::kSame, kFloatingMask},
      {"logaddexp", "logaddexp.out", "", logaddexp, Result::kSame, kFloatingMask},
      {"logaddexp2", "logaddexp2.out", "", logaddexp2, Result::kSame, kFloatingMask},
      {"xlogy.Tensor", "xlogy.OutTensor", "xlogy_.Tensor", Xlogy, Result::kFloat, kAllMask},
      {"xlogy.Scalar_Other", "xlogy.OutScalar_Other", "xlogy_.Scalar_Other", Xlogy, Result::kFloat,
       kAllMask, false, true},
      {"gcd", "gcd.out", "gcd_", Gcd, Result::kSame, kIntegralMask},
      {"lcm", "lcm.out", "lcm_", Lcm, Result::kSame, kIntegralMask},
      // Composites over sub, div and clamp.
      {"rsub.Tensor", "rsub.Tensor_out", "", rsub, Result::kSame, kNumericMask},
      {"rsub.Scalar", "rsub.Scalar_out", "", rsub, Result::kSame, kNumericMask, false, true},
      {"floor_divide", "floor_divide.out", "floor_divide_.Tensor", floor_divide, Result::kSame,
       kNumericMask, true},
      {"floor_divide.Scalar", "", "floor_divide_.Scalar", floor_divide, Result::kSame, kNumericMask,
       true, true},
      {"clamp_min", "clamp_min.out", "clamp_min_", MaxNan, Result::kSame, kNumericMask, false,
       true},
      {"clamp_min.Tensor", "clamp_min.Tensor_out", "clamp_min_.Tensor", MaxNan, Result::kSame,
       kNumericMask},
      {"clamp_max", "clamp_max.out", "clamp_max_", MinNan, Result::kSame, kNumericMask, false,
       true},
      {"clamp_max.Tensor", "clamp_max.Tensor_out", "clamp_max_.Tensor", MinNan, Result::kSame,
       kNumericMask},
  };
  const size_t first = db.size();
  for (const BinarySpec& b : binary) AddBinary(db, b);
  // clamp_min / clamp_max with a Scalar bound: a bound uint8 holds (a negative one is refused,
  // as in PyTorch: it cannot be converted to uint8).
  for (size_t i = first; i < db.size(); ++i) {
    OpInfo& op = db[i];
    if (op.name != "clamp_min" && op.name != "clamp_max") continue;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> out = BinarySamples(dtype, rng, false, true);
      if (dtype == TSR_DTYPE_UINT8) {
        for (Sample& s : out) s.args[1] = Arg::ScalarInt(4);
      }
      return out;
    };
  }
  AddHeaviside(db);
  AddNextafter(db);
  AddXlogyScalarSelf(db);
  AddShifts(db);
}

}  // namespace conformance
}  // namespace tessera
