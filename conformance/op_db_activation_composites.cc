// Op set 1.8's gated activations (glu, prelu, _prelu_kernel): composites,
// dispatcher/ops/activation_composites.cc.
//
// Semantics are PyTorch's CPU ones, read in aten/src/ATen/native: GatedLinearUnit.cpp,
// Activation.cpp and cpu/Activation.cpp. Samples follow the OpInfo entries in
// common_methods_invocations.py (sample_inputs_glu, sample_inputs_prelu and
// error_inputs_prelu). The references are direct loops in long double.
#include <cmath>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

// glu(self, dim=-1): the first half along dim times the sigmoid of the second; the halved dim
// must be even (0 included), a 0-dim input has none.
OpInfo Glu() {
  OpInfo op;
  op.name = "glu";
  op.out = "glu.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 10;
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    MakeOptions small;  // sample_inputs_glu's range
    small.low = -2;
    small.high = 2;
    std::vector<Sample> s;
    // A subset of sample_inputs_glu's features x batches, every dim position at least once,
    // plus an empty batch and an empty halved dim.
    const std::vector<std::vector<int64_t>> shapes = {
        {2}, {2, 4}, {2, 4}, {8, 8}, {3, 6, 8}, {2, 3, 8}, {1, 4, 6, 7}, {8, 2, 3}, {0, 4}, {4, 0}};
    const int64_t dims[] = {0, 0, 1, -1, 1, -1, 2, 0, 1, 1};
    for (size_t i = 0; i < shapes.size(); ++i) {
      s.push_back(
          Described({Arg::Tensor(MakeTensor(shapes[i], dtype, rng, small)), Arg::Int(dims[i])}));
    }
    s.push_back(Described({Arg::Tensor(MakeTensor({3, 6}, dtype, rng, small))}));
    // sigmoid(inf) = 1, sigmoid(-inf) = 0 (inf * 0 is NaN), NaN propagates.
    s.push_back(
        Described({Arg::Tensor(Values(dtype, {2, 4},
                                      {1, 2, INFINITY, -INFINITY, INFINITY, -2, -INFINITY, NAN})),
                   Arg::Int(1)},
                  " (infinities and nan)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& in = s.args[0].tensor;
    const int64_t dim = Given(s, 1) ? s.args[1].integer : -1;
    const LinesAlong lines(in.shape, dim);
    const int64_t half = lines.len / 2;
    HostTensor out = Values(in.dtype, in.shape, {});
    out.shape[static_cast<size_t>(dim < 0 ? dim + in.dim() : dim)] = half;
    out.values.resize(static_cast<size_t>(out.numel()));
    for (int64_t o = 0; o < lines.outer; ++o) {
      for (int64_t i = 0; i < lines.inner; ++i) {
        for (int64_t k = 0; k < half; ++k) {
          const long double a = in.values[static_cast<size_t>(lines.index(o, i, k))];
          const long double b = in.values[static_cast<size_t>(lines.index(o, i, k + half))];
          out.values[static_cast<size_t>((o * half + k) * lines.inner + i)] =
              RoundTo(in.dtype, static_cast<double>(a * (1 / (1 + std::exp(-b)))));
        }
      }
    }
    return std::vector<HostTensor>{out};
  };
  // An integer input has no kernel (PyTorch's dispatch raises NotImplementedError): the dtype
  // claims oracle checks that it is refused.
  op.errors = [](Rng& rng) {
    const auto refused = [&rng](std::vector<int64_t> shape, int64_t dim, tsr_code code,
                                const std::string& what) {
      return Refused(
          {Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng)), Arg::Int(dim)}, code,
          what);
    };
    return std::vector<ErrorInput>{
        Saying(refused({}, 0, TSR_INVALID_ARGUMENT, "a 0-dim input"),
               "glu does not support scalars because halving size must be even"),
        Saying(refused({3}, 0, TSR_INVALID_ARGUMENT, "an odd halved dim"),
               "Halving dimension must be even, but dimension 0 is size 3"),
        Saying(refused({4, 2}, 2, TSR_OUT_OF_RANGE, "a dim out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(refused({4, 2}, -3, TSR_OUT_OF_RANGE, "a dim out of range"),
               "Dimension out of range (expected to be in range of [-2, 1], but got -3)")};
  };
  return op;
}

// prelu(self, weight): x > 0 ? x : w * x, with w one weight for every element (weight of one
// element, 0-dim or [1]) or one per channel, dim 1 (a 1-D input has one channel). weight must
// be at most 1-D and of self's dtype; it has no out= form.
OpInfo Prelu() {
  OpInfo op;
  op.name = "prelu";
  op.dtypes = kFloatingMask;
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](HostTensor x, HostTensor w) {
      s.push_back(Described({Arg::Tensor(std::move(x)), Arg::Tensor(std::move(w))}));
    };
    MakeOptions unit;  // sample_kwargs_prelu_scalar_weight: torch.rand, [0, 1)
    unit.high = 1;
    // The elementwise unary samples with a 0-dim weight.
    for (const std::vector<int64_t>& shape : UnaryShapes()) {
      add(MakeTensor(shape, dtype, rng), MakeTensor({}, dtype, rng, unit));
    }
    // sample_inputs_prelu's shapes, the weights -1, 0, 0.8 and 1 two at a time, and a weight
    // per channel for the inputs with one.
    const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {5, 5}, {5, 10, 5}};
    const double weights[] = {-1, 0.8, 0, 1, 0.8, -1, 1, 0};
    for (size_t i = 0; i < 8; ++i) {
      add(MakeTensor(shapes[i / 2], dtype, rng), Values(dtype, {}, {weights[i]}));
    }
    add(MakeTensor({5, 5}, dtype, rng), MakeTensor({5}, dtype, rng));
    add(MakeTensor({5, 10, 5}, dtype, rng), MakeTensor({10}, dtype, rng));
    add(MakeTensor({2, 3, 4, 5}, dtype, rng), MakeTensor({3}, dtype, rng));
    // A one-element 1-D weight is one weight for every element, on any rank (0-dim included).
    add(MakeTensor({5, 10, 5}, dtype, rng), MakeTensor({1}, dtype, rng));
    add(MakeTensor({5}, dtype, rng), MakeTensor({1}, dtype, rng));
    add(MakeTensor({}, dtype, rng), MakeTensor({1}, dtype, rng));
    // Empty inputs: no channels (and no weights), or channels and no rows.
    add(MakeTensor({2, 0, 3}, dtype, rng), MakeTensor({0}, dtype, rng));
    add(MakeTensor({0, 3}, dtype, rng), MakeTensor({3}, dtype, rng));
    // inf, -inf, NaN, -0.0: only x > 0 keeps x.
    add(ExtremeTensor(dtype), Values(dtype, {}, {0.25}));
    add(ExtremeTensor(dtype), Values(dtype, {1}, {-2}));
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    const HostTensor& w = s.args[1].tensor;
    const int64_t channels = x.dim() >= 2 ? x.shape[1] : 1;
    int64_t inner = 1;
    for (int64_t d = 2; d < x.dim(); ++d) inner *= x.shape[d];
    HostTensor out = Values(x.dtype, x.shape, {});
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = x.values[static_cast<size_t>(i)];
      const double weight =
          w.values[w.numel() == 1 ? 0 : static_cast<size_t>(i / inner % channels)];
      out.values.push_back(RoundTo(x.dtype, v > 0 ? v : weight * v));
    }
    return std::vector<HostTensor>{out};
  };
  op.errors = [](Rng& rng) {
    const auto refused = [&rng](std::vector<int64_t> x, std::vector<int64_t> w, tsr_dtype wdtype,
                                const std::string& what) {
      return Refused({Arg::Tensor(MakeTensor(std::move(x), TSR_DTYPE_FLOAT32, rng)),
                      Arg::Tensor(MakeTensor(std::move(w), wdtype, rng))},
                     TSR_INVALID_ARGUMENT, what);
    };
    const tsr_dtype f32 = TSR_DTYPE_FLOAT32;
    const std::string mismatch = "a weight count other than 1 or the channels";
    return std::vector<ErrorInput>{
        Saying(refused({}, {2}, f32, "several weights for a 0-dim input"),
               "Not allow zero-dim input tensor."),
        Saying(refused({2, 8, 3}, {9}, f32, mismatch),
               "Mismatch of parameter numbers and input channel size. Found parameter numbers = 9 "
               "and channel size = 8."),
        Saying(refused({4}, {4}, f32, mismatch + " (a 1-D input has one channel)"),
               "Mismatch of parameter numbers and input channel size. Found parameter numbers = 4 "
               "and channel size = 1."),
        Saying(refused({2, 8, 3}, {2, 4}, f32, "a 2-D weight"),
               "Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"),
        Saying(refused({2, 8, 3}, {1, 1}, f32, "a 2-D weight of one element"),
               "Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"),
        Saying(refused({2, 8, 3}, {8}, TSR_DTYPE_FLOAT64,
                       "a weight of another dtype (no promotion)"),
               "Type promoting not supported. Got float32 and float64")};
  };
  return op;
}

// _prelu_kernel(self, weight): where(self > 0, self, weight * self), weight broadcast to self
// (prelu shapes it so first; a graph traced from current PyTorch calls this op itself).
OpInfo PreluKernel() {
  OpInfo op;
  op.name = "_prelu_kernel";
  op.dtypes = kFloatingMask;
  op.elementwise = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const auto add = [&](std::vector<int64_t> x, std::vector<int64_t> w) {
      s.push_back(Described({Arg::Tensor(MakeTensor(std::move(x), dtype, rng)),
                             Arg::Tensor(MakeTensor(std::move(w), dtype, rng))}));
    };
    add({2, 3, 4}, {1, 3, 1});  // a weight per channel, as prelu shapes it
    add({5, 4}, {1, 4});
    add({5}, {1});
    add({}, {});
    add({3, 0, 2}, {1, 0, 1});
    add({4, 3}, {4, 3});  // any shape that broadcasts to self's
    s.push_back(Described({Arg::Tensor(ExtremeTensor(dtype)), Arg::Tensor(Values(dtype, {}, {-2}))},
                          " (inf, NaN, -0.0)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    const Arg& x = s.args[0];
    const Arg& w = s.args[1];
    return std::vector<HostTensor>{Elementwise(
        {&x, &w}, x.tensor.dtype, [](const double* v) { return v[0] > 0 ? v[0] : v[1] * v[0]; })};
  };
  op.errors = [](Rng& rng) {
    const tsr_dtype f32 = TSR_DTYPE_FLOAT32;
    return std::vector<ErrorInput>{
        Saying(Refused({Arg::Tensor(MakeTensor({2, 3}, f32, rng)),
                        Arg::Tensor(MakeTensor({4}, f32, rng))},
                       TSR_INVALID_ARGUMENT, "a weight that does not broadcast to self"),
               "weight of shape [4] must broadcast to self's shape [2, 3]"),
        Saying(Refused({Arg::Tensor(MakeTensor({2, 3}, f32, rng)),
                        Arg::Tensor(MakeTensor({2, 2, 3}, f32, rng))},
                       TSR_INVALID_ARGUMENT, "a weight larger than self"),
               "weight of shape [2, 2, 3] must broadcast to self's shape [2, 3]"),
        Saying(Refused({Arg::Tensor(MakeTensor({2, 3}, f32, rng)),
                        Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT64, rng))},
                       TSR_INVALID_ARGUMENT, "a weight of another dtype"),
               "expected self and weight of one dtype, got float32 and float64")};
  };
  return op;
}

}  // namespace

void AddActivationCompositeOps(std::vector<OpInfo>& db) {
  db.push_back(Glu());
  db.push_back(Prelu());
  db.push_back(PreluKernel());
}

}  // namespace conformance
}  // namespace tessera
