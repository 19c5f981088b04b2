// A vendor plugin with an op of its own and a Meta function for it, for the tests of vendor
// meta functions (vendor_meta_test.cc) and of vendor op database entries (`conformance
// --cases`, vendor_cases.c). Device: PrivateUse3 renamed "vnd", plain host memory.
//
//   vnd::scale_bias(Tensor self, Tensor bias, float scale=1) -> Tensor
//       self * scale + bias, bias broadcast with self; float32 and float64, both arguments of
//       one dtype. Its kernel on "vnd", and its Meta function (shape and dtype only).
//
// Variants (TESSERA_VENDOR_VARIANT):
//   0 correct
//   1 wrong      float64 results add the bias twice (float32 stays right)
//   2 bad_shape  the kernel ignores broadcasting and returns self's shape
//   3 no_meta    no Meta function is registered
//   4 meta_for_core_op  also registers a Meta function for `neg`, an op it did not define (the
//                load is refused: PERMISSION_DENIED)
//
// Written with the SDK's TESSERA_PLUGIN: the kernel with lib.impl, the Meta function with
// lib.meta (a kernel for TSR_DEVICE_META, which a plugin may register for the ops it defines).
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/c/plugin.h"
#include "tessera/sdk/dispatch.hpp"
#include "tessera/sdk/loops.hpp"
#include "tessera/sdk/plugin.hpp"

#ifndef TESSERA_VENDOR_VARIANT
#error "define TESSERA_VENDOR_VARIANT (0..4)"
#endif

namespace {

namespace sdk = tessera::sdk;
using sdk::Tensor;

constexpr int kVariant = TESSERA_VENDOR_VARIANT;
constexpr tsr_device_type kType = TSR_DEVICE_PRIVATEUSE3;
constexpr char kSchema[] = "vnd::scale_bias(Tensor self, Tensor bias, float scale=1) -> Tensor";

// ---- device: host memory ----
tsr_error* Count(void*, int32_t* out) {
  *out = 1;
  return nullptr;
}
tsr_error* Allocate(void*, int32_t, size_t nbytes, void** out) {
  *out = std::malloc(nbytes > 0 ? nbytes : 1);
  return *out ? nullptr
              : sdk::api().error_create(TSR_RESOURCE_EXHAUSTED, sdk::to_c("vnd: out of memory"));
}
void Free(void*, int32_t, void* p) { std::free(p); }
tsr_error* Copy(void*, int32_t, void* dst, const void* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
  return nullptr;
}
tsr_error* CopyDD(void*, int32_t, void* dst, int32_t, const void* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
  return nullptr;
}
tsr_error* Sync(void*, int32_t) { return nullptr; }

// ScaleBiasShape: what the op gives, from the arguments' metadata alone (what the Meta function
// computes and the kernel relies on): both of one dtype, shapes that broadcast. `who` names
// the caller in errors, so that a test sees which of the two refused a call.
std::vector<int64_t> ScaleBiasShape(const Tensor& self, const Tensor& bias, const char* who) {
  if (self.dtype() != bias.dtype()) {
    sdk::fail(TSR_INVALID_ARGUMENT, std::string(who) + ": expected bias of self's dtype " +
                                        sdk::dtype_name(self.dtype()) + ", got " +
                                        sdk::dtype_name(bias.dtype()));
  }
  const std::vector<int64_t> a = self.sizes().vec(), b = bias.sizes().vec();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const int64_t x = a[a.size() - 1 - i], y = b[b.size() - 1 - i];
    if (x != y && x != 1 && y != 1) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(who) + ": bias of size " + std::to_string(y) +
                                          " does not broadcast with self's " + std::to_string(x) +
                                          " at dim -" + std::to_string(i + 1));
    }
  }
  return sdk::broadcast_shapes(a, b);
}

// The Meta function: never reads data (its arguments are meta tensors on a Meta call, and the
// real ones when the runtime checks a call before the kernel runs).
Tensor ScaleBiasMeta(const Tensor& self, const Tensor& bias, double /*scale*/) {
  return Tensor::empty(ScaleBiasShape(self, bias, "vnd::scale_bias (meta)"), self.dtype(),
                       sdk::kMeta);
}

Tensor NegMeta(const Tensor& self) {
  return Tensor::empty(self.sizes().vec(), self.dtype(), sdk::kMeta);
}

template <typename T>
void Compute(const Tensor& out, const Tensor& self, const Tensor& bias, double scale) {
  const T s = static_cast<T>(scale);
  const T twice = kVariant == 1 && sizeof(T) == 8 ? 2 : 1;  // the planted float64 bug
  sdk::elementwise(
      sdk::operand(out, out.data<T>()), [s, twice](T x, T b) { return x * s + twice * b; },
      sdk::operand(self, self.data<T>()), sdk::operand(bias, bias.data<T>()));
}

Tensor ScaleBias(const Tensor& self, const Tensor& bias, double scale) {
  std::vector<int64_t> shape = ScaleBiasShape(self, bias, "vnd::scale_bias");
  if (self.dtype() != TSR_DTYPE_FLOAT32 && self.dtype() != TSR_DTYPE_FLOAT64) {
    sdk::fail(TSR_UNIMPLEMENTED, std::string("vnd::scale_bias: float32 and float64 only, got ") +
                                     sdk::dtype_name(self.dtype()));
  }
  if (kVariant == 2) shape = self.sizes().vec();  // the planted shape bug
  Tensor out = Tensor::empty(shape, self.dtype(), self.device());
  if (kVariant == 2) return out;
  if (self.dtype() == TSR_DTYPE_FLOAT32) {
    Compute<float>(out, self, bias, scale);
  } else {
    Compute<double>(out, self, bias, scale);
  }
  return out;
}

tsr_device_interface Device() {
  tsr_device_interface d{};
  d.device_count = &Count;
  d.allocate = &Allocate;
  d.free = &Free;
  d.copy_host_to_device = &Copy;
  d.copy_device_to_host = &Copy;
  d.copy_device_to_device = &CopyDD;
  d.synchronize = &Sync;
  return d;  // struct_size and device_type: the SDK fills them from describe()
}

constexpr const char* kNames[] = {"vendor_op", "vendor_op_wrong", "vendor_op_bad_shape",
                                  "vendor_op_no_meta", "vendor_op_meta_for_core_op"};

}  // namespace

TESSERA_PLUGIN(lib) {
  lib.describe(kNames[kVariant], "1.0", kType, "vnd");
  lib.device(Device());
  lib.define(kSchema);
  lib.impl<&ScaleBias>("vnd::scale_bias");
  // The Meta function, allowed for the plugin's own op.
  if (kVariant != 3) lib.meta<&ScaleBiasMeta>("vnd::scale_bias");
  if (kVariant == 4) lib.meta<&NegMeta>("neg");
}
