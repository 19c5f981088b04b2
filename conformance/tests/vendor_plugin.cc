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
// Written with tsr_plugin_init by hand (the SDK's TESSERA_PLUGIN registers kernels for the
// plugin's own device type only) and the SDK's kernel boxing (sdk::Boxed): the Meta function is
// a kernel registered for TSR_DEVICE_META, which a plugin may do for the ops it defines.
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
                       tsr_device{TSR_DEVICE_META, 0});
}

Tensor NegMeta(const Tensor& self) {
  return Tensor::empty(self.sizes().vec(), self.dtype(), tsr_device{TSR_DEVICE_META, 0});
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

tsr_error* Register(const char* op, tsr_boxed_kernel_fn fn, int32_t device_type, const char* name,
                    const char* schema) {
  tsr_kernel_desc desc{};
  desc.struct_size = sizeof desc;
  desc.op_name = sdk::to_c(op);
  desc.device_type = device_type;
  desc.boxed = fn;
  desc.kernel_name = sdk::to_c(name);
  desc.schema = sdk::to_c(schema);
  return sdk::api().kernel_register(&desc, nullptr);
}

tsr_error* RegisterAll(void*, const tsr_runtime_api* api) {
  sdk::api_slot() = api;
  static tsr_device_interface device = [] {
    tsr_device_interface d{};
    d.struct_size = sizeof d;
    d.device_type = kType;
    d.device_count = &Count;
    d.allocate = &Allocate;
    d.free = &Free;
    d.copy_host_to_device = &Copy;
    d.copy_device_to_host = &Copy;
    d.copy_device_to_device = &CopyDD;
    d.synchronize = &Sync;
    return d;
  }();
  if (tsr_error* e = api->device_register(&device, nullptr)) return e;
  if (tsr_error* e = api->op_define(sdk::to_c(kSchema), nullptr)) return e;
  if (tsr_error* e = Register("vnd::scale_bias", &sdk::Boxed<&ScaleBias>, kType,
                              "vnd::scale_bias_kernel", kSchema)) {
    return e;
  }
  if (kVariant != 3) {
    // The Meta function: a kernel for the Meta device type, allowed for the plugin's own op.
    if (tsr_error* e = Register("vnd::scale_bias", &sdk::Boxed<&ScaleBiasMeta>, TSR_DEVICE_META,
                                "vnd::scale_bias_meta", kSchema)) {
      return e;
    }
  }
  if (kVariant == 4) {
    return Register("neg", &sdk::Boxed<&NegMeta>, TSR_DEVICE_META, "vnd::neg_meta",
                    "neg(Tensor self) -> Tensor");
  }
  return nullptr;
}

}  // namespace

extern "C" TSR_PLUGIN_EXPORT tsr_error* tsr_plugin_init(const tsr_runtime_api* api,
                                                        tsr_plugin_desc* desc) {
  sdk::api_slot() = api;
  const size_t capacity = tsr_plugin_desc_capacity(desc);
  desc->struct_size = capacity < sizeof *desc ? capacity : sizeof *desc;
  desc->abi_major = TSR_ABI_VERSION_MAJOR;
  desc->abi_minor = TSR_ABI_VERSION_MINOR;
  desc->min_abi_minor = 1;  // the schema a kernel states (tsr_kernel_desc.schema) is 1.1
  if (TSR_FIELD_FITS(tsr_plugin_desc, op_set_minor, capacity)) {
    desc->op_set_major = TSR_OP_SET_VERSION_MAJOR;
    desc->op_set_minor = TSR_OP_SET_VERSION_MINOR;
  }
  static const char* const kNames[] = {"vendor_op", "vendor_op_wrong", "vendor_op_bad_shape",
                                       "vendor_op_no_meta", "vendor_op_meta_for_core_op"};
  desc->name = sdk::to_c(kNames[kVariant]);
  desc->version = sdk::to_c("1.0");
  desc->device_type = kType;
  desc->device_name = sdk::to_c("vnd");
  desc->register_fn = &RegisterAll;
  return nullptr;
}
