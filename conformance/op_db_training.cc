// Training ops that the Core ATen IR decomposes (op set 1.2): the softmax backward ops and the
// mean squared error loss with its backward op. References in double, from the math: the
// softmax gradient y_k (g_k - sum_j g_j y_j) and the log_softmax gradient
// g_k - exp(y_k) sum_j g_j along the dim; the loss (x - t)^2 reduced, and its gradient
// norm (x - t) g. Samples follow PyTorch's OpInfo entries (_softmax_backward_data,
// nn.functional.mse_loss): real softmax outputs, every reduction, broadcasting.
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
         "a gradient and an output of different shapes"},
        {{{f({2, 3}), f({2, 3}, TSR_DTYPE_FLOAT64), Arg::Int(1), f32}, "float32 with float64"},
         TSR_INVALID_ARGUMENT,
         "a gradient and an output of different dtypes"},
        {{{f({2, 3}), f({2, 3}), Arg::Int(2), f32}, "dim 2 of [2, 3]"},
         TSR_OUT_OF_RANGE,  // PyTorch's IndexError, as every dim error here
         "a dim out of range"},
        {{{f({2, 3}), f({2, 3}), Arg::Int(1), Arg::Dtype(TSR_DTYPE_FLOAT64)},
          "input_dtype float64 for a float32 gradient"},
         TSR_INVALID_ARGUMENT,
         "an input_dtype other than the gradient's or float16"}};
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
      return std::vector<ErrorInput>{{{{f({3}), f({3}), Arg::Int(3)}, "reduction 3"},
                                      TSR_INVALID_ARGUMENT,
                                      "an unknown reduction"},
                                     {{{f({2, 3}), f({4}), Arg::Int(1)}, "[2, 3] with [4]"},
                                      TSR_INVALID_ARGUMENT,
                                      "shapes that do not broadcast"}};
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
           "an unknown reduction"},
          {{{f({}), f({3}, TSR_DTYPE_FLOAT64), f({3}), Arg::Int(1)}, "float64 self, float32 rest"},
           TSR_INVALID_ARGUMENT,
           "operands of different dtypes"}};
    };
    db.push_back(std::move(op));
  }
}

}  // namespace

void AddTrainingOps(std::vector<OpInfo>& db) {
  AddSoftmaxBackward(db, /*log=*/false);
  AddSoftmaxBackward(db, /*log=*/true);
  AddMseLoss(db);
}

}  // namespace conformance
}  // namespace tessera
