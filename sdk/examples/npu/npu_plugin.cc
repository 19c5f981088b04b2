// libnpu.so: the sample vendor backend. It provides device type PrivateUse1 under the name
// "npu", a deliberate subset of op set v1 (float32 only), and the CPU fallback for the rest.
//
// Kernels read their inputs through the device's copy functions into host buffers, compute
// with the SDK's loop helpers and write the result back: a real accelerator would compute in
// place, but the arena is scrambled precisely so that nothing reads it directly. Most kernels
// are typed C++ functions; clamp.out is a typed C function (npu_c_kernels.c), as a vendor who
// writes C would register one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "npu_c_kernels.h"
#include "npu_device.h"
#include "npu_elementwise.h"
#include "npu_graph.h"
#include "tessera/sdk/dispatch.hpp"
#include "tessera/sdk/float_to_int.hpp"
#include "tessera/sdk/half.hpp"
#include "tessera/sdk/loops.hpp"
#include "tessera/sdk/plugin.hpp"
#include "tessera/sdk/random.hpp"

namespace npu {
namespace {

using tessera::sdk::fail;
using tessera::sdk::IntSpan;
using tessera::sdk::Operand;
using tessera::sdk::Scalar;
using tessera::sdk::Tensor;

constexpr tsr_device kNpu = {TSR_DEVICE_PRIVATEUSE1, 0};

void RequireFloat32(const char* op, const Tensor& t) {
  if (t.dtype() != TSR_DTYPE_FLOAT32) {
    fail(TSR_UNIMPLEMENTED, std::string("npu ") + op + ": not implemented for dtype " +
                                tessera::sdk::dtype_name(t.dtype()) +
                                " (the sample NPU computes float32 only)");
  }
}

int64_t Numel(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// A host copy of a tensor's elements (row-major), fetched through the device's copy functions.
struct Host {
  std::vector<float> values;
  std::vector<int64_t> sizes;
  Operand<const float> operand() const {
    return tessera::sdk::contiguous_operand<const float>(values.data(), sizes);
  }
};
Host Fetch(const char* op, const Tensor& t) {
  RequireFloat32(op, t);
  return Host{t.to_vector<float>(), t.sizes().vec()};
}

Tensor Store(const std::vector<float>& values, const std::vector<int64_t>& sizes) {
  return Tensor::from_host(values, sizes, TSR_DTYPE_FLOAT32, kNpu);
}

template <typename F>
Tensor Unary(const char* op, const Tensor& self, F f) {
  Host in = Fetch(op, self);
  for (float& v : in.values) v = f(v);
  return Store(in.values, in.sizes);
}

template <typename F>
Tensor Binary(const char* op, const Tensor& a, const Tensor& b, F f) {
  const Host x = Fetch(op, a), y = Fetch(op, b);
  const std::vector<int64_t> shape = tessera::sdk::broadcast_shapes(x.sizes, y.sizes);
  std::vector<float> out(static_cast<size_t>(Numel(shape)));
  tessera::sdk::elementwise(tessera::sdk::contiguous_operand(out.data(), shape), f, x.operand(),
                            y.operand());
  return Store(out, shape);
}

Tensor Add(const Tensor& self, const Tensor& other, Scalar alpha) {
  const float k = static_cast<float>(alpha.to_double());
  return Binary("add.Tensor", self, other,
                [k](float a, float b) { return Apply(Elementwise::kAdd, a, b, k); });
}
Tensor Sub(const Tensor& self, const Tensor& other, Scalar alpha) {
  const float k = static_cast<float>(alpha.to_double());
  return Binary("sub.Tensor", self, other,
                [k](float a, float b) { return Apply(Elementwise::kSub, a, b, k); });
}
Tensor Mul(const Tensor& self, const Tensor& other) {
  return Binary("mul.Tensor", self, other,
                [](float a, float b) { return Apply(Elementwise::kMul, a, b, 1); });
}
Tensor Div(const Tensor& self, const Tensor& other) {
  return Binary("div.Tensor", self, other,
                [](float a, float b) { return Apply(Elementwise::kDiv, a, b, 1); });
}
Tensor Maximum(const Tensor& self, const Tensor& other) {
  return Binary("maximum", self, other, [](float a, float b) {
    return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN()
                                          : std::max(a, b);
  });
}
Tensor Minimum(const Tensor& self, const Tensor& other) {
  return Binary("minimum", self, other, [](float a, float b) {
    return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN()
                                          : std::min(a, b);
  });
}
Tensor Neg(const Tensor& self) {
  return Unary("neg", self, [](float v) { return Apply(Elementwise::kNeg, v, 0, 1); });
}
Tensor Relu(const Tensor& self) {
  return Unary("relu", self, [](float v) { return Apply(Elementwise::kRelu, v, 0, 1); });
}
Tensor Exp(const Tensor& self) {
  return Unary("exp", self, [](float v) { return Apply(Elementwise::kExp, v, 0, 1); });
}
Tensor Abs(const Tensor& self) {
  return Unary("abs", self, [](float v) { return Apply(Elementwise::kAbs, v, 0, 1); });
}
Tensor Sqrt(const Tensor& self) {
  return Unary("sqrt", self, [](float v) { return Apply(Elementwise::kSqrt, v, 0, 1); });
}

Tensor Sum(const Tensor& self, std::optional<tsr_dtype> dtype) {
  if (dtype && *dtype != TSR_DTYPE_FLOAT32) {
    fail(TSR_UNIMPLEMENTED, "npu sum: only dtype=float32 is implemented");
  }
  const Host in = Fetch("sum", self);
  const double total =
      tessera::sdk::reduce(in.operand(), 0.0, [](double acc, float v) { return acc + v; });
  return Store({static_cast<float>(total)}, {});
}

Tensor Mm(const Tensor& self, const Tensor& mat2) {
  if (self.dim() != 2 || mat2.dim() != 2 || self.size(1) != mat2.size(0)) {
    fail(TSR_INVALID_ARGUMENT, "npu mm: expected [n, k] and [k, m] matrices");
  }
  const Host a = Fetch("mm", self), b = Fetch("mm", mat2);
  const int64_t n = a.sizes[0], k = a.sizes[1], m = b.sizes[1];
  std::vector<float> out(static_cast<size_t>(n * m), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      const float x = a.values[i * k + p];
      for (int64_t j = 0; j < m; ++j) out[i * m + j] += x * b.values[p * m + j];
    }
  }
  return Store(out, {n, m});
}

// MoveBytes: src's elements into dst (same dtype and shape; either may be strided): copies
// that convert nothing move bytes, in every dtype, so that a model's int64 and bool tensors
// reach and cross the device though the NPU computes float32 only.
Tensor MoveBytes(const Tensor& src, Tensor dst) {
  std::vector<unsigned char> bytes(static_cast<size_t>(src.numel()) * src.itemsize());
  src.copy_to_host(bytes.data(), bytes.size());
  dst.copy_from_host(bytes.data(), bytes.size());
  return dst;
}

// Converted: src's elements as dst's dtype, row-major, with PyTorch's casts: to bool "!= 0";
// floating to integral truncates toward zero through int64 (sdk::float_to_int64: INT64_MIN
// where int64 cannot hold it, as on x86), and narrower integers wrap; every value passes
// through long double, whose 64-bit mantissa holds every int64 exactly.
std::vector<unsigned char> Converted(const Tensor& src, tsr_dtype to) {
  std::vector<unsigned char> bytes(static_cast<size_t>(src.numel()) * src.itemsize());
  src.copy_to_host(bytes.data(), bytes.size());
  std::vector<long double> values(static_cast<size_t>(src.numel()));
  bool floating = false;
  tessera::sdk::dispatch(src.dtype(), "npu copy_", tessera::sdk::kAllTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = reinterpret_cast<const T*>(bytes.data());
    for (size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, tessera::sdk::Half> ||
                    std::is_same_v<T, tessera::sdk::BFloat16>) {
        values[i] = tessera::sdk::to_float(in[i]);
        floating = true;
      } else {
        values[i] = static_cast<long double>(in[i]);
        floating = std::is_floating_point_v<T>;
      }
    }
  });
  std::vector<unsigned char> out(values.size() * tessera::sdk::element_size(to));
  tessera::sdk::dispatch(to, "npu copy_", tessera::sdk::kAllTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = reinterpret_cast<T*>(out.data());
    for (size_t i = 0; i < values.size(); ++i) {
      const long double v = values[i];
      if constexpr (std::is_same_v<T, bool>) {
        o[i] = v != 0;
      } else if constexpr (std::is_same_v<T, tessera::sdk::Half>) {
        o[i] = tessera::sdk::to_half(static_cast<float>(v));
      } else if constexpr (std::is_same_v<T, tessera::sdk::BFloat16>) {
        o[i] = tessera::sdk::to_bfloat16(static_cast<float>(v));
      } else if constexpr (std::is_floating_point_v<T>) {
        o[i] = static_cast<T>(v);
      } else {
        o[i] = static_cast<T>(floating ? tessera::sdk::float_to_int64(static_cast<double>(v))
                                       : static_cast<int64_t>(v));
      }
    }
  });
  return out;
}

Tensor Clone(const Tensor& self, std::optional<int64_t> /*memory_format*/) {
  return MoveBytes(self, Tensor::empty(self.sizes().vec(), self.dtype(), kNpu));  // contiguous
}

Tensor Copy(const Tensor& self, const Tensor& src, bool /*non_blocking*/) {
  if (self.dtype() == src.dtype() && self.sizes().vec() == src.sizes().vec()) {
    return MoveBytes(src, self);
  }
  if (self.sizes().vec() == src.sizes().vec()) {  // a conversion: through the host
    const std::vector<unsigned char> bytes = Converted(src, self.dtype());
    Tensor dst = self;
    dst.copy_from_host(bytes.data(), bytes.size());
    return dst;
  }
  const Host from = Fetch("copy_", src);
  RequireFloat32("copy_", self);
  const std::vector<int64_t> shape = self.sizes().vec();
  if (tessera::sdk::broadcast_shapes(shape, from.sizes) != shape) {
    fail(TSR_INVALID_ARGUMENT, "npu copy_: src does not broadcast to self");
  }
  std::vector<float> out(static_cast<size_t>(Numel(shape)));
  tessera::sdk::elementwise(
      tessera::sdk::contiguous_operand(out.data(), shape), [](float v) { return v; },
      from.operand());
  Tensor dst = self;
  dst.copy_from_host(out.data(), out.size() * sizeof(float));  // strided destinations too
  return dst;
}

// uniform_: the numbers every backend gives for the call's draw (tessera/sdk/random.hpp; the
// runtime reserved it): element i from its own Philox block, computed on the host and stored.
// Every floating dtype, float64 above all: the random composites (bernoulli, dropout, randint,
// randperm) draw into float64 tensors, and a kernel's refusal does not reach the CPU fallback.
// normal_ is left to the CPU fallback, which draws the same numbers.
Tensor Uniform(const Tensor& self, double from, double to, tessera::sdk::RandomDraw draw) {
  std::vector<unsigned char> bytes(static_cast<size_t>(self.numel()) * self.itemsize());
  const float lo = static_cast<float>(from), hi = static_cast<float>(to);
  tessera::sdk::dispatch(self.dtype(), "npu uniform_", tessera::sdk::kFloatingTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = reinterpret_cast<T*>(bytes.data());
    for (int64_t i = 0; i < self.numel(); ++i) {
      const tessera::sdk::PhiloxBlock b = draw.block(static_cast<uint64_t>(i));
      if constexpr (std::is_same_v<T, double>) {
        out[i] = tessera::sdk::uniform_double(b, from, to);
      } else if constexpr (std::is_same_v<T, float>) {
        out[i] = tessera::sdk::uniform_float(b, lo, hi);
      } else if constexpr (std::is_same_v<T, tessera::sdk::Half>) {
        out[i] = tessera::sdk::to_half(tessera::sdk::uniform_float(b, lo, hi));
      } else if constexpr (std::is_same_v<T, tessera::sdk::BFloat16>) {
        out[i] = tessera::sdk::to_bfloat16(tessera::sdk::uniform_float(b, lo, hi));
      }  // sdk::dispatch instantiates every dtype: the others are refused before they run
    }
  });
  Tensor dst = self;
  dst.copy_from_host(bytes.data(), bytes.size());  // strided destinations too
  return dst;
}

// npu::throws: a kernel that throws, to show that exceptions come back as errors.
Tensor Throws(const Tensor&) { throw std::runtime_error("the sample NPU threw on purpose"); }

}  // namespace
}  // namespace npu

TESSERA_PLUGIN(lib) {
  lib.describe("npu", "1.0.0", TSR_DEVICE_PRIVATEUSE1, "npu");
  // Opening the device happens only when the runtime registers the plugin (not when it merely
  // reads the descriptor), and is undone when the plugin is unloaded.
  lib.on_register([] {
    npu::OpenDevice();
    npu_c_kernels_init(&tessera::sdk::api());
  });
  lib.on_unload(&npu::CloseDevice);
  lib.device(npu::DeviceInterface());  // its device_type is set from describe()
  lib.define("npu::throws(Tensor self) -> Tensor");
  // Ops of the op set: TESSERA_OP checks each kernel's signature at compile time. The plugin's
  // own op (npu::throws) is checked at registration, against the runtime's op listing.
  lib.impl<&npu::Add>(TESSERA_OP("add.Tensor"));
  lib.impl<&npu::Sub>(TESSERA_OP("sub.Tensor"));
  lib.impl<&npu::Mul>(TESSERA_OP("mul.Tensor"));
  lib.impl<&npu::Div>(TESSERA_OP("div.Tensor"));
  lib.impl<&npu::Maximum>(TESSERA_OP("maximum"));
  lib.impl<&npu::Minimum>(TESSERA_OP("minimum"));
  lib.impl<&npu::Neg>(TESSERA_OP("neg"));
  lib.impl<&npu::Relu>(TESSERA_OP("relu"));
  lib.impl<&npu::Exp>(TESSERA_OP("exp"));
  lib.impl<&npu::Abs>(TESSERA_OP("abs"));
  lib.impl<&npu::Sqrt>(TESSERA_OP("sqrt"));
  lib.impl<&npu::Sum>(TESSERA_OP("sum"));
  lib.impl<&npu::Mm>(TESSERA_OP("mm"));
  lib.impl<&npu::Clone>(TESSERA_OP("clone"));
  lib.impl<&npu::Copy>(TESSERA_OP("copy_"));
  lib.impl<&npu::Uniform>(TESSERA_OP("uniform_"));
  // A typed C kernel: its C parameters are checked against clamp.out's schema at compile time.
  // The runtime derives clamp and clamp_ from it.
  lib.impl_typed(TESSERA_OP("clamp.out"), &npu_clamp_out);
  lib.impl<&npu::Throws>("npu::throws");
  lib.cpu_fallback();
  // Models compiled for the NPU: chains of elementwise ops run fused (npu_graph.cc).
  lib.graph_compiler(npu::GraphCompiler());
}
