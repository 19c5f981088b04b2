// The SDK's test plugin for sdk::Library (library_test.cc): a device of its own whose memory is
// scrambled host memory (so that only its copy functions read it correctly), registration hooks,
// an unload function, typed C kernels (library_plugin_c.c) and a device kernel that reads a
// 0-dim argument with sdk::item. One source, a variant per SDKTEST_VARIANT (sdk/CMakeLists.txt).
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "library_plugin_c.h"
#include "tessera/sdk/item.hpp"
#include "tessera/sdk/plugin.hpp"

#define SDKTEST_GOOD 0
#define SDKTEST_BAD_TYPED 1      // a typed C kernel whose parameters do not follow its op
#define SDKTEST_BAD_DEVICE 2     // a device interface for another device type than described
#define SDKTEST_FAILING_HOOK 3   // a hook that fails after another one ran
#define SDKTEST_LATE_DESCRIBE 4  // a kernel before describe()
#ifndef SDKTEST_VARIANT
#error "define SDKTEST_VARIANT"
#endif

namespace sdktest {
namespace {

namespace sdk = tessera::sdk;
using sdk::Tensor;

#if SDKTEST_VARIANT == SDKTEST_GOOD
constexpr const char* kName = "sdktest";
#elif SDKTEST_VARIANT == SDKTEST_BAD_TYPED
constexpr const char* kName = "sdktest_bad_typed";
#elif SDKTEST_VARIANT == SDKTEST_BAD_DEVICE
constexpr const char* kName = "sdktest_bad_device";
#elif SDKTEST_VARIANT == SDKTEST_FAILING_HOOK
constexpr const char* kName = "sdktest_failing";
#else
constexpr const char* kName = "sdktest_late";
#endif

// What the registration hooks saw, for sdktest::stats.
int g_block_runs = 0;     // how often the TESSERA_PLUGIN block ran
int g_hooks = 0;          // how often an on_register hook ran
int g_hook_at_block = 0;  // which run of the block the hook ran in

// The device: one device whose bytes are stored XOR 0x5A.
constexpr unsigned char kKey = 0x5A;
void Scramble(void* dst, const void* src, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    static_cast<unsigned char*>(dst)[i] = static_cast<const unsigned char*>(src)[i] ^ kKey;
  }
}
tsr_error* Count(void*, int32_t* out) {
  *out = 1;
  return nullptr;
}
tsr_error* Allocate(void*, int32_t, size_t nbytes, void** out) {
  *out = nbytes == 0 ? nullptr : std::malloc(nbytes);
  return nbytes != 0 && *out == nullptr
             ? sdk::api().error_create(TSR_RESOURCE_EXHAUSTED, sdk::to_c("sdkdev: out of memory"))
             : nullptr;
}
void Free(void*, int32_t, void* ptr) { std::free(ptr); }
tsr_error* Copy(void*, int32_t, void* dst, const void* src, size_t n) {
  Scramble(dst, src, n);
  return nullptr;
}
tsr_error* CopyDeviceToDevice(void*, int32_t, void* dst, int32_t, const void* src, size_t n) {
  std::memmove(dst, src, n);  // both scrambled alike
  return nullptr;
}
tsr_error* Synchronize(void*, int32_t) { return nullptr; }

// Interface leaves device_type and struct_size 0: Library::device fills them.
tsr_device_interface Interface() {
  tsr_device_interface iface{};
  iface.device_count = &Count;
  iface.allocate = &Allocate;
  iface.free = &Free;
  iface.copy_host_to_device = &Copy;
  iface.copy_device_to_host = &Copy;
  iface.copy_device_to_device = &CopyDeviceToDevice;
  iface.synchronize = &Synchronize;
  return iface;
}

// mul.Tensor for float32 tensors of one shape, or one of them 0-dim: that one may be on the CPU
// (PyTorch's rule), self included, and sdk::item reads it wherever it is. The result goes to the
// other tensor's device, the call's.
Tensor Mul(const Tensor& self, const Tensor& other) {
  if (self.dtype() != TSR_DTYPE_FLOAT32 || other.dtype() != TSR_DTYPE_FLOAT32) {
    sdk::fail(TSR_UNIMPLEMENTED, "sdktest mul.Tensor: float32 only");
  }
  const bool scalar_self = self.dim() == 0 && other.dim() != 0;
  const Tensor& tensor = scalar_self ? other : self;
  const Tensor& factor = scalar_self ? self : other;
  std::vector<float> a = tensor.to_vector<float>();
  if (factor.dim() == 0) {
    const float k = sdk::item<float>(factor, scalar_self ? "sdktest mul.Tensor: argument 'self'"
                                                         : "sdktest mul.Tensor: argument 'other'");
    for (float& v : a) v *= k;
  } else {
    const std::vector<float> b = factor.to_vector<float>();
    if (b.size() != a.size()) sdk::fail(TSR_UNIMPLEMENTED, "sdktest mul.Tensor: one shape only");
    for (size_t i = 0; i < a.size(); ++i) a[i] *= b[i];
  }
  return Tensor::from_host(a, tensor.sizes().vec(), TSR_DTYPE_FLOAT32, tensor.device());
}

// sdktest::stats(Tensor self) -> Tensor: [block runs, hooks, the block run of the hook], as
// float64 on self's device.
Tensor Stats(const Tensor& self) {
  const std::vector<double> v = {static_cast<double>(g_block_runs), static_cast<double>(g_hooks),
                                 static_cast<double>(g_hook_at_block)};
  return Tensor::from_host(v, {3}, TSR_DTYPE_FLOAT64, self.device());
}

// sdktest::views.out(Tensor self, Tensor? maybe, int k, *, Tensor(a!) out, Tensor(b!) named)
// -> (Tensor(a!), Tensor(b!)): a typed kernel with a KernelContext, views for its tensors and
// views for its returns. out (float64, 4 elements) gets [self.dim(), self.numel(), maybe's numel
// or -1, k]; named (float64, 1 element) 1 when the context names the op, else 0.
std::tuple<sdk::TensorView, sdk::TensorView> Views(const sdk::KernelContext& ctx,
                                                   sdk::TensorView self,
                                                   std::optional<sdk::TensorView> maybe, int64_t k,
                                                   sdk::TensorView out, sdk::TensorView named) {
  if (out.numel() != 4 || out.dtype() != TSR_DTYPE_FLOAT64) {
    ctx.fail(TSR_INVALID_ARGUMENT,
             "argument 'out': expected 4 float64 elements, found " + std::to_string(out.numel()));
  }
  const double v[4] = {static_cast<double>(self.dim()), static_cast<double>(self.numel()),
                       maybe ? static_cast<double>(maybe->numel()) : -1.0, static_cast<double>(k)};
  Scramble(out.data_ptr(), v, sizeof v);
  const double is_named = ctx.op_name() == "sdktest::views.out" ? 1.0 : 0.0;
  Scramble(named.data_ptr(), &is_named, sizeof is_named);
  return {out, named};
}

void Unload() {
  const std::string message =
      std::string(kName) + ": unload function ran after " + std::to_string(g_hooks) + " hook(s)";
  sdk::api().log(TSR_LOG_WARNING, sdk::to_c(message));
}

#if SDKTEST_VARIANT == SDKTEST_BAD_TYPED
// A typed C kernel for sdktest::probe whose second parameter is a double where the op has an
// int: never called, refused at registration.
tsr_error* WrongProbe(void*, tsr_tensor*, double, tsr_tensor**) { return nullptr; }
#endif

}  // namespace
}  // namespace sdktest

TESSERA_PLUGIN(lib) {
  using namespace sdktest;  // NOLINT: the block reads as a vendor's would
  ++g_block_runs;
#if SDKTEST_VARIANT == SDKTEST_LATE_DESCRIBE
  lib.impl<&Mul>(TESSERA_OP("mul.Tensor"));
#endif
  lib.describe(kName, "1.0",
               SDKTEST_VARIANT == SDKTEST_GOOD ? TSR_DEVICE_PRIVATEUSE2 : TSR_DEVICE_PRIVATEUSE3,
               SDKTEST_VARIANT == SDKTEST_GOOD ? "sdkdev" : "sdkbad");
  lib.on_register([] {
    ++g_hooks;
    g_hook_at_block = g_block_runs;
    sdktest_set_api(&tessera::sdk::api());
  });
  lib.on_unload(&Unload);
#if SDKTEST_VARIANT == SDKTEST_FAILING_HOOK
  lib.on_register([] { tessera::sdk::fail(TSR_UNAVAILABLE, "no sdkbad device is attached"); });
#endif
  tsr_device_interface iface = Interface();
#if SDKTEST_VARIANT == SDKTEST_BAD_DEVICE
  iface.device_type = TSR_DEVICE_PRIVATEUSE1;
#endif
  lib.device(iface);
  lib.define(
      "sdktest::probe(Tensor self, int n, float x, bool flag, ScalarType dtype, Scalar s, "
      "Device d, str name, int[] sizes, int? maybe, Scalar? opt, Tensor? t) -> Tensor");
#if SDKTEST_VARIANT == SDKTEST_BAD_TYPED
  lib.impl_typed("sdktest::probe", &WrongProbe);
#else
  lib.impl_typed("sdktest::probe", &sdktest_probe,
                 const_cast<int*>(&sdktest_probe_context));  // checked at registration
#endif
  // checked at compile time; declared nondeterministic, to see the reason reach the listing
  lib.impl_typed(TESSERA_OP("add.out"), &sdktest_add_out, nullptr, nullptr,
                 tessera::sdk::nondeterministic("a reason given to impl_typed"));
  lib.impl<&Mul>(TESSERA_OP("mul.Tensor"));
  lib.define("sdktest::stats(Tensor self) -> Tensor");
  lib.impl<&Stats>("sdktest::stats", tessera::sdk::nondeterministic("a reason given to impl"));
  lib.define(
      "sdktest::views.out(Tensor self, Tensor? maybe, int k, *, Tensor(a!) out, Tensor(b!) named) "
      "-> (Tensor(a!), Tensor(b!))");
  lib.impl<&Views>("sdktest::views.out");  // checked at registration
}
