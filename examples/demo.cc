// A small tour of the runtime's bottom layers: tensors, views, type promotion, meta functions
// and a dispatched call.
//
// No backend plugin exists yet, so the demo registers one in-process float32 `add` kernel for
// CPU; every other op shows what the runtime itself knows (shapes, dtypes, errors).
#include <cstdio>
#include <iostream>
#include <string>

#include "core/type_promotion.h"
#include "core/views.h"
#include "dispatcher/op_registry.h"

namespace {

using tessera::Device;
using tessera::DeviceType;
using tessera::OpRegistry;
using tessera::ScalarType;
using tessera::Stack;
using tessera::Tensor;
using tessera::Value;

// Contiguous float32 add with broadcasting left out: enough for the demo's inputs.
absl::Status DemoAddKernel(void*, const tessera::OperatorHandle&, Stack* stack) {
  const Tensor a = (*stack)[0].tensor();
  const Tensor b = (*stack)[1].tensor();
  const float alpha = static_cast<float>((*stack)[2].scalar().to_double());
  if (a.dtype() != ScalarType::kFloat32 || b.dtype() != ScalarType::kFloat32 ||
      a.numel() != b.numel() || !a.is_contiguous() || !b.is_contiguous()) {
    return absl::UnimplementedError("demo add: contiguous float32 tensors of one shape only");
  }
  absl::StatusOr<Tensor> out = tessera::Empty(a.sizes(), a.dtype(), a.device());
  if (!out.ok()) return out.status();
  for (int64_t i = 0; i < a.numel(); ++i) {
    out->data<float>()[i] = a.data<float>()[i] + alpha * b.data<float>()[i];
  }
  stack->clear();
  stack->push_back(*std::move(out));
  return absl::OkStatus();
}

std::string Values(const Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.numel(); ++i) {
    s += (i ? ", " : "") + std::to_string(t.data<float>()[i]).substr(0, 5);
  }
  return s + "]";
}

template <typename T>
T Check(absl::StatusOr<T> v) {
  if (!v.ok()) {
    std::cerr << "demo: " << v.status() << "\n";
    std::exit(1);
  }
  return *std::move(v);
}

}  // namespace

int main() {
  OpRegistry& registry = OpRegistry::Global();
  std::printf("Tessera demo: %zu ops defined in the core library\n", registry.ListOps().size());

  tessera::KernelFunction add_kernel;
  add_kernel.fn = &DemoAddKernel;
  add_kernel.name = "demo::add_f32";
  auto impl = Check(registry.Impl("add.Tensor", tessera::DispatchKey::kCPU, add_kernel));

  Tensor a = Check(tessera::Empty({2, 3}, ScalarType::kFloat32, Device(DeviceType::kCPU)));
  Tensor b = Check(tessera::Empty({2, 3}, ScalarType::kFloat32, Device(DeviceType::kCPU)));
  for (int i = 0; i < 6; ++i) {
    a.data<float>()[i] = static_cast<float>(i);
    b.data<float>()[i] = 0.5f;
  }
  tessera::OperatorHandle add = Check(registry.Find("add.Tensor"));
  Stack stack{a, b, Value(tessera::Scalar(2.0))};
  if (absl::Status s = registry.Call(add, &stack); !s.ok()) {
    std::cerr << "demo: " << s << "\n";
    return 1;
  }
  std::printf("add(a, b, alpha=2)     a=%s -> %s\n", Values(a).c_str(),
              Values(stack[0].tensor()).c_str());

  Tensor t = Check(tessera::Transpose(a, 0, 1));
  std::printf("a.transpose(0, 1)      %s strides [%lld, %lld], contiguous=%d\n",
              t.ToString().c_str(), static_cast<long long>(t.strides()[0]),
              static_cast<long long>(t.strides()[1]), t.is_contiguous());

  tessera::ResultTypeBuilder promo;
  promo.AddTensor(ScalarType::kInt32, 1);
  promo.AddScalar(tessera::Scalar(1.5));
  std::printf("result_type(int32 tensor, 1.5) = %s\n",
              std::string(tessera::ScalarTypeName(promo.Result())).c_str());

  Tensor m1 = Check(tessera::Empty({8, 1, 5}, ScalarType::kInt16, Device(DeviceType::kMeta)));
  Tensor m2 = Check(tessera::Empty({3, 1}, ScalarType::kFloat16, Device(DeviceType::kMeta)));
  Stack meta{m1, m2};
  if (absl::Status s = registry.Call(add, &meta); !s.ok()) {
    std::cerr << "demo: " << s << "\n";
    return 1;
  }
  std::printf("meta add(%s, %s) -> %s\n", m1.ToString().c_str(), m2.ToString().c_str(),
              meta[0].tensor().ToString().c_str());

  Stack not_yet{a, b};
  absl::Status missing = registry.Call(Check(registry.Find("mul.Tensor")), &not_yet);
  std::printf("mul(a, b) on cpu       error: %s\n", std::string(missing.message()).c_str());
  return 0;
}
