// The backward ops of op sets 1.7-1.9's activations (op set 1.10, family "training"):
// log_sigmoid_backward, glu_backward and logit_backward with their .grad_input forms, and
// _prelu_kernel_backward; composites, dispatcher/ops/activation_backward_ops.cc.
//
// The references are ATen's CPU kernels written out element by element in double (cpu/
// Activation.cpp's log_sigmoid_backward and prelu_backward kernels, GatedLinearUnit.cpp with
// cpu/GluKernel.cpp, cpu/BinaryOpsKernel.cpp's logit_backward), not the composites' formulas:
// log_sigmoid_backward reads the forward's buffer, logit_backward's bounds are rounded to the
// dtype as its kernel holds them, _prelu_kernel_backward's weight gradient keeps the broadcast
// shape. Each op's GradientSpec links it to its forward for the gradient oracle, with samples
// away from where the forward has no derivative (logit's clamp bounds, prelu's 0).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Args = std::vector<Arg>;
using Returns = std::vector<HostTensor>;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

HostTensor Random(std::vector<int64_t> shape, tsr_dtype dtype, Rng& rng, double low = -4,
                  double high = 4) {
  MakeOptions range;
  range.low = low;
  range.high = high;
  return MakeTensor(std::move(shape), dtype, rng, range);
}

HostTensor F64(std::vector<int64_t> shape, Rng& rng, double low = -4, double high = 4) {
  return Random(std::move(shape), TSR_DTYPE_FLOAT64, rng, low, high);
}

HostTensor F32(std::vector<int64_t> shape, Rng& rng) {
  return Random(std::move(shape), TSR_DTYPE_FLOAT32, rng);
}

// ---- log_sigmoid_backward ----

// Buffer: what log_sigmoid_forward returns beside its output for x, exp(-|x|) in x's dtype.
HostTensor Buffer(const HostTensor& x) {
  HostTensor b = Values(x.dtype, x.shape, {});
  for (double v : x.values) b.values.push_back(RoundTo(x.dtype, std::exp(-std::fabs(v))));
  return b;
}

// log_sigmoid_backward(grad_output, self, buffer): ATen's CPU kernel, (max_deriv - sign * b /
// (1 + b)) * g with max_deriv, sign = 1, 1 for x < 0 and 0, -1 otherwise.
OpInfo LogSigmoidBackward() {
  OpInfo op;
  op.name = "log_sigmoid_backward";
  op.out = "log_sigmoid_backward.grad_input";
  op.dtypes = kFloatingMask;
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](const HostTensor& x, std::vector<int64_t> grad_shape,
                         const std::string& note) {
      s.push_back(Described({Arg::Tensor(Random(std::move(grad_shape), dtype, rng)), Arg::Tensor(x),
                             Arg::Tensor(Buffer(x))},
                            note));
    };
    for (const std::vector<int64_t>& shape : UnaryShapes()) {
      const HostTensor x = MakeTensor(shape, dtype, rng);
      add(x, shape, "");
    }
    add(Random({3, 4}, dtype, rng, -30, 30), {3, 4}, " (far from 0: exp(-|x|) underflows)");
    add(MakeTensor({3, 4}, dtype, rng), {4}, " (grad_output broadcast)");
    // A buffer of one element per row, broadcast against self (ATen's iterator allows it).
    const HostTensor x = MakeTensor({3, 4}, dtype, rng);
    s.push_back(Described({Arg::Tensor(MakeTensor({3, 4}, dtype, rng)), Arg::Tensor(x),
                           Arg::Tensor(Buffer(MakeTensor({3, 1}, dtype, rng)))},
                          " (a buffer that is not the forward's, broadcast: its values are used)"));
    add(ExtremeTensor(dtype), ExtremeTensor(dtype).shape, " (inf, -inf, NaN, -0.0)");
    return s;
  };
  op.reference = [](const Sample& s) {
    return Returns{Elementwise(
        {&s.args[0], &s.args[1], &s.args[2]}, s.args[1].tensor.dtype, [](const double* v) {
          const bool negative = v[1] < 0;
          const double q = v[2] / (1 + v[2]);
          return ((negative ? 1.0 : 0.0) - (negative ? 1.0 : -1.0) * q) * v[0];
        })};
  };
  op.errors = [](Rng& rng) {
    const HostTensor x = F32({3, 4}, rng);
    return std::vector<ErrorInput>{
        Saying(
            Refused({Arg::Tensor(Random({3, 4}, TSR_DTYPE_FLOAT64, rng)), Arg::Tensor(x),
                     Arg::Tensor(Buffer(x))},
                    TSR_INVALID_ARGUMENT, "a float64 grad_output for float32 self (Found dtype)"),
            "Found dtype float64 but expected float32 (grad_output against self)"),
        Saying(Refused({Arg::Tensor(F32({3, 4}, rng)), Arg::Tensor(x),
                        Arg::Tensor(Buffer(Random({3, 4}, TSR_DTYPE_FLOAT64, rng)))},
                       TSR_INVALID_ARGUMENT, "a float64 buffer for float32 self"),
               "Found dtype float64 but expected float32 (buffer against self)"),
        Saying(Refused({Arg::Tensor(F32({3, 5}, rng)), Arg::Tensor(x), Arg::Tensor(Buffer(x))},
                       TSR_INVALID_ARGUMENT, "a grad_output that does not broadcast with self"),
               "the size of tensor a (5) must match the size of tensor b (4) at non-singleton "
               "dimension 1")};
  };
  GradientSpec spec;
  spec.forward = "log_sigmoid_forward";
  spec.samples = [](Rng& rng) {
    return std::vector<Sample>{{{Arg::Tensor(F64({7}, rng))}, "[7]"},
                               {{Arg::Tensor(F64({3, 4}, rng, -20, 20))}, "[3, 4] in [-20, 20]"}};
  };
  spec.wrt = {0};
  spec.backward_args = [](const Sample& s, const Returns& r, const HostTensor& g) {
    return Args{Arg::Tensor(g), s.args[0], Arg::Tensor(r[1])};
  };
  op.gradient = spec;
  return op;
}

// ---- glu_backward ----

// ExpandTo: `t`'s values broadcast to `shape`.
HostTensor ExpandTo(const HostTensor& t, const std::vector<int64_t>& shape) {
  const Arg from = Arg::Tensor(t);
  const Arg to = Arg::Tensor(Full(shape, t.dtype, 0));
  return Elementwise({&from, &to}, t.dtype, [](const double* v) { return v[0]; });
}

std::vector<int64_t> Halved(std::vector<int64_t> shape, int64_t dim) {
  const size_t d = static_cast<size_t>(dim < 0 ? dim + static_cast<int64_t>(shape.size()) : dim);
  shape[d] /= 2;
  return shape;
}

// glu_backward(grad_output, self, dim): self = [a, b] along dim; sigmoid(b) * g for a's
// positions and (1 - sigmoid(b)) * sigmoid(b) * a * g for b's.
OpInfo GluBackward() {
  OpInfo op;
  op.name = "glu_backward";
  op.out = "glu_backward.grad_input";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;  // 16-bit: ATen rounds sigmoid(b) before its products
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](std::vector<int64_t> shape, int64_t dim, const std::string& note = "") {
      const std::vector<int64_t> half = Halved(shape, dim);
      s.push_back(Described({Arg::Tensor(Random(half, dtype, rng)),
                             Arg::Tensor(Random(std::move(shape), dtype, rng)), Arg::Int(dim)},
                            note));
    };
    add({2}, 0);
    add({2, 4}, 1);
    add({6, 3}, 0);
    add({3, 6, 8}, -1);
    add({2, 4, 3}, 1);
    add({1, 4, 6, 2}, -2);
    add({0, 4}, 1, " (no rows)");
    add({4, 0}, 1, " (an empty halved dim)");
    // grad_output broadcast to the half's shape, as ATen's iterator allows.
    s.push_back(Described({Arg::Tensor(Random({3}, dtype, rng)),
                           Arg::Tensor(Random({2, 6}, dtype, rng)), Arg::Int(1)},
                          " (grad_output broadcast)"));
    s.push_back(Described(
        {Arg::Tensor(Values(dtype, {2, 2}, {1, -2, 0.5, 3})),
         Arg::Tensor(Values(dtype, {2, 4}, {kInf, 2, 1, -kInf, -1, kNan, 40, -40})), Arg::Int(1)},
        " (infinities and nan)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[1].tensor;
    const int64_t dim = s.args[2].integer;
    const HostTensor g = ExpandTo(s.args[0].tensor, Halved(x.shape, dim));
    const LinesAlong lines(x.shape, dim);
    const LinesAlong half_lines(g.shape, dim);
    const int64_t half = lines.len / 2;
    std::vector<long double> out(x.values.size(), 0);
    for (int64_t o = 0; o < lines.outer; ++o) {
      for (int64_t i = 0; i < lines.inner; ++i) {
        for (int64_t k = 0; k < half; ++k) {
          const long double a = x.values[static_cast<size_t>(lines.index(o, i, k))];
          const long double b = x.values[static_cast<size_t>(lines.index(o, i, k + half))];
          const long double grad = g.values[static_cast<size_t>(half_lines.index(o, i, k))];
          const long double gate = 1 / (1 + std::exp(-b));
          out[static_cast<size_t>(lines.index(o, i, k))] = gate * grad;
          out[static_cast<size_t>(lines.index(o, i, k + half))] = (1 - gate) * gate * a * grad;
        }
      }
    }
    return Returns{FromLong(x.shape, x.dtype, out)};
  };
  op.errors = [](Rng& rng) {
    const auto args = [](HostTensor g, HostTensor x, int64_t dim) {
      return Args{Arg::Tensor(std::move(g)), Arg::Tensor(std::move(x)), Arg::Int(dim)};
    };
    return std::vector<ErrorInput>{
        RefusedSaying(args(F32({}, rng), F32({}, rng), 0), TSR_INVALID_ARGUMENT,
                      "glu does not support 0-dimensional tensors"),
        Saying(Refused(args(F32({2, 1}, rng), F32({2, 3}, rng), 1), TSR_INVALID_ARGUMENT,
                       "Halving dimension must be even"),
               "Halving dimension must be even, but dimension 1 is size 3"),
        Saying(Refused(args(F32({2, 2}, rng), F32({2, 4}, rng), 2), TSR_OUT_OF_RANGE,
                       "a dim out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(
            Refused(args(Random({2, 2}, TSR_DTYPE_FLOAT64, rng), F32({2, 4}, rng), 1),
                    TSR_INVALID_ARGUMENT, "a float64 grad_output for float32 self (Found dtype)"),
            "Found dtype float64 but expected float32 (grad_output against self)"),
        Saying(Refused(args(F32({2, 2, 2}, rng), F32({2, 4}, rng), 1), TSR_INVALID_ARGUMENT,
                       "a grad_output larger than the output (doesn't match the broadcast shape)"),
               "grad_output of shape [2, 2, 2] must broadcast to glu's output shape [2, 2]"),
        Saying(Refused(args(F32({3, 2}, rng), F32({2, 4}, rng), 1), TSR_INVALID_ARGUMENT,
                       "a grad_output that does not broadcast to the output"),
               "grad_output of shape [3, 2] must broadcast to glu's output shape [2, 2]")};
  };
  GradientSpec spec;
  spec.forward = "glu";
  spec.samples = [](Rng& rng) {
    return std::vector<Sample>{
        {{Arg::Tensor(F64({4, 6}, rng)), Arg::Int(1)}, "[4, 6] dim 1"},
        {{Arg::Tensor(F64({6, 3}, rng)), Arg::Int(0)}, "[6, 3] dim 0"},
        {{Arg::Tensor(F64({2, 4, 2}, rng)), Arg::Int(-2)}, "[2, 4, 2] dim -2"}};
  };
  spec.wrt = {0};
  spec.backward_args = [](const Sample& s, const Returns&, const HostTensor& g) {
    return Args{Arg::Tensor(g), s.args[0], s.args[1]};
  };
  op.gradient = spec;
  return op;
}

// ---- logit_backward ----

// logit_backward(grad_output, self, eps=None): ATen's kernel's scalar path. lo = eps and hi =
// 1 - eps in the dtype (the kernel's scalar_t); without eps (or eps < 0) [0, 1] and NaN outside,
// with it 0 outside; g * inf at 0 and 1 (g / (x (1 - x)) for x = +-0.0 alike).
OpInfo LogitBackward() {
  OpInfo op;
  op.name = "logit_backward";
  op.out = "logit_backward.grad_input";
  op.dtypes = kFloatingMask;
  op.elementwise = true;
  op.tolerance_scale = 4;  // 16-bit: ATen rounds 1 - x and x (1 - x) on the way
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const std::vector<Arg> epss{Arg::None(), Arg::Double(0.25), Arg::Double(0), Arg::Double(0.1),
                                Arg::Double(-1)};
    // Values inside (0, 1), at its ends, outside it and at eps's bounds.
    const std::vector<double> points{-0.5, 0,    0.05, 0.1, 0.25, 0.3,  0.5,  0.75,
                                     0.9,  0.95, 1,    1.5, -0.0, kNan, kInf, -kInf};
    size_t i = 0;
    for (const std::vector<int64_t>& shape : UnaryShapes()) {
      MakeOptions unit;
      unit.low = -0.2;
      unit.high = 1.2;
      s.push_back(
          Described({Arg::Tensor(Random(shape, dtype, rng)),
                     Arg::Tensor(MakeTensor(shape, dtype, rng, unit)), epss[i++ % epss.size()]}));
    }
    for (const Arg& eps : epss) {
      s.push_back(Described(
          {Arg::Tensor(Random({16}, dtype, rng)), Arg::Tensor(Values(dtype, {16}, points)), eps},
          " (the bounds, outside, inf and NaN)"));
    }
    // grad_output broadcast; a 0-dim float64 grad_output promotes to self's dtype (a dim
    // tensor's dtype wins within a category).
    MakeOptions unit;
    unit.low = 0.05;
    unit.high = 0.95;
    s.push_back(Described({Arg::Tensor(Random({4}, dtype, rng)),
                           Arg::Tensor(MakeTensor({3, 4}, dtype, rng, unit)), Arg::Double(0.2)},
                          " (grad_output broadcast)"));
    s.push_back(Described({Arg::Tensor(Random({}, TSR_DTYPE_FLOAT64, rng)),
                           Arg::Tensor(MakeTensor({5}, dtype, rng, unit)), Arg::None()},
                          " (a 0-dim float64 grad_output)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const tsr_dtype dtype = ResultDtype({&s.args[0], &s.args[1]});
    const double eps = Given(s, 2) ? RoundTo(dtype, s.args[2].number) : -1;
    const bool clamped = eps >= 0;
    const double lo = clamped ? eps : 0, hi = clamped ? RoundTo(dtype, 1 - eps) : 1;
    return Returns{Elementwise({&s.args[0], &s.args[1]}, dtype, [=](const double* v) {
      const double g = v[0], x = v[1];
      if (x < lo || x > hi) return clamped ? 0.0 : kNan;
      if (x == 0 || x == 1) return g * kInf;
      return g / (x * (1 - x));
    })};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Saying(Refused({Arg::Tensor(F32({3}, rng)), Arg::Tensor(F32({4}, rng)), Arg::None()},
                       TSR_INVALID_ARGUMENT, "a grad_output that does not broadcast with self"),
               "the size of tensor a (3) must match the size of tensor b (4) at non-singleton "
               "dimension 0")};
  };
  GradientSpec spec;
  spec.forward = "logit";
  spec.samples = [](Rng& rng) {
    // Inside (eps, 1 - eps), and with eps also outside it, where the clamp is flat (values well
    // away from the bounds, so that the differences do not straddle them).
    HostTensor spread =
        Values(TSR_DTYPE_FLOAT64, {8}, {0.02, 0.07, 0.2, 0.41, 0.66, 0.83, 0.95, 0.98});
    return std::vector<Sample>{
        {{Arg::Tensor(F64({7}, rng, 0.05, 0.95)), Arg::None()}, "[7] in (0.05, 0.95)"},
        {{Arg::Tensor(F64({3, 4}, rng, 0.2, 0.8)), Arg::Double(0.1)}, "[3, 4] eps 0.1"},
        {{Arg::Tensor(spread), Arg::Double(0.125)}, "[8] eps 0.125, inside and outside"}};
  };
  spec.wrt = {0};
  spec.backward_args = [](const Sample& s, const Returns&, const HostTensor& g) {
    return Args{Arg::Tensor(g), s.args[0], s.args[1]};
  };
  op.gradient = spec;
  return op;
}

// ---- _prelu_kernel_backward ----

// _prelu_kernel_backward(grad_output, self, weight): (x > 0 ? g : w * g, x > 0 ? 0 : x * g),
// both of the shape the three broadcast to (the weight's gradient is not summed to its shape).
OpInfo PreluKernelBackward() {
  OpInfo op;
  op.name = "_prelu_kernel_backward";
  op.dtypes = kFloatingMask;
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](std::vector<int64_t> g, std::vector<int64_t> x, std::vector<int64_t> w,
                         const std::string& note = "") {
      s.push_back(Described({Arg::Tensor(MakeTensor(std::move(g), dtype, rng)),
                             Arg::Tensor(MakeTensor(std::move(x), dtype, rng)),
                             Arg::Tensor(MakeTensor(std::move(w), dtype, rng))},
                            note));
    };
    add({2, 3, 4}, {2, 3, 4}, {1, 3, 1}, " (a weight per channel, as prelu shapes it)");
    add({5, 4}, {5, 4}, {1, 4});
    add({5}, {5}, {1});
    add({2, 3}, {2, 3}, {}, " (one 0-dim weight)");
    add({}, {}, {});
    add({3, 0, 2}, {3, 0, 2}, {1, 0, 1}, " (no channels)");
    add({0, 3}, {0, 3}, {1, 3}, " (no rows)");
    add({4, 3}, {4, 3}, {4, 3}, " (a weight of self's shape)");
    add({3}, {2, 3}, {1, 3}, " (grad_output broadcast)");
    s.push_back(Described({Arg::Tensor(MakeTensor(ExtremeTensor(dtype).shape, dtype, rng)),
                           Arg::Tensor(ExtremeTensor(dtype)), Arg::Tensor(Values(dtype, {}, {-2}))},
                          " (inf, NaN, -0.0: only x > 0 passes g)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const std::vector<const Arg*> operands{&s.args[0], &s.args[1], &s.args[2]};
    const tsr_dtype dtype = s.args[1].tensor.dtype;
    return Returns{
        Elementwise(operands, dtype, [](const double* v) { return v[1] > 0 ? v[0] : v[2] * v[0]; }),
        Elementwise(operands, dtype, [](const double* v) { return v[1] > 0 ? 0.0 : v[1] * v[0]; })};
  };
  op.errors = [](Rng& rng) {
    const auto args = [](HostTensor g, HostTensor x, HostTensor w) {
      return Args{Arg::Tensor(std::move(g)), Arg::Tensor(std::move(x)), Arg::Tensor(std::move(w))};
    };
    return std::vector<ErrorInput>{
        Saying(
            Refused(args(F32({2, 3}, rng), F32({2, 3}, rng), Random({3}, TSR_DTYPE_FLOAT64, rng)),
                    TSR_INVALID_ARGUMENT, "a float64 weight for float32 self (Found dtype)"),
            "Found dtype float64 but expected float32 (weight against self)"),
        Saying(
            Refused(args(Random({2, 3}, TSR_DTYPE_FLOAT64, rng), F32({2, 3}, rng), F32({3}, rng)),
                    TSR_INVALID_ARGUMENT, "a float64 grad_output for float32 self"),
            "Found dtype float64 but expected float32 (grad_output against self)"),
        // self, weight, then grad_output broadcast in turn: the shapes name the pair refused.
        Saying(Refused(args(F32({2, 3}, rng), F32({2, 3}, rng), F32({4}, rng)),
                       TSR_INVALID_ARGUMENT, "a weight that does not broadcast with self"),
               "must match the size of tensor b (4) at non-singleton dimension 1 (shapes [2, 3] "
               "and [4])"),
        Saying(Refused(args(F32({2, 4}, rng), F32({2, 3}, rng), F32({3}, rng)),
                       TSR_INVALID_ARGUMENT, "a grad_output that does not broadcast with self"),
               "must match the size of tensor b (4) at non-singleton dimension 1 (shapes [2, 3] "
               "and [2, 4])")};
  };
  GradientSpec spec;
  spec.forward = "_prelu_kernel";
  // A weight of self's own shape: the backward's weight gradient has the broadcast shape, which
  // is the weight's only then (autograd's engine sums it otherwise).
  spec.samples = [](Rng& rng) {
    return std::vector<Sample>{
        {{Arg::Tensor(F64({3, 4}, rng)), Arg::Tensor(F64({3, 4}, rng, -1, 1))}, "[3, 4] by [3, 4]"},
        {{Arg::Tensor(F64({2, 3, 2}, rng)), Arg::Tensor(F64({2, 3, 2}, rng, -1, 1))},
         "[2, 3, 2] by [2, 3, 2]"}};
  };
  spec.wrt = {0, 1};
  spec.backward_args = [](const Sample& s, const Returns&, const HostTensor& g) {
    return Args{Arg::Tensor(g), s.args[0], s.args[1]};
  };
  op.gradient = spec;
  return op;
}

}  // namespace

void AddActivationBackwardOps(std::vector<OpInfo>& db) {
  db.push_back(LogSigmoidBackward());
  db.push_back(GluBackward());
  db.push_back(LogitBackward());
  db.push_back(PreluKernelBackward());
}

}  // namespace conformance
}  // namespace tessera
