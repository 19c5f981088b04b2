// Op set 1.9's losses and log_sigmoid (huber_loss, smooth_l1_loss, soft_margin_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits, log_sigmoid, log_sigmoid_forward):
// composites, dispatcher/ops/loss_composites.cc.
//
// Semantics are PyTorch's, read in aten/src/ATen/native/Loss.cpp, Activation.cpp and their CPU
// kernels: each loss elementwise over its broadcast operands, then reduced (0 none, 1 mean, 2
// sum; the mean of nothing is 0 / 0); the result's dtype is the op's own in ATen (huber_loss and
// soft_margin_loss keep self's, smooth_l1_loss promotes, binary_cross_entropy_with_logits keeps
// the target's). Samples follow the OpInfo entries in common_methods_invocations.py
// (sample_inputs_huber_loss, sample_inputs_loss with sample_inputs_smooth_l1_loss,
// sample_inputs_binary_cross_entropy, sample_inputs_binary_cross_entropy_with_logits, the
// unary samples of nn.functional.logsigmoid), with empty and 0-dim operands, broadcasting and
// mixed dtypes added. The references compute each element in double from the formulas of ATen's
// kernels and round once to the result's dtype (each element, or their mean or sum in long
// double).
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

constexpr int64_t S = 5;  // PyTorch's OpInfo size

const char* ReductionName(int64_t r) { return r == 0 ? "none" : r == 1 ? "mean" : "sum"; }

// Reduction: the sample's reduction argument at `i`, or its default, mean.
int64_t Reduction(const Sample& s, size_t i) { return Given(s, i) ? s.args[i].integer : 1; }

// LossOf: the elementwise losses `f` of the broadcast operands in double, rounded to `dtype`
// once: each (reduction none), or their mean or sum.
HostTensor LossOf(const std::vector<const Arg*>& operands, tsr_dtype dtype, int64_t reduction,
                  const std::function<double(const double*)>& f) {
  HostTensor loss = Elementwise(operands, TSR_DTYPE_FLOAT64, f);
  if (reduction == 0) {
    loss.dtype = dtype;
    for (double& v : loss.values) v = RoundTo(dtype, v);
    return loss;
  }
  long double sum = 0;
  for (double v : loss.values) sum += v;
  const long double n = static_cast<long double>(loss.values.size());
  const long double r = reduction == 1 ? sum / n : sum;  // 0 / 0 for an empty mean: NaN
  return Values(dtype, {}, {static_cast<double>(r)});
}

// LogSigmoidOf: ATen's CPU formula, min(x, 0) - log1p(exp(-|x|)).
double LogSigmoidOf(double x) { return std::min(x, 0.0) - std::log1p(std::exp(-std::fabs(x))); }

HostTensor Make(std::vector<int64_t> shape, tsr_dtype dtype, Rng& rng,
                const MakeOptions& options = {}) {
  return MakeTensor(std::move(shape), dtype, rng, options);
}

MakeOptions Range(double low, double high) {
  MakeOptions o;
  o.low = low;
  o.high = high;
  return o;
}

// ---- huber_loss, smooth_l1_loss ----

// huber(z) = z < delta ? z^2 / 2 : delta (z - delta / 2); smooth_l1(z) = z < beta ? z^2 / (2 beta)
// : z - beta / 2 (beta 0: z), z = |self - target|.
double Huber(double x, double t, double delta) {
  const double z = std::fabs(x - t);
  return z < delta ? 0.5 * z * z : delta * (z - 0.5 * delta);
}
double SmoothL1(double x, double t, double beta) {
  const double z = std::fabs(x - t);
  return z < beta ? 0.5 * z * z / beta : z - 0.5 * beta;
}

// The shapes of sample_inputs_loss and _generate_sample_inputs_nn_loss, then empty and
// broadcast operands (each way: ATen broadcasts both huber's and smooth_l1's).
struct PairCase {
  std::vector<int64_t> self, target;
  int64_t reduction;  // -1: left to the default
};
const std::vector<PairCase>& PairCases() {
  static const std::vector<PairCase> cases{
      {{}, {}, -1},        {{S}, {S}, 1},        {{S}, {S}, 2},
      {{S}, {S}, 0},       {{S, S}, {S, S}, -1}, {{S, S, S}, {S, S, S}, 0},
      {{S, S}, {S, S}, 2}, {{}, {}, 0},          {{0}, {0}, 1},
      {{0, 3}, {0, 3}, 0}, {{2, 0}, {2, 0}, 2},  {{7, 11}, {11}, 0},
      {{7, 11}, {11}, 1},  {{11}, {7, 11}, 0},   {{7, 1}, {1, 11}, 2},
      {{4, 3}, {}, 1}};
  return cases;
}

std::vector<Arg> PairArgs(const PairCase& c, tsr_dtype dtype, Rng& rng) {
  std::vector<Arg> args{Arg::Tensor(Make(c.self, dtype, rng)),
                        Arg::Tensor(Make(c.target, dtype, rng))};
  if (c.reduction >= 0) args.push_back(Arg::Int(c.reduction));
  return args;
}

OpInfo HuberLoss() {
  OpInfo op;
  op.name = "huber_loss";
  op.out = "huber_loss.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;  // a mean
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_huber_loss: a delta in [1e-3, 9) for each case; the default 1 without.
    std::uniform_real_distribution<double> deltas(1e-3, 9);
    bool with_delta = false;
    for (const PairCase& c : PairCases()) {
      std::vector<Arg> args = PairArgs(c, dtype, rng);
      if (c.reduction >= 0 && (with_delta = !with_delta)) args.push_back(Arg::Double(deltas(rng)));
      s.push_back(Described(std::move(args)));
    }
    // Both branches: |x - t| straddling delta, the boundary itself included.
    s.push_back(Described(
        {Arg::Tensor(Values(dtype, {6}, {0, 0.5, 1, 1.5, -2, 3})),
         Arg::Tensor(Values(dtype, {6}, {0, 0, 0, 0, 0, 1})), Arg::Int(0), Arg::Double(1.5)},
        " (both branches)"));
    // Result in self's dtype, whatever the target's (computed in the promoted one).
    s.push_back(Described({Arg::Tensor(Make({S, S}, dtype, rng)),
                           Arg::Tensor(Make({S, S}, TSR_DTYPE_FLOAT64, rng)), Arg::Int(0)},
                          " (a float64 target: self's dtype)"));
    s.push_back(
        Described({Arg::Tensor(Make({S}, dtype, rng)), Arg::Tensor(Make({S}, TSR_DTYPE_INT64, rng)),
                   Arg::Int(1), Arg::Double(2)},
                  " (an int64 target)"));
    s.push_back(Described(
        {Arg::Tensor(ExtremeTensor(dtype)), Arg::Tensor(Make({}, dtype, rng)), Arg::Int(0)},
        " (inf, NaN, large)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const double delta = Given(s, 3) ? s.args[3].number : 1.0;
    return std::vector<HostTensor>{
        LossOf({&s.args[0], &s.args[1]}, s.args[0].tensor.dtype, Reduction(s, 2),
               [delta](const double* v) { return Huber(v[0], v[1], delta); })};
  };
  op.errors = [](Rng& rng) {
    const auto f = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    return std::vector<ErrorInput>{
        Saying(Refused({f({5, 4}), f({5, 4}), Arg::Int(1), Arg::Double(0)}, TSR_INVALID_ARGUMENT,
                       "delta 0 (huber_loss does not support non-positive values for delta.)"),
               "huber_loss does not support non-positive values for delta."),
        Saying(Refused({f({5, 4}), f({5, 4}), Arg::Int(1), Arg::Double(-1)}, TSR_INVALID_ARGUMENT,
                       "a negative delta"),
               "huber_loss does not support non-positive values for delta."),
        Saying(Refused({f({5, 4}), f({5, 4}), Arg::Int(3)}, TSR_INVALID_ARGUMENT,
                       "an unknown reduction"),
               "expected reduction to be 0 (none), 1 (mean) or 2 (sum)"),
        Saying(Refused({f({5, 4}), f({5})}, TSR_INVALID_ARGUMENT, "shapes that do not broadcast"),
               "must match the size of tensor b (5) at non-singleton dimension 1"),
        Saying(Refused({f({5}, TSR_DTYPE_INT64), f({5})}, TSR_INVALID_ARGUMENT,
                       "an int64 self with a float target (result type Float can't be cast to the "
                       "desired output type Long)"),
               "result type float32 can't be cast to the desired output type int64")};
  };
  return op;
}

OpInfo SmoothL1Loss() {
  OpInfo op;
  op.name = "smooth_l1_loss";
  op.out = "smooth_l1_loss.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const PairCase& c : PairCases()) s.push_back(Described(PairArgs(c, dtype, rng)));
    // sample_inputs_smooth_l1_loss: |x - t| < beta everywhere (the quadratic branch), and beta
    // 0 (the L1 loss).
    s.push_back(Described(
        {Arg::Tensor(Make({S, S}, dtype, rng, Range(0, 2))),
         Arg::Tensor(Make({S, S}, dtype, rng, Range(-2, 0))), Arg::Int(1), Arg::Double(5)},
        " (quadratic branch)"));
    s.push_back(Described({Arg::Tensor(Make({S, S}, dtype, rng)),
                           Arg::Tensor(Make({S, S}, dtype, rng)), Arg::Int(0), Arg::Double(0)},
                          " (beta 0: L1)"));
    s.push_back(Described(
        {Arg::Tensor(Values(dtype, {6}, {0, 0.25, 0.5, 0.75, -2, 3})),
         Arg::Tensor(Values(dtype, {6}, {0, 0, 0, 0, 0, 1})), Arg::Int(0), Arg::Double(0.5)},
        " (both branches)"));
    // A structured binary op: the promoted dtype.
    s.push_back(Described({Arg::Tensor(Make({S, S}, dtype, rng)),
                           Arg::Tensor(Make({S, S}, TSR_DTYPE_FLOAT64, rng)), Arg::Int(2)},
                          " (a float64 target: float64)"));
    s.push_back(Described({Arg::Tensor(Make({S}, dtype, rng)),
                           Arg::Tensor(Make({}, TSR_DTYPE_FLOAT64, rng)), Arg::Int(0)},
                          " (a 0-dim float64 target: self's dtype)"));
    s.push_back(Described({Arg::Tensor(ExtremeTensor(dtype)), Arg::Tensor(Make({}, dtype, rng)),
                           Arg::Int(0), Arg::Double(2)},
                          " (inf, NaN, large)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const double beta = Given(s, 3) ? s.args[3].number : 1.0;
    return std::vector<HostTensor>{
        LossOf({&s.args[0], &s.args[1]}, ResultDtype({&s.args[0], &s.args[1]}), Reduction(s, 2),
               [beta](const double* v) { return SmoothL1(v[0], v[1], beta); })};
  };
  op.errors = [](Rng& rng) {
    const auto f = [&rng](std::vector<int64_t> shape) {
      return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
    };
    return std::vector<ErrorInput>{
        Saying(Refused({f({5, 4}), f({5, 4}), Arg::Int(1), Arg::Double(-1)}, TSR_INVALID_ARGUMENT,
                       "a negative beta (smooth_l1_loss does not support negative values for "
                       "beta.)"),
               "smooth_l1_loss does not support negative values for beta."),
        Saying(Refused({f({5, 4}), f({5, 4}), Arg::Int(-1)}, TSR_INVALID_ARGUMENT,
                       "an unknown reduction"),
               "expected reduction to be 0 (none), 1 (mean) or 2 (sum)"),
        Saying(Refused({f({5, 4}), f({5})}, TSR_INVALID_ARGUMENT, "shapes that do not broadcast"),
               "must match the size of tensor b (5) at non-singleton dimension 1")};
  };
  return op;
}

// ---- soft_margin_loss ----

// log1p(exp(-x t)); the target broadcasts to self's shape, the result has self's dtype.
OpInfo SoftMarginLoss() {
  OpInfo op;
  op.name = "soft_margin_loss";
  op.out = "soft_margin_loss.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // sample_inputs_loss (|x t| <= 81: exp stays finite in float32, where the 16-bit floats
    // compute), then empty, broadcast targets and an int64 target of labels +-1.
    for (const PairCase& c : PairCases()) {
      if (BroadcastShape({c.self, c.target}) != c.self) continue;  // the target must fit self
      s.push_back(Described(PairArgs(c, dtype, rng)));
    }
    HostTensor labels = Make({4, 3}, TSR_DTYPE_INT64, rng, Range(0, 2));
    for (double& v : labels.values) v = v == 0 ? -1 : 1;
    s.push_back(Described({Arg::Tensor(Make({4, 3}, dtype, rng)), Arg::Tensor(labels), Arg::Int(0)},
                          " (int64 labels: self's dtype)"));
    s.push_back(Described({Arg::Tensor(Make({S, S}, dtype, rng)),
                           Arg::Tensor(Make({S, S}, TSR_DTYPE_FLOAT64, rng)), Arg::Int(1)},
                          " (a float64 target: self's dtype)"));
    s.push_back(Described({Arg::Tensor(Values(dtype, {6}, {INFINITY, -INFINITY, NAN, 0, -0.0, 2})),
                           Arg::Tensor(Values(dtype, {6}, {1, 1, 1, -1, 1, -1})), Arg::Int(0)},
                          " (inf, NaN)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{
        LossOf({&s.args[0], &s.args[1]}, s.args[0].tensor.dtype, Reduction(s, 2),
               [](const double* v) { return std::log1p(std::exp(-v[0] * v[1])); })};
  };
  op.errors = [](Rng& rng) {
    const auto f = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    return std::vector<ErrorInput>{
        Saying(Refused({f({5, 4}), f({5, 4}), Arg::Int(3)}, TSR_INVALID_ARGUMENT,
                       "an unknown reduction"),
               "expected reduction to be 0 (none), 1 (mean) or 2 (sum)"),
        Saying(Refused({f({5, 4}), f({5})}, TSR_INVALID_ARGUMENT,
                       "shapes that do not broadcast (error_inputs_soft_margin_loss)"),
               "target of shape [5] must broadcast to self's shape [5, 4]"),
        Saying(Refused({f({4}), f({3, 4})}, TSR_INVALID_ARGUMENT,
                       "a target larger than self (output with shape [4] doesn't match the "
                       "broadcast shape [3, 4])"),
               "target of shape [3, 4] must broadcast to self's shape [4]"),
        Saying(Refused({f({4}, TSR_DTYPE_INT64), f({4})}, TSR_INVALID_ARGUMENT,
                       "an int64 self (result type Float can't be cast to the desired output type "
                       "Long)"),
               "result type float32 can't be cast to the desired output type int64")};
  };
  return op;
}

// ---- binary_cross_entropy ----

// ATen's CPU kernel: (t - 1) max(log1p(-x), -100) - t max(log(x), -100), times the weight.
double Bce(double x, double t) {
  return (t - 1) * std::max(std::log1p(-x), -100.0) - t * std::max(std::log(x), -100.0);
}

OpInfo BinaryCrossEntropy() {
  OpInfo op;
  op.name = "binary_cross_entropy";
  op.out = "binary_cross_entropy.out";
  op.dtypes = kFloatingMask;  // current PyTorch's CPU kernel (1.13's had no float16, bfloat16)
  op.tolerance_scale = 4;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    const MakeOptions prob = Range(0, 1);
    std::vector<Sample> s;
    const auto add = [&](std::vector<int64_t> shape, std::vector<Arg> rest,
                         const std::string& note = "") {
      std::vector<Arg> args{Arg::Tensor(Make(shape, dtype, rng, prob)),
                            Arg::Tensor(Make(shape, dtype, rng, prob))};
      for (Arg& a : rest) args.push_back(std::move(a));
      s.push_back(Described(std::move(args), note));
    };
    // sample_inputs_binary_cross_entropy.
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{}, {1}, {S}, {S, S}, {S, S, S}}) {
      add(shape, {});
    }
    for (int64_t r : {1, 2, 0}) {
      add({S, S}, {Arg::None(), Arg::Int(r)}, std::string(" ") + ReductionName(r));
      add({S, S}, {Arg::Tensor(Make({S, S}, dtype, rng)), Arg::Int(r)},
          std::string(" weighted ") + ReductionName(r));
    }
    // A weight that broadcasts to self's shape, a 0-dim one, one of another dtype; empty.
    add({4, 3}, {Arg::Tensor(Make({3}, dtype, rng)), Arg::Int(0)});
    add({4, 3}, {Arg::Tensor(Make({}, dtype, rng)), Arg::Int(2)});
    add({4, 3}, {Arg::Tensor(Make({4, 1}, TSR_DTYPE_FLOAT64, rng)), Arg::Int(0)},
        " (a float64 weight: self's dtype)");
    add({0}, {Arg::None(), Arg::Int(1)}, " (empty mean: NaN)");
    add({2, 0}, {Arg::None(), Arg::Int(0)});
    add({0, 3}, {Arg::None(), Arg::Int(2)});
    // 0 and 1 exactly: the logs clamped at -100.
    s.push_back(Described(
        {Arg::Tensor(Values(dtype, {6}, {0, 1, 0, 1, 0.5, 0})),
         Arg::Tensor(Values(dtype, {6}, {0, 1, 1, 0, 0.5, 0.25})), Arg::None(), Arg::Int(0)},
        " (x at 0 and 1: -100 clamps)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const bool weighted = Given(s, 2);
    std::vector<const Arg*> operands{&s.args[0], &s.args[1]};
    if (weighted) operands.push_back(&s.args[2]);
    return std::vector<HostTensor>{
        LossOf(operands, s.args[0].tensor.dtype, Reduction(s, 3),
               [weighted](const double* v) { return Bce(v[0], v[1]) * (weighted ? v[2] : 1.0); })};
  };
  op.errors = [](Rng& rng) {
    const auto f = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng, Range(0, 1)));
    };
    const auto v = [](std::vector<double> values) {
      return Arg::Tensor(Values(TSR_DTYPE_FLOAT32, {static_cast<int64_t>(values.size())}, values));
    };
    const Arg none = Arg::None(), mean = Arg::Int(1);
    return std::vector<ErrorInput>{
        Saying(Refused({f({5, 4}), f({4}), none, mean}, TSR_INVALID_ARGUMENT,
                       "a target of another size (Using a target size ... is deprecated)"),
               "Using a target size ([4]) that is different to the input size ([5, 4])"),
        Saying(Refused({f({5, 4}), f({4, 5}), none, mean}, TSR_INVALID_ARGUMENT,
                       "a target of another shape with as many elements"),
               "Using a target size ([4, 5]) that is different to the input size ([5, 4])"),
        Saying(Refused({f({5, 4}), f({1, 5, 4}), none, mean}, TSR_INVALID_ARGUMENT,
                       "a target with an extra dim of 1"),
               "Using a target size ([1, 5, 4]) that is different to the input size ([5, 4])"),
        Saying(Refused({f({5, 4}), f({5, 4}, TSR_DTYPE_FLOAT64), none, mean}, TSR_INVALID_ARGUMENT,
                       "a target of another dtype (Found dtype Double but expected Float)"),
               "Found dtype float64 but expected float32"),
        Saying(Refused({v({0.5, 1.5}), v({0, 1}), none, mean}, TSR_INVALID_ARGUMENT,
                       "an input above 1 (all elements of input should be between 0 and 1)"),
               "all elements of input should be between 0 and 1"),
        Saying(Refused({v({-0.25, 0.5}), v({0, 1}), none, Arg::Int(0)}, TSR_INVALID_ARGUMENT,
                       "an input below 0"),
               "all elements of input should be between 0 and 1"),
        Saying(Refused({v({NAN, 0.5}), v({0, 1}), none, mean}, TSR_INVALID_ARGUMENT, "a NaN input"),
               "all elements of input should be between 0 and 1"),
        Saying(Refused({v({0.5, 0.5}), v({0, 2}), none, mean}, TSR_INVALID_ARGUMENT,
                       "a target above 1 (current PyTorch: all elements of target should be "
                       "between 0 and 1)"),
               "all elements of target should be between 0 and 1"),
        Saying(Refused({f({5, 4}), f({5, 4}), f({3}), mean}, TSR_INVALID_ARGUMENT,
                       "a weight that does not broadcast to self"),
               "weight of shape [3] must broadcast to self's shape [5, 4]"),
        Saying(Refused({f({5, 4}), f({5, 4}), none, Arg::Int(3)}, TSR_INVALID_ARGUMENT,
                       "an unknown reduction"),
               "expected reduction to be 0 (none), 1 (mean) or 2 (sum)")};
  };
  return op;
}

// ---- binary_cross_entropy_with_logits ----

// (1 - t) x - lw log_sigmoid(x), lw = (pos_weight - 1) t + 1, times the weight: current ATen's
// formula (1.13 wrote the same log-sum-exp out by hand).
OpInfo BinaryCrossEntropyWithLogits() {
  OpInfo op;
  op.name = "binary_cross_entropy_with_logits";
  op.out = "binary_cross_entropy_with_logits.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    const MakeOptions prob = Range(0, 1);
    std::vector<Sample> s;
    const auto add = [&](std::vector<int64_t> shape, std::vector<Arg> rest,
                         const std::string& note = "") {
      std::vector<Arg> args{Arg::Tensor(Make(shape, dtype, rng)),
                            Arg::Tensor(Make(shape, dtype, rng, prob))};
      for (Arg& a : rest) args.push_back(std::move(a));
      s.push_back(Described(std::move(args), note));
    };
    const auto weight = [&](std::vector<int64_t> shape) {
      return Arg::Tensor(Make(std::move(shape), dtype, rng));
    };
    const auto pos_weight = [&](std::vector<int64_t> shape) {
      return Arg::Tensor(Make(std::move(shape), dtype, rng, Range(0, 9)));
    };
    // sample_inputs_binary_cross_entropy_with_logits.
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{}, {1}, {S}, {S, S}, {S, S, S}}) {
      add(shape, {});
    }
    for (int64_t r : {1, 2, 0}) {
      const std::string red = std::string(" ") + ReductionName(r);
      add({S, S}, {Arg::None(), Arg::None(), Arg::Int(r)}, red);
      for (const std::vector<int64_t>& w :
           std::vector<std::vector<int64_t>>{{1}, {1, S}, {S}, {S, S}}) {
        add({S, S}, {weight(w), Arg::None(), Arg::Int(r)}, red);
      }
      add({S, S}, {Arg::None(), pos_weight({S}), Arg::Int(r)}, red);
      add({S, S}, {weight({S, S}), pos_weight({S}), Arg::Int(r)}, red);
    }
    // Empty; a 0-dim pos_weight; self broadcast to the target's shape (the op's own rule).
    add({0, 3}, {Arg::None(), pos_weight({3}), Arg::Int(1)}, " (empty mean: NaN)");
    add({2, 0}, {weight({0}), Arg::None(), Arg::Int(0)});
    add({4, 3}, {Arg::None(), pos_weight({}), Arg::Int(2)});
    s.push_back(
        Described({Arg::Tensor(Make({3}, dtype, rng)), Arg::Tensor(Make({4, 3}, dtype, rng, prob)),
                   weight({4, 1}), Arg::None(), Arg::Int(0)},
                  " (self broadcast to the target)"));
    // The result has the target's dtype (computed in the promoted one).
    s.push_back(Described({Arg::Tensor(Make({S, S}, dtype, rng)),
                           Arg::Tensor(Make({S, S}, TSR_DTYPE_FLOAT32, rng, prob)), Arg::None(),
                           Arg::None(), Arg::Int(0)},
                          " (a float32 target: float32)"));
    // Large logits either way: log_sigmoid stays finite.
    s.push_back(Described({Arg::Tensor(Values(dtype, {6}, {-100, 100, -30, 30, 0, -0.0})),
                           Arg::Tensor(Values(dtype, {6}, {0.25, 0.75, 1, 0, 0.5, 1})), Arg::None(),
                           Arg::Tensor(Values(dtype, {}, {3})), Arg::Int(0)},
                          " (large logits)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const bool weighted = Given(s, 2), positive = Given(s, 3);
    std::vector<const Arg*> operands{&s.args[0], &s.args[1]};
    operands.push_back(weighted ? &s.args[2] : &s.args[1]);  // placeholders where absent
    operands.push_back(positive ? &s.args[3] : &s.args[1]);
    return std::vector<HostTensor>{LossOf(operands, s.args[1].tensor.dtype, Reduction(s, 4),
                                          [weighted, positive](const double* v) {
                                            const double x = v[0], t = v[1];
                                            const double lw = positive ? (v[3] - 1) * t + 1 : 1.0;
                                            const double loss = (1 - t) * x - lw * LogSigmoidOf(x);
                                            return weighted ? loss * v[2] : loss;
                                          })};
  };
  op.errors = [](Rng& rng) {
    const auto f = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng, Range(0, 1)));
    };
    const Arg none = Arg::None(), mean = Arg::Int(1);
    return std::vector<ErrorInput>{
        Saying(Refused({f({3, 4}), f({4}), none, none, mean}, TSR_INVALID_ARGUMENT,
                       "a self larger than the target (output with shape [4] doesn't match the "
                       "broadcast shape [3, 4])"),
               "self of shape [3, 4] must broadcast to the target's shape [4]"),
        Saying(Refused({f({3, 4}), f({3, 4}), f({2, 3, 4}), none, mean}, TSR_INVALID_ARGUMENT,
                       "a weight larger than the target"),
               "weight of shape [2, 3, 4] must broadcast to the target's shape [3, 4]"),
        Saying(Refused({f({3, 4}), f({3, 4}), none, f({2, 3, 4}), mean}, TSR_INVALID_ARGUMENT,
                       "a pos_weight larger than self"),
               "pos_weight * target of shape [2, 3, 4] must broadcast to self's shape [3, 4]"),
        Saying(Refused({f({4}), f({3, 4}), none, f({4}), mean}, TSR_INVALID_ARGUMENT,
                       "pos_weight * target larger than self"),
               "pos_weight * target of shape [3, 4] must broadcast to self's shape [4]"),
        Saying(Refused({f({3, 4}), f({3, 4}), none, f({5}), mean}, TSR_INVALID_ARGUMENT,
                       "a pos_weight that does not broadcast"),
               "pos_weight of shape [5] does not broadcast with the target's shape [3, 4]"),
        Saying(Refused({f({3, 4}), f({3, 4}, TSR_DTYPE_INT64), none, none, mean},
                       TSR_INVALID_ARGUMENT,
                       "an int64 target (result type Float can't be cast to the desired output "
                       "type Long)"),
               "result type float32 can't be cast to the desired output type int64"),
        Saying(Refused({f({3, 4}), f({3, 4}), none, none, Arg::Int(3)}, TSR_INVALID_ARGUMENT,
                       "an unknown reduction"),
               "expected reduction to be 0 (none), 1 (mean) or 2 (sum)")};
  };
  return op;
}

// ---- log_sigmoid ----

// The unary samples, the extremes, and logits large enough that the naive log(sigmoid(x))
// would lose them.
std::vector<Sample> LogSigmoidSamples(tsr_dtype dtype, Rng& rng) {
  std::vector<Sample> s;
  for (const std::vector<int64_t>& shape : UnaryShapes()) {
    s.push_back(Described({Arg::Tensor(Make(shape, dtype, rng))}));
  }
  s.push_back(Described({Arg::Tensor(ExtremeTensor(dtype))}, " (inf, NaN, large, tiny)"));
  s.push_back(
      Described({Arg::Tensor(Values(dtype, {8}, {-100, -30, -10, -1e-3, 1e-3, 10, 30, 100}))},
                " (large logits)"));
  return s;
}

// log_sigmoid_forward: (output, buffer), buffer = exp(-|x|) as ATen's CPU kernel keeps it.
OpInfo LogSigmoidForward() {
  OpInfo op;
  op.name = "log_sigmoid_forward";
  op.out = "log_sigmoid_forward.output";
  op.dtypes = kFloatingMask;  // current PyTorch's CPU kernel (1.13's had no float16)
  op.elementwise = true;
  op.samples = LogSigmoidSamples;
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    HostTensor output = Values(x.dtype, x.shape, {}), buffer = output;
    for (double v : x.values) {
      output.values.push_back(RoundTo(x.dtype, LogSigmoidOf(v)));
      buffer.values.push_back(RoundTo(x.dtype, std::exp(-std::fabs(v))));
    }
    return std::vector<HostTensor>{output, buffer};
  };
  return op;
}

OpInfo LogSigmoid() {
  OpInfo op;
  op.name = "log_sigmoid";
  op.out = "log_sigmoid.out";
  op.dtypes = kFloatingMask;
  op.elementwise = true;
  op.samples = LogSigmoidSamples;
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{Elementwise({&s.args[0]}, s.args[0].tensor.dtype,
                                               [](const double* v) { return LogSigmoidOf(v[0]); })};
  };
  return op;
}

}  // namespace

void AddLossOps(std::vector<OpInfo>& db) {
  db.push_back(HuberLoss());
  db.push_back(SmoothL1Loss());
  db.push_back(SoftMarginLoss());
  db.push_back(BinaryCrossEntropy());
  db.push_back(BinaryCrossEntropyWithLogits());
  db.push_back(LogSigmoid());
  db.push_back(LogSigmoidForward());
}

}  // namespace conformance
}  // namespace tessera
