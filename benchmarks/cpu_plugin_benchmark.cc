// The CPU plugin side by side with its peers, in one run (issue budgets in DESIGN.md):
//   - 1-element add (functional and in-place) vs libtorch's a + b and a.add_(b)
//   - add of 16M float32 into a preallocated out vs a plain C++ loop on as many threads (the
//     loop's bandwidth is the ceiling for a memory-bound op)
//   - sum of 16M float32 vs libtorch
//   - mm 1024x1024 float32 vs a direct dnnl_sgemm call and vs libtorch
//   - mm 512x512 in float16, bfloat16 and float64 vs libtorch (bfloat16 and float64: it has
//     no float16 mm on the CPU)
//   - one 3x3 conv2d layer (N=8, C=64->64, 56x56, padding 1) vs libtorch, in float32, and in
//     bfloat16 and float16 (the libtorch peer: bfloat16 only)
//   - a small bmm through the plugin's cached oneDNN primitive vs that primitive executed
//     directly (the glue per call)
//   - loading the CPU plugin (dlopen + registering every kernel)
// libtorch runs only where the benchmark was built with libtorch-dev (TESSERA_HAVE_TORCH).
//
//   build/bin/tessera_cpu_plugin_benchmark --benchmark_repetitions=3
//   --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "oneapi/dnnl/dnnl.h"
#include "tessera/sdk/runtime.hpp"

#ifdef TESSERA_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace {

using tessera::Scalar;
using tessera::Tensor;

constexpr int64_t kBig = 16 << 20;

tessera::Runtime& R() {
  static tessera::Runtime* r = new tessera::Runtime();
  return *r;
}

Tensor Filled(std::vector<int64_t> sizes, float value) {
  R();
  static const tsr_op* full = tessera::find_op("full");
  return tessera::call1(full, sizes, Scalar(static_cast<double>(value)));
}

template <typename... Args>
Tensor Op(const char* name, const Args&... args) {
  return tessera::call1(tessera::find_op(name), args...);
}

// ---- 1-element add ----

void BM_TesseraAdd1(benchmark::State& state) {
  Tensor a = Filled({1}, 1), b = Filled({1}, 2);
  for (auto _ : state) {
    Tensor c = tessera::add(a, b);
    benchmark::DoNotOptimize(c.get());
  }
}
BENCHMARK(BM_TesseraAdd1);

// The same add through the C ABI's stack entry, tsr_op_call, as a C application or a language
// binding calls it (the arguments pushed, the result left on the stack until the next clear).
void BM_TesseraAdd1Stack(benchmark::State& state) {
  Tensor a = Filled({1}, 1), b = Filled({1}, 2);
  static const tsr_op* add = tessera::find_op("add.Tensor");
  tsr_stack* stack = nullptr;
  tessera::sdk::check(tsr_stack_create(&stack));
  for (auto _ : state) {
    tsr_stack_clear(stack);
    tessera::sdk::check(tsr_stack_push_tensor(stack, a.get()));
    tessera::sdk::check(tsr_stack_push_tensor(stack, b.get()));
    tessera::sdk::check(tsr_op_call(add, stack));
    benchmark::DoNotOptimize(stack);
  }
  tsr_stack_release(stack);
}
BENCHMARK(BM_TesseraAdd1Stack);

void BM_TesseraAddInplace1(benchmark::State& state) {
  Tensor a = Filled({1}, 1), b = Filled({1}, 0);
  static const tsr_op* add_ = tessera::find_op("add_.Tensor");
  for (auto _ : state) {
    Tensor c = tessera::call1(add_, a, b);
    benchmark::DoNotOptimize(c.get());
  }
}
BENCHMARK(BM_TesseraAddInplace1);

// ---- 16M elementwise add into a preallocated out ----

void BM_TesseraAddOut16M(benchmark::State& state) {
  Tensor a = Filled({kBig}, 1), b = Filled({kBig}, 2), out = Filled({kBig}, 0);
  static const tsr_op* add_out = tessera::find_op("add.out");
  for (auto _ : state) {
    Tensor c = tessera::call1(add_out, a, b, Scalar(int64_t{1}), out);
    benchmark::DoNotOptimize(c.get());
  }
  state.SetBytesProcessed(state.iterations() * kBig * 12);
}
BENCHMARK(BM_TesseraAddOut16M)->UseRealTime();

// The plain loop runs on as many threads as Tessera's pool has (tsr_num_threads():
// TESSERA_NUM_THREADS, else the cores), each on one contiguous slice, so that the ratio compares
// equal thread counts. The helper threads are started per iteration: some 30 us each, against
// the 5-13 ms one pass over 192 MiB takes on the dev machine's 1-2 threads (on many cores,
// set TESSERA_NUM_THREADS: the starts grow with the count, the pass does not shrink as fast).
void PlainAdd(const float* __restrict a, const float* __restrict b, float* __restrict out,
              int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = a[i] + b[i];
}

void BM_PlainLoopAdd16M(benchmark::State& state) {
  R();
  const int threads = tsr_num_threads();
  std::vector<float> a(kBig, 1), b(kBig, 2), out(kBig);
  const int64_t slice = (kBig + threads - 1) / threads;
  for (auto _ : state) {
    std::vector<std::thread> helpers;
    for (int t = 1; t < threads; ++t) {
      helpers.emplace_back(PlainAdd, a.data(), b.data(), out.data(), t * slice,
                           std::min<int64_t>(kBig, (t + 1) * slice));
    }
    PlainAdd(a.data(), b.data(), out.data(), 0, std::min<int64_t>(kBig, slice));
    for (std::thread& h : helpers) h.join();
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kBig * 12);
  state.counters["threads"] = threads;
}
BENCHMARK(BM_PlainLoopAdd16M)->UseRealTime();

// ---- 16M sum ----

void BM_TesseraSum16M(benchmark::State& state) {
  Tensor a = Filled({kBig}, 1);
  for (auto _ : state) {
    Tensor s = Op("sum", a);
    benchmark::DoNotOptimize(s.get());
  }
  state.SetBytesProcessed(state.iterations() * kBig * 4);
}
BENCHMARK(BM_TesseraSum16M)->UseRealTime();

// ---- a small cached oneDNN call: the glue around the primitive ----
// bmm [4, 1, 24] @ [4, 24, 32] float32 (a decoder step's attention at hidden 96): through the
// runtime into the CPU plugin's oneDNN matmul primitive, against the same primitive created
// once and executed directly on one thread (memory objects made once, the C API's argument
// array). The difference is the dispatcher's and the plugin's cost per call.

void BM_TesseraBmmSmall(benchmark::State& state) {
  Tensor a = Filled({4, 1, 24}, 0.5f), b = Filled({4, 24, 32}, 0.25f), out = Filled({4, 1, 32}, 0);
  static const tsr_op* bmm_out = tessera::find_op("bmm.out");
  for (auto _ : state) {
    Tensor c = tessera::call1(bmm_out, a, b, out);
    benchmark::DoNotOptimize(c.get());
  }
}
BENCHMARK(BM_TesseraBmmSmall);

void BM_DnnlMatmulSmall(benchmark::State& state) {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_engine_create(&engine, dnnl_cpu, 0);
  dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
  dnnl_memory_desc_t a_md, b_md, o_md;
  const dnnl_dims_t ad = {4, 1, 24}, bd = {4, 24, 32}, od = {4, 1, 32};
  dnnl_memory_desc_init_by_tag(&a_md, 3, ad, dnnl_f32, dnnl_abc);
  dnnl_memory_desc_init_by_tag(&b_md, 3, bd, dnnl_f32, dnnl_abc);
  dnnl_memory_desc_init_by_tag(&o_md, 3, od, dnnl_f32, dnnl_abc);
  dnnl_matmul_desc_t desc;
  dnnl_matmul_desc_init(&desc, &a_md, &b_md, nullptr, &o_md);
  dnnl_primitive_desc_t pd;
  dnnl_primitive_desc_create(&pd, &desc, nullptr, engine, nullptr);
  dnnl_primitive_t prim;
  dnnl_primitive_create(&prim, pd);
  std::vector<float> a(4 * 24, 0.5f), b(4 * 24 * 32, 0.25f), o(4 * 32);
  dnnl_memory_t am, bm, om;
  dnnl_memory_create(&am, &a_md, engine, a.data());
  dnnl_memory_create(&bm, &b_md, engine, b.data());
  dnnl_memory_create(&om, &o_md, engine, o.data());
  const dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, om}};
  for (auto _ : state) {
    dnnl_primitive_execute(prim, stream, 3, args);
    dnnl_stream_wait(stream);
    benchmark::DoNotOptimize(o.data());
  }
  for (dnnl_memory_t m : {am, bm, om}) dnnl_memory_destroy(m);
  dnnl_primitive_destroy(prim);
  dnnl_primitive_desc_destroy(pd);
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(engine);
}
BENCHMARK(BM_DnnlMatmulSmall);

// ---- mm 1024^2 ----

constexpr int64_t kN = 1024;

void BM_TesseraMm1024(benchmark::State& state) {
  Tensor a = Filled({kN, kN}, 0.5f), b = Filled({kN, kN}, 0.25f), out = Filled({kN, kN}, 0);
  static const tsr_op* mm_out = tessera::find_op("mm.out");
  for (auto _ : state) {
    Tensor c = tessera::call1(mm_out, a, b, out);
    benchmark::DoNotOptimize(c.get());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * kN * kN * kN * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TesseraMm1024)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_DnnlSgemm1024(benchmark::State& state) {
  std::vector<float> a(kN * kN, 0.5f), b(kN * kN, 0.25f), c(kN * kN);
  for (auto _ : state) {
    dnnl_sgemm('N', 'N', kN, kN, kN, 1.0f, a.data(), kN, b.data(), kN, 0.0f, c.data(), kN);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * kN * kN * kN * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DnnlSgemm1024)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- mm 512^2 in float16, bfloat16 and float64 (off dnnl_sgemm's direct path) ----

constexpr int64_t kTyped = 512;

void BM_TesseraMmTyped(benchmark::State& state, tsr_dtype dtype) {
  Tensor a = Op("_to_copy", Filled({kTyped, kTyped}, 0.5f), dtype);
  Tensor b = Op("_to_copy", Filled({kTyped, kTyped}, 0.25f), dtype);
  Tensor out = Op("_to_copy", Filled({kTyped, kTyped}, 0), dtype);
  static const tsr_op* mm_out = tessera::find_op("mm.out");
  for (auto _ : state) {
    Tensor c = tessera::call1(mm_out, a, b, out);
    benchmark::DoNotOptimize(c.get());
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * kTyped * kTyped * kTyped * state.iterations(),
                                                benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_TesseraMmTyped, float16, TSR_DTYPE_FLOAT16)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TesseraMmTyped, bfloat16, TSR_DTYPE_BFLOAT16)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TesseraMmTyped, float64, TSR_DTYPE_FLOAT64)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// ---- conv2d 3x3, N=8, 64 -> 64 channels, 56x56 ----

void BM_TesseraConv3x3(benchmark::State& state) {
  Tensor x = Filled({8, 64, 56, 56}, 0.5f), w = Filled({64, 64, 3, 3}, 0.01f);
  Tensor bias = Filled({64}, 0.1f);
  const std::vector<int64_t> one{1};
  for (auto _ : state) {
    Tensor y = Op("conv2d", x, w, bias, one, one);
    benchmark::DoNotOptimize(y.get());
  }
}
BENCHMARK(BM_TesseraConv3x3)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_TesseraConv3x3Typed(benchmark::State& state, tsr_dtype dtype) {
  Tensor x = Op("_to_copy", Filled({8, 64, 56, 56}, 0.5f), dtype);
  Tensor w = Op("_to_copy", Filled({64, 64, 3, 3}, 0.01f), dtype);
  Tensor bias = Op("_to_copy", Filled({64}, 0.1f), dtype);
  const std::vector<int64_t> one{1};
  for (auto _ : state) {
    Tensor y = Op("conv2d", x, w, bias, one, one);
    benchmark::DoNotOptimize(y.get());
  }
}
BENCHMARK_CAPTURE(BM_TesseraConv3x3Typed, bfloat16, TSR_DTYPE_BFLOAT16)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TesseraConv3x3Typed, float16, TSR_DTYPE_FLOAT16)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// ---- loading the plugin ----

void BM_LoadCpuPlugin(benchmark::State& state) {
  R();
  const tsr_load_report* const* reports = nullptr;
  size_t count = 0;
  tsr_load_reports(&reports, &count);
  std::string path;
  for (size_t i = 0; i < count; ++i) {
    if (tessera::sdk::from_c(reports[i]->plugin_name) == "cpu") {
      path = std::string(tessera::sdk::from_c(reports[i]->path));
    }
  }
  if (path.empty()) {
    state.SkipWithError("the CPU plugin was not loaded by default discovery");
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    tessera::sdk::check(tsr_plugin_unload(tsr_string{"cpu", 3}));
    state.ResumeTiming();
    const tsr_load_report* report = nullptr;
    tessera::sdk::check(tsr_plugin_load(tessera::sdk::to_c(path), &report));
  }
}
BENCHMARK(BM_LoadCpuPlugin)->Unit(benchmark::kMillisecond)->Iterations(20);

#ifdef TESSERA_HAVE_TORCH
void BM_TorchAdd1(benchmark::State& state) {
  torch::Tensor a = torch::ones({1}), b = torch::ones({1});
  for (auto _ : state) {
    torch::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}
BENCHMARK(BM_TorchAdd1);

void BM_TorchAddInplace1(benchmark::State& state) {
  torch::Tensor a = torch::ones({1}), b = torch::zeros({1});
  for (auto _ : state) {
    a.add_(b);
    benchmark::DoNotOptimize(a.data_ptr());
  }
}
BENCHMARK(BM_TorchAddInplace1);

void BM_TorchSum16M(benchmark::State& state) {
  torch::Tensor a = torch::ones({kBig});
  for (auto _ : state) {
    torch::Tensor s = a.sum();
    benchmark::DoNotOptimize(s.data_ptr());
  }
  state.SetBytesProcessed(state.iterations() * kBig * 4);
}
BENCHMARK(BM_TorchSum16M)->UseRealTime();

void BM_TorchMm1024(benchmark::State& state) {
  torch::Tensor a = torch::full({kN, kN}, 0.5), b = torch::full({kN, kN}, 0.25);
  torch::Tensor out = torch::empty({kN, kN});
  for (auto _ : state) {
    torch::mm_out(out, a, b);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * kN * kN * kN * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TorchMm1024)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_TorchMmTyped(benchmark::State& state, torch::ScalarType dtype) {
  torch::Tensor a = torch::full({kTyped, kTyped}, 0.5, dtype);
  torch::Tensor b = torch::full({kTyped, kTyped}, 0.25, dtype);
  torch::Tensor out = torch::empty({kTyped, kTyped}, dtype);
  for (auto _ : state) {
    torch::mm_out(out, a, b);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * kTyped * kTyped * kTyped * state.iterations(),
                                                benchmark::Counter::kIsRate);
}
// (libtorch 1.13 has no float16 mm on the CPU: "addmm_impl_cpu_" not implemented for 'Half'.)
BENCHMARK_CAPTURE(BM_TorchMmTyped, bfloat16, torch::kBFloat16)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TorchMmTyped, float64, torch::kDouble)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_TorchConv3x3(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::full({8, 64, 56, 56}, 0.5), w = torch::full({64, 64, 3, 3}, 0.01);
  torch::Tensor bias = torch::full({64}, 0.1);
  for (auto _ : state) {
    torch::Tensor y = torch::conv2d(x, w, bias, 1, 1);
    benchmark::DoNotOptimize(y.data_ptr());
  }
}
BENCHMARK(BM_TorchConv3x3)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_TorchConv3x3Typed(benchmark::State& state, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::full({8, 64, 56, 56}, 0.5, dtype);
  torch::Tensor w = torch::full({64, 64, 3, 3}, 0.01, dtype);
  torch::Tensor bias = torch::full({64}, 0.1, dtype);
  for (auto _ : state) {
    torch::Tensor y = torch::conv2d(x, w, bias, 1, 1);
    benchmark::DoNotOptimize(y.data_ptr());
  }
}
BENCHMARK_CAPTURE(BM_TorchConv3x3Typed, bfloat16, torch::kBFloat16)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
#endif

}  // namespace

BENCHMARK_MAIN();
