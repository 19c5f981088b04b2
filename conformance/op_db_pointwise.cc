// Pointwise ops: unary, binary (Tensor and Scalar overloads), ternary. References are plain
// double arithmetic with PyTorch's semantics, rounded to the result dtype.
#include "conformance/op_db_pointwise.h"

#include <cmath>
#include <limits>
#include <tuple>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {

tsr_dtype pointwise::ResultOf(Result r, tsr_dtype promoted) {
  if (r == Result::kBool) return TSR_DTYPE_BOOL;
  if (r == Result::kFloat && !IsFloating(promoted)) return TSR_DTYPE_FLOAT32;
  return promoted;
}

double pointwise::Sign(double x) { return std::isnan(x) ? 0 : (x > 0) - (x < 0); }
double pointwise::MaxNan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
double pointwise::MinNan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

namespace {

using F1 = double (*)(double);
using pointwise::BinarySamples;
using pointwise::BinarySpec;
using pointwise::F2;
using pointwise::MaxNan;
using pointwise::MinNan;
using pointwise::Result;
using pointwise::ResultOf;
using pointwise::Sign;

double Relu(double x) { return std::isnan(x) ? x : x > 0 ? x : 0; }
double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double Silu(double x) { return x / (1 + std::exp(-x)); }
double Rsqrt(double x) { return 1 / std::sqrt(x); }
double Reciprocal(double x) { return 1 / x; }
double Round(double x) { return std::nearbyint(x); }
double IsNan(double x) { return std::isnan(x); }
double IsInf(double x) { return std::isinf(x); }
double IsFinite(double x) { return std::isfinite(x); }
double LogicalNot(double x) { return x == 0; }
double Neg(double x) { return -x; }
double Abs(double x) { return std::fabs(x); }
double Floor(double x) { return std::floor(x); }
double Ceil(double x) { return std::ceil(x); }
double Trunc(double x) { return std::trunc(x); }
double Sqrt(double x) { return std::sqrt(x); }
double Exp(double x) { return std::exp(x); }
double Exp2(double x) { return std::exp2(x); }
double Expm1(double x) { return std::expm1(x); }
double Log(double x) { return std::log(x); }
double Log2(double x) { return std::log2(x); }
double Log10(double x) { return std::log10(x); }
double Log1p(double x) { return std::log1p(x); }
double Sin(double x) { return std::sin(x); }
double Cos(double x) { return std::cos(x); }
double Tan(double x) { return std::tan(x); }
double Asin(double x) { return std::asin(x); }
double Acos(double x) { return std::acos(x); }
double Atan(double x) { return std::atan(x); }
double Sinh(double x) { return std::sinh(x); }
double Cosh(double x) { return std::cosh(x); }
double Tanh(double x) { return std::tanh(x); }
double Erf(double x) { return std::erf(x); }

struct UnarySpec {
  const char* name;
  F1 f;
  Result result;
  DtypeMask dtypes;
  bool inplace;
  bool out = true;
};

// Integers are exact in these ops (floor of an int is the int), so one double reference serves.
const UnarySpec kUnary[] = {
    {"abs", Abs, Result::kSame, kNumericMask, true},
    {"neg", Neg, Result::kSame, kNumericMask, true},
    {"sign", Sign, Result::kSame, kAllMask, true},
    {"sqrt", Sqrt, Result::kFloat, kAllMask, true},
    {"rsqrt", Rsqrt, Result::kFloat, kAllMask, true},
    {"exp", Exp, Result::kFloat, kAllMask, true},
    {"exp2", Exp2, Result::kFloat, kAllMask, true},
    {"expm1", Expm1, Result::kFloat, kAllMask, true},
    {"log", Log, Result::kFloat, kAllMask, true},
    {"log2", Log2, Result::kFloat, kAllMask, true},
    {"log10", Log10, Result::kFloat, kAllMask, true},
    {"log1p", Log1p, Result::kFloat, kAllMask, true},
    {"sin", Sin, Result::kFloat, kAllMask, true},
    {"cos", Cos, Result::kFloat, kAllMask, true},
    {"tan", Tan, Result::kFloat, kAllMask, true},
    {"asin", Asin, Result::kFloat, kAllMask, true},
    {"acos", Acos, Result::kFloat, kAllMask, true},
    {"atan", Atan, Result::kFloat, kAllMask, true},
    {"sinh", Sinh, Result::kFloat, kAllMask, true},
    {"cosh", Cosh, Result::kFloat, kAllMask, true},
    {"tanh", Tanh, Result::kFloat, kAllMask, true},
    {"sigmoid", Sigmoid, Result::kFloat, kAllMask, true},
    {"relu", Relu, Result::kSame, kNumericMask, true},
    {"silu", Silu, Result::kSame, kFloatingMask, true},
    {"erf", Erf, Result::kFloat, kAllMask, true},
    {"floor", Floor, Result::kSame, kNumericMask, true},
    {"ceil", Ceil, Result::kSame, kNumericMask, true},
    {"round", Round, Result::kSame, kNumericMask, true},
    {"trunc", Trunc, Result::kSame, kNumericMask, true},
    {"reciprocal", Reciprocal, Result::kFloat, kAllMask, true},
    {"logical_not", LogicalNot, Result::kBool, kAllMask, true},
    {"isnan", IsNan, Result::kBool, kAllMask, false},
    {"isinf", IsInf, Result::kBool, kAllMask, false},
    {"isfinite", IsFinite, Result::kBool, kAllMask, false},
};

std::vector<Sample> UnarySamples(tsr_dtype dtype, Rng& rng) {
  std::vector<Sample> out;
  for (const auto& shape : UnaryShapes()) {
    out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng))}, ShapeString(shape)});
  }
  if (IsFloating(dtype)) out.push_back({{Arg::Tensor(ExtremeTensor(dtype))}, "extremes"});
  return out;
}

void AddUnary(std::vector<OpInfo>& db, const UnarySpec& u) {
  OpInfo op;
  op.name = u.name;
  op.out = std::string(u.name) + ".out";
  op.inplace = u.inplace ? std::string(u.name) + "_" : "";
  op.dtypes = u.dtypes;
  op.elementwise = true;
  op.samples = UnarySamples;
  const F1 f = u.f;
  const Result r = u.result;
  op.reference = [f, r](const Sample& s) {
    const Arg& a = s.args[0];
    return std::vector<HostTensor>{
        Elementwise({&a}, ResultOf(r, a.tensor.dtype), [f](const double* x) { return f(x[0]); })};
  };
  db.push_back(std::move(op));
}

// bitwise_not: ~x on integers, logical not on bool.
void AddBitwiseNot(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "bitwise_not";
  op.out = "bitwise_not.out";
  op.inplace = "bitwise_not_";
  op.dtypes = kIntegralMask | Bit(TSR_DTYPE_BOOL);
  op.elementwise = true;
  op.samples = UnarySamples;
  op.reference = [](const Sample& s) {
    const Arg& a = s.args[0];
    const bool is_bool = a.tensor.dtype == TSR_DTYPE_BOOL;
    return std::vector<HostTensor>{Elementwise({&a}, a.tensor.dtype, [is_bool](const double* x) {
      return is_bool ? static_cast<double>(x[0] == 0)
                     : static_cast<double>(~static_cast<int64_t>(x[0]));
    })};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        {{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng))}, "float32"},
         TSR_INVALID_ARGUMENT,
         "bitwise_not of a floating tensor",
         "expected integral or bool operands, got float32"}};
  };
  db.push_back(std::move(op));
}

void AddGelu(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "gelu";
  op.out = "gelu.out";
  op.inplace = "gelu_";
  op.dtypes = kFloatingMask;
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> out;
    for (const char* mode : {"none", "tanh"}) {
      for (const auto& shape : UnaryShapes()) {
        out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::String(mode)},
                       ShapeString(shape) + " " + mode});
      }
    }
    return out;
  };
  op.reference = [](const Sample& s) {
    const bool tanh_mode = s.args[1].string == "tanh";
    return std::vector<HostTensor>{
        Elementwise({&s.args[0]}, s.args[0].tensor.dtype, [tanh_mode](const double* x) {
          const double v = x[0];
          if (tanh_mode) {
            return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
          }
          return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
        })};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        {{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)), Arg::String("exact")}, "'exact'"},
         TSR_INVALID_ARGUMENT,
         "an unknown approximation",
         "expected approximate to be 'none' or 'tanh', got 'exact'"}};
  };
  db.push_back(std::move(op));
}

// ---- binary ----

double IntPow(double base, double exp) {
  int64_t b = static_cast<int64_t>(base), e = static_cast<int64_t>(exp);
  if (e < 0) return b == 1 ? 1 : b == -1 ? (e % 2 == 0 ? 1 : -1) : 0;
  int64_t r = 1;
  while (e-- > 0) r *= b;
  return static_cast<double>(r);
}

double FloorDiv(double a, double b) { return std::floor(a / b); }
double Remainder(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace

std::vector<Sample> pointwise::BinarySamples(tsr_dtype dtype, Rng& rng, bool exclude_zero,
                                             bool scalar_other) {
  MakeOptions divisor;
  divisor.exclude_zero = exclude_zero;
  std::vector<Sample> out;
  if (scalar_other) {
    for (const auto& shape : UnaryShapes()) {
      Arg other = IsFloating(dtype) ? Arg::ScalarDouble(exclude_zero ? 2.5 : -1.5)
                                    : Arg::ScalarInt(exclude_zero ? 3 : -2);
      if (dtype == TSR_DTYPE_BOOL) other = Arg::ScalarBool(true);
      out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)), other},
                     ShapeString(shape) + " with " + other.ToString()});
    }
    return out;
  }
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> pairs = {
      {{5}, {5}}, {{7, 11}, {11}}, {{13, 1}, {1, 5}}, {{}, {5}}, {{0, 3}, {3}}, {{}, {}}};
  for (const auto& [a, b] : pairs) {
    out.push_back(
        {{Arg::Tensor(MakeTensor(a, dtype, rng)), Arg::Tensor(MakeTensor(b, dtype, rng, divisor))},
         ShapeString(a) + " with " + ShapeString(b)});
  }
  // A 0-dim int64 operand: the dimensioned tensor's dtype wins within a category.
  if (IsIntegral(dtype, false)) {
    out.push_back({{Arg::Tensor(MakeTensor({5}, dtype, rng)),
                    Arg::Tensor(MakeTensor({}, TSR_DTYPE_INT64, rng, divisor))},
                   "[5] with int64[]"});
  }
  if (IsFloating(dtype) && !exclude_zero) {
    HostTensor x = ExtremeTensor(dtype);
    HostTensor y = x;
    std::rotate(y.values.begin(), y.values.begin() + 3, y.values.end());
    out.push_back({{Arg::Tensor(x), Arg::Tensor(y)}, "extremes"});
  }
  return out;
}

void pointwise::AddBinary(std::vector<OpInfo>& db, const BinarySpec& b) {
  OpInfo op;
  op.name = b.name;
  op.out = b.out;
  op.inplace = b.inplace;
  op.dtypes = b.dtypes;
  op.elementwise = true;
  const bool exclude_zero = b.exclude_zero, scalar_other = b.scalar_other;
  op.samples = [exclude_zero, scalar_other](tsr_dtype dtype, Rng& rng) {
    return BinarySamples(dtype, rng, exclude_zero, scalar_other);
  };
  const F2 f = b.f;
  const Result r = b.result;
  op.reference = [f, r](const Sample& s) {
    const tsr_dtype promoted = ResultDtype({&s.args[0], &s.args[1]});
    return std::vector<HostTensor>{
        Elementwise({&s.args[0], &s.args[1]}, ResultOf(r, promoted), [&](const double* x) {
          // Operands convert to the dtype the op computes in first (the result dtype, or the
          // promoted one for comparisons).
          const tsr_dtype compute = r == Result::kBool ? promoted : ResultOf(r, promoted);
          return f(RoundTo(compute, x[0]), RoundTo(compute, x[1]));
        })};
  };
  // A Scalar `other` broadcasts with any self: the Scalar overload has no such error input (a
  // Tensor passed for it is refused by the argument check, not by broadcasting).
  op.errors = [scalar_other](Rng& rng) {
    if (scalar_other) return std::vector<ErrorInput>{};
    return std::vector<ErrorInput>{{{{Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_FLOAT32, rng)),
                                      Arg::Tensor(MakeTensor({4}, TSR_DTYPE_FLOAT32, rng))},
                                     "[2, 3] with [4]"},
                                    TSR_INVALID_ARGUMENT,
                                    "shapes that do not broadcast",
                                    "must match the size of tensor b"}};
  };
  db.push_back(std::move(op));
}

void AddPointwiseOps(std::vector<OpInfo>& db) {
  using pointwise::AddBinary;
  for (const UnarySpec& u : kUnary) AddUnary(db, u);
  AddBitwiseNot(db);
  AddGelu(db);

  auto add = [](double a, double b) { return a + b; };
  auto sub = [](double a, double b) { return a - b; };
  auto mul = [](double a, double b) { return a * b; };
  auto div = [](double a, double b) { return a / b; };
  const std::vector<BinarySpec> binary = {
      {"add.Tensor", "add.out", "add_.Tensor", add, Result::kSame, kAllMask},
      {"add.Scalar", "add.Scalar_out", "add_.Scalar", add, Result::kSame, kAllMask, false, true},
      {"sub.Tensor", "sub.out", "sub_.Tensor", sub, Result::kSame, kNumericMask},
      {"sub.Scalar", "sub.Scalar_out", "sub_.Scalar", sub, Result::kSame, kNumericMask, false,
       true},
      {"mul.Tensor", "mul.out", "mul_.Tensor", mul, Result::kSame, kAllMask},
      {"mul.Scalar", "mul.Scalar_out", "mul_.Scalar", mul, Result::kSame, kAllMask, false, true},
      {"div.Tensor", "div.out", "div_.Tensor", div, Result::kFloat, kAllMask, true},
      {"div.Scalar", "div.Scalar_out", "div_.Scalar", div, Result::kFloat, kAllMask, true, true},
      {"pow.Tensor_Scalar", "pow.Tensor_Scalar_out", "pow_.Scalar",
       [](double a, double b) { return std::pow(a, b); }, Result::kSame, kNumericMask, true, true},
      {"maximum", "maximum.out", "", MaxNan, Result::kSame, kAllMask},
      {"minimum", "minimum.out", "", MinNan, Result::kSame, kAllMask},
      {"fmod.Tensor", "fmod.Tensor_out", "fmod_.Tensor",
       [](double a, double b) { return std::fmod(a, b); }, Result::kSame, kNumericMask, true},
      {"remainder.Tensor", "remainder.Tensor_out", "remainder_.Tensor", Remainder, Result::kSame,
       kNumericMask, true},
      {"fmod.Scalar", "fmod.Scalar_out", "fmod_.Scalar",
       [](double a, double b) { return std::fmod(a, b); }, Result::kSame, kNumericMask, true, true},
      {"remainder.Scalar", "remainder.Scalar_out", "remainder_.Scalar", Remainder, Result::kSame,
       kNumericMask, true, true},
      {"atan2", "atan2.out", "atan2_", [](double a, double b) { return std::atan2(a, b); },
       Result::kFloat, kAllMask},
      {"logical_and", "logical_and.out", "logical_and_",
       [](double a, double b) { return static_cast<double>(a != 0 && b != 0); }, Result::kBool,
       kAllMask},
      {"logical_or", "logical_or.out", "logical_or_",
       [](double a, double b) { return static_cast<double>(a != 0 || b != 0); }, Result::kBool,
       kAllMask},
      {"logical_xor", "logical_xor.out", "logical_xor_",
       [](double a, double b) { return static_cast<double>((a != 0) != (b != 0)); }, Result::kBool,
       kAllMask},
  };
  for (const BinarySpec& b : binary) AddBinary(db, b);
  // sub refuses a bool operand whatever the other one is, before promotion (PyTorch's
  // sub_check: bool - int32 would promote to int32 and is refused all the same), a bool Scalar
  // included.
  for (OpInfo& op : db) {
    if (op.name != "sub.Tensor" && op.name != "sub.Scalar") continue;
    const bool scalar_other = op.name == "sub.Scalar";
    op.errors = [base = op.errors, scalar_other](Rng& rng) {
      std::vector<ErrorInput> errors = base(rng);
      auto tensor = [&rng](tsr_dtype dtype, std::vector<int64_t> shape = {3}) {
        return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
      };
      auto refused = [&errors](std::vector<Arg> args, const std::string& what) {
        errors.push_back({{std::move(args), what}, TSR_INVALID_ARGUMENT, "a bool operand",
                          "which subtraction does not support"});
      };
      if (scalar_other) {
        refused({tensor(TSR_DTYPE_BOOL), Arg::ScalarInt(1)}, "bool [3] - 1");
        refused({tensor(TSR_DTYPE_BOOL), Arg::ScalarDouble(1.5)}, "bool [3] - 1.5");
        refused({tensor(TSR_DTYPE_INT32), Arg::ScalarBool(true)}, "int32 [3] - True");
      } else {
        refused({tensor(TSR_DTYPE_BOOL), tensor(TSR_DTYPE_INT32)}, "bool [3] - int32 [3]");
        refused({tensor(TSR_DTYPE_FLOAT32), tensor(TSR_DTYPE_BOOL)}, "float32 [3] - bool [3]");
        refused({tensor(TSR_DTYPE_BOOL, {}), tensor(TSR_DTYPE_INT64, {2})}, "bool [] - int64 [2]");
        refused({tensor(TSR_DTYPE_BOOL), tensor(TSR_DTYPE_BOOL)}, "bool [3] - bool [3]");
      }
      return errors;
    };
  }

  // pow of two tensors: exponents kept small and non-negative for integers.
  {
    OpInfo op;
    op.name = "pow.Tensor_Tensor";
    op.out = "pow.Tensor_Tensor_out";
    op.inplace = "pow_.Tensor";
    op.dtypes = kNumericMask;
    op.elementwise = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      MakeOptions exponent;
      exponent.low = IsFloating(dtype) ? -3 : 0;
      exponent.high = 4;
      MakeOptions base;
      base.positive = IsFloating(dtype);
      std::vector<Sample> out;
      for (const auto& shape : std::vector<std::vector<int64_t>>{{5}, {7, 11}, {}, {0}}) {
        out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng, base)),
                        Arg::Tensor(MakeTensor(shape, dtype, rng, exponent))},
                       ShapeString(shape)});
      }
      return out;
    };
    op.reference = [](const Sample& s) {
      const tsr_dtype dt = s.args[0].tensor.dtype;
      return std::vector<HostTensor>{
          Elementwise({&s.args[0], &s.args[1]}, dt, [dt](const double* x) {
            return IsIntegral(dt, false) ? IntPow(x[0], x[1]) : std::pow(x[0], x[1]);
          })};
    };
    db.push_back(std::move(op));
  }

  // pow with a Scalar base: the exponent tensor sets the dtype (a float base makes integer
  // exponents float32, as torch.pow(2.5, int_tensor) does).
  {
    OpInfo op;
    op.name = "pow.Scalar";
    op.out = "pow.Scalar_out";
    op.dtypes = kAllMask;  // a bool exponent promotes with the integer base to int64
    op.elementwise = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      MakeOptions exponent;
      exponent.low = IsFloating(dtype) ? -3 : 0;
      exponent.high = 4;
      std::vector<Sample> out;
      for (const auto& shape : std::vector<std::vector<int64_t>>{{5}, {7, 11}, {}, {0}}) {
        out.push_back({{Arg::ScalarInt(3), Arg::Tensor(MakeTensor(shape, dtype, rng, exponent))},
                       "3 ** " + ShapeString(shape)});
      }
      out.push_back({{Arg::ScalarDouble(1.5), Arg::Tensor(MakeTensor({6}, dtype, rng, exponent))},
                     "1.5 ** [6]"});
      return out;
    };
    op.reference = [](const Sample& s) {
      const tsr_dtype dt = ResultDtype({&s.args[0], &s.args[1]});
      return std::vector<HostTensor>{
          Elementwise({&s.args[0], &s.args[1]}, dt, [dt](const double* x) {
            return IsIntegral(dt, true) ? IntPow(x[0], x[1]) : std::pow(x[0], x[1]);
          })};
    };
    db.push_back(std::move(op));
  }

  // div with rounding modes, on tensors.
  for (const char* mode : {"trunc", "floor"}) {
    OpInfo op;
    op.name = "div.Tensor_mode";
    op.out = "div.out_mode";
    op.inplace = "div_.Tensor_mode";
    op.dtypes = kNumericMask;
    op.elementwise = true;
    const std::string m = mode;
    op.samples = [m](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> out = BinarySamples(dtype, rng, true, false);
      for (Sample& s : out) {
        s.args.push_back(Arg::String(m));
        s.desc += " " + m;
      }
      return out;
    };
    op.reference = [m](const Sample& s) {
      const tsr_dtype promoted = ResultDtype({&s.args[0], &s.args[1]});
      return std::vector<HostTensor>{
          Elementwise({&s.args[0], &s.args[1]}, promoted, [&](const double* x) {
            const double a = RoundTo(promoted, x[0]), b = RoundTo(promoted, x[1]);
            return m == "trunc" ? std::trunc(a / b) : FloorDiv(a, b);
          })};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          {{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT64, rng)),
             Arg::Tensor(Full({3}, TSR_DTYPE_INT64, 0)), Arg::String("floor")},
            "int64 by zero"},
           TSR_INVALID_ARGUMENT,
           "integer division by zero (ZeroDivisionError)",
           "ZeroDivisionError"},
          {{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
             Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)), Arg::String("round")},
            "'round'"},
           TSR_INVALID_ARGUMENT,
           "an unknown rounding mode",
           "expected rounding_mode to be one of None, 'trunc' or 'floor'"}};
    };
    db.push_back(std::move(op));
  }

  // Comparisons, both overloads.
  const std::pair<const char*, F2> comparisons[] = {
      {"eq", [](double a, double b) { return static_cast<double>(a == b); }},
      {"ne", [](double a, double b) { return static_cast<double>(a != b); }},
      {"lt", [](double a, double b) { return static_cast<double>(a < b); }},
      {"le", [](double a, double b) { return static_cast<double>(a <= b); }},
      {"gt", [](double a, double b) { return static_cast<double>(a > b); }},
      {"ge", [](double a, double b) { return static_cast<double>(a >= b); }}};
  for (const auto& [name, f] : comparisons) {
    const std::string n = name;
    AddBinary(db, {n + ".Tensor", n + ".Tensor_out", n + "_.Tensor", f, Result::kBool, kAllMask});
    AddBinary(db, {n + ".Scalar", n + ".Scalar_out", n + "_.Scalar", f, Result::kBool, kAllMask,
                   false, true});
  }
  // Bitwise ops on integers and bool.
  const std::pair<const char*, F2> bitwise[] = {
      {"bitwise_and",
       [](double a, double b) {
         return static_cast<double>(static_cast<int64_t>(a) & static_cast<int64_t>(b));
       }},
      {"bitwise_or",
       [](double a, double b) {
         return static_cast<double>(static_cast<int64_t>(a) | static_cast<int64_t>(b));
       }},
      {"bitwise_xor", [](double a, double b) {
         return static_cast<double>(static_cast<int64_t>(a) ^ static_cast<int64_t>(b));
       }}};
  for (const auto& [name, f] : bitwise) {
    const std::string n = name;
    AddBinary(db, {n + ".Tensor", n + ".Tensor_out", n + "_.Tensor", f, Result::kSame,
                   kIntegralMask | Bit(TSR_DTYPE_BOOL)});
    AddBinary(db, {n + ".Scalar", n + ".Scalar_out", n + "_.Scalar", f, Result::kSame,
                   kIntegralMask | Bit(TSR_DTYPE_BOOL), false, true});
  }

  // ---- ternary ----
  {
    OpInfo op;
    op.name = "where.self";
    op.out = "where.self_out";
    op.dtypes = kAllMask;
    op.elementwise = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> out;
      for (const auto& shape : std::vector<std::vector<int64_t>>{{5}, {7, 11}, {}, {0}}) {
        out.push_back(
            {{Arg::Tensor(MakeTensor(shape, TSR_DTYPE_BOOL, rng)),
              Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::Tensor(MakeTensor({1}, dtype, rng))},
             ShapeString(shape)});
      }
      return out;
    };
    op.reference = [](const Sample& s) {
      return std::vector<HostTensor>{
          Elementwise({&s.args[0], &s.args[1], &s.args[2]}, ResultDtype({&s.args[1], &s.args[2]}),
                      [](const double* x) { return x[0] != 0 ? x[1] : x[2]; })};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{{{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                                        Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                                        Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng))},
                                       "float32 condition"},
                                      TSR_INVALID_ARGUMENT,
                                      "a condition that is not bool",
                                      "expected argument 'condition' to be bool"}};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.name = "clamp";
    op.out = "clamp.out";
    op.inplace = "clamp_";
    op.dtypes = kAllMask;  // bool promotes with the integer bounds
    op.elementwise = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      const bool f = IsFloating(dtype);
      const Arg lo = f ? Arg::ScalarDouble(-2.5) : Arg::ScalarInt(-2);
      const Arg hi = f ? Arg::ScalarDouble(3.5) : Arg::ScalarInt(3);
      std::vector<Sample> out;
      for (const auto& shape : UnaryShapes()) {
        out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)), lo, hi},
                       ShapeString(shape) + " in [lo, hi]"});
      }
      out.push_back({{Arg::Tensor(MakeTensor({7}, dtype, rng)), Arg::None(), hi}, "max only"});
      out.push_back({{Arg::Tensor(MakeTensor({7}, dtype, rng)), lo, Arg::None()}, "min only"});
      if (f) {
        out.push_back({{Arg::Tensor(ExtremeTensor(dtype)), lo, hi}, "extremes"});
        // A NaN bound: ignored when it is the only one, NaN everywhere when both are given
        // (PyTorch's clamp_out fills NaN only `if (min && max)`).
        const Arg nan = Arg::ScalarDouble(NAN);
        out.push_back({{Arg::Tensor(ExtremeTensor(dtype)), nan, Arg::None()}, "min nan only"});
        out.push_back({{Arg::Tensor(ExtremeTensor(dtype)), Arg::None(), nan}, "max nan only"});
        out.push_back({{Arg::Tensor(MakeTensor({5}, dtype, rng)), lo, nan}, "max nan with min"});
      }
      return out;
    };
    op.reference = [](const Sample& s) {
      std::vector<const Arg*> ops{&s.args[0]};
      for (int i : {1, 2}) {
        if (s.args[i].kind != Arg::Kind::kNone) ops.push_back(&s.args[i]);
      }
      const bool has_lo = s.args[1].kind != Arg::Kind::kNone;
      const bool has_hi = s.args[2].kind != Arg::Kind::kNone;
      const tsr_dtype dtype = ResultDtype(ops);
      // The bounds convert to the result dtype first (-2 is 254 in uint8, as in PyTorch).
      const double lo = RoundTo(dtype, s.args[1].number), hi = RoundTo(dtype, s.args[2].number);
      const bool nan_fill = has_lo && has_hi && (std::isnan(lo) || std::isnan(hi));
      return std::vector<HostTensor>{Elementwise({&s.args[0]}, dtype, [=](const double* x) {
        double v = x[0];
        if (nan_fill) return static_cast<double>(NAN);
        if (std::isnan(v)) return v;
        if (has_lo && v < lo) v = lo;  // false for a NaN bound: ignored
        if (has_hi && v > hi) v = hi;
        return v;
      })};
    };
    // Scalar bounds convert to the result dtype with PyTorch's overflow check: -1 wraps into
    // uint8, 300 does not fit; 1e300 does not fit float32.
    op.errors = [](Rng& rng) {
      std::vector<ErrorInput> errors;
      const std::tuple<tsr_dtype, Arg, Arg, const char*, const char*> bounds[] = {
          {TSR_DTYPE_UINT8, Arg::ScalarInt(-1), Arg::ScalarInt(300), "uint8 in [-1, 300]",
           "cannot be converted to uint8 without overflow"},
          {TSR_DTYPE_INT32, Arg::None(), Arg::ScalarInt(1LL << 40), "int32 below 2^40",
           "cannot be converted to int32 without overflow"},
          {TSR_DTYPE_FLOAT32, Arg::ScalarDouble(-1e300), Arg::None(), "float32 above -1e300",
           "cannot be converted to float32 without overflow"}};
      for (const auto& [dtype, lo, hi, what, message] : bounds) {
        errors.push_back({{{Arg::Tensor(MakeTensor({3}, dtype, rng)), lo, hi}, what},
                          TSR_INVALID_ARGUMENT,
                          "a bound that overflows the result dtype",
                          message});
      }
      return errors;
    };
    db.push_back(std::move(op));
  }
  {
    // clamp with tensor bounds that broadcast; NaN in self or in a bound gives NaN.
    OpInfo op;
    op.name = "clamp.Tensor";
    op.out = "clamp.Tensor_out";
    op.inplace = "clamp_.Tensor";
    op.dtypes = kNumericMask;
    op.elementwise = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      MakeOptions low, high;
      low.low = -6, low.high = 1;
      high.low = 2, high.high = 9;
      if (dtype == TSR_DTYPE_UINT8) low.low = 0;
      std::vector<Sample> out;
      for (const auto& shape : std::vector<std::vector<int64_t>>{{5}, {7, 11}, {}, {0}}) {
        out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)),
                        Arg::Tensor(MakeTensor(shape, dtype, rng, low)),
                        Arg::Tensor(MakeTensor(shape, dtype, rng, high))},
                       ShapeString(shape) + " in [lo, hi]"});
      }
      out.push_back({{Arg::Tensor(MakeTensor({4, 6}, dtype, rng)),
                      Arg::Tensor(MakeTensor({6}, dtype, rng, low)), Arg::None()},
                     "[4, 6] min [6] only"});
      out.push_back({{Arg::Tensor(MakeTensor({4, 6}, dtype, rng)), Arg::None(),
                      Arg::Tensor(MakeTensor({4, 1}, dtype, rng, low))},
                     "[4, 6] max [4, 1] only"});
      if (IsFloating(dtype)) {
        const HostTensor x = ExtremeTensor(dtype);
        out.push_back({{Arg::Tensor(x), Arg::Tensor(Full(x.shape, dtype, -1)),
                        Arg::Tensor(ExtremeTensor(dtype))},
                       "extremes, NaN bounds"});
      }
      return out;
    };
    op.reference = [](const Sample& s) {
      std::vector<const Arg*> ops{&s.args[0]};
      const bool has_lo = s.args[1].kind != Arg::Kind::kNone;
      const bool has_hi = s.args[2].kind != Arg::Kind::kNone;
      if (has_lo) ops.push_back(&s.args[1]);
      if (has_hi) ops.push_back(&s.args[2]);
      return std::vector<HostTensor>{
          Elementwise(ops, ResultDtype(ops), [=](const double* x) -> double {
            const double v = x[0];
            const double lo = has_lo ? x[1] : -INFINITY;
            const double hi = has_hi ? x[has_lo ? 2 : 1] : INFINITY;
            if (std::isnan(v) || std::isnan(lo) || std::isnan(hi)) return NAN;
            return std::min(std::max(v, lo), hi);
          })};
    };
    db.push_back(std::move(op));
  }
  for (bool is_div : {false, true}) {
    OpInfo op;
    op.name = is_div ? "addcdiv" : "addcmul";
    op.out = op.name + ".out";
    op.inplace = op.name + "_";
    op.dtypes = is_div ? kFloatingMask : kNumericMask;
    op.elementwise = true;
    op.tolerance_scale = 4;  // two roundings in the plugin's dtype where the reference has one
    op.samples = [is_div](tsr_dtype dtype, Rng& rng) {
      MakeOptions divisor;
      divisor.exclude_zero = is_div;
      const Arg value = IsFloating(dtype) ? Arg::ScalarDouble(0.5) : Arg::ScalarInt(2);
      std::vector<Sample> out;
      for (const auto& shape : std::vector<std::vector<int64_t>>{{5}, {7, 11}, {}, {0}}) {
        out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)),
                        Arg::Tensor(MakeTensor(shape, dtype, rng)),
                        Arg::Tensor(MakeTensor(shape, dtype, rng, divisor)), value},
                       ShapeString(shape)});
      }
      return out;
    };
    op.reference = [is_div](const Sample& s) {
      const double v = s.args[3].number;
      return std::vector<HostTensor>{Elementwise(
          {&s.args[0], &s.args[1], &s.args[2]}, ResultDtype({&s.args[0], &s.args[1], &s.args[2]}),
          [=](const double* x) { return x[0] + v * (is_div ? x[1] / x[2] : x[1] * x[2]); })};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.name = "lerp.Scalar";
    op.out = "lerp.Scalar_out";
    op.inplace = "lerp_.Scalar";
    op.dtypes = kFloatingMask;
    op.elementwise = true;
    op.tolerance_scale = 4;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> out;
      for (double w : {0.25, 0.75}) {
        for (const auto& shape : std::vector<std::vector<int64_t>>{{5}, {7, 11}, {}}) {
          out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)),
                          Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::ScalarDouble(w)},
                         ShapeString(shape) + " weight " + std::to_string(w)});
        }
      }
      return out;
    };
    op.reference = [](const Sample& s) {
      const double w = s.args[2].number;
      return std::vector<HostTensor>{
          Elementwise({&s.args[0], &s.args[1]}, s.args[0].tensor.dtype,
                      [w](const double* x) { return x[0] + w * (x[1] - x[0]); })};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          {{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
             Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT64, rng)), Arg::ScalarDouble(0.5)},
            "float32 to float64"},
           TSR_INVALID_ARGUMENT,
           "end of another dtype (lerp does not promote)",
           "expected dtype float32 for `end` but got dtype float64"}};
    };
    db.push_back(std::move(op));
  }
  {
    // lerp with a weight tensor that broadcasts, weights in [0, 1] and beyond.
    OpInfo op;
    op.name = "lerp.Tensor";
    op.out = "lerp.Tensor_out";
    op.inplace = "lerp_.Tensor";
    op.dtypes = kFloatingMask;
    op.elementwise = true;
    op.tolerance_scale = 4;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      MakeOptions weight;
      weight.low = -0.5, weight.high = 1.5;
      std::vector<Sample> out;
      for (const auto& [shape, wshape] :
           std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
               {{5}, {5}}, {{7, 11}, {11}}, {{7, 11}, {7, 1}}, {{}, {}}, {{0}, {}}}) {
        out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)),
                        Arg::Tensor(MakeTensor(shape, dtype, rng)),
                        Arg::Tensor(MakeTensor(wshape, dtype, rng, weight))},
                       ShapeString(shape) + " weight " + ShapeString(wshape)});
      }
      return out;
    };
    op.reference = [](const Sample& s) {
      const std::vector<const Arg*> ops{&s.args[0], &s.args[1], &s.args[2]};
      return std::vector<HostTensor>{Elementwise(ops, s.args[0].tensor.dtype, [](const double* x) {
        return x[0] + x[2] * (x[1] - x[0]);
      })};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{{{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                                        Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                                        Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT64, rng))},
                                       "float64 weight"},
                                      TSR_INVALID_ARGUMENT,
                                      "weight of another dtype (lerp does not promote)",
                                      "expected dtype float32 for `weight` but got dtype float64"}};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.name = "masked_fill.Scalar";
    op.out = "masked_fill.Scalar_out";
    op.inplace = "masked_fill_.Scalar";
    op.dtypes = kAllMask;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      const Arg value = dtype == TSR_DTYPE_BOOL ? Arg::ScalarBool(true)
                        : IsFloating(dtype)     ? Arg::ScalarDouble(2.5)
                                                : Arg::ScalarInt(5);
      std::vector<Sample> out;
      for (const auto& [shape, mask] :
           std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
               {{5}, {5}},
               {{7, 11}, {11}},
               {{}, {}},
               {{0, 2}, {2}},
               // The out-of-place form expands self to the mask's shape (PyTorch's
               // masked_fill); the in-place form cannot (its variants case is skipped).
               {{5}, {5, 5}},
               {{1, 3}, {4, 1}},
               {{}, {2, 3}}}) {
        out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)),
                        Arg::Tensor(MakeTensor(mask, TSR_DTYPE_BOOL, rng)), value},
                       ShapeString(shape) + " mask " + ShapeString(mask)});
      }
      return out;
    };
    op.reference = [](const Sample& s) {
      const double v = s.args[2].number;
      return std::vector<HostTensor>{
          Elementwise({&s.args[0], &s.args[1]}, s.args[0].tensor.dtype,
                      [v](const double* x) { return x[1] != 0 ? v : x[0]; })};
    };
    db.push_back(std::move(op));
  }
  {
    // masked_fill.Tensor: the value is a 0-dim tensor (of self's dtype, or another one,
    // converted as Tensor.item() then a Scalar would be).
    OpInfo op;
    op.name = "masked_fill.Tensor";
    op.out = "masked_fill.Tensor_out";
    op.inplace = "masked_fill_.Tensor";
    op.dtypes = kAllMask;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> out;
      for (const auto& [shape, mask] :
           std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
               {{5}, {5}}, {{7, 11}, {11}}, {{}, {}}, {{0, 2}, {2}}, {{5}, {5, 5}}}) {
        out.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)),
                        Arg::Tensor(MakeTensor(mask, TSR_DTYPE_BOOL, rng)),
                        Arg::Tensor(MakeTensor({}, dtype, rng))},
                       ShapeString(shape) + " mask " + ShapeString(mask)});
      }
      if (dtype != TSR_DTYPE_BOOL && dtype != TSR_DTYPE_UINT8) {
        out.push_back({{Arg::Tensor(MakeTensor({4, 3}, dtype, rng)),
                        Arg::Tensor(MakeTensor({4, 3}, TSR_DTYPE_BOOL, rng)),
                        Arg::Tensor(Full({}, TSR_DTYPE_INT64, -3))},
                       "[4, 3], int64 value"});
      }
      return out;
    };
    op.reference = [](const Sample& s) {
      const double v = RoundTo(s.args[0].tensor.dtype, s.args[2].tensor.values[0]);
      return std::vector<HostTensor>{
          Elementwise({&s.args[0], &s.args[1]}, s.args[0].tensor.dtype,
                      [v](const double* x) { return x[1] != 0 ? v : x[0]; })};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{{{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                                        Arg::Tensor(MakeTensor({3}, TSR_DTYPE_BOOL, rng)),
                                        Arg::Tensor(MakeTensor({1}, TSR_DTYPE_FLOAT32, rng))},
                                       "1-D value"},
                                      TSR_INVALID_ARGUMENT,
                                      "a value tensor that is not 0-dim",
                                      "only supports a 0-dimensional value tensor"},
                                     {{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                                        Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                                        Arg::Tensor(MakeTensor({}, TSR_DTYPE_FLOAT32, rng))},
                                       "float32 mask"},
                                      TSR_INVALID_ARGUMENT,
                                      "a mask that is not bool",
                                      "expected argument 'mask' to be bool"},
                                     {{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT8, rng)),
                                        Arg::Tensor(Full({3}, TSR_DTYPE_BOOL, 0)),
                                        Arg::Tensor(Full({}, TSR_DTYPE_FLOAT32, 200))},
                                       "int8 self, a mask selecting nothing, 200"},
                                      TSR_INVALID_ARGUMENT,
                                      "a value that overflows self's dtype",
                                      "cannot be converted to int8 without overflow"}};
    };
    db.push_back(std::move(op));
  }
  {
    // round.decimals: x * 10^d rounded half to even, / 10^d (d < 0: x / 10^-d rounded,
    // * 10^-d), in float for float16, bfloat16 and float32 as PyTorch's kernel computes.
    // Floating dtypes only, whatever d (PyTorch refuses integers even for d = 0).
    OpInfo op;
    op.name = "round.decimals";
    op.out = "round.decimals_out";
    op.inplace = "round_.decimals";
    op.dtypes = kFloatingMask;
    op.elementwise = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> out;
      MakeOptions wide;
      wide.low = -500;
      wide.high = 500;
      for (int64_t d : {2, -1, 0, 3}) {
        out.push_back({{Arg::Tensor(MakeTensor({7, 5}, dtype, rng, wide)), Arg::Int(d)},
                       "[7, 5] decimals " + std::to_string(d)});
      }
      out.push_back({{Arg::Tensor(ExtremeTensor(dtype)), Arg::Int(1)}, "extremes decimals 1"});
      // 10^|d| overflows to inf: every element is NaN, as in PyTorch (x / inf * inf, x * inf
      // / inf); INT64_MIN has no int64 negation.
      for (int64_t d : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                        int64_t{-400}}) {
        out.push_back({{Arg::Tensor(MakeTensor({4}, dtype, rng)), Arg::Int(d)},
                       "decimals " + std::to_string(d)});
      }
      out.push_back({{Arg::Tensor(MakeTensor({}, dtype, rng)), Arg::Int(-2)}, "0-dim"});
      out.push_back({{Arg::Tensor(MakeTensor({0, 3}, dtype, rng)), Arg::Int(1)}, "empty"});
      return out;
    };
    op.reference = [](const Sample& s) {
      const int64_t d = s.args[1].integer;
      const double p = std::pow(10.0, std::fabs(static_cast<double>(d)));
      const bool in_float = s.args[0].tensor.dtype != TSR_DTYPE_FLOAT64;
      auto round_in = [d](auto x, auto p) {
        if (d == 0) return std::nearbyint(x);
        return d < 0 ? std::nearbyint(x / p) * p : std::nearbyint(x * p) / p;
      };
      return std::vector<HostTensor>{
          Elementwise({&s.args[0]}, s.args[0].tensor.dtype, [&](const double* x) {
            return in_float ? static_cast<double>(
                                  round_in(static_cast<float>(x[0]), static_cast<float>(p)))
                            : round_in(x[0], p);
          })};
    };
    db.push_back(std::move(op));
  }
  AddSpecialOps(db);
  AddBinaryMathOps(db);
}

}  // namespace conformance
}  // namespace tessera
