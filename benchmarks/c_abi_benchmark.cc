// One 1-element `add` through the whole C ABI, as an application calls it: the C++ embedding
// API (tessera::call1) -> tsr_op_call -> dispatcher -> a C kernel registered like a plugin's
// (boxed, or typed C through libffi) that allocates its output through the table. Side by side
// in the same run: the same kernel work called directly, and libtorch's `a + b` when the
// benchmark was built with libtorch-dev (TESSERA_HAVE_TORCH).
//
//   build/bin/tessera_c_abi_benchmark --benchmark_repetitions=5
//   --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstring>

#include "kernel_work.hpp"
#include "tessera/sdk/runtime.hpp"

#ifdef TESSERA_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace {

using tessera::Tensor;

using tessera_bench::AddWork;

tsr_error* BoxedAdd(void*, const tsr_op*, tsr_stack* stack) {
  const tsr_runtime_api& api = tessera::sdk::api();
  tsr_tensor *a = nullptr, *b = nullptr, *out = nullptr;
  if (tsr_error* e = api.stack_get_tensor(stack, 0, &a)) return e;
  if (tsr_error* e = api.stack_get_tensor(stack, 1, &b)) return e;
  if (tsr_error* e = AddWork(a, b, &out)) return e;
  api.stack_clear(stack);
  tsr_error* e = api.stack_push_tensor(stack, out);
  api.tensor_release(out);
  return e;
}

tsr_error* TypedAdd(void*, tsr_tensor* a, tsr_tensor* b, tsr_scalar /*alpha*/, tsr_tensor** out) {
  return AddWork(a, b, out);
}

struct Setup {
  tessera::Runtime runtime;
  Tensor a = Tensor::from_host<float>({1.0f}, {1}, TSR_DTYPE_FLOAT32);
  Tensor b = Tensor::from_host<float>({2.0f}, {1}, TSR_DTYPE_FLOAT32);
  Setup() {
    const tsr_runtime_api& api = tessera::sdk::api();
    // Ops of their own with add.Tensor's schema (add.Tensor itself is the CPU plugin's: see
    // cpu_plugin_benchmark.cc), one per kernel form.
    for (const char* schema :
         {"bench::add_boxed(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
          "bench::add_typed(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"}) {
      tessera::sdk::check(api.op_define(tessera::sdk::to_c(schema), nullptr));
    }
    Register("bench::add_boxed", &BoxedAdd, nullptr);
    Register("bench::add_typed", nullptr, reinterpret_cast<tsr_typed_kernel_fn>(&TypedAdd));
  }
  static void Register(const char* op, tsr_boxed_kernel_fn boxed, tsr_typed_kernel_fn typed) {
    tsr_kernel_desc desc{};
    desc.struct_size = sizeof desc;
    desc.op_name = tessera::sdk::to_c(op);
    desc.device_type = TSR_DEVICE_CPU;
    desc.boxed = boxed;
    desc.typed = typed;
    desc.kernel_name = tessera::sdk::to_c(op);
    tessera::sdk::check(tessera::sdk::api().kernel_register(&desc, nullptr));
  }
};

Setup& S() {
  static Setup* s = new Setup();
  return *s;
}

void BM_CAbiAdd1Element_Boxed(benchmark::State& state) {
  Setup& s = S();
  static const tsr_op* op = tessera::find_op("bench::add_boxed");
  for (auto _ : state) {
    Tensor c = tessera::call1(op, s.a, s.b);
    benchmark::DoNotOptimize(c.get());
  }
}
BENCHMARK(BM_CAbiAdd1Element_Boxed);

void BM_CAbiAdd1Element_TypedC(benchmark::State& state) {
  Setup& s = S();
  static const tsr_op* op = tessera::find_op("bench::add_typed");
  for (auto _ : state) {
    Tensor c = tessera::call1(op, s.a, s.b);
    benchmark::DoNotOptimize(c.get());
  }
}
BENCHMARK(BM_CAbiAdd1Element_TypedC);

void BM_KernelWorkDirect(benchmark::State& state) {
  Setup& s = S();
  for (auto _ : state) {
    tsr_tensor* out = nullptr;
    tsr_error* e = AddWork(s.a.get(), s.b.get(), &out);
    benchmark::DoNotOptimize(out);
    tessera::sdk::api().tensor_release(out);
    if (e) tessera::sdk::api().error_release(e);
  }
}
BENCHMARK(BM_KernelWorkDirect);

#ifdef TESSERA_HAVE_TORCH
void BM_LibtorchAdd1Element(benchmark::State& state) {
  torch::Tensor a = torch::ones({1});
  torch::Tensor b = torch::ones({1});
  for (auto _ : state) {
    torch::Tensor c = a + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
}
BENCHMARK(BM_LibtorchAdd1Element);
#endif

}  // namespace

BENCHMARK_MAIN();
