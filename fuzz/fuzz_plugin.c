/* The plugin of the plugin_desc fuzzer: every field of its descriptor, of the tables it hands
 * the runtime (tsr_kernel_desc, tsr_device_interface) and of its register_fn's actions comes
 * from the current fuzz input.
 *
 * The loader only takes paths, so the fuzzer loads this one shared object again and again; its
 * tsr_plugin_init asks the fuzz executable for the current input through
 * tessera_fuzz_plugin_input (found with dlsym in the executable's exported symbols), which
 * keeps each input in memory and costs no file per run.
 *
 * Strings come in three kinds: honest (bytes of the input, copied into this plugin's own
 * buffers, valid while it is loaded, as the ABI asks), sensible literals, and lies the runtime
 * can tell from the value alone (NULL with a length, or a length beyond any string: 2^40,
 * SIZE_MAX). A short lie over a real buffer is not generated: the runtime cannot see it, and
 * the read it causes is the plugin's bug (docs/reliability.md). */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "tessera/c/plugin.h"

typedef void (*fuzz_input_fn)(const uint8_t** data, size_t* size);

static const uint8_t* g_data;
static size_t g_size, g_pos;
static const tsr_runtime_api* g_api;

static uint8_t next_byte(void) { return g_pos < g_size ? g_data[g_pos++] : 0; }

static uint64_t next_u64(void) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | next_byte();
  return v;
}

enum { kTexts = 8, kTextLength = 48 };
static char g_texts[kTexts][kTextLength];
static size_t g_next_text;

static tsr_string literal(const char* s) {
  tsr_string out = {s, strlen(s)};
  return out;
}

/* fuzz_string: a string field; `sensible` is what a correct plugin would pass. */
static tsr_string fuzz_string(const char* sensible) {
  tsr_string out = literal(sensible);
  switch (next_byte() % 8) {
    case 0:
      out.data = NULL;
      out.size = 0;
      break;
    case 1:
    case 2: {
      char* text = g_texts[g_next_text++ % kTexts];
      size_t n = next_byte() % kTextLength;
      for (size_t i = 0; i < n; ++i) text[i] = (char)next_byte();
      out.data = text;
      out.size = n;
      break;
    }
    case 3:
      out.size = (size_t)1 << 40;
      break;
    case 4:
      out.size = SIZE_MAX;
      break;
    case 5:
      out.data = NULL;
      out.size = 1 + next_byte();
      break;
    default:
      break;
  }
  return out;
}

/* fuzz_size: a struct_size; mostly the true one. */
static size_t fuzz_size(size_t real) {
  switch (next_byte() % 8) {
    case 0:
      return 0;
    case 1:
      return sizeof(size_t);
    case 2:
      return real - 1;
    case 3:
      return real + 8;
    case 4:
      return (size_t)next_u64();
    default:
      return real;
  }
}

static tsr_error* boxed_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  (void)context;
  (void)op;
  g_api->stack_clear(stack);
  return g_api->error_create(TSR_INTERNAL, literal("fuzz plugin kernel"));
}

static void typed_kernel(void) {}

static tsr_error* device_count(void* context, int32_t* out) {
  (void)context;
  static const int32_t kCounts[] = {0, 1, 2, -1, 64};
  *out = kCounts[(uintptr_t)context % 5];
  return NULL;
}

static tsr_error* allocate(void* context, int32_t index, size_t nbytes, void** out) {
  (void)context;
  (void)index;
  (void)nbytes;
  *out = NULL;
  return g_api->error_create(TSR_RESOURCE_EXHAUSTED, literal("fuzz plugin: no memory"));
}

static void free_fn(void* context, int32_t index, void* ptr) {
  (void)context;
  (void)index;
  (void)ptr;
}

static tsr_error* copy_fn(void* context, int32_t index, void* dst, const void* src, size_t n) {
  (void)context;
  (void)index;
  (void)dst;
  (void)src;
  (void)n;
  return NULL;
}

static tsr_error* copy_d2d(void* context, int32_t di, void* dst, int32_t si, const void* src,
                           size_t n) {
  (void)context;
  (void)di;
  (void)dst;
  (void)si;
  (void)src;
  (void)n;
  return NULL;
}

static tsr_error* synchronize(void* context, int32_t index) {
  (void)context;
  (void)index;
  return NULL;
}

static const char* const kOpNames[] = {"abs.out", "add.Tensor", "fuzz::op", "fuzz::op.out",
                                       "no_such_op"};
static const char* const kSchemas[] = {"fuzz::op(Tensor self) -> Tensor",
                                       "fuzz::op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
                                       "abs(Tensor self) -> Tensor", "fuzz::op(int x) -> ()"};

/* Registrations the plugin asked for and kept: the fuzzer releases them after each input
 * (tessera_fuzz_plugin_release_kept), after the plugin was unloaded or refused, as a careless
 * plugin might. */
enum { kMaxKept = 64 };
static tsr_registration* g_kept[kMaxKept];
static size_t g_num_kept;

static void take_registration(tsr_registration* r) {
  if (r == NULL) return;
  if ((next_byte() & 1) || g_num_kept == kMaxKept) {
    g_api->registration_release(r);
  } else {
    g_kept[g_num_kept++] = r;
  }
}

TSR_PLUGIN_EXPORT void tessera_fuzz_plugin_release_kept(void) {
  for (size_t i = 0; i < g_num_kept; ++i) g_api->registration_release(g_kept[i]);
  g_num_kept = 0;
}

static tsr_error* register_fuzzed(void* state, const tsr_runtime_api* api) {
  (void)state;
  const int steps = next_byte() % 5;
  for (int step = 0; step < steps; ++step) {
    tsr_registration* r = NULL;
    tsr_registration** out = (next_byte() & 1) ? &r : NULL;
    tsr_error* error = NULL;
    switch (next_byte() % 4) {
      case 0: {
        tsr_kernel_desc k;
        memset(&k, 0, sizeof k);
        k.struct_size = fuzz_size(sizeof k);
        k.op_name = fuzz_string(kOpNames[next_byte() % 5]);
        k.device_type = (next_byte() & 1) ? (int32_t)(next_byte() % 8) - 1 : (int32_t)next_u64();
        k.boxed = (next_byte() % 4) ? boxed_kernel : NULL;
        k.typed = (next_byte() % 4) ? NULL : typed_kernel;
        k.kernel_name = fuzz_string("fuzz::kernel");
        error = api->kernel_register(&k, out);
        break;
      }
      case 1:
        error = api->op_define(fuzz_string(kSchemas[next_byte() % 4]), out);
        break;
      case 2: {
        tsr_device_interface d;
        memset(&d, 0, sizeof d);
        const uint8_t slots = next_byte();
        d.struct_size = fuzz_size(sizeof d);
        d.device_type = (int32_t)(next_byte() % 8) - 1;
        d.context = (void*)(uintptr_t)(next_byte() % 5);
        d.device_count = (slots & 1) ? NULL : device_count;
        d.allocate = (slots & 2) ? NULL : allocate;
        d.free = (slots & 4) ? NULL : free_fn;
        d.copy_host_to_device = (slots & 8) ? NULL : copy_fn;
        d.copy_device_to_host = (slots & 16) ? NULL : copy_fn;
        d.copy_device_to_device = (slots & 32) ? NULL : copy_d2d;
        d.synchronize = (slots & 64) ? NULL : synchronize;
        error = api->device_register(&d, out);
        break;
      }
      default:
        error = api->fallback_register((int32_t)(next_byte() % 8) - 1,
                                       (next_byte() & 1) ? boxed_kernel : NULL, NULL,
                                       fuzz_string("fuzz::fallback"), out);
        break;
    }
    if (error != NULL) {
      /* Either pass the error on (the load fails) or swallow it and go on. */
      if (next_byte() & 1) return error;
      api->error_release(error);
    } else {
      take_registration(r);
    }
  }
  return NULL;
}

static tsr_error* register_ok(void* state, const tsr_runtime_api* api) {
  (void)state;
  (void)api;
  return NULL;
}

static tsr_error* register_error(void* state, const tsr_runtime_api* api) {
  (void)state;
  return api->error_create((tsr_code)(next_byte() % 20), fuzz_string("fuzz register error"));
}

static void unload_noop(void* state) { (void)state; }

static uint32_t fuzz_version(uint32_t sensible) {
  switch (next_byte() % 6) {
    case 0:
      return sensible + 1;
    case 1:
      return sensible == 0 ? UINT32_MAX : sensible - 1;
    case 2:
      return (uint32_t)next_u64();
    default:
      return sensible;
  }
}

TSR_PLUGIN_EXPORT tsr_error* tsr_plugin_init(const tsr_runtime_api* api, tsr_plugin_desc* desc) {
  fuzz_input_fn input;
  void* symbol = dlsym(RTLD_DEFAULT, "tessera_fuzz_plugin_input");
  if (symbol == NULL) return api->error_create(TSR_INTERNAL, literal("not in the fuzzer"));
  memcpy(&input, &symbol, sizeof input); /* ISO C has no object-to-function pointer cast */
  input(&g_data, &g_size);
  g_pos = 0;
  g_next_text = 0;
  g_api = api;

  if (next_byte() % 16 == 0) { /* init fails, with any code (also OK and out of range) */
    return api->error_create((tsr_code)(next_byte() % 20), fuzz_string("fuzz init error"));
  }
  desc->struct_size = fuzz_size(sizeof *desc);
  desc->name = fuzz_string("fuzz");
  desc->version = fuzz_string("1.0");
  desc->abi_major = fuzz_version(TSR_ABI_VERSION_MAJOR);
  desc->abi_minor = fuzz_version(TSR_ABI_VERSION_MINOR);
  desc->min_abi_minor = fuzz_version(0);
  desc->device_type = (next_byte() & 7) ? (int32_t)(next_byte() % 8) - 1 : (int32_t)next_u64();
  desc->device_name = fuzz_string("fuzzdev");
  switch (next_byte() % 4) {
    case 0:
      desc->register_fn = NULL;
      break;
    case 1:
      desc->register_fn = register_ok;
      break;
    case 2:
      desc->register_fn = register_error;
      break;
    default:
      desc->register_fn = register_fuzzed;
      break;
  }
  desc->unload_fn = (next_byte() & 1) ? unload_noop : NULL;
  desc->state = NULL;
  return NULL;
}
