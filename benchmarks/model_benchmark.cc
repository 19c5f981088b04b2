// A compiled model's replay against the same calls made eagerly, through the public API:
// a chain of N 1-element float adds (y = y + c, N = 1,000) compiled once and run, against the
// same N adds through tsr_op_call_values, the fast path an application's eager loop takes.
// The per-node cost is the time per iteration over N (items_per_second counts nodes). A third
// run does the kernels' own work alone (kernel_work.hpp: allocate through the table, add), N
// times chained: replay's cost above the kernels is its time per node less this one's.
//
// BM_Linear: a linear layer with its weight a constant (prepacked products) or an input
// (dnnl_sgemm), at several row counts.
//
//   build/bin/tessera_model_benchmark --benchmark_repetitions=5
//   --benchmark_report_aggregates_only=true        (TESSERA_NUM_THREADS=1 for 1 thread)
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "kernel_work.hpp"
#include "runtime/model/tests/model_file_writer.h"
#include "tessera/sdk/model.hpp"

namespace {

constexpr int kNodes = 1000;
const char* const kAddSchema = "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";

std::string ChainFile() {
  std::string nodes;
  for (int i = 0; i < kNodes; ++i) {
    const std::string in = i == 0 ? "x" : "y" + std::to_string(i - 1);
    nodes += std::string(i ? "," : "") + R"({"op":"add.Tensor","schema":")" + kAddSchema +
             R"(","args":[{"tensor":")" + in + R"("},{"tensor":"c"},{"int":1}],"outputs":["y)" +
             std::to_string(i) + "\"]}";
  }
  const std::string graph = R"({"name":"add_chain","producer":"model_benchmark","op_set":"1.1",)"
                            R"("inputs":[{"name":"x","dtype":"float32","sizes":[1]}],"nodes":[)" +
                            nodes + R"(],"outputs":[{"name":"y","value":"y)" +
                            std::to_string(kNodes - 1) + "\"}]}";
  return tessera_test::ModelFile(graph, {{"constant/c", "F32", {1}, tessera_test::Floats({1})}});
}

struct Setup {
  tessera::Runtime runtime;
  tessera::Tensor x = tessera::Tensor::from_host<float>({0.0f}, {1}, TSR_DTYPE_FLOAT32);
  tessera::Tensor c = tessera::Tensor::from_host<float>({1.0f}, {1}, TSR_DTYPE_FLOAT32);
  std::string file = ChainFile();
  tessera::Model model = tessera::Model::load_from_memory(file.data(), file.size());
  tessera::CompiledModel compiled = model.compile(tessera::parse_device("cpu"));
};

Setup& S() {
  static Setup* s = new Setup();
  return *s;
}

void BM_ModelReplay_AddChain(benchmark::State& state) {
  Setup& s = S();
  for (auto _ : state) {
    std::vector<tessera::Tensor> out = s.compiled.run({s.x});
    benchmark::DoNotOptimize(out[0].get());
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
BENCHMARK(BM_ModelReplay_AddChain);

void BM_Eager_AddChain(benchmark::State& state) {
  Setup& s = S();
  static const tsr_op* add = tessera::find_op("add.Tensor");
  tsr_value args[3];
  args[1].kind = TSR_VALUE_TENSOR;
  args[1].u.tensor = s.c.get();
  args[2].kind = TSR_VALUE_SCALAR;
  args[2].u.scalar = tsr_scalar{TSR_SCALAR_INT, 0, 1, 0.0};
  for (auto _ : state) {
    tessera::Tensor y = s.x;
    for (int i = 0; i < kNodes; ++i) {
      args[0].kind = TSR_VALUE_TENSOR;
      args[0].u.tensor = y.get();
      tsr_value result;
      size_t n = 0;
      tessera::sdk::check(tsr_op_call_values(add, args, 3, &result, 1, &n));
      y = tessera::Tensor::adopt(result.u.tensor);
    }
    benchmark::DoNotOptimize(y.get());
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
BENCHMARK(BM_Eager_AddChain);

void BM_KernelWork_AddChain(benchmark::State& state) {
  Setup& s = S();
  const tsr_runtime_api& api = tessera::sdk::api();
  for (auto _ : state) {
    tessera::Tensor y = s.x;
    for (int i = 0; i < kNodes; ++i) {
      tsr_tensor* out = nullptr;
      if (tsr_error* e = tessera_bench::AddWork(y.get(), s.c.get(), &out)) {
        api.error_release(e);
        state.SkipWithError("the add's allocation failed");
        return;
      }
      y = tessera::Tensor::adopt(out);
    }
    benchmark::DoNotOptimize(y.get());
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
BENCHMARK(BM_KernelWork_AddChain);

// A linear layer, BERT-base's first feed-forward product (K 768 -> N 3072), at a row count:
// y = addmm(b, x, t(w)). With `constant_weight`, w is the compiled model's constant (immutable:
// its products prepacked where rows allow, Note [Prepacked matrix products] in
// plugins/cpu/prepacked_gemm.cc); without, a second input (an application's weight: dnnl_sgemm).
// The two at one row count and thread count are the prepacking's gain or loss there.
constexpr int64_t kLinearK = 768, kLinearN = 3072;

std::string LinearFile(int64_t rows, bool constant_weight) {
  const std::string x = R"({"name":"x","dtype":"float32","sizes":[)" + std::to_string(rows) + "," +
                        std::to_string(kLinearK) + "]}";
  const std::string w = R"({"name":"w","dtype":"float32","sizes":[)" + std::to_string(kLinearN) +
                        "," + std::to_string(kLinearK) + "]}";
  const std::string graph =
      R"({"name":"linear","producer":"model_benchmark","op_set":"1.1","inputs":[)" + x +
      (constant_weight ? "" : "," + w) +
      R"j(],"nodes":[{"op":"t","schema":"t(Tensor(a) self) -> Tensor(a)","args":[{"tensor":"w"}],"outputs":["wt"]},)j"
      R"j({"op":"addmm","schema":"addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",)j"
      R"j("args":[{"tensor":"b"},{"tensor":"x"},{"tensor":"wt"},{"int":1},{"int":1}],"outputs":["y"]}],)j"
      R"j("outputs":[{"name":"y","value":"y"}]})j";
  std::vector<tessera_test::FileTensor> tensors = {
      {"constant/b", "F32", {kLinearN}, tessera_test::Floats(std::vector<float>(kLinearN, 0.5f))}};
  if (constant_weight) {
    tensors.push_back({"constant/w",
                       "F32",
                       {kLinearN, kLinearK},
                       tessera_test::Floats(std::vector<float>(kLinearN * kLinearK, 0.01f))});
  }
  return tessera_test::ModelFile(graph, tensors);
}

void BM_Linear(benchmark::State& state, bool constant_weight) {
  Setup& s = S();  // the plugins loaded
  const int64_t rows = state.range(0);
  const std::string file = LinearFile(rows, constant_weight);
  tessera::Model model = tessera::Model::load_from_memory(file.data(), file.size());
  tessera::CompiledModel compiled = model.compile(tessera::parse_device("cpu"));
  std::vector<tessera::Tensor> inputs = {tessera::Tensor::from_host<float>(
      std::vector<float>(rows * kLinearK, 0.25f), {rows, kLinearK}, TSR_DTYPE_FLOAT32)};
  if (!constant_weight) {
    inputs.push_back(tessera::Tensor::from_host<float>(
        std::vector<float>(kLinearN * kLinearK, 0.01f), {kLinearN, kLinearK}, TSR_DTYPE_FLOAT32));
  }
  compiled.run(inputs);  // the first run prepacks
  for (auto _ : state) {
    std::vector<tessera::Tensor> out = compiled.run(inputs);
    benchmark::DoNotOptimize(out[0].get());
  }
  (void)s;
  state.SetItemsProcessed(state.iterations() * rows * kLinearK * kLinearN);  // multiply-adds
}
// The row counts of BM_Linear: one (a matrix-vector product), few, and past the crossover.
void LinearRows(benchmark::internal::Benchmark* b) {
  for (int64_t rows : {1, 8, 128, 512, 1024}) b->Arg(rows);
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK_CAPTURE(BM_Linear, constant_weight, true)->Apply(LinearRows);
BENCHMARK_CAPTURE(BM_Linear, input_weight, false)->Apply(LinearRows);

}  // namespace

BENCHMARK_MAIN();
