// Activations and their backward ops (op set 1.2). References are the functions and their
// derivatives written out in double, from the math, not from any kernel: a backward op's
// reference is the analytic derivative of its forward's reference times the incoming gradient.
// Samples follow PyTorch's OpInfo entries for the ops (common_methods_invocations.py:
// nn.functional.hardtanh, leaky_relu, elu, celu, selu, hardswish, hardsigmoid, softplus, mish,
// threshold, hardshrink, softshrink): the default arguments and a non-default set, plus the
// points where a piecewise function changes its piece.
#include <cmath>
#include <functional>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

// The Scalar arguments' values, in schema order.
using Params = std::vector<double>;

// A set of Scalar (and other) arguments after the operands, as a sample passes them.
struct ParamSet {
  std::vector<Arg> args;
  std::string desc;
  // Where the function changes its piece for these arguments (softplus's threshold / beta,
  // the shrinks' lambd); the spec's points serve the first set when it names none.
  std::vector<double> points = {};
};

// The boundary points of parameter set i.
const std::vector<double>& PointsOf(const std::vector<ParamSet>& params, size_t i,
                                    const std::vector<double>& first) {
  return i == 0 && params[0].points.empty() ? first : params[i].points;
}

// The numbers of a ParamSet's Scalar arguments, truncated for an integral dtype (ATen converts
// Scalars to the dtype it computes in).
Params NumbersOf(const std::vector<Arg>& args, size_t from, tsr_dtype dtype) {
  Params p;
  for (size_t i = from; i < args.size(); ++i) {
    if (args[i].kind != Arg::Kind::kScalar) continue;
    p.push_back(IsFloating(dtype) ? args[i].number : std::trunc(args[i].number));
  }
  return p;
}

Arg S(double v) { return Arg::ScalarDouble(v); }

HostTensor Points(tsr_dtype dtype, const std::vector<double>& values) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = {static_cast<int64_t>(values.size())};
  for (double v : values) t.values.push_back(RoundTo(dtype, v));
  return t;
}

struct ForwardSpec {
  std::string name;
  std::string out;      // "" for none
  std::string inplace;  // "" for none
  DtypeMask dtypes;
  std::vector<ParamSet> params;  // [0] is the defaults, passed explicitly
  std::vector<double> points;    // where the function changes its piece
  std::function<double(double x, const Params& p)> f;
  std::function<std::vector<ErrorInput>(Rng&)> errors = nullptr;
  double tolerance_scale = 1;
};

void AddForward(std::vector<OpInfo>& db, const ForwardSpec& spec) {
  OpInfo op;
  op.name = spec.name;
  op.out = spec.out;
  op.inplace = spec.inplace;
  op.dtypes = spec.dtypes;
  op.elementwise = true;
  op.tolerance_scale = spec.tolerance_scale;
  const std::vector<ParamSet> params = spec.params;
  const std::vector<double> points = spec.points;
  op.samples = [params, points](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> out;
    auto with = [&](HostTensor x, const ParamSet& p, const std::string& what) {
      Sample s{{Arg::Tensor(std::move(x))}, what};
      for (const Arg& a : p.args) s.args.push_back(a);
      if (!p.desc.empty()) s.desc += " " + p.desc;
      out.push_back(std::move(s));
    };
    for (const auto& shape : UnaryShapes()) {
      with(MakeTensor(shape, dtype, rng), params[0], ShapeString(shape));
    }
    for (size_t i = 1; i < params.size(); ++i) {
      with(MakeTensor({7, 11}, dtype, rng), params[i], "[7, 11]");
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const std::vector<double>& at = PointsOf(params, i, points);
      if (!at.empty()) with(Points(dtype, at), params[i], "piece boundaries");
    }
    if (IsFloating(dtype)) with(ExtremeTensor(dtype), params[0], "extremes");
    return out;
  };
  const auto f = spec.f;
  op.reference = [f](const Sample& s) {
    const tsr_dtype dtype = s.args[0].tensor.dtype;
    const Params p = NumbersOf(s.args, 1, dtype);
    return std::vector<HostTensor>{
        Elementwise({&s.args[0]}, dtype, [&](const double* x) { return f(x[0], p); })};
  };
  op.errors = spec.errors;
  db.push_back(std::move(op));
}

struct BackwardSpec {
  std::string name;
  std::string out;
  DtypeMask dtypes;
  std::vector<ParamSet> params;
  std::vector<double> points;
  // f: the gradient for incoming gradient g at x (the forward's input, or its result where
  // the op takes that).
  std::function<double(double g, double x, const Params& p)> f;
  std::function<std::vector<ErrorInput>(Rng&)> errors = nullptr;
  // Where x goes: after the parameters (elu_backward's self_or_result) instead of second.
  bool x_last = false;
  double tolerance_scale = 1;
  // The result's dtype is x's (mish_backward, as ATen allocates it), not the promoted one.
  bool result_of_x = false;
};

std::vector<Arg> BackwardArgs(Arg g, Arg x, const ParamSet& p, bool x_last) {
  std::vector<Arg> args{std::move(g)};
  if (!x_last) args.push_back(x);
  for (const Arg& a : p.args) args.push_back(a);
  if (x_last) args.push_back(std::move(x));
  return args;
}

void AddBackward(std::vector<OpInfo>& db, const BackwardSpec& spec) {
  OpInfo op;
  op.name = spec.name;
  op.out = spec.out;
  op.dtypes = spec.dtypes;
  op.elementwise = true;
  op.tolerance_scale = spec.tolerance_scale;
  const std::vector<ParamSet> params = spec.params;
  const std::vector<double> points = spec.points;
  const bool x_last = spec.x_last;
  const bool result_of_x = spec.result_of_x;
  op.samples = [params, points, x_last](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> out;
    auto with = [&](HostTensor g, HostTensor x, const ParamSet& p, std::string what) {
      if (!p.desc.empty()) what += " " + p.desc;
      out.push_back(
          {BackwardArgs(Arg::Tensor(std::move(g)), Arg::Tensor(std::move(x)), p, x_last), what});
    };
    for (const auto& shape : UnaryShapes()) {
      with(MakeTensor(shape, dtype, rng), MakeTensor(shape, dtype, rng), params[0],
           ShapeString(shape));
    }
    // The gradient broadcast against x, as ATen's TensorIterator allows.
    with(MakeTensor({7, 1}, dtype, rng), MakeTensor({7, 11}, dtype, rng), params[0],
         "grad [7, 1] with x [7, 11]");
    for (size_t i = 1; i < params.size(); ++i) {
      with(MakeTensor({7, 11}, dtype, rng), MakeTensor({7, 11}, dtype, rng), params[i], "[7, 11]");
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const std::vector<double>& at = PointsOf(params, i, points);
      if (at.empty()) continue;
      HostTensor x = Points(dtype, at);
      with(MakeTensor(x.shape, dtype, rng), x, params[i], "piece boundaries");
    }
    if (IsFloating(dtype)) {
      // NaN, the infinities and signed zeros at x (not ExtremeTensor's huge finite values,
      // where float and double intermediates overflow apart: no reference could be both).
      HostTensor x = Points(dtype, {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1, -1.5});
      with(MakeTensor(x.shape, dtype, rng), x, params[0], "nan, inf, -inf, 0, -0 at x");
    }
    if (dtype == TSR_DTYPE_FLOAT32) {
      // A float64 gradient for float32 x: the two promote (mish_backward: x's dtype).
      with(MakeTensor({7}, TSR_DTYPE_FLOAT64, rng), MakeTensor({7}, dtype, rng), params[0],
           "float64 grad with float32 x");
    }
    return out;
  };
  const auto f = spec.f;
  op.reference = [f, x_last, result_of_x](const Sample& s) {
    const Arg& g = s.args[0];
    const size_t xi = x_last ? s.args.size() - 1 : 1;
    const Arg& x = s.args[xi];
    const tsr_dtype dtype = result_of_x ? x.tensor.dtype : ResultDtype({&g, &x});
    const Params p = NumbersOf(s.args, x_last ? 1 : 2, dtype);
    return std::vector<HostTensor>{
        Elementwise({&g, &x}, dtype, [&](const double* v) { return f(v[0], v[1], p); })};
  };
  op.errors = [base = spec.errors, params, x_last](Rng& rng) {
    std::vector<ErrorInput> errors = base ? base(rng) : std::vector<ErrorInput>{};
    errors.push_back(Saying(
        {{BackwardArgs(Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_FLOAT32, rng)),
                       Arg::Tensor(MakeTensor({4}, TSR_DTYPE_FLOAT32, rng)), params[0], x_last),
          "grad [2, 3] with x [4]"},
         TSR_INVALID_ARGUMENT,
         "shapes that do not broadcast"},
        "the size of tensor a (3) must match the size of tensor b (4) at non-singleton dim"));
    return errors;
  };
  db.push_back(std::move(op));
}

// One error input: `args` must be refused with INVALID_ARGUMENT.
ErrorInput Refused(std::vector<Arg> args, std::string desc, std::string what) {
  return {{std::move(args), std::move(desc)}, TSR_INVALID_ARGUMENT, std::move(what)};
}
Arg F32(Rng& rng, std::vector<int64_t> shape = {3}) {
  return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
}

// ---- the functions, in double ----

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double Relu6(double x) { return std::isnan(x) ? x : std::min(std::max(x, 0.0), 6.0); }
double Softplus(double x, double beta, double threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
}
double Hardtanh(double x, double lo, double hi) {
  if (std::isnan(x)) return x;
  return std::min(std::max(x, lo), hi);
}
double Elu(double x, double alpha, double scale, double input_scale) {
  return x > 0 ? scale * x : alpha * scale * std::expm1(x * input_scale);
}
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;  // sqrt(2 / pi)

// d/dx of gelu, exact: Phi(x) + x phi(x).
double GeluGrad(double x) {
  const double cdf = 0.5 * (1 + std::erf(x / std::sqrt(2.0)));
  const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
  return cdf + x * pdf;
}
// d/dx of 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
double GeluTanhGrad(double x) {
  const double u = kSqrt2OverPi * (x + 0.044715 * x * x * x);
  const double du = kSqrt2OverPi * (1 + 3 * 0.044715 * x * x);
  const double t = std::tanh(u);
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du;
}
// d/dx of x tanh(softplus(x)).
double MishGrad(double x) {
  const double sp = std::log1p(std::exp(x));
  const double t = std::tanh(sp);
  return t + x * (1 - t * t) * Sigmoid(x);
}

void AddForwardOps(std::vector<OpInfo>& db) {
  // hardtanh: clamp to [min_val, max_val]; integers too (limits truncated), not bool, and not
  // uint8 (PyTorch's OpInfo leaves it out: the default limits are refused for it).
  AddForward(db, {"hardtanh",
                  "hardtanh.out",
                  "hardtanh_",
                  kNumericMask & ~Bit(TSR_DTYPE_UINT8),
                  {{{S(-1), S(1)}, "", {-1, 1, -0.5, 0.5}},
                   {{S(-2.5), S(4.5)}, "in [-2.5, 4.5]", {-2.5, 4.5, -3, 5}},
                   // On integers ATen truncates the limits first: [-1, 100] for int8 too.
                   {{S(-1.5), S(100.5)}, "in [-1.5, 100.5]"}},
                  {},
                  [](double x, const Params& p) { return Hardtanh(x, p[0], p[1]); },
                  [](Rng& rng) {
                    return std::vector<ErrorInput>{
                        Saying(Refused({Arg::Tensor(MakeTensor({3}, TSR_DTYPE_UINT8, rng)),
                                        Arg::ScalarInt(-1), Arg::ScalarInt(1)},
                                       "uint8 in [-1, 1]",
                                       "an unsigned self with a negative limit"),
                               "cannot do hardtanh on an unsigned type with negative limits"),
                        Saying(Refused({Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT8, rng)),
                                        Arg::ScalarInt(-1), Arg::ScalarInt(1000)},
                                       "int8 in [-1, 1000]", "a limit that overflows int8"),
                               "argument 'max_val' (1000) cannot be converted to int8")};
                  }});
  AddForward(db, {"leaky_relu",
                  "leaky_relu.out",
                  "leaky_relu_",
                  kFloatingMask,
                  {{{S(0.01)}, ""}, {{S(0.2)}, "slope 0.2"}, {{S(-1.5)}, "slope -1.5"}},
                  {0},
                  [](double x, const Params& p) { return x > 0 ? x : x * p[0]; },
                  [](Rng& rng) {
                    return std::vector<ErrorInput>{
                        Saying(Refused({F32(rng), S(1e40)}, "slope 1e40",
                                       "a slope that overflows float32"),
                               "argument 'negative_slope' (1e+40) cannot be converted to float32")};
                  }});
  AddForward(db, {"elu",
                  "elu.out",
                  "elu_",
                  kFloatingMask,
                  {{{S(1), S(1), S(1)}, ""},
                   {{S(0.5), S(2), S(1.5)}, "alpha 0.5 scale 2 input_scale 1.5"}},
                  {0},
                  [](double x, const Params& p) { return Elu(x, p[0], p[1], p[2]); }});
  AddForward(db, {"celu",
                  "celu.out",
                  "celu_",
                  kFloatingMask,
                  {{{S(1)}, ""}, {{S(2.5)}, "alpha 2.5"}},
                  {0},
                  [](double x, const Params& p) { return x > 0 ? x : p[0] * std::expm1(x / p[0]); },
                  [](Rng& rng) {
                    return std::vector<ErrorInput>{
                        Saying(Refused({F32(rng), S(0)}, "alpha 0", "alpha 0 (a division by zero)"),
                               "alpha cannot be 0 for CELU")};
                  }});
  AddForward(db, {"selu", "", "selu_", kFloatingMask, {{{}, ""}}, {0}, [](double x, const Params&) {
                    return Elu(x, kSeluAlpha, kSeluScale, 1);
                  }});
  AddForward(db, {"hardswish",
                  "hardswish.out",
                  "hardswish_",
                  kFloatingMask,
                  {{{}, ""}},
                  {-3, 3, 0},
                  [](double x, const Params&) { return x * Relu6(x + 3) / 6; }});
  AddForward(db, {"hardsigmoid",
                  "hardsigmoid.out",
                  "hardsigmoid_",
                  kFloatingMask,
                  {{{}, ""}},
                  {-3, 3, 0},
                  [](double x, const Params&) { return Relu6(x + 3) / 6; }});
  AddForward(db, {"softplus",
                  "softplus.out",
                  "",
                  kFloatingMask,
                  {{{S(1), S(20)}, "", {20, 0}}, {{S(2), S(5)}, "beta 2 threshold 5", {2.5, 0}}},
                  {},
                  [](double x, const Params& p) { return Softplus(x, p[0], p[1]); }});
  AddForward(
      db,
      {"mish", "mish.out", "mish_", kFloatingMask, {{{}, ""}}, {0}, [](double x, const Params&) {
         return x * std::tanh(std::log1p(std::exp(x)));
       }});
  AddForward(
      db,
      {"threshold",
       "threshold.out",
       "threshold_",
       kNumericMask,
       {{{S(1), S(7)}, "threshold 1 value 7"}, {{S(4.5), S(0)}, "threshold 4.5 value 0"}},
       {1, 0, 2},
       [](double x, const Params& p) { return x <= p[0] ? p[1] : x; },
       [](Rng& rng) {
         return std::vector<ErrorInput>{
             Saying(Refused({Arg::Tensor(MakeTensor({3}, TSR_DTYPE_UINT8, rng)), Arg::ScalarInt(2),
                             Arg::ScalarInt(300)},
                            "uint8 value 300", "a value that overflows uint8"),
                    "argument 'value' (300) cannot be converted to uint8")};
       }});
  AddForward(db, {"hardshrink",
                  "hardshrink.out",
                  "",
                  kFloatingMask,
                  {{{S(0.5)}, "", {-0.5, 0.5}}, {{S(2)}, "lambd 2", {-2, 2}}},
                  {},
                  [](double x, const Params& p) { return x >= -p[0] && x <= p[0] ? 0 : x; }});
  AddForward(db, {"softshrink",
                  "softshrink.out",
                  "",
                  kFloatingMask,
                  {{{S(0.5)}, "", {-0.5, 0.5}}, {{S(2)}, "lambd 2", {-2, 2}}},
                  {},
                  [](double x, const Params& p) {
                    return x > p[0] ? x - p[0] : x < -p[0] ? x + p[0] : x * 0;
                  },
                  [](Rng& rng) {
                    return std::vector<ErrorInput>{
                        Saying(Refused({F32(rng), S(-0.5)}, "lambd -0.5", "a negative lambd"),
                               "lambda must be greater or equal to 0, but found to be -0.5")};
                  }});
}

void AddBackwardOps(std::vector<OpInfo>& db) {
  AddBackward(db, {"threshold_backward",
                   "threshold_backward.grad_input",
                   kNumericMask,
                   {{{S(0)}, "threshold 0", {0, -1, 1}}, {{S(1.5)}, "threshold 1.5", {1.5, 1, 2}}},
                   {},
                   [](double g, double x, const Params& p) { return x <= p[0] ? 0 : g; }});
  {
    BackwardSpec gelu{"gelu_backward",
                      "gelu_backward.grad_input",
                      kFloatingMask,
                      {{{Arg::String("none")}, "none"}, {{Arg::String("tanh")}, "tanh"}},
                      {},
                      nullptr};
    AddBackward(db, gelu);
    // The approximation is a string, not a number: the reference reads it from the sample.
    OpInfo& op = db.back();
    op.reference = [](const Sample& s) {
      const bool tanh_form = s.args[2].string == "tanh";
      return std::vector<HostTensor>{
          Elementwise({&s.args[0], &s.args[1]}, ResultDtype({&s.args[0], &s.args[1]}),
                      [tanh_form](const double* v) {
                        return v[0] * (tanh_form ? GeluTanhGrad(v[1]) : GeluGrad(v[1]));
                      })};
    };
    op.errors = [base = op.errors](Rng& rng) {
      std::vector<ErrorInput> errors = base(rng);
      errors.push_back(Saying(Refused({F32(rng), F32(rng), Arg::String("exact")}, "'exact'",
                                      "an unknown approximation"),
                              "expected approximate to be 'none' or 'tanh', got 'exact'"));
      return errors;
    };
  }
  AddBackward(db, {"silu_backward",
                   "silu_backward.grad_input",
                   kFloatingMask,
                   {{{}, ""}},
                   {},
                   [](double g, double x, const Params&) {
                     const double s = Sigmoid(x);
                     return g * s * (1 + x * (1 - s));
                   }});
  // The forward's result y: d sigmoid = y (1 - y), d tanh = 1 - y^2.
  AddBackward(db, {"sigmoid_backward",
                   "sigmoid_backward.grad_input",
                   kFloatingMask,
                   {{{}, ""}},
                   {},
                   [](double g, double y, const Params&) { return g * y * (1 - y); }});
  AddBackward(db, {"tanh_backward",
                   "tanh_backward.grad_input",
                   kFloatingMask,
                   {{{}, ""}},
                   {},
                   [](double g, double y, const Params&) { return g * (1 - y * y); }});
  AddBackward(db,
              {"hardtanh_backward",
               "hardtanh_backward.grad_input",
               kFloatingMask,
               {{{S(-1), S(1)}, "", {-1, 1}}, {{S(-2.5), S(4.5)}, "in [-2.5, 4.5]", {-2.5, 4.5}}},
               {},
               [](double g, double x, const Params& p) { return x <= p[0] || x >= p[1] ? 0 : g; }});
  AddBackward(db, {"leaky_relu_backward",
                   "leaky_relu_backward.grad_input",
                   kFloatingMask,
                   {{{S(0.01), Arg::Bool(false)}, ""},
                    {{S(-1.5), Arg::Bool(false)}, "slope -1.5"},
                    {{S(0.2), Arg::Bool(true)}, "slope 0.2 of the result"}},
                   {0},
                   [](double g, double x, const Params& p) { return x > 0 ? g : g * p[0]; },
                   [](Rng& rng) {
                     return std::vector<ErrorInput>{Saying(
                         Refused({F32(rng), F32(rng), S(-0.5), Arg::Bool(true)},
                                 "slope -0.5 of the result",
                                 "a negative slope with self_is_result"),
                         "leaky_relu backward (self_is_result=True) is not supported with a "
                         "negative slope")};
                   }});
  {
    // elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result).
    BackwardSpec elu{"elu_backward",
                     "elu_backward.grad_input",
                     kFloatingMask,
                     {{{S(1), S(1), S(1), Arg::Bool(false)}, ""},
                      {{S(0.5), S(2), S(1.5), Arg::Bool(false)}, "alpha 0.5 scale 2 input 1.5"},
                      {{S(0.5), S(2), S(1.5), Arg::Bool(true)}, "of the result"}},
                     {0},
                     nullptr,
                     [](Rng& rng) {
                       return std::vector<ErrorInput>{
                           Saying(Refused({F32(rng), S(-1), S(1), S(1), Arg::Bool(true),
                                           F32(rng)},
                                          "alpha -1 of the result",
                                          "a negative alpha with is_result"),
                                  "elu backward (is_result=True) is not supported with a "
                                  "negative alpha")};
                     },
                     /*x_last=*/true};
    AddBackward(db, elu);
    db.back().reference = [](const Sample& s) {
      const Arg& g = s.args[0];
      const Arg& v = s.args[5];
      const double alpha = s.args[1].number, scale = s.args[2].number,
                   input_scale = s.args[3].number;
      const bool is_result = s.args[4].boolean;
      return std::vector<HostTensor>{
          Elementwise({&g, &v}, ResultDtype({&g, &v}), [&](const double* a) {
            const double gv = a[0], x = a[1];
            if (!(x <= 0)) return gv * scale;  // NaN too, as ATen's x <= 0 test has it
            // From the result y = alpha scale (exp(x input_scale) - 1):
            // alpha scale input_scale exp(x input_scale) = input_scale (y + alpha scale).
            return is_result ? gv * input_scale * (x + alpha * scale)
                             : gv * alpha * scale * input_scale * std::exp(x * input_scale);
          })};
    };
  }
  AddBackward(db, {"hardswish_backward",
                   "hardswish_backward.out",
                   kFloatingMask,
                   {{{}, ""}},
                   {-3, 3, 0},
                   [](double g, double x, const Params&) {
                     // d/dx x relu6(x + 3) / 6 = (2x + 3) / 6 inside; ATen's piece ends are
                     // (-3 excluded, 3 included); NaN falls through to g, as there.
                     if (x < -3) return 0.0;
                     if (x <= 3) return g * (2 * x + 3) / 6;
                     return g;
                   }});
  AddBackward(db, {"hardsigmoid_backward",
                   "hardsigmoid_backward.grad_input",
                   kFloatingMask,
                   {{{}, ""}},
                   {-3, 3, 0},
                   [](double g, double x, const Params&) { return x > -3 && x < 3 ? g / 6 : 0; }});
  AddBackward(db, {"softplus_backward",
                   "softplus_backward.grad_input",
                   kFloatingMask,
                   {{{S(1), S(20)}, "", {20, 0}}, {{S(2), S(5)}, "beta 2 threshold 5", {2.5, 0}}},
                   {},
                   [](double g, double x, const Params& p) {
                     return x * p[0] > p[1] ? g : g * Sigmoid(x * p[0]);
                   }});
  {
    BackwardSpec mish{
        "mish_backward", "",  kFloatingMask,
        {{{}, ""}},      {0}, [](double g, double x, const Params&) { return g * MishGrad(x); }};
    mish.result_of_x = true;  // as ATen allocates it
    AddBackward(db, mish);
  }
  for (const char* name : {"hardshrink_backward", "softshrink_backward"}) {
    AddBackward(
        db, {name,
             std::string(name) + ".grad_input",
             kFloatingMask,
             {{{S(0.5)}, "", {-0.5, 0.5}}, {{S(2)}, "lambd 2", {-2, 2}}},
             {},
             [](double g, double x, const Params& p) { return x >= -p[0] && x <= p[0] ? 0 : g; }});
  }
}

}  // namespace

void AddActivationOps(std::vector<OpInfo>& db) {
  AddForwardOps(db);
  AddBackwardOps(db);
  AddActivationCompositeOps(db);  // op set 1.8: glu, prelu (op_db_activation_composites.cc)
}

}  // namespace conformance
}  // namespace tessera
