// Whole models, Tessera against libtorch 1.13 in the same process with the same weights and
// inputs: the CPU-speed issue's ratios (docs/performance.md, "Whole models").
//
// benchmarks/models/bench_models.py writes each model twice, NAME.tsrm for Tessera and NAME.pt
// (torch.jit.trace) for libtorch, into the folder TESSERA_BENCH_MODELS names. Tessera runs the
// compiled model on the CPU plugin; libtorch runs the traced module under NoGradGuard with the
// graph executor's optimizations off (no fusion, no profiling), so it makes the same ATen calls
// one by one as eager PyTorch, without Python. The first output of each side is checked against
// the other's once, before any timing. Both read their thread count from
// TESSERA_NUM_THREADS / OMP_NUM_THREADS (benchmarks/peer_ratios.py sets both alike).
//
//   TESSERA_BENCH_MODELS=/tmp/bm build/bin/tessera_model_peer_benchmark
#include <benchmark/benchmark.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/sdk/model.hpp"

namespace {

const char* const kModels[] = {"resnet18_b1",
                               "resnet18_b8",
                               "mobilenet_v3_small_b1",
                               "mobilenet_v3_small_b8",
                               "bert_b1",
                               "bert_b8",
                               "gpt2_h768",
                               "gpt2_h96"};

constexpr int kWarmUpRuns = 3;

std::string ModelPath(const std::string& name, const char* ext) {
  const char* dir = std::getenv("TESSERA_BENCH_MODELS");
  return std::string(dir ? dir : ".") + "/" + name + ext;
}

tessera::Runtime& Rt() {
  static auto* runtime = new tessera::Runtime();
  return *runtime;
}

struct TesseraSide {
  tessera::Model model;
  tessera::CompiledModel compiled;
  std::vector<tessera::Tensor> inputs;
};

struct TorchSide {
  torch::jit::Module module;
  std::vector<torch::jit::IValue> inputs;
};

TesseraSide& Tessera(const std::string& name) {
  static auto* sides = new std::map<std::string, std::unique_ptr<TesseraSide>>();
  auto& side = (*sides)[name];
  if (!side) {
    Rt();
    auto model = tessera::Model::load(ModelPath(name, ".tsrm"));
    auto compiled = model.compile(tessera::parse_device("cpu"));
    std::vector<tessera::Tensor> inputs;
    for (size_t i = 0; i < model.num_inputs(); ++i) inputs.push_back(model.example_input(i));
    side.reset(new TesseraSide{std::move(model), std::move(compiled), std::move(inputs)});
    // Warm-up, outside the timing: the first runs create oneDNN's primitives, reorder the
    // frozen weights and fault in the intermediates' pages, which a replay does not.
    for (int i = 0; i < kWarmUpRuns; ++i) side->compiled.run(side->inputs);
  }
  return *side;
}

// CheckAgree: a timing of wrong answers is no timing. The first output of both sides must agree
// (within 1e-4, float32 products summed in different orders); the process stops otherwise.
void CheckAgree(const std::string& name, TesseraSide& t, const torch::jit::IValue& out) {
  const torch::Tensor want =
      (out.isTuple() ? out.toTuple()->elements()[0] : out).toTensor().contiguous();
  const tessera::Tensor got = t.compiled.run(t.inputs)[0];
  const torch::Tensor got_t =
      torch::from_blob(got.data_ptr(), want.sizes(), torch::kFloat32).clone();
  if (got.numel() != want.numel() || !torch::allclose(got_t, want, 1e-4, 1e-4)) {
    std::fprintf(stderr, "%s: Tessera's output does not agree with libtorch's (max |diff| %g)\n",
                 name.c_str(),
                 got.numel() == want.numel() ? (got_t - want).abs().max().item<double>() : -1.0);
    std::abort();
  }
}

TorchSide& Torch(const std::string& name) {
  static auto* sides = new std::map<std::string, std::unique_ptr<TorchSide>>();
  auto& side = (*sides)[name];
  if (!side) {
    torch::jit::getExecutorMode() = false;  // the simple executor: the graph's calls as written
    torch::jit::setGraphExecutorOptimize(false);
    auto module = torch::jit::load(ModelPath(name, ".pt"));
    module.eval();
    // The same inputs as Tessera's: the model file's example inputs, copied.
    TesseraSide& t = Tessera(name);
    std::vector<torch::jit::IValue> inputs;
    for (const tessera::Tensor& x : t.inputs) {
      if (x.dtype() != TSR_DTYPE_FLOAT32) {
        std::fprintf(stderr, "%s: a benchmark input is not float32\n", name.c_str());
        std::abort();
      }
      std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
      inputs.emplace_back(torch::from_blob(x.data_ptr(), sizes, torch::kFloat32).clone());
    }
    side.reset(new TorchSide{std::move(module), std::move(inputs)});
    torch::NoGradGuard no_grad;
    torch::jit::IValue out;
    for (int i = 0; i < kWarmUpRuns; ++i) out = side->module.forward(side->inputs);
    CheckAgree(name, t, out);
  }
  return *side;
}

void BM_TesseraModel(benchmark::State& state, const std::string& name) {
  TesseraSide& s = Tessera(name);
  for (auto _ : state) {
    std::vector<tessera::Tensor> out = s.compiled.run(s.inputs);
    benchmark::DoNotOptimize(out[0].get());
  }
  state.counters["threads"] = tessera::num_threads();
}

void BM_TorchModel(benchmark::State& state, const std::string& name) {
  TorchSide& s = Torch(name);
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    auto out = s.module.forward(s.inputs);
    benchmark::DoNotOptimize(out);
  }
  state.counters["threads"] = torch::get_num_threads();
}

const bool registered = [] {
  for (const char* name : kModels) {
    benchmark::RegisterBenchmark((std::string("BM_TesseraModel/") + name).c_str(), BM_TesseraModel,
                                 std::string(name))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark((std::string("BM_TorchModel/") + name).c_str(), BM_TorchModel,
                                 std::string(name))
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
