// libtessera_cuda.so and libtessera_hip.so: the GPU backends, one source for both (the HIP build
// defines TESSERA_GPU_HIP; gpu_runtime.h maps the runtime API). A plugin like any other: the
// SDK and the C ABI headers, one exported symbol. Its first kernels are the elementwise
// arithmetic ops (out= forms; the runtime derives the functional and in-place forms), copy_
// and fill_, on the GPU elementwise iterator (Note [GPU elementwise iterator]); every other op
// runs on the CPU fallback, which conformance reports as such. docs/gpu_backends.md.
#include <cstring>
#include <string>
#include <vector>

#include "gpu_device.h"
#include "kernels.h"
#include "tessera/sdk/plugin.hpp"
#include "tessera/sdk/promotion.hpp"
#include "tessera/sdk/stream.hpp"

#ifndef TESSERA_GPU_PLUGIN_VERSION
#define TESSERA_GPU_PLUGIN_VERSION "0.0.0"
#endif

namespace tessera {
namespace gpu {
namespace {

namespace sdk = ::tessera::sdk;
using sdk::Scalar;
using sdk::Tensor;

constexpr uint32_t Bit(int32_t dtype) { return uint32_t{1} << dtype; }

[[noreturn]] void Unsupported(const char* op, int32_t compute) {
  sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": not implemented on " + TESSERA_GPU_PLUGIN_NAME +
                                   " for dtype " +
                                   sdk::dtype_name(static_cast<tsr_dtype>(compute)));
}

ConstantValue ValueOf(const Scalar& s) {
  ConstantValue v;
  v.kind = s.c.kind == TSR_SCALAR_DOUBLE ? ConstantValue::kDouble
           : s.c.kind == TSR_SCALAR_BOOL ? ConstantValue::kBool
                                         : ConstantValue::kInt;
  v.i = s.c.i;
  v.d = s.c.d;
  return v;
}

// The value of a 0-dim CPU tensor, read from host memory.
ConstantValue ValueOfHost(const Tensor& t) {
  const char* p = static_cast<const char*>(t.data_ptr());
  ConstantValue v;
  auto as_int = [&v](int64_t i) {
    v.kind = ConstantValue::kInt;
    v.i = i;
  };
  auto as_double = [&v](double d) {
    v.kind = ConstantValue::kDouble;
    v.d = d;
  };
  switch (t.dtype()) {
    case TSR_DTYPE_BOOL:
      v.kind = ConstantValue::kBool;
      v.i = *reinterpret_cast<const bool*>(p) ? 1 : 0;
      break;
    case TSR_DTYPE_UINT8:
      as_int(*reinterpret_cast<const uint8_t*>(p));
      break;
    case TSR_DTYPE_INT8:
      as_int(*reinterpret_cast<const int8_t*>(p));
      break;
    case TSR_DTYPE_INT16:
      as_int(*reinterpret_cast<const int16_t*>(p));
      break;
    case TSR_DTYPE_INT32:
      as_int(*reinterpret_cast<const int32_t*>(p));
      break;
    case TSR_DTYPE_INT64:
      as_int(*reinterpret_cast<const int64_t*>(p));
      break;
    case TSR_DTYPE_FLOAT16:
      as_double(ToFloat(*reinterpret_cast<const Half*>(p)));
      break;
    case TSR_DTYPE_BFLOAT16:
      as_double(ToFloat(*reinterpret_cast<const BFloat16*>(p)));
      break;
    case TSR_DTYPE_FLOAT32:
      as_double(*reinterpret_cast<const float*>(p));
      break;
    default:
      as_double(*reinterpret_cast<const double*>(p));
      break;
  }
  return v;
}

// An operand from a tensor argument: memory of the call's device, or a 0-dim CPU tensor, which
// PyTorch lets join any device's op and which travels as a constant.
OperandSpec TensorOperand(const char* op, const Tensor& t, const char* arg) {
  OperandSpec o;
  o.dtype = t.dtype();
  if (t.device().type == TSR_DEVICE_CPU) {
    if (t.dim() != 0) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected '" + arg + "' on " +
                                          TESSERA_GPU_PLUGIN_NAME +
                                          " or a 0-dim CPU tensor, got a CPU tensor of " +
                                          std::to_string(t.dim()) + " dimensions");
    }
    o.constant = true;
    o.value = ValueOfHost(t);
    return o;
  }
  o.data = static_cast<char*>(t.data_ptr());
  o.sizes = t.sizes().vec();
  o.strides = t.strides().vec();
  return o;
}

OperandSpec ScalarOperand(const Scalar& s, int32_t compute) {
  OperandSpec o;
  o.dtype = compute;
  o.constant = true;
  o.value = ValueOf(s);
  return o;
}

ElementwisePlan Plan(const char* op, const Tensor& out, std::vector<OperandSpec> operands) {
  operands.insert(operands.begin(), TensorOperand(op, out, "out"));
  ElementwisePlan plan;
  std::string error;
  if (!MakeElementwisePlan(out.sizes().vec(), operands, &plan, &error)) {
    sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": " + error);
  }
  return plan;
}

void Check(const char* op, const std::string& launch_error) {
  if (!launch_error.empty()) {
    sdk::fail(TSR_INTERNAL,
              std::string(op) + ": " TESSERA_GPU_VENDOR " kernel launch failed: " + launch_error);
  }
}

void RunBinary(const char* op, BinaryKind kind, int32_t compute, const Tensor& out, OperandSpec a,
               OperandSpec b, const ConstantValue& alpha) {
  if ((BinaryDtypes(kind) & Bit(compute)) == 0) Unsupported(op, compute);
  const ElementwisePlan plan = Plan(op, out, {std::move(a), std::move(b)});
  if (plan.chunks.empty()) return;
  DeviceGuard guard(out.device().index);
  Check(op, LaunchBinary(kind, compute, plan, alpha, sdk::current_stream(out.device())));
}

void RunUnary(const char* op, UnaryKind kind, int32_t compute, const Tensor& out, OperandSpec a) {
  if ((UnaryDtypes(kind) & Bit(compute)) == 0) Unsupported(op, compute);
  const ElementwisePlan plan = Plan(op, out, {std::move(a)});
  if (plan.chunks.empty()) return;
  DeviceGuard guard(out.device().index);
  Check(op, LaunchUnary(kind, compute, plan, sdk::current_stream(out.device())));
}

// alpha of add/sub, checked as PyTorch (and the CPU plugin) do.
ConstantValue Alpha(const char* op, const Scalar& alpha, int32_t compute) {
  if (sdk::is_integral(static_cast<tsr_dtype>(compute), true) &&
      alpha.c.kind == TSR_SCALAR_DOUBLE) {
    sdk::fail(TSR_INVALID_ARGUMENT,
              std::string(op) +
                  ": for integral input tensors, argument alpha must not be a floating point "
                  "number");
  }
  if (compute != TSR_DTYPE_BOOL && alpha.c.kind == TSR_SCALAR_BOOL) {
    sdk::fail(TSR_INVALID_ARGUMENT,
              std::string(op) + ": boolean alpha only supported for boolean results");
  }
  return ValueOf(alpha);
}

int32_t Promoted(const Tensor& a, const Tensor& b) { return sdk::ResultType().add(a).add(b).get(); }
int32_t Promoted(const Tensor& a, const Scalar& b) { return sdk::ResultType().add(a).add(b).get(); }
// True division computes in a floating dtype: integers and bool as float32.
int32_t FloatOf(int32_t promoted) {
  return sdk::is_floating(static_cast<tsr_dtype>(promoted)) ? promoted : TSR_DTYPE_FLOAT32;
}

// --- binary ops: add.out, sub.out, mul.out, div.out and their Scalar_out forms ---------------

Tensor AddOut(const Tensor& self, const Tensor& other, Scalar alpha, const Tensor& out) {
  const int32_t c = Promoted(self, other);
  RunBinary("add.out", BinaryKind::kAdd, c, out, TensorOperand("add.out", self, "self"),
            TensorOperand("add.out", other, "other"), Alpha("add.out", alpha, c));
  return out;
}
Tensor AddScalarOut(const Tensor& self, Scalar other, Scalar alpha, const Tensor& out) {
  const int32_t c = Promoted(self, other);
  RunBinary("add.Scalar_out", BinaryKind::kAdd, c, out,
            TensorOperand("add.Scalar_out", self, "self"), ScalarOperand(other, c),
            Alpha("add.Scalar_out", alpha, c));
  return out;
}
Tensor SubOut(const Tensor& self, const Tensor& other, Scalar alpha, const Tensor& out) {
  const int32_t c = Promoted(self, other);
  RunBinary("sub.out", BinaryKind::kSub, c, out, TensorOperand("sub.out", self, "self"),
            TensorOperand("sub.out", other, "other"), Alpha("sub.out", alpha, c));
  return out;
}
Tensor SubScalarOut(const Tensor& self, Scalar other, Scalar alpha, const Tensor& out) {
  const int32_t c = Promoted(self, other);
  RunBinary("sub.Scalar_out", BinaryKind::kSub, c, out,
            TensorOperand("sub.Scalar_out", self, "self"), ScalarOperand(other, c),
            Alpha("sub.Scalar_out", alpha, c));
  return out;
}
Tensor MulOut(const Tensor& self, const Tensor& other, const Tensor& out) {
  RunBinary("mul.out", BinaryKind::kMul, Promoted(self, other), out,
            TensorOperand("mul.out", self, "self"), TensorOperand("mul.out", other, "other"),
            ConstantValue());
  return out;
}
Tensor MulScalarOut(const Tensor& self, Scalar other, const Tensor& out) {
  const int32_t c = Promoted(self, other);
  RunBinary("mul.Scalar_out", BinaryKind::kMul, c, out,
            TensorOperand("mul.Scalar_out", self, "self"), ScalarOperand(other, c),
            ConstantValue());
  return out;
}
Tensor DivOut(const Tensor& self, const Tensor& other, const Tensor& out) {
  RunBinary("div.out", BinaryKind::kDiv, FloatOf(Promoted(self, other)), out,
            TensorOperand("div.out", self, "self"), TensorOperand("div.out", other, "other"),
            ConstantValue());
  return out;
}
Tensor DivScalarOut(const Tensor& self, Scalar other, const Tensor& out) {
  const int32_t c = FloatOf(Promoted(self, other));
  RunBinary("div.Scalar_out", BinaryKind::kDiv, c, out,
            TensorOperand("div.Scalar_out", self, "self"), ScalarOperand(other, c),
            ConstantValue());
  return out;
}

// --- unary ops ------------------------------------------------------------------------------

// Same: computes in the input's dtype (neg, abs, relu). Float: in a floating dtype, integers
// and bool as float32 (exp, sqrt, ...).
template <UnaryKind kKind, bool kFloat>
Tensor UnaryOut(const char* op, const Tensor& self, const Tensor& out) {
  const int32_t compute = kFloat ? FloatOf(self.dtype()) : self.dtype();
  RunUnary(op, kKind, compute, out, TensorOperand(op, self, "self"));
  return out;
}

#define TESSERA_GPU_UNARY(NAME, KIND, FLOAT)                          \
  Tensor NAME##Out(const Tensor& self, const Tensor& out) {           \
    return UnaryOut<UnaryKind::KIND, FLOAT>(#NAME ".out", self, out); \
  }
TESSERA_GPU_UNARY(neg, kNeg, false)
TESSERA_GPU_UNARY(abs, kAbs, false)
TESSERA_GPU_UNARY(relu, kRelu, false)
TESSERA_GPU_UNARY(exp, kExp, true)
TESSERA_GPU_UNARY(log, kLog, true)
TESSERA_GPU_UNARY(sqrt, kSqrt, true)
TESSERA_GPU_UNARY(rsqrt, kRsqrt, true)
TESSERA_GPU_UNARY(sin, kSin, true)
TESSERA_GPU_UNARY(cos, kCos, true)
TESSERA_GPU_UNARY(tanh, kTanh, true)
TESSERA_GPU_UNARY(sigmoid, kSigmoid, true)
TESSERA_GPU_UNARY(reciprocal, kReciprocal, true)
#undef TESSERA_GPU_UNARY

// --- copy_ and fill_ ------------------------------------------------------------------------

// copy_ on one device (the runtime moves data between devices itself): any dtype to any
// dtype, src broadcast to self. A dense copy of equal dtypes and layouts is one memcpy on the
// current stream.
Tensor Copy(const Tensor& self, const Tensor& src, bool /*non_blocking: always queued*/) {
  if (self.numel() == 0) return self;
  const bool same_layout = src.device().type != TSR_DEVICE_CPU && self.dtype() == src.dtype() &&
                           self.is_contiguous() && src.is_contiguous() &&
                           self.sizes().vec() == src.sizes().vec();
  if (same_layout) {
    if (self.data_ptr() == src.data_ptr()) return self;
    const tsr_device d = self.device();
    DeviceGuard guard(d.index);
    const cudaError_t e = cudaMemcpyAsync(
        self.data_ptr(), src.data_ptr(), static_cast<size_t>(self.numel()) * self.itemsize(),
        cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(sdk::current_stream(d)));
    if (e != cudaSuccess) Check("copy_", ErrorText(e));
    return self;
  }
  RunUnary("copy_", UnaryKind::kIdentity, self.dtype(), self, TensorOperand("copy_", src, "src"));
  return self;
}

Tensor Fill(const Tensor& self, Scalar value) {
  RunUnary("fill_.Scalar", UnaryKind::kIdentity, self.dtype(), self,
           ScalarOperand(value, self.dtype()));
  return self;
}

}  // namespace
}  // namespace gpu
}  // namespace tessera

namespace gpu = ::tessera::gpu;

TESSERA_PLUGIN(lib) {
  lib.describe(TESSERA_GPU_PLUGIN_NAME, TESSERA_GPU_PLUGIN_VERSION, TESSERA_GPU_DEVICE_TYPE, "");
  if (const std::string error = gpu::CheckAllocatorSetting(); !error.empty()) {
    tessera::sdk::fail(TSR_INVALID_ARGUMENT, error);  // refuses the load, with the reason
  }
  static const bool logged = [] {  // once, though the block runs at init and at registration
    std::string why;
    if (gpu::DeviceCount(&why) == 0) {
      // The plugin still registers its device (with 0 devices) and kernels: the load report
      // says "devices: 0", and tensors on the device are refused as not existing.
      const std::string message = std::string(TESSERA_GPU_PLUGIN_NAME ": no devices (") + why + ")";
      tessera::sdk::api().log(TSR_LOG_INFO, tessera::sdk::to_c(message));
    }
    return true;
  }();
  (void)logged;
  lib.device(gpu::DeviceInterface());
  lib.impl<&gpu::AddOut>(TESSERA_OP("add.out"));
  lib.impl<&gpu::AddScalarOut>(TESSERA_OP("add.Scalar_out"));
  lib.impl<&gpu::SubOut>(TESSERA_OP("sub.out"));
  lib.impl<&gpu::SubScalarOut>(TESSERA_OP("sub.Scalar_out"));
  lib.impl<&gpu::MulOut>(TESSERA_OP("mul.out"));
  lib.impl<&gpu::MulScalarOut>(TESSERA_OP("mul.Scalar_out"));
  lib.impl<&gpu::DivOut>(TESSERA_OP("div.out"));
  lib.impl<&gpu::DivScalarOut>(TESSERA_OP("div.Scalar_out"));
  lib.impl<&gpu::negOut>(TESSERA_OP("neg.out"));
  lib.impl<&gpu::absOut>(TESSERA_OP("abs.out"));
  lib.impl<&gpu::reluOut>(TESSERA_OP("relu.out"));
  lib.impl<&gpu::expOut>(TESSERA_OP("exp.out"));
  lib.impl<&gpu::logOut>(TESSERA_OP("log.out"));
  lib.impl<&gpu::sqrtOut>(TESSERA_OP("sqrt.out"));
  lib.impl<&gpu::rsqrtOut>(TESSERA_OP("rsqrt.out"));
  lib.impl<&gpu::sinOut>(TESSERA_OP("sin.out"));
  lib.impl<&gpu::cosOut>(TESSERA_OP("cos.out"));
  lib.impl<&gpu::tanhOut>(TESSERA_OP("tanh.out"));
  lib.impl<&gpu::sigmoidOut>(TESSERA_OP("sigmoid.out"));
  lib.impl<&gpu::reciprocalOut>(TESSERA_OP("reciprocal.out"));
  lib.impl<&gpu::Copy>(TESSERA_OP("copy_"));
  lib.impl<&gpu::Fill>(TESSERA_OP("fill_.Scalar"));
  lib.cpu_fallback();
}
