// Op set 1.10's loss backward ops and the 2-D negative log-likelihood loss
// (binary_cross_entropy_backward, huber_loss_backward, smooth_l1_loss_backward,
// soft_margin_loss_backward, nll_loss2d_forward, nll_loss2d_backward, nll_loss2d): composites,
// dispatcher/ops/loss_backward_ops.cc.
//
// The references compute each element in double from the formulas of ATen's kernels
// (aten/src/ATen/native/Loss.cpp, LossNLL2d.cpp, the smooth_l1 / huber backward CPU kernels),
// indexing the operands directly, and round once to the result's dtype: the mean's gradient
// divides by self's numel (the 2-D loss's by total_weight), grad_output is 0-dim for mean and
// sum and shaped as the losses for none. Samples cover every reduction, weights, broadcasting
// where ATen's kernel broadcasts, empty inputs, ignore_index present and absent; error inputs
// follow the checks of those files (out-of-range targets are PyTorch's IndexError, OUT_OF_RANGE).
// Each backward op is linked to its forward for the gradient oracle (GradientSpec), as
// derivatives.yaml calls it.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "conformance/gradient_samples.h"
#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

constexpr int64_t S = 5;

using Shape = std::vector<int64_t>;
using Args = std::vector<Arg>;
using Returns = std::vector<HostTensor>;

MakeOptions Range(double low, double high) {
  MakeOptions o;
  o.low = low;
  o.high = high;
  return o;
}

HostTensor Make(Shape shape, tsr_dtype dtype, Rng& rng, const MakeOptions& options = {}) {
  return MakeTensor(std::move(shape), dtype, rng, options);
}

HostTensor F64(Shape shape, Rng& rng, double low = -4, double high = 4) {
  return Make(std::move(shape), TSR_DTYPE_FLOAT64, rng, Range(low, high));
}

int64_t Numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const char* ReductionName(int64_t r) { return r == 0 ? "none" : r == 1 ? "mean" : "sum"; }

// GradShape: grad_output's shape for losses of `shape`: itself for none, 0-dim reduced.
Shape GradShape(const Shape& shape, int64_t reduction) { return reduction == 0 ? shape : Shape{}; }

// Norm: the reduction's factor on each element's gradient (1 / self's numel for the mean).
double Norm(const HostTensor& self, int64_t reduction) {
  return reduction == 1 ? 1.0 / static_cast<double>(self.numel()) : 1.0;
}

std::vector<Arg> TensorArgs(std::initializer_list<HostTensor> ts) {
  std::vector<Arg> args;
  for (const HostTensor& t : ts) args.push_back(Arg::Tensor(t));
  return args;
}

// ---- huber_loss_backward, smooth_l1_loss_backward ----

// ATen's kernels' branches: x <= -k gives -k, else x >= k gives k, else x.
double Saturate(double x, double k) { return x <= -k ? -k : x >= k ? k : x; }

// A pointwise loss's backward case: self's and target's shapes (grad_output as the forward's
// result, or `grad` where given), the reduction, the parameter (delta, beta).
struct PairCase {
  Shape self, target;
  int64_t reduction;
  double param;
  Shape grad = {-1};  // {-1}: the forward's result's shape
};

Shape Broadcast2(const Shape& a, const Shape& b) { return BroadcastShape({a, b}); }

std::vector<PairCase> PairCases(double param, double other) {
  return {{{}, {}, 1, param},
          {{S}, {S}, 0, param},
          {{S}, {S}, 1, other},
          {{S}, {S}, 2, param},
          {{S, S}, {S, S}, 0, other},
          {{S, S}, {S, S}, 1, param},
          {{3, 4, 2}, {3, 4, 2}, 2, param},
          {{0}, {0}, 1, param},
          {{0, 3}, {0, 3}, 0, param},
          {{2, 0}, {2, 0}, 2, param},
          {{7, 3}, {3}, 0, param},
          {{3}, {7, 3}, 0, other},
          {{4, 1}, {1, 3}, 1, param},
          {{4, 3}, {}, 2, param},
          // A 0-dim grad_output for none: broadcast, as ATen's kernel takes it.
          {{4, 3}, {4, 3}, 0, param, {}}};
}

Sample PairSample(const PairCase& c, tsr_dtype dtype, Rng& rng, const std::string& param_name) {
  const Shape result = Broadcast2(c.self, c.target);
  const Shape grad = c.grad == Shape{-1} ? GradShape(result, c.reduction) : c.grad;
  Args args =
      TensorArgs({Make(grad, dtype, rng), Make(c.self, dtype, rng), Make(c.target, dtype, rng)});
  args.push_back(Arg::Int(c.reduction));
  args.push_back(Arg::Double(c.param));
  return Described(std::move(args), std::string(" ") + ReductionName(c.reduction) + " " +
                                        param_name + " " + std::to_string(c.param));
}

// The pointwise backward references: f(x - t, param) * norm * g over the broadcast operands,
// rounded to self's dtype.
HostTensor PairBackward(const Sample& s, const std::function<double(double, double)>& slope) {
  const double norm = Norm(s.args[1].tensor, s.args[3].integer);
  const double param = s.args[4].number;
  return Elementwise({&s.args[0], &s.args[1], &s.args[2]}, s.args[1].tensor.dtype,
                     [&](const double* v) { return slope(v[1] - v[2], param) * norm * v[0]; });
}

// The forward's gradient samples: (self, target, reduction, param), float64.
std::function<std::vector<Sample>(Rng&)> PairForwardSamples(std::vector<double> params) {
  return [params](Rng& rng) {
    std::vector<Sample> samples;
    for (int64_t reduction : {0, 1, 2}) {
      for (double p : params) {
        samples.push_back(Described({Arg::Tensor(F64({3, 4}, rng)), Arg::Tensor(F64({3, 4}, rng)),
                                     Arg::Int(reduction), Arg::Double(p)}));
      }
    }
    return samples;
  };
}

GradientSpec PairSpec(std::string forward, std::vector<double> params, bool with_param) {
  GradientSpec spec;
  spec.forward = std::move(forward);
  if (with_param) {
    spec.samples = PairForwardSamples(std::move(params));
  } else {
    // soft_margin_loss: labels +-1 and real-valued targets.
    spec.samples = [](Rng& rng) {
      std::vector<Sample> samples;
      for (int64_t reduction : {0, 1, 2}) {
        HostTensor labels = F64({3, 4}, rng, -1, 1);
        for (double& v : labels.values) v = v < 0 ? -1 : 1;
        samples.push_back(Described(
            {Arg::Tensor(F64({3, 4}, rng)), Arg::Tensor(labels), Arg::Int(reduction)}, " labels"));
        samples.push_back(Described(
            {Arg::Tensor(F64({7}, rng)), Arg::Tensor(F64({7}, rng, -2, 2)), Arg::Int(reduction)}));
      }
      return samples;
    };
  }
  spec.wrt = {0};
  spec.backward_args = GradThenForwardArgs;
  return spec;
}

Arg F32(Shape shape, Rng& rng, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
  return Arg::Tensor(Make(std::move(shape), dtype, rng));
}

// PairErrors: the error inputs huber_loss_backward and smooth_l1_loss_backward share (`param` is
// delta or beta): int64 operands, self and target or grad_output that do not broadcast, and the
// unknown reduction `reduction`.
std::vector<ErrorInput> PairErrors(Rng& rng, const Arg& param, int64_t reduction) {
  return {Saying(Refused({F32({}, rng, TSR_DTYPE_INT64), F32({5}, rng, TSR_DTYPE_INT64),
                          F32({5}, rng, TSR_DTYPE_INT64), Arg::Int(1), param},
                         TSR_UNIMPLEMENTED, "int64 operands"),
                 "not implemented for dtype int64"),
          // Both broadcast refusals read "shapes [5] and [4]": self against target first, then
          // their shape against grad_output (self and target agree there, so only that check can
          // refuse it).
          Saying(Refused({F32({5}, rng), F32({5}, rng), F32({4}, rng), Arg::Int(0), param},
                         TSR_INVALID_ARGUMENT, "self and target that do not broadcast"),
                 "shapes [5] and [4] do not broadcast"),
          Saying(Refused({F32({4}, rng), F32({5}, rng), F32({5}, rng), Arg::Int(0), param},
                         TSR_INVALID_ARGUMENT, "a grad_output that does not broadcast"),
                 "shapes [5] and [4] do not broadcast"),
          Saying(Refused({F32({}, rng), F32({5}, rng), F32({5}, rng), Arg::Int(reduction), param},
                         TSR_INVALID_ARGUMENT, "an unknown reduction"),
                 "expected reduction to be 0 (none), 1 (mean) or 2 (sum), got " +
                     std::to_string(reduction))};
}

OpInfo HuberLossBackward() {
  OpInfo op;
  op.name = "huber_loss_backward";
  op.out = "huber_loss_backward.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const PairCase& c : PairCases(1.0, 0.5)) s.push_back(PairSample(c, dtype, rng, "delta"));
    // grad_output broadcasts with self and target too (ATen's TensorIterator resizes to all
    // three).
    s.push_back(PairSample({{3}, {3}, 0, 2.0, {4, 3}}, dtype, rng, "delta"));
    // Both branches and the boundaries (x = +-delta gives +-delta).
    s.push_back(Described(
        {Arg::Tensor(Values(dtype, {8}, {1, 2, -1, 3, 0.5, 0.25, 1, 1})),
         Arg::Tensor(Values(dtype, {8}, {0, 1.5, -1.5, 1, -2, 2, -0.5, 3})),
         Arg::Tensor(Values(dtype, {8}, {0, 0, 0, 0, 0, 0, 0, 0})), Arg::Int(0), Arg::Double(1.5)},
        " (both branches, boundaries)"));
    return s;
  };
  op.reference = [](const Sample& s) { return std::vector<HostTensor>{PairBackward(s, Saturate)}; };
  op.errors = [](Rng& rng) {
    const Arg mean = Arg::Int(1), delta = Arg::Double(1);
    std::vector<ErrorInput> errors{
        Saying(Refused({F32({}, rng), F32({5}, rng), F32({5}, rng, TSR_DTYPE_FLOAT64), mean, delta},
                       TSR_INVALID_ARGUMENT,
                       "a float64 target (Found dtype float64 but expected float32)"),
               "Found dtype float64 but expected float32"),
        Saying(Refused({F32({}, rng, TSR_DTYPE_FLOAT64), F32({5}, rng), F32({5}, rng), mean, delta},
                       TSR_INVALID_ARGUMENT, "a float64 grad_output"),
               "Found dtype float64 but expected float32")};
    for (ErrorInput& e : PairErrors(rng, delta, 3)) errors.push_back(std::move(e));
    return errors;
  };
  op.gradient = PairSpec("huber_loss", {1.0, 0.5}, true);
  return op;
}

OpInfo SmoothL1LossBackward() {
  OpInfo op;
  op.name = "smooth_l1_loss_backward";
  op.out = "smooth_l1_loss_backward.grad_input";
  op.dtypes = kFloatingMask;  // current PyTorch's CPU kernel (1.13's had no float16, bfloat16)
  op.tolerance_scale = 4;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const PairCase& c : PairCases(1.0, 2.0)) s.push_back(PairSample(c, dtype, rng, "beta"));
    s.push_back(PairSample({{3}, {3}, 2, 0.5, {4, 3}}, dtype, rng, "beta"));
    // beta 0 (and below): ATen's l1_loss_backward, sign(x - t); the mean and none.
    for (const PairCase& c : std::vector<PairCase>{
             {{S, S}, {S, S}, 1, 0.0}, {{4, 3}, {3}, 0, 0.0}, {{S}, {S}, 2, -1.0}}) {
      s.push_back(PairSample(c, dtype, rng, "beta"));
    }
    s.push_back(Described(
        {Arg::Tensor(Values(dtype, {6}, {1, 1, 1, 1, 2, 1})),
         Arg::Tensor(Values(dtype, {6}, {0, 0.25, 0.5, -0.5, 3, 1})),
         Arg::Tensor(Values(dtype, {6}, {0, 0, 0, 0, 0, 1})), Arg::Int(0), Arg::Double(0.5)},
        " (both branches, boundaries, beta 0.5)"));
    // The three promote (computed in float64) and the result has self's dtype.
    s.push_back(
        Described({Arg::Tensor(Make({}, dtype, rng)), Arg::Tensor(Make({S, S}, dtype, rng)),
                   Arg::Tensor(Make({S, S}, TSR_DTYPE_FLOAT64, rng)), Arg::Int(1), Arg::Double(1)},
                  " (a float64 target: self's dtype)"));
    s.push_back(Described(
        {Arg::Tensor(Make({S}, TSR_DTYPE_FLOAT64, rng)), Arg::Tensor(Make({S}, dtype, rng)),
         Arg::Tensor(Make({S}, dtype, rng)), Arg::Int(0), Arg::Double(1)},
        " (a float64 grad_output: self's dtype)"));
    s.push_back(
        Described({Arg::Tensor(Make({}, dtype, rng)), Arg::Tensor(Make({4}, dtype, rng)),
                   Arg::Tensor(Values(TSR_DTYPE_INT64, {}, {2})), Arg::Int(2), Arg::Double(0.5)},
                  " (an int64 0-dim target)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    if (s.args[4].number > 0) {
      return std::vector<HostTensor>{
          PairBackward(s, [](double x, double beta) { return Saturate(x / beta, 1.0); })};
    }
    return std::vector<HostTensor>{PairBackward(s, [](double x, double) {
      return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    })};
  };
  op.errors = [](Rng& rng) {
    const Arg mean = Arg::Int(1), beta = Arg::Double(1);
    std::vector<ErrorInput> errors{
        Saying(Refused({F32({}, rng), F32({5}, rng, TSR_DTYPE_INT64), F32({5}, rng), mean, beta},
                       TSR_INVALID_ARGUMENT,
                       "an int64 self (result type Float can't be cast to the desired output "
                       "type Long)"),
               "result type float32 can't be cast to the desired output type int64"),
        Saying(
            Refused({F32({2, 5}, rng), F32({5}, rng), F32({5}, rng), Arg::Int(0), Arg::Double(0)},
                    TSR_INVALID_ARGUMENT,
                    "beta 0 (l1_loss_backward, in place) with a grad_output larger than self"),
            "grad_output of shape [2, 5] must broadcast to the shape of self and target "
            "broadcast [5]")};
    for (ErrorInput& e : PairErrors(rng, beta, -1)) errors.push_back(std::move(e));
    return errors;
  };
  op.gradient = PairSpec("smooth_l1_loss", {1.0, 2.0}, true);
  return op;
}

// ---- soft_margin_loss_backward ----

OpInfo SoftMarginLossBackward() {
  OpInfo op;
  op.name = "soft_margin_loss_backward";
  op.out = "soft_margin_loss_backward.grad_input";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const PairCase& c : PairCases(0, 0)) {
      Sample sample = PairSample(c, dtype, rng, "");
      sample.args.pop_back();  // no parameter
      sample.desc = Described(sample.args).desc;
      s.push_back(std::move(sample));
    }
    // Labels +-1 (the loss's use), int64 ones (self's dtype), a float64 target.
    HostTensor labels = Make({4, 3}, TSR_DTYPE_INT64, rng, Range(0, 2));
    for (double& v : labels.values) v = v == 0 ? -1 : 1;
    s.push_back(Described({Arg::Tensor(Make({4, 3}, dtype, rng)),
                           Arg::Tensor(Make({4, 3}, dtype, rng)), Arg::Tensor(labels), Arg::Int(0)},
                          " (int64 labels: self's dtype)"));
    s.push_back(Described({Arg::Tensor(Make({}, dtype, rng)), Arg::Tensor(Make({S, S}, dtype, rng)),
                           Arg::Tensor(Make({S, S}, TSR_DTYPE_FLOAT64, rng)), Arg::Int(1)},
                          " (a float64 target: self's dtype)"));
    s.push_back(Described(
        {Arg::Tensor(Make({S}, TSR_DTYPE_FLOAT64, rng)), Arg::Tensor(Make({S}, dtype, rng)),
         Arg::Tensor(Make({S}, dtype, rng)), Arg::Int(0)},
        " (a float64 grad_output: self's dtype)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const double norm = Norm(s.args[1].tensor, s.args[3].integer);
    return std::vector<HostTensor>{Elementwise({&s.args[0], &s.args[1], &s.args[2]},
                                               s.args[1].tensor.dtype, [norm](const double* v) {
                                                 const double z = std::exp(-v[2] * v[1]);
                                                 return -norm * v[2] * z / (1 + z) * v[0];
                                               })};
  };
  op.errors = [](Rng& rng) {
    const Arg mean = Arg::Int(1);
    return std::vector<ErrorInput>{
        Saying(Refused({F32({}, rng), F32({4}, rng, TSR_DTYPE_INT64), F32({4}, rng), mean},
                       TSR_INVALID_ARGUMENT,
                       "an int64 self (result type Float can't be cast to the desired output "
                       "type Long)"),
               "result type float32 can't be cast to the desired output type int64"),
        Saying(Refused({F32({}, rng), F32({5}, rng), F32({4}, rng), mean}, TSR_INVALID_ARGUMENT,
                       "self and target that do not broadcast"),
               "shapes [5] and [4] do not broadcast"),
        Saying(Refused({F32({2, 3}, rng), F32({3}, rng), F32({3}, rng), Arg::Int(0)},
                       TSR_INVALID_ARGUMENT,
                       "a grad_output larger than self (output with shape [3] doesn't match the "
                       "broadcast shape [2, 3])"),
               "grad_output of shape [2, 3] must broadcast to the shape of self and target "
               "broadcast [3]"),
        Saying(Refused({F32({}, rng), F32({4}, rng), F32({4}, rng), Arg::Int(3)},
                       TSR_INVALID_ARGUMENT, "an unknown reduction"),
               "expected reduction to be 0 (none), 1 (mean) or 2 (sum), got 3")};
  };
  op.gradient = PairSpec("soft_margin_loss", {}, false);
  return op;
}

// ---- binary_cross_entropy_backward ----

// AsShape: `t` seen with `shape` when it has as many elements (ATen's kernel iterates over the
// squeezed operands, which then line up element by element), else as it is (it broadcasts).
Arg AsShape(const Arg& a, const Shape& shape) {
  Arg b = a;
  if (a.tensor.numel() == Numel(shape)) b.tensor.shape = shape;
  return b;
}

OpInfo BinaryCrossEntropyBackward() {
  OpInfo op;
  op.name = "binary_cross_entropy_backward";
  op.out = "binary_cross_entropy_backward.grad_input";
  op.dtypes = kFloatingMask;  // current PyTorch's CPU kernel (1.13's had no float16, bfloat16)
  op.tolerance_scale = 4;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    const MakeOptions prob = Range(0.02, 0.98);
    std::vector<Sample> s;
    const auto add = [&](Shape shape, Shape grad, Shape target, Args rest,
                         const std::string& note = "") {
      Args args = TensorArgs({Make(grad, dtype, rng), Make(shape, dtype, rng, prob),
                              Make(target, dtype, rng, Range(0, 1))});
      for (Arg& a : rest) args.push_back(std::move(a));
      s.push_back(Described(std::move(args), note));
    };
    const auto weight = [&](Shape shape, tsr_dtype d) {
      return Arg::Tensor(Make(std::move(shape), d, rng, Range(0.5, 2)));
    };
    // The defaults (mean), then each reduction with and without a weight.
    for (const Shape& shape : std::vector<Shape>{{}, {1}, {S}, {S, S}, {S, S, S}}) {
      add(shape, {}, shape, {});
    }
    for (int64_t r : {0, 1, 2}) {
      const Shape g = GradShape({S, S}, r);
      add({S, S}, g, {S, S}, {Arg::None(), Arg::Int(r)}, std::string(" ") + ReductionName(r));
      add({S, S}, g, {S, S}, {weight({S, S}, dtype), Arg::Int(r)},
          std::string(" weighted ") + ReductionName(r));
    }
    // Weights that broadcast to self (0-dim, a row, a column of float64: any dtype multiplies).
    add({4, 3}, {4, 3}, {4, 3}, {weight({3}, dtype), Arg::Int(0)});
    add({4, 3}, {}, {4, 3}, {weight({}, dtype), Arg::Int(1)});
    add({4, 3}, {}, {4, 3}, {weight({4, 1}, TSR_DTYPE_FLOAT64), Arg::Int(2)},
        " (a float64 weight)");
    // Squeezed operands: dims of 1 in self, or in the target and grad_output, line up.
    add({4, 1, 3}, {4, 3}, {4, 3}, {Arg::None(), Arg::Int(0)}, " (self with a dim of 1)");
    add({4, 3}, {1, 4, 3}, {4, 1, 3}, {Arg::None(), Arg::Int(0)}, " (grad, target with dims of 1)");
    add({4, 3}, {}, {3}, {Arg::None(), Arg::Int(2)}, " (a target broadcast to self)");
    // Empty.
    add({0}, {}, {0}, {Arg::None(), Arg::Int(1)});
    add({2, 0}, {2, 0}, {2, 0}, {Arg::None(), Arg::Int(0)});
    add({0, 3}, {}, {0, 3}, {weight({3}, dtype), Arg::Int(2)});
    // x at 0 and 1: the denominator's floor of 1e-12.
    s.push_back(Described(
        {Arg::Tensor(Values(dtype, {6}, {1, 1, 1, 1, 1, 1})),
         Arg::Tensor(Values(dtype, {6}, {0, 1, 0, 1, 0.5, 0.25})),
         Arg::Tensor(Values(dtype, {6}, {0, 1, 0.5, 0.5, 0.5, 0.25})), Arg::None(), Arg::Int(0)},
        " (x at 0 and 1: the 1e-12 floor)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[1].tensor;
    const int64_t reduction = Given(s, 4) ? s.args[4].integer : 1;
    const double norm = Norm(x, reduction);
    const bool weighted = Given(s, 3);
    const Arg g = AsShape(s.args[0], x.shape), t = AsShape(s.args[2], x.shape);
    std::vector<const Arg*> operands{&g, &s.args[1], &t};
    if (weighted) operands.push_back(&s.args[3]);
    return std::vector<HostTensor>{Elementwise(operands, x.dtype, [&](const double* v) {
      const double grad = v[0] * (v[1] - v[2]) / std::max((1 - v[1]) * v[1], 1e-12);
      return grad * (weighted ? v[3] : 1.0) * norm;
    })};
  };
  op.errors = [](Rng& rng) {
    const auto p = [&rng](Shape shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(Make(std::move(shape), dtype, rng, Range(0.1, 0.9)));
    };
    const Arg none = Arg::None(), mean = Arg::Int(1);
    return std::vector<ErrorInput>{
        Saying(Refused({p({}), p({5, 4}), p({5, 4}, TSR_DTYPE_FLOAT64), none, mean},
                       TSR_INVALID_ARGUMENT,
                       "a float64 target (Found dtype float64 but expected float32)"),
               "Found dtype float64 but expected float32"),
        Saying(Refused({p({}, TSR_DTYPE_FLOAT64), p({5, 4}), p({5, 4}), none, mean},
                       TSR_INVALID_ARGUMENT, "a float64 grad_output"),
               "Found dtype float64 but expected float32"),
        Saying(Refused({p({}), p({5, 4}), p({3}), none, mean}, TSR_INVALID_ARGUMENT,
                       "a target that does not broadcast to self"),
               "target (squeezed) of shape [3] must broadcast to self's shape (squeezed)"),
        Saying(Refused({p({5}), p({5, 4}), p({5, 4}), none, Arg::Int(0)}, TSR_INVALID_ARGUMENT,
                       "a grad_output that does not broadcast to self"),
               "grad_output (squeezed) of shape [5] must broadcast to self's shape (squeezed)"),
        Saying(Refused({p({}), p({5, 4}), p({5, 4}), p({3}), mean}, TSR_INVALID_ARGUMENT,
                       "a weight that does not broadcast to self"),
               "weight of shape [3] must broadcast to self's shape"),
        Saying(Refused({p({}), p({5, 4}), p({5, 4}), none, Arg::Int(3)}, TSR_INVALID_ARGUMENT,
                       "an unknown reduction"),
               "expected reduction to be 0 (none), 1 (mean) or 2 (sum), got 3")};
  };
  GradientSpec spec;
  spec.forward = "binary_cross_entropy";
  spec.samples = [](Rng& rng) {
    std::vector<Sample> samples;
    for (int64_t reduction : {0, 1, 2}) {
      for (const bool weighted : {false, true}) {
        samples.push_back(Described(
            {Arg::Tensor(F64({3, 4}, rng, 0.05, 0.95)), Arg::Tensor(F64({3, 4}, rng, 0, 1)),
             weighted ? Arg::Tensor(F64({4}, rng, 0.5, 2)) : Arg::None(), Arg::Int(reduction)}));
      }
    }
    return samples;
  };
  spec.wrt = {0};
  spec.backward_args = GradThenForwardArgs;
  op.gradient = std::move(spec);
  return op;
}

// ---- nll_loss2d ----

// One 2-D case: self [N, C, H, W], a weight or none, the reduction, the ignore_index and how
// many pixels use it (none, some, all).
struct Nll2dCase {
  Shape shape;
  bool weight;
  int64_t reduction;
  int64_t ignore_index;
  enum Ignored { kNone, kSome, kAll } ignored = kNone;
};
const std::vector<Nll2dCase>& Nll2dCases() {
  // After sample_inputs_nll_loss's 2-D entries: each reduction, weighted or not, an
  // ignore_index some pixels use, every pixel ignored (the mean is 0 / 0), empty batches.
  using I = Nll2dCase::Ignored;
  static const std::vector<Nll2dCase> cases{
      {{2, 3, 4, 5}, false, 1, -100},        {{2, 3, 4, 5}, true, 1, -100},
      {{2, 3, 4, 5}, true, 0, -100},         {{2, 3, 4, 5}, false, 2, -100},
      {{1, 4, 3, 3}, true, 1, 1, I::kSome},  {{1, 4, 3, 3}, false, 0, 2, I::kSome},
      {{3, 2, 2, 1}, true, 2, -1, I::kSome}, {{2, 3, 2, 2}, false, 1, 0, I::kAll},
      {{2, 3, 2, 2}, true, 0, 0, I::kAll},   {{1, 1, 1, 1}, false, 2, -100},
      {{0, 3, 2, 2}, false, 1, -100},        {{2, 3, 0, 4}, true, 0, -100},
      {{2, 3, 4, 0}, false, 2, -100}};
  return cases;
}

// The forward's arguments (self, target, weight, reduction, ignore_index) of a case.
Args Nll2dArgs(const Nll2dCase& c, tsr_dtype dtype, Rng& rng) {
  const int64_t classes = c.shape[1];
  HostTensor target = Make({c.shape[0], c.shape[2], c.shape[3]}, TSR_DTYPE_INT64, rng,
                           Range(0, static_cast<double>(classes)));
  for (size_t i = 0; i < target.values.size(); ++i) {
    if (c.ignored == Nll2dCase::kAll || (c.ignored == Nll2dCase::kSome && i % 3 == 1)) {
      target.values[i] = static_cast<double>(c.ignore_index);
    }
  }
  return {Arg::Tensor(Make(c.shape, dtype, rng)), Arg::Tensor(target),
          c.weight ? Arg::Tensor(Make({classes}, dtype, rng, Range(0.25, 2))) : Arg::None(),
          Arg::Int(c.reduction), Arg::Int(c.ignore_index)};
}

std::string Nll2dDesc(const Nll2dCase& c) {
  return ShapeString(c.shape) + (c.weight ? " weighted " : " ") + ReductionName(c.reduction) +
         (c.ignored == Nll2dCase::kNone ? ""
          : c.ignored == Nll2dCase::kSome
              ? " ignore_index " + std::to_string(c.ignore_index) + " on some pixels"
              : " ignore_index " + std::to_string(c.ignore_index) + " on every pixel");
}

// The 2-D forward in double, from self [N, C, H, W] indexed directly: each pixel's weight
// (0 where ignored), the output and total_weight as LossNLL2d.cpp computes them (0 for none).
struct Nll2dForward {
  std::vector<double> weights;  // per pixel, (b, h, w) row-major
  HostTensor output, total_weight;
};
Nll2dForward Nll2dReference(const Args& args) {
  const HostTensor& x = args[0].tensor;
  const HostTensor& t = args[1].tensor;
  const bool weighted = args.size() > 2 && args[2].kind == Arg::Kind::kTensor;
  const int64_t reduction = args.size() > 3 ? args[3].integer : 1;
  const int64_t ignore = args.size() > 4 ? args[4].integer : -100;
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  Nll2dForward f;
  std::vector<double> losses;
  long double loss_sum = 0, weight_sum = 0;
  for (int64_t b = 0; b < N; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t w = 0; w < W; ++w) {
        const int64_t target = static_cast<int64_t>(t.values[(b * H + h) * W + w]);
        const bool ignored = target == ignore;
        const double weight = ignored ? 0.0 : weighted ? args[2].tensor.values[target] : 1.0;
        const double loss = ignored ? 0.0 : -weight * x.values[((b * C + target) * H + h) * W + w];
        f.weights.push_back(weight);
        losses.push_back(loss);
        loss_sum += loss;
        weight_sum += weight;
      }
    }
  }
  f.output.dtype = f.total_weight.dtype = x.dtype;
  if (reduction == 0) {
    f.output.shape = t.shape;
    for (double v : losses) f.output.values.push_back(RoundTo(x.dtype, v));
    f.total_weight.values = {0.0};
  } else {
    const long double r = reduction == 1 ? loss_sum / weight_sum : loss_sum;  // 0 / 0: NaN
    f.output.values = {RoundTo(x.dtype, static_cast<double>(r))};
    f.total_weight.values = {RoundTo(x.dtype, static_cast<double>(weight_sum))};
  }
  return f;
}

HostTensor Targets(Shape shape, std::vector<double> v, tsr_dtype dtype = TSR_DTYPE_INT64) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.values = std::move(v);
  return t;
}

// The forward's error inputs (self, target, weight, reduction, ignore_index); `backward` puts a
// valid grad_output before and total_weight after them.
std::vector<ErrorInput> Nll2dErrors(Rng& rng, bool backward) {
  const auto f = [&rng](Shape shape) { return F32(std::move(shape), rng); };
  const Arg ok_target = Arg::Tensor(Targets({1, 2, 2}, {0, 1, 2, 1}));
  struct E {
    Args args;  // self, target, weight, reduction
    tsr_code code;
    std::string what;
    std::string message;  // ErrorInput's: what the op's refusal says
  };
  const std::vector<E> errors{
      {{f({1, 3, 2, 2}), Arg::Tensor(Targets({1, 2, 2}, {0, 3, 1, 1})), Arg::None(), Arg::Int(1)},
       TSR_OUT_OF_RANGE,
       "a target of 3 for 3 classes (IndexError: Target 3 is out of bounds.)",
       "Target 3 is out of bounds"},
      {{f({1, 3, 2, 2}), Arg::Tensor(Targets({1, 2, 2}, {0, -1, 1, 1})), Arg::None(), Arg::Int(0)},
       TSR_OUT_OF_RANGE,
       "a target of -1 that is not ignore_index",
       "Target -1 is out of bounds"},
      {{f({1, 3, 2, 2}), Arg::Tensor(Targets({2, 2}, {0, 1, 2, 1})), Arg::None(), Arg::Int(1)},
       TSR_INVALID_ARGUMENT,
       "a 2-D target (only batches of spatial targets supported (3D tensors) ...)",
       "only batches of spatial targets supported (3D tensors) but got targets of dimension: 2"},
      {{f({3, 2, 2}), ok_target, Arg::None(), Arg::Int(1)},
       TSR_INVALID_ARGUMENT,
       "a 3-D input (only batches of spatial inputs supported (4D tensors) ...)",
       "only batches of spatial inputs supported (4D tensors), but got input of dimension: 3"},
      {{f({1, 3, 2, 2}), ok_target, f({2}), Arg::Int(1)},
       TSR_INVALID_ARGUMENT,
       "a weight of 2 for 3 classes (weight tensor should be defined either for all or no "
       "classes)",
       "weight tensor should be defined either for all or no classes"},
      {{f({1, 3, 2, 3}), ok_target, Arg::None(), Arg::Int(1)},
       TSR_INVALID_ARGUMENT,
       "a target of another spatial size (size mismatch (got input: ...)",
       "size mismatch (got input: [1, 3, 2, 3] , target: [1, 2, 2]"},
      {{f({2, 3, 2, 2}), ok_target, Arg::None(), Arg::Int(1)},
       TSR_INVALID_ARGUMENT,
       "a target of another batch size",
       "size mismatch (got input: [2, 3, 2, 2] , target: [1, 2, 2]"},
      {{f({1, 3, 2, 2}), Arg::Tensor(Targets({1, 2, 2}, {0, 1, 2, 1}, TSR_DTYPE_INT32)),
        Arg::None(), Arg::Int(1)},
       TSR_INVALID_ARGUMENT,
       "int32 targets (expected scalar type Long)",
       "expected target of dtype int64, got int32"},
      {{f({1, 3, 2, 2}), ok_target, Arg::None(), Arg::Int(3)},
       TSR_INVALID_ARGUMENT,
       "an unknown reduction",
       "expected reduction to be 0 (none), 1 (mean) or 2 (sum), got 3"}};
  std::vector<ErrorInput> out;
  for (const E& e : errors) {
    Args args = e.args;
    args.push_back(Arg::Int(-100));
    if (backward) {
      const bool none = args[3].integer == 0;
      args.insert(args.begin(), none ? f(args[1].tensor.shape) : f({}));
      args.push_back(f({}));
    }
    out.push_back(Saying(Refused(std::move(args), e.code, e.what), e.message));
  }
  if (backward) {
    // grad_output and total_weight of other shapes (LossNLL2d.cpp's checks).
    const Arg self = f({1, 3, 2, 2}), none = Arg::None(), ignore = Arg::Int(-100);
    out.push_back(Saying(Refused({f({1, 4}), self, ok_target, none, Arg::Int(0), ignore, f({})},
                                 TSR_INVALID_ARGUMENT,
                                 "a 2-D grad_output for none (grad_output must have same "
                                 "dimension as target (3) ...)"),
                         "grad_output must have same dimension as target (3) but got dimension: "
                         "[1, 4]"));
    out.push_back(Saying(Refused({f({1, 2, 3}), self, ok_target, none, Arg::Int(0), ignore, f({})},
                                 TSR_INVALID_ARGUMENT,
                                 "a grad_output of another shape than the target (size mismatch)"),
                         "size mismatch (got grad_output: [1, 2, 3] target: [1, 2, 2]"));
    out.push_back(Saying(
        Refused({f({2}), self, ok_target, none, Arg::Int(1), ignore, f({})}, TSR_INVALID_ARGUMENT,
                "two elements of grad_output for the mean (Expected a single "
                "element grad_output tensor ...)"),
        "Expected a single element grad_output tensor, but got: [2]"));
    out.push_back(Saying(
        Refused({f({}), self, ok_target, none, Arg::Int(2), ignore, f({2})}, TSR_INVALID_ARGUMENT,
                "a total_weight of two elements (expected total_weight to be a "
                "single element tensor ...)"),
        "expected total_weight to be a single element tensor, got: [2]"));
    out.push_back(Saying(Refused({F32({}, rng, TSR_DTYPE_FLOAT64), self, ok_target, none,
                                  Arg::Int(2), ignore, f({})},
                                 TSR_INVALID_ARGUMENT, "a float64 grad_output for float32 self"),
                         "expected grad_output to have the input's dtype float32, got float64"));
  }
  return out;
}

void AddNllLoss2d(std::vector<OpInfo>& db) {
  for (const bool both : {true, false}) {
    OpInfo op;
    op.name = both ? "nll_loss2d_forward" : "nll_loss2d";
    op.out = both ? "nll_loss2d_forward.output" : "nll_loss2d.out";
    op.dtypes = kFloatingMask;
    op.tolerance_scale = 4;  // a sum and a quotient
    op.samples = [both](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const Nll2dCase& c : Nll2dCases()) s.push_back({Nll2dArgs(c, dtype, rng), Nll2dDesc(c)});
      if (!both) {
        // The defaults: no weight, the mean, ignore_index -100.
        Args args = Nll2dArgs(Nll2dCases()[0], dtype, rng);
        args.resize(2);
        s.push_back({args, "[2, 3, 4, 5] defaults"});
      }
      return s;
    };
    op.reference = [both](const Sample& s) {
      Nll2dForward f = Nll2dReference(s.args);
      if (!both) return std::vector<HostTensor>{f.output};
      return std::vector<HostTensor>{f.output, f.total_weight};
    };
    op.errors = [](Rng& rng) { return Nll2dErrors(rng, false); };
    db.push_back(std::move(op));
  }
  OpInfo op;
  op.name = "nll_loss2d_backward";
  op.out = "nll_loss2d_backward.grad_input";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Nll2dCase& c : Nll2dCases()) {
      Args args = Nll2dArgs(c, dtype, rng);
      const Nll2dForward f = Nll2dReference(args);
      args.insert(args.begin(), Arg::Tensor(Make(f.output.shape, dtype, rng)));
      args.push_back(Arg::Tensor(f.total_weight));
      s.push_back({args, Nll2dDesc(c)});
      if (c.reduction == 1 && c.ignored == Nll2dCase::kNone && c.shape[0] > 0) {
        // ATen takes a reduced loss's gradient as [1] too.
        args[0].tensor.shape = {1};
        s.push_back({args, Nll2dDesc(c) + ", grad_output [1]"});
      }
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const Args forward(s.args.begin() + 1, s.args.begin() + 6);
    const Nll2dForward f = Nll2dReference(forward);
    const HostTensor& g = s.args[0].tensor;
    const HostTensor& x = s.args[1].tensor;
    const HostTensor& t = s.args[2].tensor;
    const int64_t reduction = s.args[4].integer, ignore = s.args[5].integer;
    const double total = s.args[6].tensor.values[0];
    const int64_t C = x.shape[1], H = x.shape[2], W = x.shape[3];
    HostTensor grad = x;
    for (double& v : grad.values) v = 0;
    for (size_t p = 0; p < t.values.size(); ++p) {
      const int64_t target = static_cast<int64_t>(t.values[p]);
      if (target == ignore) continue;
      const int64_t b = static_cast<int64_t>(p) / (H * W), hw = static_cast<int64_t>(p) % (H * W);
      double v = -f.weights[p] * (reduction == 0 ? g.values[p] : g.values[0]);
      if (reduction == 1) v /= total;
      grad.values[(b * C + target) * H * W + hw] = RoundTo(x.dtype, v);
    }
    return std::vector<HostTensor>{grad};
  };
  op.errors = [](Rng& rng) { return Nll2dErrors(rng, true); };
  GradientSpec spec;
  spec.forward = "nll_loss2d_forward";
  spec.samples = [](Rng& rng) {
    // ignore_index 1: the pixels of class 1 count for nothing.
    const HostTensor target = Targets({2, 2, 2}, {2, 0, 1, 2, 0, 0, 2, 1});
    std::vector<Sample> samples;
    for (int64_t reduction : {0, 1, 2}) {
      for (const bool weighted : {false, true}) {
        samples.push_back(Described({Arg::Tensor(F64({2, 3, 2, 2}, rng)), Arg::Tensor(target),
                                     weighted ? Arg::Tensor(F64({3}, rng, 0.5, 2)) : Arg::None(),
                                     Arg::Int(reduction), Arg::Int(1)}));
      }
    }
    return samples;
  };
  spec.wrt = {0};
  spec.backward_args = [](const Sample& s, const Returns& r, const HostTensor& g) {
    return Args{Arg::Tensor(g), s.args[0], s.args[1],        s.args[2],
                s.args[3],      s.args[4], Arg::Tensor(r[1])};
  };
  op.gradient = std::move(spec);
  db.push_back(std::move(op));
}

}  // namespace

void AddLossBackwardOps(std::vector<OpInfo>& db) {
  db.push_back(BinaryCrossEntropyBackward());
  db.push_back(HuberLossBackward());
  db.push_back(SmoothL1LossBackward());
  db.push_back(SoftMarginLossBackward());
  AddNllLoss2d(db);
}

}  // namespace conformance
}  // namespace tessera
