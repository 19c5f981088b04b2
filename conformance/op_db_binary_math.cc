// Op set 1.7's binary ops, in the pointwise family: copysign, fmax, fmin, heaviside, hypot,
// nextafter, logaddexp, logaddexp2, xlogy, gcd, lcm, bitwise_left_shift, bitwise_right_shift,
// and the composites rsub, floor_divide, clamp_min, clamp_max. References in double from the
// definitions (nextafter's bfloat16 neighbour found by stepping floats until the rounding
// changes, the shifts wrapped to the dtype's width by hand).
#include <cmath>
#include <cstdint>
#include <limits>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"
#include "conformance/op_db_pointwise.h"

namespace tessera {
namespace conformance {
namespace {

using pointwise::AddBinary;
using pointwise::BinarySamples;
using pointwise::BinarySpec;
using pointwise::MaxNan;
using pointwise::MinNan;
using pointwise::Result;

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

// |v| of an int64 held exactly in a double, as an unsigned magnitude (no overflow at INT64_MIN).
uint64_t Magnitude(double v) {
  const int64_t i = static_cast<int64_t>(v);
  return i < 0 ? uint64_t{0} - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
}

int Width(tsr_dtype dtype);

// `bits` as a value of the integral `dtype`: its low bits, two's complement for the signed ones.
double FromBits(tsr_dtype dtype, uint64_t bits) {
  const int width = Width(dtype);
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  if (dtype == TSR_DTYPE_UINT8) return static_cast<double>(bits);
  if ((bits >> (width - 1)) == 0) return static_cast<double>(bits);
  return -static_cast<double>((uint64_t{0} - bits) &
                              (width < 64 ? (uint64_t{1} << width) - 1 : ~uint64_t{0}));
}

// gcd of the magnitudes by Euclid on unsigned values, then as the dtype holds it (PyTorch's
// gcd(INT_MIN, 0) is INT_MIN: the magnitude 2^(width-1) read back as signed).
uint64_t GcdBits(double a, double b) {
  uint64_t x = Magnitude(a), y = Magnitude(b);
  while (y != 0) {
    const uint64_t r = x % y;
    x = y;
    y = r;
  }
  return x;
}

// lcm: |a / gcd * b| in the dtype's width, the product wrapping (uint8 128 and 7: 896 is 128).
double Lcm(tsr_dtype dtype, double a, double b) {
  const uint64_t g = GcdBits(a, b);
  if (g == 0) return 0;
  const int64_t q = static_cast<int64_t>(a) / static_cast<int64_t>(g);  // the samples' g < 2^63
  const double product =
      FromBits(dtype, static_cast<uint64_t>(q) * static_cast<uint64_t>(static_cast<int64_t>(b)));
  return product < 0 ? FromBits(dtype, Magnitude(product)) : product;
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

// a << b or a >> b in `dtype`, as current ATen: a shift by a negative amount or by the width or
// more gives 0 (left); right, by a negative amount or past max_shift (the width less the sign
// bit) it gives the sign (0 for uint8); the left shift wraps to the width.
double Shift(tsr_dtype dtype, bool left, double a, double b) {
  const int width = Width(dtype);
  const int64_t x = static_cast<int64_t>(a), s = static_cast<int64_t>(b);
  const bool out_of_range = s < 0 || s >= width;
  if (!left) {  // x is held exactly in int64, whose shift is arithmetic
    if (dtype == TSR_DTYPE_UINT8) return s < 0 || s >= 8 ? 0 : static_cast<double>(x >> s);
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

// Values beyond the samples' usual [-9, 10): the dtype's extremes and a large unsigned value,
// with shift amounts (or divisors) of every kind.
Sample WideIntegers(tsr_dtype dtype) {
  HostTensor a = Full({6}, dtype, 0), b = Full({6}, dtype, 0);
  if (dtype == TSR_DTYPE_UINT8) {
    a.values = {255, 200, 128, 255, 0, 17};
    b.values = {3, 8, 7, 5, 0, 255};
  } else {
    const double low = dtype == TSR_DTYPE_INT8    ? -128
                       : dtype == TSR_DTYPE_INT16 ? -32768
                       : dtype == TSR_DTYPE_INT32 ? -2147483648.0
                                                  : -9223372036854775808.0;
    const double high = dtype == TSR_DTYPE_INT64 ? 4611686018427387904.0 : -low - 1;  // 2^62:
    a.values = {low, high, -1, 100, 0, low};  // INT64_MAX is no double
    b.values = {0, 3, 7, -2, 0, 1};
  }
  return {{Arg::Tensor(a), Arg::Tensor(b)}, "extreme values"};
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
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                    Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT32, rng))},
                   "float32 by int32"},
                  TSR_INVALID_ARGUMENT,
                  "a floating operand"},
                 "expected integral or bool operands, got float32")};
    };
    {
      OpInfo op;
      op.name = name + ".Tensor";
      op.out = name + ".Tensor_out";
      op.inplace = name + "_.Tensor";
      op.dtypes = kIntegralMask;
      op.elementwise = true;
      op.samples = [](tsr_dtype dtype, Rng& rng) {
        std::vector<Sample> out = BinarySamples(dtype, rng, false, false);
        out.push_back(WideIntegers(dtype));
        return out;
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
    return std::vector<ErrorInput>{
        Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                  Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT64, rng))},
                 "float32 with float64"},
                TSR_INVALID_ARGUMENT,
                "two dtypes"},
               "expected dtype float32 for `values` but got dtype float64")};
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
      // gcd's and lcm's references, in the dtype's width, are set below
      {"gcd", "gcd.out", "gcd_", nullptr, Result::kSame, kIntegralMask},
      {"lcm", "lcm.out", "lcm_", nullptr, Result::kSame, kIntegralMask},
      // Composites over sub, div, maximum and minimum.
      {"rsub.Tensor", "rsub.Tensor_out", "", rsub, Result::kSame, kNumericMask},
      {"rsub.Scalar", "rsub.Scalar_out", "", rsub, Result::kSame, kNumericMask, false, true},
      {"floor_divide", "floor_divide.out", "floor_divide_.Tensor", floor_divide, Result::kSame,
       kNumericMask, true},
      {"floor_divide.Scalar", "", "floor_divide_.Scalar", floor_divide, Result::kSame, kNumericMask,
       true, true},
      // A bool tensor with a bool Scalar bound is refused, as in ATen (no bool loop); with a
      // tensor bound it computes.
      {"clamp_min", "clamp_min.out", "clamp_min_", MaxNan, Result::kSame, kNumericMask, false,
       true},
      {"clamp_min.Tensor", "clamp_min.Tensor_out", "clamp_min_.Tensor", MaxNan, Result::kSame,
       kAllMask},
      {"clamp_max", "clamp_max.out", "clamp_max_", MinNan, Result::kSame, kNumericMask, false,
       true},
      {"clamp_max.Tensor", "clamp_max.Tensor_out", "clamp_max_.Tensor", MinNan, Result::kSame,
       kAllMask},
  };
  const size_t first = db.size();
  for (const BinarySpec& b : binary) AddBinary(db, b);
  for (size_t i = first; i < db.size(); ++i) {
    OpInfo& op = db[i];
    if (op.name == "gcd" || op.name == "lcm") {
      const bool gcd = op.name == "gcd";
      // uint8's 255 for both, the dtypes' extremes for gcd (lcm's would overflow int64 here)
      op.samples = [gcd](tsr_dtype dtype, Rng& rng) {
        std::vector<Sample> out = BinarySamples(dtype, rng, false, false);
        if (gcd || dtype == TSR_DTYPE_UINT8) out.push_back(WideIntegers(dtype));
        return out;
      };
      op.reference = [gcd](const Sample& s) {
        const tsr_dtype promoted = ResultDtype({&s.args[0], &s.args[1]});
        return std::vector<HostTensor>{
            Elementwise({&s.args[0], &s.args[1]}, promoted, [=](const double* x) {
              const double a = RoundTo(promoted, x[0]), b = RoundTo(promoted, x[1]);
              return gcd ? FromBits(promoted, GcdBits(a, b)) : Lcm(promoted, a, b);
            })};
      };
    } else if (op.name == "clamp_min" || op.name == "clamp_max") {
      // A NaN bound makes every element NaN (clamp with one NaN bound would ignore it).
      op.samples = [](tsr_dtype dtype, Rng& rng) {
        std::vector<Sample> out = BinarySamples(dtype, rng, false, true);
        if (IsFloating(dtype)) {
          out.push_back(
              {{Arg::Tensor(MakeTensor({5}, dtype, rng)), Arg::ScalarDouble(NAN)}, "[5] with nan"});
        }
        return out;
      };
    }
  }
  AddHeaviside(db);
  AddNextafter(db);
  AddXlogyScalarSelf(db);
  AddShifts(db);
}

}  // namespace conformance
}  // namespace tessera
