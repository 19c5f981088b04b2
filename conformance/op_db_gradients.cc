// Each backward op's forward op, for the gradient oracle (GradientSpec, gradcheck.h): which
// forward arguments its returns are the gradients of, and how a training step calls it from the
// forward's sample, returns and incoming gradient, as PyTorch's derivatives.yaml writes the
// formula (`self: gelu_backward(grad, self, approximate)`, `self: sigmoid_backward(grad,
// result)`, ...). Samples are float64 tensors of random values, which miss the points where a
// function has no derivative (relu's 0, hardtanh's bounds) with probability 1.
#include <stdexcept>

#include "conformance/gradient_samples.h"
#include "conformance/op_db.h"

namespace tessera {
namespace conformance {
namespace {

HostTensor F64(std::vector<int64_t> shape, Rng& rng, double low = -4, double high = 4) {
  MakeOptions range;
  range.low = low;
  range.high = high;
  return MakeTensor(std::move(shape), TSR_DTYPE_FLOAT64, rng, range);
}

Arg S(double v) { return Arg::ScalarDouble(v); }

// A pointwise op's samples: one input of each shape, after each set of further arguments.
std::function<std::vector<Sample>(Rng&)> Pointwise(std::vector<std::vector<Arg>> params) {
  return [params](Rng& rng) {
    std::vector<Sample> samples;
    for (const std::vector<Arg>& p : params) {
      for (const std::vector<int64_t>& shape : {std::vector<int64_t>{7}, {3, 4}}) {
        Sample s;
        s.args.push_back(Arg::Tensor(F64(shape, rng)));
        s.args.insert(s.args.end(), p.begin(), p.end());
        s.desc = ShapeString(shape);
        for (const Arg& a : p) s.desc += " " + a.ToString();
        samples.push_back(std::move(s));
      }
    }
    return samples;
  };
}

using Args = std::vector<Arg>;
using Returns = std::vector<HostTensor>;

// A pointwise backward op: (grad, then what `rest` gives), its gradient for the forward's self.
GradientSpec PointwiseSpec(std::string forward, std::vector<std::vector<Arg>> params,
                           std::function<Args(const Sample&, const Returns&)> rest) {
  GradientSpec spec;
  spec.forward = std::move(forward);
  spec.samples = Pointwise(std::move(params));
  spec.wrt = {0};
  spec.backward_args = [rest](const Sample& s, const Returns& r, const HostTensor& g) {
    Args args{Arg::Tensor(g)};
    const Args more = rest(s, r);
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  return spec;
}

// (self, the forward's further arguments): most backward ops take the forward's input.
Args SelfAndParams(const Sample& s, const Returns&) { return s.args; }
// (result): sigmoid's and tanh's take the forward's output.
Args Result(const Sample&, const Returns& r) { return {Arg::Tensor(r[0])}; }

std::vector<std::pair<std::string, GradientSpec>> Specs() {
  std::vector<std::pair<std::string, GradientSpec>> specs;
  auto add = [&specs](std::string backward, GradientSpec spec) {
    specs.emplace_back(std::move(backward), std::move(spec));
  };
  add("threshold_backward", PointwiseSpec("threshold", {{S(0.5), S(7)}, {S(-1), S(0)}},
                                          [](const Sample& s, const Returns&) {
                                            return Args{s.args[0], s.args[1]};
                                          }));
  add("gelu_backward",
      PointwiseSpec("gelu", {{Arg::String("none")}, {Arg::String("tanh")}}, SelfAndParams));
  add("silu_backward", PointwiseSpec("silu", {{}}, SelfAndParams));
  add("sigmoid_backward", PointwiseSpec("sigmoid", {{}}, Result));
  add("tanh_backward", PointwiseSpec("tanh", {{}}, Result));
  add("hardtanh_backward",
      PointwiseSpec("hardtanh", {{S(-1), S(1)}, {S(-2), S(0.5)}}, SelfAndParams));
  add("leaky_relu_backward",
      PointwiseSpec("leaky_relu", {{S(0.01)}, {S(0.2)}}, [](const Sample& s, const Returns&) {
        return Args{s.args[0], s.args[1], Arg::Bool(false)};  // self_is_result
      }));
  add("elu_backward",
      PointwiseSpec("elu", {{S(1), S(1), S(1)}, {S(0.5), S(2), S(1.5)}},
                    [](const Sample& s, const Returns&) {
                      // (alpha, scale, input_scale, is_result, self_or_result)
                      return Args{s.args[1], s.args[2], s.args[3], Arg::Bool(false), s.args[0]};
                    }));
  add("hardswish_backward", PointwiseSpec("hardswish", {{}}, SelfAndParams));
  add("hardsigmoid_backward", PointwiseSpec("hardsigmoid", {{}}, SelfAndParams));
  add("softplus_backward", PointwiseSpec("softplus", {{S(1), S(20)}, {S(2), S(5)}}, SelfAndParams));
  add("mish_backward", PointwiseSpec("mish", {{}}, SelfAndParams));
  add("hardshrink_backward", PointwiseSpec("hardshrink", {{S(0.5)}, {S(2)}}, SelfAndParams));
  add("softshrink_backward", PointwiseSpec("softshrink", {{S(0.5)}, {S(2)}}, SelfAndParams));
  for (const bool log : {false, true}) {
    GradientSpec spec;
    spec.forward = log ? "_log_softmax" : "_softmax";
    spec.samples = [](Rng& rng) {
      return std::vector<Sample>{
          {{Arg::Tensor(F64({7}, rng)), Arg::Int(0), Arg::Bool(false)}, "[7] dim 0"},
          {{Arg::Tensor(F64({3, 5}, rng)), Arg::Int(1), Arg::Bool(false)}, "[3, 5] dim 1"},
          {{Arg::Tensor(F64({4, 3}, rng)), Arg::Int(0), Arg::Bool(false)}, "[4, 3] dim 0"}};
    };
    spec.wrt = {0};
    spec.backward_args = [](const Sample& s, const Returns& r, const HostTensor& g) {
      return Args{Arg::Tensor(g), Arg::Tensor(r[0]), s.args[1], Arg::Dtype(TSR_DTYPE_FLOAT64)};
    };
    add(log ? "_log_softmax_backward_data" : "_softmax_backward_data", std::move(spec));
  }
  {
    GradientSpec spec;
    spec.forward = "mse_loss";
    spec.samples = [](Rng& rng) {
      std::vector<Sample> samples;
      for (int64_t reduction : {0, 1, 2}) {
        samples.push_back(
            {{Arg::Tensor(F64({3, 4}, rng)), Arg::Tensor(F64({3, 4}, rng)), Arg::Int(reduction)},
             "[3, 4] reduction " + std::to_string(reduction)});
      }
      return samples;
    };
    spec.wrt = {0};
    spec.backward_args = [](const Sample& s, const Returns&, const HostTensor& g) {
      return Args{Arg::Tensor(g), s.args[0], s.args[1], s.args[2]};
    };
    add("mse_loss_backward", std::move(spec));
  }
  {
    GradientSpec spec;
    spec.forward = "nll_loss_forward";
    spec.samples = [](Rng& rng) {
      HostTensor target;
      target.dtype = TSR_DTYPE_INT64;
      target.shape = {4};
      target.values = {2, 0, 1, 2};
      std::vector<Sample> samples;
      for (int64_t reduction : {0, 1, 2}) {
        for (const bool weighted : {false, true}) {
          samples.push_back(
              {{Arg::Tensor(F64({4, 3}, rng)), Arg::Tensor(target),
                weighted ? Arg::Tensor(F64({3}, rng, 0.5, 2)) : Arg::None(), Arg::Int(reduction),
                Arg::Int(1)},  // ignore_index 1: the third row counts for nothing
               "[4, 3] reduction " + std::to_string(reduction) + (weighted ? " weighted" : "") +
                   " ignore_index 1"});
        }
      }
      return samples;
    };
    spec.wrt = {0};
    spec.backward_args = [](const Sample& s, const Returns& r, const HostTensor& g) {
      return Args{Arg::Tensor(g), s.args[0], s.args[1],        s.args[2],
                  s.args[3],      s.args[4], Arg::Tensor(r[1])};
    };
    add("nll_loss_backward", std::move(spec));
  }
  {
    GradientSpec spec;
    spec.forward = "native_layer_norm";
    spec.samples = [](Rng& rng) {
      return std::vector<Sample>{
          {{Arg::Tensor(F64({3, 4}, rng)), Arg::Ints({4}), Arg::Tensor(F64({4}, rng)),
            Arg::Tensor(F64({4}, rng)), Arg::Double(1e-5)},
           "[3, 4] over [4]"},
          {{Arg::Tensor(F64({2, 2, 3}, rng)), Arg::Ints({2, 3}), Arg::Tensor(F64({2, 3}, rng)),
            Arg::Tensor(F64({2, 3}, rng)), Arg::Double(1e-3)},
           "[2, 2, 3] over [2, 3]"},
          {{Arg::Tensor(F64({5}, rng)), Arg::Ints({5}), Arg::Tensor(F64({5}, rng)),
            Arg::Tensor(F64({5}, rng)), Arg::Double(1e-5)},
           "[5] over [5]"}};
    };
    spec.wrt = {0, 2, 3};
    spec.backward_args = [](const Sample& s, const Returns& r, const HostTensor& g) {
      return Args{Arg::Tensor(g),    s.args[0], s.args[1], Arg::Tensor(r[1]),
                  Arg::Tensor(r[2]), s.args[2], s.args[3], Arg::Bools({true, true, true})};
    };
    add("native_layer_norm_backward", std::move(spec));
  }
  {
    GradientSpec spec;
    spec.forward = "native_batch_norm";
    spec.samples = [](Rng& rng) {
      std::vector<Sample> samples;
      for (const bool train : {true, false}) {
        for (const std::vector<int64_t>& shape : {std::vector<int64_t>{4, 3}, {2, 3, 2}}) {
          samples.push_back({{Arg::Tensor(F64(shape, rng)), Arg::Tensor(F64({3}, rng)),
                              Arg::Tensor(F64({3}, rng)), Arg::Tensor(F64({3}, rng)),
                              Arg::Tensor(F64({3}, rng, 0.5, 2)), Arg::Bool(train),
                              Arg::Double(0.1), Arg::Double(1e-5)},
                             ShapeString(shape) + (train ? " training" : " inference")});
        }
      }
      return samples;
    };
    spec.wrt = {0, 1, 2};
    // As derivatives.yaml passes them: the forward's saved statistics in inference too ([0]).
    spec.backward_args = [](const Sample& s, const Returns& r, const HostTensor& g) {
      return Args{Arg::Tensor(g),    s.args[0],
                  s.args[1],         s.args[3],
                  s.args[4],         Arg::Tensor(r[1]),
                  Arg::Tensor(r[2]), s.args[5],
                  s.args[7],         Arg::Bools({true, true, true})};
    };
    add("native_batch_norm_backward", std::move(spec));
  }
  {
    // convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
    // groups): plain and transposed, strided, padded, dilated, grouped.
    GradientSpec spec;
    spec.forward = "convolution";
    spec.samples = [](Rng& rng) {
      struct C {
        std::vector<int64_t> in, w, stride, padding, dilation;
        bool transposed;
        std::vector<int64_t> output_padding;
        int64_t groups, out_channels;
      };
      const std::vector<C> cases{
          {{2, 2, 5}, {3, 2, 3}, {2}, {1}, {1}, false, {0}, 1, 3},
          {{1, 4, 5, 4}, {2, 2, 3, 2}, {1, 2}, {1, 0}, {2, 1}, false, {0}, 2, 2},
          {{1, 2, 3, 3}, {2, 3, 3, 3}, {2}, {1}, {1}, true, {1}, 1, 3},
          {{1, 4, 2, 3}, {4, 1, 2, 2}, {1}, {0}, {2}, true, {1}, 2, 2}};
      std::vector<Sample> samples;
      for (const C& c : cases) {
        samples.push_back({{Arg::Tensor(F64(c.in, rng)), Arg::Tensor(F64(c.w, rng)),
                            Arg::Tensor(F64({c.out_channels}, rng)), Arg::Ints(c.stride),
                            Arg::Ints(c.padding), Arg::Ints(c.dilation), Arg::Bool(c.transposed),
                            Arg::Ints(c.output_padding), Arg::Int(c.groups)},
                           ShapeString(c.in) + (c.transposed ? " *T " : " * ") + ShapeString(c.w)});
      }
      return samples;
    };
    spec.wrt = {0, 1, 2};
    spec.backward_args = [](const Sample& s, const Returns&, const HostTensor& g) {
      return Args{Arg::Tensor(g),
                  s.args[0],
                  s.args[1],
                  Arg::Ints(s.args[2].tensor.shape),
                  s.args[3],
                  s.args[4],
                  s.args[5],
                  s.args[6],
                  s.args[7],
                  s.args[8],
                  Arg::Bools({true, true, true})};
    };
    add("convolution_backward", std::move(spec));
  }
  {
    // max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode): random
    // inputs have one maximum per window, where the forward is differentiable.
    GradientSpec spec;
    spec.forward = "max_pool2d_with_indices";
    spec.samples = [](Rng& rng) {
      return std::vector<Sample>{
          {{Arg::Tensor(F64({1, 2, 4, 4}, rng)), Arg::Ints({2}), Arg::Ints({2}), Arg::Ints({0}),
            Arg::Ints({1}), Arg::Bool(false)},
           "[1, 2, 4, 4] 2x2"},
          {{Arg::Tensor(F64({2, 5, 5}, rng)), Arg::Ints({3}), Arg::Ints({2}), Arg::Ints({1}),
            Arg::Ints({1}), Arg::Bool(true)},
           "[2, 5, 5] 3x3 overlapping, padded, ceil_mode"}};
    };
    spec.wrt = {0};
    spec.backward_args = [](const Sample& s, const Returns& r, const HostTensor& g) {
      return Args{Arg::Tensor(g), s.args[0], s.args[1], s.args[2],
                  s.args[3],      s.args[4], s.args[5], Arg::Tensor(r[1])};
    };
    add("max_pool2d_with_indices_backward", std::move(spec));
  }
  {
    // avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
    // divisor_override)
    GradientSpec spec;
    spec.forward = "avg_pool2d";
    spec.samples = [](Rng& rng) {
      std::vector<Sample> samples;
      for (const bool counted : {true, false}) {
        samples.push_back({{Arg::Tensor(F64({1, 2, 5, 5}, rng)), Arg::Ints({3}), Arg::Ints({2}),
                            Arg::Ints({1}), Arg::Bool(true), Arg::Bool(counted), Arg::None()},
                           std::string("[1, 2, 5, 5] 3x3 padded, ceil_mode") +
                               (counted ? "" : ", padding not counted")});
      }
      samples.push_back({{Arg::Tensor(F64({2, 4, 4}, rng)), Arg::Ints({2}), Arg::Ints({1}),
                          Arg::Ints({0}), Arg::Bool(false), Arg::Bool(true), Arg::Int(3)},
                         "[2, 4, 4] 2x2 stride 1, divisor_override 3"});
      return samples;
    };
    spec.wrt = {0};
    spec.backward_args = GradThenForwardArgs;
    add("avg_pool2d_backward", std::move(spec));
  }
  {
    // embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse): the forward's
    // gradient for the weight, with repeated indices (padding_idx and scale_grad_by_freq change
    // the backward alone, so central differences of the forward cannot check them).
    GradientSpec spec;
    spec.forward = "embedding";
    spec.samples = [](Rng& rng) {
      HostTensor indices;
      indices.dtype = TSR_DTYPE_INT64;
      indices.shape = {2, 3};
      indices.values = {1, 3, 1, 0, 3, 1};
      return std::vector<Sample>{{{Arg::Tensor(F64({5, 3}, rng)), Arg::Tensor(indices),
                                   Arg::Int(-1), Arg::Bool(false), Arg::Bool(false)},
                                  "[5, 3] by [2, 3] repeated indices"}};
    };
    spec.wrt = {0};
    spec.backward_args = [](const Sample& s, const Returns&, const HostTensor& g) {
      return Args{Arg::Tensor(g), s.args[1], Arg::Int(s.args[0].tensor.shape[0]), s.args[2],
                  s.args[3]};
    };
    add("embedding_dense_backward", std::move(spec));
  }
  return specs;
}

}  // namespace

void AttachGradients(std::vector<OpInfo>& db) {
  for (auto& [backward, spec] : Specs()) {
    bool found = false;
    for (OpInfo& op : db) {
      if (op.name != backward) continue;
      op.gradient = spec;
      found = true;
    }
    if (!found) {
      throw std::logic_error("op_db_gradients.cc: no database entry for the backward op " +
                             backward);
    }
  }
}

}  // namespace conformance
}  // namespace tessera
