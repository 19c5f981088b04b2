// The CPU plugin's elementwise math and norms on 1M float32 elements (the CPU-speed issue):
//   - gelu (both forms), exp, tanh into a preallocated out, against libtorch's *_out (where the
//     benchmark was built with libtorch-dev, TESSERA_HAVE_TORCH): the throughput targets;
//   - float32 softmax over the last dim, against libtorch's _softmax_out;
//   - add (into out), relu_, inference batch_norm ([1, 64, 128, 128]) and layer_norm
//     ([1024, 1024] over the last dim): benchmarks/peer_ratios.py runs each at 1 and 2 threads
//     for the scaling targets.
// Inputs run over [-4, 4] (linspace), so the math functions see both signs and both tails.
//
//   TESSERA_NUM_THREADS=1 OMP_NUM_THREADS=1 build/bin/tessera_cpu_math_benchmark
#include <benchmark/benchmark.h>

#include <optional>
#include <string_view>
#include <vector>

#include "tessera/sdk/runtime.hpp"

#ifdef TESSERA_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace {

using tessera::Scalar;
using tessera::Tensor;

constexpr int64_t kMillion = 1 << 20;

tessera::Runtime& R() {
  static tessera::Runtime* r = new tessera::Runtime();
  return *r;
}

Tensor Ramp(std::vector<int64_t> sizes) {
  R();
  static const tsr_op* linspace = tessera::find_op("linspace");
  static const tsr_op* view = tessera::find_op("view");
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  Tensor flat = tessera::call1(linspace, Scalar(-4.0), Scalar(4.0), n);
  return tessera::call1(view, flat, sizes);
}

Tensor Full(std::vector<int64_t> sizes, double value) {
  R();
  static const tsr_op* full = tessera::find_op("full");
  return tessera::call1(full, sizes, Scalar(value));
}

void Bytes(benchmark::State& state, int64_t elements) {
  state.SetBytesProcessed(state.iterations() * elements * 8);  // read and write float32
}

// ---- the math functions into out ----

void BM_TesseraUnary1M(benchmark::State& state, const char* op) {
  Tensor x = Ramp({kMillion}), out = Full({kMillion}, 0);
  const tsr_op* fn = tessera::find_op(op);
  for (auto _ : state) {
    Tensor y = tessera::call1(fn, x, out);
    benchmark::DoNotOptimize(y.get());
  }
  Bytes(state, kMillion);
}
BENCHMARK_CAPTURE(BM_TesseraUnary1M, exp, "exp.out")->UseRealTime();
BENCHMARK_CAPTURE(BM_TesseraUnary1M, tanh, "tanh.out")->UseRealTime();

// log over positive values (the ramp's negative half would time NaN results).
void BM_TesseraLog1M(benchmark::State& state) {
  R();
  static const tsr_op* linspace = tessera::find_op("linspace");
  static const tsr_op* log_out = tessera::find_op("log.out");
  Tensor x = tessera::call1(linspace, Scalar(0.01), Scalar(100.0), kMillion);
  Tensor out = Full({kMillion}, 0);
  for (auto _ : state) {
    Tensor y = tessera::call1(log_out, x, out);
    benchmark::DoNotOptimize(y.get());
  }
  Bytes(state, kMillion);
}
BENCHMARK(BM_TesseraLog1M)->UseRealTime();

void BM_TesseraGelu1M(benchmark::State& state, std::string_view approximate) {
  Tensor x = Ramp({kMillion}), out = Full({kMillion}, 0);
  static const tsr_op* gelu = tessera::find_op("gelu.out");
  for (auto _ : state) {
    Tensor y = tessera::call1(gelu, x, approximate, out);
    benchmark::DoNotOptimize(y.get());
  }
  Bytes(state, kMillion);
}
BENCHMARK_CAPTURE(BM_TesseraGelu1M, none, "none")->UseRealTime();
BENCHMARK_CAPTURE(BM_TesseraGelu1M, tanh, "tanh")->UseRealTime();

// ---- softmax over the last dim: attention scores (BERT-base batch 2, 32 tokens: 768 rows of
// 32; a GPT-2 decode step's 4 heads over a 32-token cache: 4 rows of 32) and a big one ----

void BM_TesseraSoftmax(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  Tensor x = Ramp({rows, cols}), out = Full({rows, cols}, 0);
  static const tsr_op* softmax = tessera::find_op("_softmax.out");
  for (auto _ : state) {
    Tensor y = tessera::call1(softmax, x, int64_t{-1}, false, out);
    benchmark::DoNotOptimize(y.get());
  }
  Bytes(state, rows * cols);
}
BENCHMARK(BM_TesseraSoftmax)->Args({768, 32})->Args({4, 32})->Args({1024, 1024})->UseRealTime();

// ---- scaling: add, relu_, batch_norm, layer_norm ----

void BM_TesseraAdd1M(benchmark::State& state) {
  Tensor a = Ramp({kMillion}), b = Ramp({kMillion}), out = Full({kMillion}, 0);
  static const tsr_op* add_out = tessera::find_op("add.out");
  for (auto _ : state) {
    Tensor y = tessera::call1(add_out, a, b, Scalar(1.0), out);
    benchmark::DoNotOptimize(y.get());
  }
  Bytes(state, kMillion);
}
BENCHMARK(BM_TesseraAdd1M)->UseRealTime();

void BM_TesseraRelu_1M(benchmark::State& state) {
  Tensor a = Ramp({kMillion});
  static const tsr_op* relu_ = tessera::find_op("relu_");
  for (auto _ : state) {
    Tensor y = tessera::call1(relu_, a);
    benchmark::DoNotOptimize(y.get());
  }
  Bytes(state, kMillion);
}
BENCHMARK(BM_TesseraRelu_1M)->UseRealTime();

void BM_TesseraBatchNorm1M(benchmark::State& state) {
  Tensor x = Ramp({1, 64, 128, 128});
  Tensor w = Full({64}, 1.5), b = Full({64}, 0.25), mean = Full({64}, 0.1), var = Full({64}, 2);
  static const tsr_op* bn = tessera::find_op("batch_norm");
  for (auto _ : state) {
    Tensor y = tessera::call1(bn, x, w, b, mean, var, false, 0.1, 1e-5, false);
    benchmark::DoNotOptimize(y.get());
  }
  Bytes(state, kMillion);
}
BENCHMARK(BM_TesseraBatchNorm1M)->UseRealTime();

void BM_TesseraLayerNorm1M(benchmark::State& state) {
  Tensor x = Ramp({1024, 1024}), w = Full({1024}, 1.5), b = Full({1024}, 0.25);
  static const tsr_op* ln = tessera::find_op("layer_norm");
  const std::vector<int64_t> shape{1024};
  for (auto _ : state) {
    Tensor y = tessera::call1(ln, x, shape, w, b, 1e-5, true);
    benchmark::DoNotOptimize(y.get());
  }
  Bytes(state, kMillion);
}
BENCHMARK(BM_TesseraLayerNorm1M)->UseRealTime();

#ifdef TESSERA_HAVE_TORCH
torch::Tensor TorchRamp() { return torch::linspace(-4.0, 4.0, kMillion); }

void BM_TorchExp1M(benchmark::State& state) {
  torch::Tensor x = TorchRamp(), out = torch::empty({kMillion});
  for (auto _ : state) {
    torch::exp_out(out, x);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  Bytes(state, kMillion);
}
BENCHMARK(BM_TorchExp1M)->UseRealTime();

void BM_TorchTanh1M(benchmark::State& state) {
  torch::Tensor x = TorchRamp(), out = torch::empty({kMillion});
  for (auto _ : state) {
    torch::tanh_out(out, x);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  Bytes(state, kMillion);
}
BENCHMARK(BM_TorchTanh1M)->UseRealTime();

void BM_TorchLog1M(benchmark::State& state) {
  torch::Tensor x = torch::linspace(0.01, 100.0, kMillion), out = torch::empty({kMillion});
  for (auto _ : state) {
    torch::log_out(out, x);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  Bytes(state, kMillion);
}
BENCHMARK(BM_TorchLog1M)->UseRealTime();

void BM_TorchGelu1M(benchmark::State& state, const char* approximate) {
  torch::Tensor x = TorchRamp(), out = torch::empty({kMillion});
  for (auto _ : state) {
    torch::gelu_out(out, x, approximate);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  Bytes(state, kMillion);
}
BENCHMARK_CAPTURE(BM_TorchGelu1M, none, "none")->UseRealTime();
BENCHMARK_CAPTURE(BM_TorchGelu1M, tanh, "tanh")->UseRealTime();

void BM_TorchSoftmax(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  torch::Tensor x = torch::linspace(-4.0, 4.0, rows * cols).view({rows, cols});
  torch::Tensor out = torch::empty({rows, cols});
  for (auto _ : state) {
    torch::_softmax_out(out, x, -1, false);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  Bytes(state, rows * cols);
}
BENCHMARK(BM_TorchSoftmax)->Args({768, 32})->Args({4, 32})->Args({1024, 1024})->UseRealTime();
#endif

}  // namespace

BENCHMARK_MAIN();
