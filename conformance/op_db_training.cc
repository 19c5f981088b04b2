// Training ops that the Core ATen IR decomposes: the softmax backward ops and the mean squared
// error loss with its backward op (op set 1.2), the negative log-likelihood loss and its
// backward op (op set 1.3). References in double, from the math: the softmax gradient
// y_k (g_k - sum_j g_j y_j) and the log_softmax gradient g_k - exp(y_k) sum_j g_j along the dim;
// the loss (x - t)^2 reduced, and its gradient norm (x - t) g; -w[t] x[n, t] per row (ignored
// rows 0) reduced, and its gradient -w[t] g at [n, t]. Samples follow PyTorch's OpInfo entries
// (_softmax_backward_data, nn.functional.mse_loss, nn.functional.nll_loss): real softmax
// outputs, every reduction, broadcasting, weights and ignore_index.
#include <cmath>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {
namespace {

// A softmax (or log_softmax) of random values along `dim`, rounded to `dtype`: the output a
// backward op is given.
HostTensor SoftmaxOf(HostTensor x, int64_t dim, bool log) {
  const LinesAlong lines(x.shape, dim);
  for (int64_t o = 0; o < lines.outer; ++o) {
    for (int64_t i = 0; i < lines.inner; ++i) {
      auto at = [&](int64_t k) -> double& {
        return x.values[static_cast<size_t>(lines.index(o, i, k))];
      };
      double m = -INFINITY;
      for (int64_t k = 0; k < lines.len; ++k) m = std::max(m, at(k));
      double sum = 0;
      for (int64_t k = 0; k < lines.len; ++k) sum += std::exp(at(k) - m);
      for (int64_t k = 0; k < lines.len; ++k) {
        const double v = log ? at(k) - m - std::log(sum) : std::exp(at(k) - m) / sum;
        at(k) = RoundTo(x.dtype, v);
      }
    }
  }
  return x;
}

void AddSoftmaxBackward(std::vector<OpInfo>& db, bool log) {
  OpInfo op;
  op.name = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  op.out = op.name + ".out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;  // a sum along the line, as softmax's
  op.samples = [log](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const auto& [shape, dim] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
             {{5}, 0}, {{7, 11}, 1}, {{7, 11}, 0}, {{}, 0}, {{13, 1, 5}, -1}, {{0, 3}, 1}}) {
      samples.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)),
                          Arg::Tensor(SoftmaxOf(MakeTensor(shape, dtype, rng), dim, log)),
                          Arg::Int(dim), Arg::Dtype(dtype)},
                         ShapeString(shape) + " dim " + std::to_string(dim)});
    }
    // The gradient of a float16 input whose softmax ran in float32 goes back to float16.
    if (dtype == TSR_DTYPE_FLOAT32) {
      samples.push_back({{Arg::Tensor(MakeTensor({4, 6}, dtype, rng)),
                          Arg::Tensor(SoftmaxOf(MakeTensor({4, 6}, dtype, rng), 1, log)),
                          Arg::Int(1), Arg::Dtype(TSR_DTYPE_FLOAT16)},
                         "[4, 6] dim 1, input_dtype float16"});
    }
    return samples;
  };
  op.reference = [log](const Sample& s) {
    const HostTensor& g = s.args[0].tensor;
    const HostTensor& y = s.args[1].tensor;
    HostTensor out = g;
    out.dtype = s.args[3].dtype;
    const LinesAlong lines(g.shape, s.args[2].integer);
    for (int64_t o = 0; o < lines.outer; ++o) {
      for (int64_t i = 0; i < lines.inner; ++i) {
        auto at = [&](const HostTensor& t, int64_t k) {
          return t.values[static_cast<size_t>(lines.index(o, i, k))];
        };
        long double sum = 0;
        for (int64_t k = 0; k < lines.len; ++k) sum += log ? at(g, k) : at(g, k) * at(y, k);
        for (int64_t k = 0; k < lines.len; ++k) {
          const double s_ = static_cast<double>(sum);
          const double v = log ? at(g, k) - std::exp(at(y, k)) * s_ : at(y, k) * (at(g, k) - s_);
          out.values[static_cast<size_t>(lines.index(o, i, k))] = RoundTo(out.dtype, v);
        }
      }
    }
    return std::vector<HostTensor>{out};
  };
  op.errors = [](Rng& rng) {
    auto f = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    const Arg f32 = Arg::Dtype(TSR_DTYPE_FLOAT32);
    return std::vector<ErrorInput>{
        {{{f({2, 3}), f({3, 2}), Arg::Int(1), f32}, "grad [2, 3] with output [3, 2]"},
         TSR_INVALID_ARGUMENT,
         "a gradient and an output of different shapes",
         "expected grad_output and output to have the same shape, got [2, 3] and [3, 2]"},
        {{{f({2, 3}), f({2, 3}, TSR_DTYPE_FLOAT64), Arg::Int(1), f32}, "float32 with float64"},
         TSR_INVALID_ARGUMENT,
         "a gradient and an output of different dtypes",
         "expected grad_output and output to have the same dtype, got float32 and float64"},
        {{{f({2, 3}), f({2, 3}), Arg::Int(2), f32}, "dim 2 of [2, 3]"},
         TSR_OUT_OF_RANGE,  // PyTorch's IndexError, as every dim error here
         "a dim out of range",
         "Dimension out of range (expected to be in range of [-2, 1], but got 2)"},
        {{{f({2, 3}), f({2, 3}), Arg::Int(1), Arg::Dtype(TSR_DTYPE_FLOAT64)},
          "input_dtype float64 for a float32 gradient"},
         TSR_INVALID_ARGUMENT,
         "an input_dtype other than the gradient's or float16",
         "expected input_dtype to be grad_output's dtype (float32), or float16 with a float32 "
         "grad_output, got float64"}};
  };
  db.push_back(std::move(op));
}

const char* ReductionName(int64_t r) { return r == 0 ? "none" : r == 1 ? "mean" : "sum"; }

// Reduce: the elementwise losses reduced as `reduction` says, in double.
HostTensor Reduce(HostTensor loss, int64_t reduction) {
  if (reduction == 0) return loss;
  long double sum = 0;
  for (double v : loss.values) sum += v;
  const double n = static_cast<double>(loss.values.size());
  const double r = reduction == 1 ? static_cast<double>(sum) / n : static_cast<double>(sum);
  HostTensor out;
  out.dtype = loss.dtype;
  out.values = {RoundTo(loss.dtype, r)};
  return out;
}

void AddMseLoss(std::vector<OpInfo>& db) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{5}, {5}}, {{7, 11}, {7, 11}}, {{}, {}}, {{0, 3}, {0, 3}}, {{7, 11}, {11}}};
  {
    OpInfo op;
    op.name = "mse_loss";
    op.out = "mse_loss.out";
    op.dtypes = kFloatingMask;
    op.tolerance_scale = 4;  // a mean of squares
    op.samples = [shapes](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> samples;
      for (int64_t reduction : {0, 1, 2}) {
        for (const auto& [a, b] : shapes) {
          samples.push_back(
              {{Arg::Tensor(MakeTensor(a, dtype, rng)), Arg::Tensor(MakeTensor(b, dtype, rng)),
                Arg::Int(reduction)},
               ShapeString(a) + " with " + ShapeString(b) + " " + ReductionName(reduction)});
        }
      }
      return samples;
    };
    op.reference = [](const Sample& s) {
      // The losses in double, rounded to the promoted dtype once: each, or their reduction.
      HostTensor loss = Elementwise({&s.args[0], &s.args[1]}, TSR_DTYPE_FLOAT64,
                                    [](const double* v) { return (v[0] - v[1]) * (v[0] - v[1]); });
      loss.dtype = ResultDtype({&s.args[0], &s.args[1]});
      if (s.args[2].integer == 0) {
        for (double& v : loss.values) v = RoundTo(loss.dtype, v);
      }
      return std::vector<HostTensor>{Reduce(loss, s.args[2].integer)};
    };
    op.errors = [](Rng& rng) {
      auto f = [&rng](std::vector<int64_t> shape) {
        return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
      };
      return std::vector<ErrorInput>{
          {{{f({3}), f({3}), Arg::Int(3)}, "reduction 3"},
           TSR_INVALID_ARGUMENT,
           "an unknown reduction",
           "expected reduction to be 0 (none), 1 (mean) or 2 (sum), got 3"},
          {{{f({2, 3}), f({4}), Arg::Int(1)}, "[2, 3] with [4]"},
           TSR_INVALID_ARGUMENT,
           "shapes that do not broadcast",
           "must match the size of tensor b (4) at non-singleton dimension 1"}};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.name = "mse_loss_backward";
    op.out = "mse_loss_backward.grad_input";
    op.dtypes = kFloatingMask;
    op.samples = [shapes](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> samples;
      for (int64_t reduction : {0, 1, 2}) {
        for (const auto& [a, b] : shapes) {
          // The incoming gradient has the loss's shape: the broadcast one, or a 0-dim.
          const std::vector<int64_t> grad_shape =
              reduction == 0 ? BroadcastShape({a, b}) : std::vector<int64_t>{};
          samples.push_back(
              {{Arg::Tensor(MakeTensor(grad_shape, dtype, rng)),
                Arg::Tensor(MakeTensor(a, dtype, rng)), Arg::Tensor(MakeTensor(b, dtype, rng)),
                Arg::Int(reduction)},
               ShapeString(a) + " with " + ShapeString(b) + " " + ReductionName(reduction)});
        }
      }
      return samples;
    };
    op.reference = [](const Sample& s) {
      const int64_t n = static_cast<int64_t>(s.args[1].tensor.values.size());
      const double norm = s.args[3].integer == 1 ? 2.0 / static_cast<double>(n) : 2.0;
      return std::vector<HostTensor>{
          Elementwise({&s.args[0], &s.args[1], &s.args[2]}, s.args[1].tensor.dtype,
                      [norm](const double* v) { return norm * (v[1] - v[2]) * v[0]; })};
    };
    op.errors = [](Rng& rng) {
      auto f = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
        return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
      };
      return std::vector<ErrorInput>{
          {{{f({}), f({3}), f({3}), Arg::Int(-1)}, "reduction -1"},
           TSR_INVALID_ARGUMENT,
           "an unknown reduction",
           "expected reduction to be 0 (none), 1 (mean) or 2 (sum), got -1"},
          {{{f({}), f({3}, TSR_DTYPE_FLOAT64), f({3}), Arg::Int(1)}, "float64 self, float32 rest"},
           TSR_INVALID_ARGUMENT,
           "operands of different dtypes",
           "expected grad_output, self and target to have the same dtype, got float32, float64 "
           "and float32"}};
    };
    db.push_back(std::move(op));
  }
}

// ---- nll_loss (op set 1.3) ----

// One nll_loss case: the input's shape ([N, C] or [C]), a weight or none, the reduction, the
// ignore_index with how many rows use it (0, the second row, or all), and whether the ignored
// row's input is -inf (a log_softmax over masked logits: it must still count for nothing).
struct NllCase {
  std::vector<int64_t> shape;
  bool weight;
  int64_t reduction;
  int64_t ignore_index;
  enum Ignored { kNone, kOne, kAll } ignored = kNone;
  bool minus_inf = false;
};
const std::vector<NllCase>& NllCases() {
  // After PyTorch's sample_inputs_nll_loss: each reduction, with and without a weight, an
  // ignore_index that a row uses, a 1-D input with a 0-dim target, an empty batch (the mean of
  // nothing is 0 / 0).
  // And ignored rows whose input is -inf, and a batch whose every row is ignored (the mean is
  // 0 / 0, the gradient 0).
  using I = NllCase::Ignored;
  static const std::vector<NllCase> cases{{{5, 4}, false, 1, -100},
                                          {{5, 4}, true, 1, -100},
                                          {{5, 4}, true, 0, -100},
                                          {{5, 4}, false, 2, -100},
                                          {{6, 3}, true, 1, 1, I::kOne},
                                          {{6, 3}, false, 0, 2, I::kOne},
                                          {{6, 3}, true, 2, 1, I::kOne, true},
                                          {{4, 3}, false, 0, -100, I::kOne, true},
                                          {{3, 4}, false, 1, 0, I::kAll},
                                          {{3, 4}, true, 2, 0, I::kAll, true},
                                          {{4}, true, 1, -100},
                                          {{4}, false, 0, -100},
                                          {{0, 3}, false, 1, -100}};
  return cases;
}

// The args (self, target, weight, reduction, ignore_index) of a case.
std::vector<Arg> NllArgsOf(const NllCase& c, tsr_dtype dtype, Rng& rng) {
  const int64_t classes = c.shape.back();
  MakeOptions in_range;
  in_range.low = 0;
  in_range.high = static_cast<double>(classes);
  HostTensor target =
      MakeTensor(c.shape.size() == 2 ? std::vector<int64_t>{c.shape[0]} : std::vector<int64_t>{},
                 TSR_DTYPE_INT64, rng, in_range);
  HostTensor x = MakeTensor(c.shape, dtype, rng);
  for (size_t n = 0; n < target.values.size(); ++n) {
    if (c.ignored == NllCase::kAll || (c.ignored == NllCase::kOne && n == 1)) {
      target.values[n] = static_cast<double>(c.ignore_index);
      if (c.minus_inf) {
        for (int64_t k = 0; k < classes; ++k) x.values[n * classes + k] = -INFINITY;
      }
    }
  }
  return {Arg::Tensor(x), Arg::Tensor(target),
          c.weight ? Arg::Tensor(MakeTensor({classes}, dtype, rng)) : Arg::None(),
          Arg::Int(c.reduction), Arg::Int(c.ignore_index)};
}

std::string NllDesc(const NllCase& c) {
  return ShapeString(c.shape) + (c.weight ? " weighted " : " ") + ReductionName(c.reduction) +
         (c.ignored == NllCase::kNone ? ""
          : c.ignored == NllCase::kOne
              ? " ignore_index " + std::to_string(c.ignore_index) + " on a row"
              : " ignore_index " + std::to_string(c.ignore_index) + " on every row") +
         (c.minus_inf ? " (-inf there)" : "");
}

// The forward in double: each row's loss and weight (0 for an ignored row), the output as the
// reduction gives it and the total weight (0 for a 2-D input's reduction none, as ATen's).
struct NllForward {
  std::vector<double> losses, weights;
  HostTensor output, total_weight;
};
NllForward NllReference(const std::vector<Arg>& args) {
  const HostTensor& x = args[0].tensor;
  const HostTensor& t = args[1].tensor;
  const bool weighted = args[2].kind == Arg::Kind::kTensor;
  const int64_t reduction = args[3].integer, ignore = args[4].integer;
  const int64_t classes = x.shape.back();
  NllForward f;
  long double loss_sum = 0, weight_sum = 0;
  for (size_t n = 0; n < t.values.size(); ++n) {
    const int64_t target = static_cast<int64_t>(t.values[n]);
    const double w = target == ignore ? 0.0 : weighted ? args[2].tensor.values[target] : 1.0;
    const double loss = target == ignore ? 0.0 : -w * x.values[n * classes + target];
    f.losses.push_back(loss);
    f.weights.push_back(w);
    loss_sum += loss;
    weight_sum += w;
  }
  f.output.dtype = f.total_weight.dtype = x.dtype;
  if (reduction == 0) {
    f.output.shape = std::vector<int64_t>(x.shape.begin(), x.shape.end() - 1);
    for (double v : f.losses) f.output.values.push_back(RoundTo(x.dtype, v));
  } else {
    const long double r = reduction == 1 ? loss_sum / weight_sum : loss_sum;
    f.output.values = {RoundTo(x.dtype, static_cast<double>(r))};
  }
  const bool rows = reduction == 0 && x.dim() == 2;
  f.total_weight.values = {rows ? 0.0 : RoundTo(x.dtype, static_cast<double>(weight_sum))};
  return f;
}

std::vector<ErrorInput> NllErrors(Rng& rng, bool backward) {
  auto f = [&rng](std::vector<int64_t> shape) {
    return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
  };
  auto targets = [](std::vector<double> v, tsr_dtype dtype = TSR_DTYPE_INT64) {
    HostTensor t;
    t.dtype = dtype;
    t.shape = {static_cast<int64_t>(v.size())};
    t.values = std::move(v);
    return Arg::Tensor(t);
  };
  struct E {
    std::vector<Arg> args;  // self, target, weight, reduction
    std::string desc;
    tsr_code code;
    std::string what;
    std::string message;  // ErrorInput's: a part of the refusal's message
  };
  const std::vector<E> errors{
      {{f({3, 4}), targets({1, 0, 4}), Arg::None(), Arg::Int(1)},
       "target 4 of 4 classes",
       TSR_OUT_OF_RANGE,
       "a target out of bounds (PyTorch's IndexError)",
       "Target 4 is out of bounds"},
      {{f({3, 4}), targets({1, 0}), Arg::None(), Arg::Int(1)},
       "2 targets for 3 rows",
       TSR_INVALID_ARGUMENT,
       "a target of another batch size",
       "size mismatch (got input: [3, 4], target: [2])"},
      {{f({2, 3, 4}), targets({1, 0}), Arg::None(), Arg::Int(1)},
       "a 3-D input",
       TSR_INVALID_ARGUMENT,
       "an input of more than 2 dims",
       "input tensor should be 1D or 2D, got [2, 3, 4]"},
      {{f({3, 4}), targets({1, 0, 2}, TSR_DTYPE_INT32), Arg::None(), Arg::Int(1)},
       "int32 targets",
       TSR_INVALID_ARGUMENT,
       "targets that are not int64",
       "expected target of dtype int64, got int32"},
      {{f({3, 4}), targets({1, 0, 2}), f({3}), Arg::Int(1)},
       "a weight of 3 for 4 classes",
       TSR_INVALID_ARGUMENT,
       "a weight that is not one per class",
       "weight tensor should be defined either for all 4 classes or no classes"},
      {{f({3, 4}), targets({1, 0, 2}), f({2, 2}), Arg::Int(1)},
       "a weight of shape [2, 2]",
       TSR_INVALID_ARGUMENT,
       "a weight that is not 1-D (4 elements, but not one per class)",
       "but got weight tensor of shape: [2, 2]"},
      {{f({3, 4}), targets({1, 0, 2}), Arg::None(), Arg::Int(3)},
       "reduction 3",
       TSR_INVALID_ARGUMENT,
       "an unknown reduction",
       "expected reduction to be 0 (none), 1 (mean) or 2 (sum), got 3"}};
  std::vector<ErrorInput> out;
  for (const E& e : errors) {
    std::vector<Arg> args = e.args;
    args.push_back(Arg::Int(-100));
    if (backward) {
      // grad_output first, total_weight last: shaped as a valid call would have them.
      args.insert(args.begin(), f({}));
      args.push_back(f({}));
    }
    out.push_back({{args, e.desc}, e.code, e.what, e.message});
  }
  return out;
}

void AddNllLoss(std::vector<OpInfo>& db) {
  for (const bool both : {true, false}) {
    OpInfo op;
    op.name = both ? "nll_loss_forward" : "nll_loss";
    op.out = both ? "nll_loss_forward.output" : "nll_loss.out";
    op.dtypes = kFloatingMask;
    op.tolerance_scale = 4;  // a sum and a quotient
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const NllCase& c : NllCases()) s.push_back({NllArgsOf(c, dtype, rng), NllDesc(c)});
      return s;
    };
    op.reference = [both](const Sample& s) {
      NllForward f = NllReference(s.args);
      if (!both) return std::vector<HostTensor>{f.output};
      return std::vector<HostTensor>{f.output, f.total_weight};
    };
    op.errors = [](Rng& rng) { return NllErrors(rng, false); };
    db.push_back(std::move(op));
  }
  OpInfo op;
  op.name = "nll_loss_backward";
  op.out = "nll_loss_backward.grad_input";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const NllCase& c : NllCases()) {
      std::vector<Arg> args = NllArgsOf(c, dtype, rng);
      const NllForward f = NllReference(args);
      const bool rows = c.reduction == 0 && c.shape.size() == 2;
      args.insert(args.begin(), Arg::Tensor(MakeTensor(rows ? std::vector<int64_t>{c.shape[0]}
                                                            : std::vector<int64_t>{},
                                                       dtype, rng)));
      args.push_back(Arg::Tensor(f.total_weight));
      s.push_back({args, NllDesc(c)});
      if (!rows && c.reduction == 1 && c.ignored == NllCase::kNone && c.shape.size() == 2) {
        // ATen takes a reduced loss's gradient as [1] too.
        args[0].tensor.shape = {1};
        s.push_back({args, NllDesc(c) + ", grad_output [1]"});
      }
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const std::vector<Arg> forward(s.args.begin() + 1, s.args.begin() + 6);
    const NllForward f = NllReference(forward);
    const HostTensor& g = s.args[0].tensor;
    const HostTensor& x = s.args[1].tensor;
    const HostTensor& t = s.args[2].tensor;
    const int64_t classes = x.shape.back();
    const double total = s.args[6].tensor.values[0];
    HostTensor grad = x;
    for (double& v : grad.values) v = 0;
    for (size_t n = 0; n < t.values.size(); ++n) {
      if (f.weights[n] == 0) continue;
      const double gn = g.values.size() == 1 ? g.values[0] : g.values[n];
      double v = -f.weights[n] * gn;
      if (s.args[4].integer == 1) v /= total;
      grad.values[n * classes + static_cast<int64_t>(t.values[n])] = RoundTo(x.dtype, v);
    }
    return std::vector<HostTensor>{grad};
  };
  op.errors = [](Rng& rng) { return NllErrors(rng, true); };
  db.push_back(std::move(op));
}

}  // namespace

void AddTrainingOps(std::vector<OpInfo>& db) {
  AddSoftmaxBackward(db, /*log=*/false);
  AddSoftmaxBackward(db, /*log=*/true);
  AddMseLoss(db);
  AddNllLoss(db);
  AddNormBackwardOps(db);
  AddNNBackwardOps(db);
  AddLossOps(db);                // op set 1.9: huber, smooth_l1, binary cross entropy, soft margin
  AddPoolingBackwardOps(db);     // op set 1.10
  AddUpsampleBackwardOps(db);    // op set 1.10
  AddLossBackwardOps(db);        // op set 1.10
  AddActivationBackwardOps(db);  // op set 1.10
  AddViewBackwardOps(db);        // op set 1.10
  AddPaddingBackwardOps(db);     // op set 1.10
  AddGroupNormBackwardOps(db);   // op set 1.10
  AddDistanceBackwardOps(db);    // op set 1.10
}

}  // namespace conformance
}  // namespace tessera
