// libtsr_counting_plugin.so: loads another plugin (TESSERA_COUNTED_PLUGIN, a path) and hands it
// a copy of the runtime's function table whose every slot counts its calls before forwarding
// them, so that a test can tell how many table calls that plugin's kernels make per op call
// (table_calls_test.cc). The counted plugin's descriptor is passed through as this plugin's
// own; only its register_fn is wrapped, to hand it the counting table too. Each kernel it
// registers is wrapped as well, to count its calls: a test can tell that the plugin's own
// kernel ran, not a composite of the runtime's.
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "runtime/runtime_api_slots.h"
#include "tessera/c/plugin.h"

namespace {

enum Slot : size_t {
#define TESSERA_SLOT_ENUM_(slot, fn) kSlot_##slot,
  TESSERA_RUNTIME_API_SLOTS(TESSERA_SLOT_ENUM_)
#undef TESSERA_SLOT_ENUM_
      kNumSlots
};
constexpr const char* kSlotNames[] = {
#define TESSERA_SLOT_NAME_(slot, fn) #slot,
    TESSERA_RUNTIME_API_SLOTS(TESSERA_SLOT_NAME_)
#undef TESSERA_SLOT_NAME_
};

const tsr_runtime_api* g_runtime = nullptr;  // the real table
tsr_runtime_api g_counting;                  // what the counted plugin gets
std::atomic<int64_t> g_calls[kNumSlots];
tsr_error* (*g_register)(void*, const tsr_runtime_api*) = nullptr;
std::atomic<int64_t> g_kernel_calls{0};

// A registered kernel's own entries, which the counting ones call.
struct Entries {
  tsr_boxed_kernel_fn boxed;
  tsr_packed_kernel_fn packed;
  void* context;
};
tsr_error* CountedBoxed(void* context, const tsr_op* op, tsr_stack* stack) {
  g_kernel_calls.fetch_add(1, std::memory_order_relaxed);
  const Entries& e = *static_cast<const Entries*>(context);
  return e.boxed(e.context, op, stack);
}
tsr_error* CountedPacked(void* context, const tsr_kernel_call* call) {
  g_kernel_calls.fetch_add(1, std::memory_order_relaxed);
  const Entries& e = *static_cast<const Entries*>(context);
  return e.packed(e.context, call);
}

// Forward<I, F, M>::Call: slot M (of type F) that counts into g_calls[I], then calls the
// runtime's own slot with the same arguments.
template <size_t I, typename F, F tsr_runtime_api::*M>
struct Forward;
template <size_t I, typename R, typename... A, R (*tsr_runtime_api::*M)(A...)>
struct Forward<I, R (*)(A...), M> {
  static R Call(A... args) {
    g_calls[I].fetch_add(1, std::memory_order_relaxed);
    return (g_runtime->*M)(args...);
  }
};

tsr_error* Fail(const tsr_runtime_api* api, const char* message) {
  return api->error_create(TSR_FAILED_PRECONDITION, tsr_string{message, std::strlen(message)});
}

// kernel_register of the counting table: the kernel registered with counting entries (its
// own kept for the process, as registrations may be). Typed C kernels pass as they are.
tsr_error* RegisterKernel(const tsr_kernel_desc* desc, tsr_registration** out) {
  g_calls[kSlot_kernel_register].fetch_add(1, std::memory_order_relaxed);
  if (desc == nullptr || desc->boxed == nullptr || desc->struct_size != sizeof(tsr_kernel_desc)) {
    return g_runtime->kernel_register(desc, out);
  }
  tsr_kernel_desc counted = *desc;
  counted.context = new Entries{desc->boxed, desc->packed, desc->context};
  counted.boxed = &CountedBoxed;
  if (desc->packed != nullptr) counted.packed = &CountedPacked;
  return g_runtime->kernel_register(&counted, out);
}

tsr_error* RegisterCounted(void* state, const tsr_runtime_api* /*api*/) {
  return g_register(state, &g_counting);
}

}  // namespace

extern "C" {

TSR_PLUGIN_EXPORT tsr_error* tsr_plugin_init(const tsr_runtime_api* api, tsr_plugin_desc* desc) {
  const char* path = std::getenv("TESSERA_COUNTED_PLUGIN");
  if (path == nullptr) return Fail(api, "counting plugin: set TESSERA_COUNTED_PLUGIN to a path");
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);  // kept for the process
  if (handle == nullptr) return Fail(api, dlerror());
  auto init = reinterpret_cast<tsr_plugin_init_fn>(dlsym(handle, TSR_PLUGIN_INIT_SYMBOL));
  if (init == nullptr) return Fail(api, "counting plugin: the counted plugin has no entry symbol");
  if (api->struct_size != sizeof(tsr_runtime_api)) {
    return Fail(api, "counting plugin: built for another runtime's table");
  }
  g_runtime = api;
  g_counting = *api;
#define TESSERA_SLOT_FORWARD_(slot, fn) \
  g_counting.slot =                     \
      &Forward<kSlot_##slot, decltype(tsr_runtime_api::slot), &tsr_runtime_api::slot>::Call;
  TESSERA_RUNTIME_API_SLOTS(TESSERA_SLOT_FORWARD_)
#undef TESSERA_SLOT_FORWARD_
  g_counting.kernel_register = &RegisterKernel;
  if (tsr_error* e = init(&g_counting, desc)) return e;
  g_register = desc->register_fn;
  desc->register_fn = &RegisterCounted;
  return nullptr;
}

// The counts since the last reset, by slot: the number of slots, and each slot's name and
// count through tsr_counting_slot.
TSR_PLUGIN_EXPORT size_t tsr_counting_num_slots(void) { return kNumSlots; }
TSR_PLUGIN_EXPORT int64_t tsr_counting_slot(size_t i, const char** name) {
  *name = kSlotNames[i];
  return g_calls[i].load(std::memory_order_relaxed);
}
TSR_PLUGIN_EXPORT void tsr_counting_reset(void) {
  for (auto& c : g_calls) c.store(0, std::memory_order_relaxed);
  g_kernel_calls.store(0, std::memory_order_relaxed);
}
// The calls of the counted plugin's kernels since the last reset.
TSR_PLUGIN_EXPORT int64_t tsr_counting_kernel_calls(void) {
  return g_kernel_calls.load(std::memory_order_relaxed);
}

}  // extern "C"
