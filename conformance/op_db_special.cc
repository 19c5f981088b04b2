// Op set 1.7's unary math, in the pointwise family: frac, sgn, signbit, deg2rad, rad2deg, erfc,
// erfinv, lgamma, digamma, polygamma (and polygamma_), i0, sinc, acosh, asinh, atanh, logit,
// nan_to_num.
//
// The references are computed otherwise than the kernels' shared special functions
// (tessera/base/special_math.hpp), so that a mistake in those is not mirrored here: erfinv by
// bisection on erf, digamma and polygamma in long double from their series (with more terms
// than the kernels take), i0 by its power series in long double at every argument.
#include <cmath>
#include <limits>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"
#include "conformance/op_db_pointwise.h"
#include "tessera/base/dtypes.hpp"

namespace tessera {
namespace conformance {
namespace {

using LD = long double;
using pointwise::Result;
using pointwise::ResultOf;
using pointwise::Sign;

double LogGamma(double x) {
  int sign;
  return lgamma_r(x, &sign);  // lgamma writes the global signgam: cases may run on threads
}

// erfinv by bisection: erf is increasing, so 200 halvings of [-7, 7] (erf(+-6) is +-1 in double)
// pin the answer to the last bit; erfc on the upper half keeps 1 - y exact near 1.
double ErfInv(double y) {
  if (std::isnan(y) || y < -1 || y > 1) return NAN;
  if (y == 1) return INFINITY;
  if (y == -1) return -INFINITY;
  if (y == 0) return y;  // keeps -0
  const double a = std::fabs(y);
  double lo = 0, hi = 7;
  for (int i = 0; i < 200 && hi - lo > 0; ++i) {
    const double mid = lo + (hi - lo) / 2;
    if (mid == lo || mid == hi) break;
    const bool below = a > 0.5 ? std::erfc(mid) > 1 - a : std::erf(mid) < a;
    (below ? lo : hi) = mid;
  }
  const double x = lo + (hi - lo) / 2;
  return y < 0 ? -x : x;
}

// digamma in long double: reflection for negative x, recurrence up to 40, then the asymptotic
// series with the Bernoulli numbers B_2 .. B_20.
LD DigammaLD(LD x) {
  const LD pi = 3.141592653589793238462643383279502884L;
  if (x == 0) return std::signbit(x) ? INFINITY : -INFINITY;
  LD result = 0;
  if (x < 0) {
    if (x == std::floor(x)) return NAN;
    result = -pi / std::tan(pi * (x - std::round(x)));
    x = 1 - x;
  }
  for (; x < 40; x += 1) result -= 1 / x;
  // B_2k / (2k) for k = 1..10
  const LD terms[] = {1.0L / 12,        -1.0L / 120,      1.0L / 252, -1.0L / 240,
                      1.0L / 132,       -691.0L / 32760,  1.0L / 12,  -3617.0L / 8160,
                      43867.0L / 14364, -174611.0L / 6600};
  LD series = 0, z = 1 / (x * x), power = z;
  for (const LD t : terms) {
    series += t * power;
    power *= z;
  }
  return result + std::log(x) - 1 / (2 * x) - series;
}

// polygamma(n, x) = (-1)^(n+1) n! sum_k (x + k)^-(n+1), n >= 1, in long double: the first terms
// directly until x + k > 60 + n, then the integral, the half term and Euler-Maclaurin's first
// corrections. Poles: (-1)^(n+1) inf.
LD PolygammaLD(int64_t n, LD x) {
  if (n == 0) return DigammaLD(x);
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return x > 0 ? 0 : NAN;  // the limit at +inf; none at -inf
  const LD sign = n % 2 == 1 ? 1 : -1;
  if (x <= 0 && x == std::floor(x)) return sign * INFINITY;
  const LD s = static_cast<LD>(n) + 1;
  LD sum = 0;
  LD a = x;
  for (; a < 60 + s; a += 1) sum += std::pow(a, -s);
  // a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! s(s+1)..(s+2j-2) a^(-s-2j+1), j = 1..4
  const LD b[] = {1.0L / 12, -1.0L / 720, 1.0L / 30240, -1.0L / 1209600};
  sum += std::pow(a, 1 - s) / (s - 1) + std::pow(a, -s) / 2;
  LD rising = s;
  for (int j = 1; j <= 4; ++j) {
    if (j > 1) rising *= (s + 2 * j - 3) * (s + 2 * j - 2);
    sum += b[j - 1] * rising * std::pow(a, -s - 2 * j + 1);
  }
  LD factorial = 1;
  for (int64_t k = 2; k <= n; ++k) factorial *= static_cast<LD>(k);
  return sign * factorial * sum;
}

// i0 by its power series sum_k ((x/2)^2)^k / (k!)^2 in long double (whose range holds it up to
// |x| ~ 11000); inf beyond double's range.
LD I0LD(LD x) {
  x = std::fabs(x);
  if (std::isnan(x)) return x;
  if (x > 800) return INFINITY;
  const LD q = x * x / 4;
  LD term = 1, sum = 1;
  for (int k = 1; k < 5000; ++k) {
    term *= q / (static_cast<LD>(k) * k);
    sum += term;
    if (term < sum * 1e-21L) break;
  }
  return sum;
}

double Sinc(double x) {
  if (x == 0) return 1;
  const double p = M_PI * x;
  return std::sin(p) / p;
}

double SignBit(double x) { return std::signbit(x); }

struct UnarySpec {
  const char* name;
  double (*f)(double);
  Result result;
  DtypeMask dtypes;
  bool inplace;
  MakeOptions range;  // where the samples' values are drawn
  double tolerance_scale = 1;
  MakeOptions tail = {};  // one more floating sample drawn here (a branch the range misses)
};

std::vector<Sample> SamplesIn(MakeOptions range, const MakeOptions& tail, tsr_dtype dtype,
                              Rng& rng) {
  // A range below 0 starts at 0 for uint8 and bool (MakeTensor's own range for them).
  if (range.low < range.high && range.low < 0 && !IsFloating(dtype) &&
      (dtype == TSR_DTYPE_UINT8 || dtype == TSR_DTYPE_BOOL)) {
    range.low = 0;
  }
  std::vector<Sample> out;
  for (const auto& shape : UnaryShapes()) {
    out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng, range))}, ShapeString(shape)});
  }
  if (IsFloating(dtype)) {
    // The whole default range too, where the op has a narrower domain (NaN outside it).
    if (range.low < range.high) {
      out.push_back({{Arg::Tensor(MakeTensor({17}, dtype, rng))}, "[17] wide"});
    }
    out.push_back({{Arg::Tensor(ExtremeTensor(dtype))}, "extremes"});
    if (tail.low < tail.high) {
      out.push_back({{Arg::Tensor(MakeTensor({17}, dtype, rng, tail))}, "[17] tail"});
    }
  }
  return out;
}

void AddUnary(std::vector<OpInfo>& db, const UnarySpec& u) {
  OpInfo op;
  op.name = u.name;
  op.out = std::string(u.name) + ".out";
  op.inplace = u.inplace ? std::string(u.name) + "_" : "";
  op.dtypes = u.dtypes;
  op.elementwise = true;
  op.tolerance_scale = u.tolerance_scale;
  const MakeOptions range = u.range, tail = u.tail;
  op.samples = [range, tail](tsr_dtype dtype, Rng& rng) {
    return SamplesIn(range, tail, dtype, rng);
  };
  const auto f = u.f;
  const Result r = u.result;
  op.reference = [f, r](const Sample& s) {
    const Arg& a = s.args[0];
    return std::vector<HostTensor>{
        Elementwise({&a}, ResultOf(r, a.tensor.dtype), [f](const double* x) { return f(x[0]); })};
  };
  db.push_back(std::move(op));
}

MakeOptions Range(double low, double high) {
  MakeOptions o;
  o.low = low;
  o.high = high;
  return o;
}

void AddLogit(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "logit";
  op.out = "logit.out";
  op.inplace = "logit_";
  op.dtypes = kAllMask;
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> out;
    for (const Arg& eps : {Arg::None(), Arg::Double(0.2), Arg::Double(-0.5)}) {
      for (const auto& shape : UnaryShapes()) {
        out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng, Range(0, 1))), eps},
                       ShapeString(shape) + " eps=" + eps.ToString()});
      }
      if (IsFloating(dtype)) out.push_back({{Arg::Tensor(ExtremeTensor(dtype)), eps}, "extremes"});
    }
    return out;
  };
  op.reference = [](const Sample& s) {
    const Arg& a = s.args[0];
    const tsr_dtype result = ResultOf(Result::kFloat, a.tensor.dtype);
    const bool clamp = s.args[1].kind == Arg::Kind::kDouble && s.args[1].number >= 0;
    // The bounds in the dtype computed in (float for the 16-bit floats), as the kernel holds
    // them.
    const tsr_dtype compute = result == TSR_DTYPE_FLOAT64 ? result : TSR_DTYPE_FLOAT32;
    const double lo = clamp ? RoundTo(compute, s.args[1].number) : 0;
    const double hi = clamp ? RoundTo(compute, 1 - s.args[1].number) : 0;
    return std::vector<HostTensor>{Elementwise({&a}, result, [=](const double* v) {
      double x = v[0];
      if (clamp) x = x < lo ? lo : x > hi ? hi : x;
      return x == 1 ? INFINITY : std::log(x / (1 - x));
    })};
  };
  db.push_back(std::move(op));
}

void AddNanToNum(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "nan_to_num";
  op.out = "nan_to_num.out";
  op.inplace = "nan_to_num_";
  op.dtypes = kAllMask;
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> out;
    const std::vector<std::vector<Arg>> replacements = {
        {Arg::None(), Arg::None(), Arg::None()},
        {Arg::Double(1.5), Arg::Double(100), Arg::Double(-100)},
        {Arg::Double(-0.0), Arg::Double(1e10), Arg::None()},  // 1e10 is inf in float16
    };
    for (const std::vector<Arg>& r : replacements) {
      const std::string desc =
          " nan=" + r[0].ToString() + " posinf=" + r[1].ToString() + " neginf=" + r[2].ToString();
      for (const auto& shape : UnaryShapes()) {
        out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)), r[0], r[1], r[2]},
                       ShapeString(shape) + desc});
      }
      if (IsFloating(dtype)) {
        out.push_back({{Arg::Tensor(ExtremeTensor(dtype)), r[0], r[1], r[2]}, "extremes" + desc});
      }
    }
    return out;
  };
  op.reference = [](const Sample& s) {
    const Arg& a = s.args[0];
    const tsr_dtype dtype = a.tensor.dtype;
    if (!IsFloating(dtype)) return std::vector<HostTensor>{a.tensor};
    auto given = [&](size_t i, double otherwise) {
      return s.args[i].kind == Arg::Kind::kDouble ? RoundTo(dtype, s.args[i].number) : otherwise;
    };
    const double nan = given(1, 0), pos = given(2, base::largest_finite(dtype)),
                 neg = given(3, -base::largest_finite(dtype));
    return std::vector<HostTensor>{Elementwise({&a}, dtype, [=](const double* v) {
      const double x = v[0];
      return std::isnan(x) ? nan : x == INFINITY ? pos : x == -INFINITY ? neg : x;
    })};
  };
  db.push_back(std::move(op));
}

std::vector<Sample> PolygammaSamples(tsr_dtype dtype, Rng& rng, bool inplace) {
  std::vector<Sample> out;
  for (int64_t n : {0, 1, 2, 3, 6}) {
    for (const auto& shape : UnaryShapes()) {
      const Arg x = Arg::Tensor(MakeTensor(shape, dtype, rng));
      out.push_back({inplace ? std::vector<Arg>{x, Arg::Int(n)} : std::vector<Arg>{Arg::Int(n), x},
                     "n=" + std::to_string(n) + " " + ShapeString(shape)});
    }
    if (IsFloating(dtype)) {
      const Arg x = Arg::Tensor(ExtremeTensor(dtype));
      out.push_back({inplace ? std::vector<Arg>{x, Arg::Int(n)} : std::vector<Arg>{Arg::Int(n), x},
                     "n=" + std::to_string(n) + " extremes"});
    }
  }
  // Far from 0 on the negative side, where the kernels' sum of the terms before 0 takes the
  // difference of two zetas (more than 1024 terms); half-integers, which every float holds.
  if (dtype == TSR_DTYPE_FLOAT32 || dtype == TSR_DTYPE_FLOAT64) {
    HostTensor far = Full({4}, dtype, 0);
    far.values = {-1500.5, -2000.25, -3000.75, -1200.5};
    for (int64_t n : {1, 2}) {
      const Arg x = Arg::Tensor(far);
      out.push_back({inplace ? std::vector<Arg>{x, Arg::Int(n)} : std::vector<Arg>{Arg::Int(n), x},
                     "n=" + std::to_string(n) + " far negative"});
    }
  }
  return out;
}

std::vector<HostTensor> PolygammaReference(int64_t n, const Arg& x) {
  return {Elementwise({&x}, ResultOf(Result::kFloat, x.tensor.dtype),
                      [n](const double* v) { return static_cast<double>(PolygammaLD(n, v[0])); })};
}

void AddPolygamma(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "polygamma";
  op.out = "polygamma.out";
  op.dtypes = kAllMask;
  op.elementwise = true;
  op.tolerance_scale = 2;
  op.samples = [](tsr_dtype dtype, Rng& rng) { return PolygammaSamples(dtype, rng, false); };
  op.reference = [](const Sample& s) { return PolygammaReference(s.args[0].integer, s.args[1]); };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Saying({{{Arg::Int(-1), Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng))}, "n=-1"},
                TSR_INVALID_ARGUMENT,
                "a negative order"},
               "does not support negative n, got n = -1")};
  };
  db.push_back(std::move(op));

  // polygamma_(self, n): its own entry, its arguments being in another order.
  OpInfo inplace;
  inplace.name = "polygamma_";
  inplace.dtypes = kFloatingMask;  // an integral self cannot hold the float result
  inplace.mutates_self = true;
  inplace.tolerance_scale = 2;
  inplace.samples = [](tsr_dtype dtype, Rng& rng) { return PolygammaSamples(dtype, rng, true); };
  inplace.reference = [](const Sample& s) {
    return PolygammaReference(s.args[1].integer, s.args[0]);
  };
  inplace.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT64, rng)), Arg::Int(1)}, "int64 self"},
                TSR_INVALID_ARGUMENT,
                "a float result into an integral self"},
               "result type float32 can't be cast to the desired output type int64")};
  };
  db.push_back(std::move(inplace));
}

}  // namespace

void AddSpecialOps(std::vector<OpInfo>& db) {
  const MakeOptions wide;
  const UnarySpec unary[] = {
      {"frac", [](double x) { return x - std::trunc(x); }, Result::kSame, kFloatingMask, true,
       wide},
      {"sgn", Sign, Result::kSame, kAllMask, true, wide},
      {"signbit", SignBit, Result::kBool, kAllMask, false, wide},
      {"deg2rad", [](double x) { return x * (M_PI / 180); }, Result::kFloat, kAllMask, true, wide},
      {"rad2deg", [](double x) { return x * (180 / M_PI); }, Result::kFloat, kAllMask, true, wide},
      {"erfc", [](double x) { return std::erfc(x); }, Result::kFloat, kAllMask, true, wide},
      {"erfinv", ErfInv, Result::kFloat, kAllMask, true, Range(-1, 1), 2},
      {"lgamma", LogGamma, Result::kFloat, kAllMask, true, wide, 2},
      {"digamma", [](double x) { return static_cast<double>(DigammaLD(x)); }, Result::kFloat,
       kAllMask, true, wide, 2},
      // i0's tail: its asymptotic branch past 30 (float32 overflows near 89)
      {"i0", [](double x) { return static_cast<double>(I0LD(x)); }, Result::kFloat, kAllMask, true,
       wide, 2, Range(-90, 90)},
      {"sinc", Sinc, Result::kFloat, kAllMask, true, wide},
      {"acosh", [](double x) { return std::acosh(x); }, Result::kFloat, kAllMask, true,
       Range(1, 10)},
      {"asinh", [](double x) { return std::asinh(x); }, Result::kFloat, kAllMask, true, wide},
      {"atanh", [](double x) { return std::atanh(x); }, Result::kFloat, kAllMask, true,
       Range(-1, 1)},
  };
  for (const UnarySpec& u : unary) AddUnary(db, u);
  AddLogit(db);
  AddNanToNum(db);
  AddPolygamma(db);
}

}  // namespace conformance
}  // namespace tessera
