// Cost of one boxed op call through the dispatcher: argument checks, dispatch key, kernel
// lookup, and a trivial kernel that allocates its 1-element output. The peer, measured in the
// same run, calls the same kernel body directly; the difference is the dispatcher's overhead.
//
//   build/bin/tessera_dispatch_benchmark
#include <benchmark/benchmark.h>

#include "dispatcher/op_registry.h"

namespace tessera {
namespace {

// The work of a 1-element float add, output allocation included.
absl::StatusOr<Tensor> AddOne(const Tensor& a, const Tensor& b) {
  absl::StatusOr<Tensor> out = Empty(a.sizes(), a.dtype(), a.device());
  if (!out.ok()) return out;
  out->data<float>()[0] = a.data<float>()[0] + b.data<float>()[0];
  return out;
}

absl::Status AddKernel(void*, const OperatorHandle&, Stack* stack) {
  absl::StatusOr<Tensor> out = AddOne((*stack)[0].tensor(), (*stack)[1].tensor());
  if (!out.ok()) return out.status();
  stack->clear();
  stack->push_back(*std::move(out));
  return absl::OkStatus();
}

struct Fixture {
  OpRegistry registry;
  RegistrationHandle def, impl;
  Tensor a, b;
  Fixture() {
    def = *registry.Define(
        "bench::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
        "Tensor");
    KernelFunction k;
    k.fn = &AddKernel;
    k.name = "bench_add";
    impl = *registry.Impl("bench::add.Tensor", DispatchKey::kCPU, k);
    a = *Empty({1}, ScalarType::kFloat32, Device(DeviceType::kCPU));
    b = *Empty({1}, ScalarType::kFloat32, Device(DeviceType::kCPU));
    a.data<float>()[0] = 1;
    b.data<float>()[0] = 2;
  }
};

void BM_DispatchedAdd1Element(benchmark::State& state) {
  Fixture f;
  OperatorHandle op = *f.registry.Find("bench::add.Tensor");
  for (auto _ : state) {
    Stack stack{f.a, f.b};
    absl::Status s = f.registry.Call(op, &stack);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
    benchmark::DoNotOptimize(stack);
  }
}
BENCHMARK(BM_DispatchedAdd1Element);

// The same call with alpha passed by name (ABI 1.1's tsr_stack_name_next): what binding costs
// when it is used. The positional call above does not bind at all.
void BM_DispatchedAdd1ElementNamedAlpha(benchmark::State& state) {
  Fixture f;
  OperatorHandle op = *f.registry.Find("bench::add.Tensor");
  for (auto _ : state) {
    Stack stack{f.a, f.b, Value(ArgumentName{"alpha"}), Value(Scalar(int64_t{1}))};
    absl::Status s = f.registry.Call(op, &stack);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
    benchmark::DoNotOptimize(stack);
  }
}
BENCHMARK(BM_DispatchedAdd1ElementNamedAlpha);

void BM_DirectAdd1Element(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) {
    absl::StatusOr<Tensor> out = AddOne(f.a, f.b);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_DirectAdd1Element);

void BM_EmptyTensor1Element(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<Tensor> t = Empty({1}, ScalarType::kFloat32, Device(DeviceType::kCPU));
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_EmptyTensor1Element);

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();
