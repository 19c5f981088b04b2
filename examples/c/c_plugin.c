/* libcdemo.so: a complete Tessera plugin in plain C99, over tessera/c/plugin.h only (no SDK,
 * nothing of the runtime linked). It defines an op of its own, `cdemo::twice(Tensor self) ->
 * Tensor`, with a CPU kernel (a plugin may register kernels on any device type for the ops it
 * defines itself; docs/plugin_guide.md).
 *
 * Installed as share/tessera/examples/c/c_plugin.c. Build it with the installed CMake package
 * (share/tessera/examples/c/CMakeLists.txt: tessera_add_plugin) or with pkg-config:
 *
 *   cc -std=c99 $(pkg-config --cflags tessera-plugin) c_plugin.c \
 *      $(pkg-config --libs tessera-plugin) -o libcdemo.so
 *
 * and load it by path: `c_embedding ./libcdemo.so` (c_embedding.c beside it). */
#include <string.h>

#include "tessera/c/plugin.h"

/* The runtime's function table: the plugin's only way into the runtime. Set by
 * tsr_plugin_init, valid until the plugin is unloaded. */
static const tsr_runtime_api* api = NULL;

static tsr_string str(const char* s) {
  tsr_string t;
  t.data = s;
  t.size = strlen(s);
  return t;
}

/* cdemo::twice(Tensor self) -> Tensor, for float32 CPU tensors. A boxed kernel reads its
 * arguments from the stack and leaves exactly the schema's returns there. */
static tsr_error* twice_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  tsr_tensor* self = NULL;
  tsr_tensor* out = NULL;
  tsr_device cpu;
  tsr_error* err;
  const float* in;
  float* result;
  int64_t i, n;
  (void)context;
  (void)op;
  if ((err = api->stack_get_tensor(stack, 0, &self)) != NULL) return err; /* borrowed */
  if (api->tensor_dtype(self) != TSR_DTYPE_FLOAT32 || !api->tensor_is_contiguous(self)) {
    return api->error_create(TSR_UNIMPLEMENTED,
                             str("cdemo::twice: argument self: expected a contiguous float32 "
                                 "tensor, got another dtype or a strided view"));
  }
  cpu.type = TSR_DEVICE_CPU;
  cpu.index = 0;
  err = api->tensor_empty(api->tensor_sizes(self), (size_t)api->tensor_dim(self), TSR_DTYPE_FLOAT32,
                          cpu, &out);
  if (err != NULL) return err;
  in = (const float*)api->tensor_data_ptr(self);
  result = (float*)api->tensor_data_ptr(out);
  n = api->tensor_numel(self);
  for (i = 0; i < n; ++i) result[i] = 2.0f * in[i];
  /* Replace the arguments by the result; the stack takes its own reference. `self` is gone
   * after the clear, so `in` is not used below. */
  api->stack_clear(stack);
  err = api->stack_push_tensor(stack, out);
  api->tensor_release(out);
  return err;
}

/* register_fn: the only place a plugin registers anything (on the loading thread, after the
 * runtime accepted its versions). If it fails, the runtime rolls back what it registered. */
static tsr_error* register_all(void* state, const tsr_runtime_api* runtime) {
  tsr_kernel_desc kernel;
  tsr_error* err;
  (void)state;
  api = runtime;
  if ((err = api->op_define(str("cdemo::twice(Tensor self) -> Tensor"), NULL)) != NULL) {
    return err;
  }
  memset(&kernel, 0, sizeof kernel);
  kernel.struct_size = sizeof kernel;
  kernel.op_name = str("cdemo::twice");
  kernel.device_type = TSR_DEVICE_CPU;
  kernel.boxed = twice_kernel;
  kernel.kernel_name = str("cdemo::twice_kernel");
  /* kernel.schema (1.1) left empty: for our own op that means the schema as defined above. */
  return api->kernel_register(&kernel, NULL);
}

/* The one exported symbol. It only describes the plugin; nothing is registered here. The
 * descriptor is filled by the size rule of the handshake (Note [Descriptor capacity] in
 * tessera/c/plugin.h): only fields within the capacity the runtime offers, so that this plugin
 * also loads into a 1.0 runtime. */
TSR_PLUGIN_EXPORT tsr_error* tsr_plugin_init(const tsr_runtime_api* runtime,
                                             tsr_plugin_desc* desc) {
  const size_t capacity = tsr_plugin_desc_capacity(desc); /* 0 from a 1.0 runtime: 96 bytes */
  api = runtime;
  desc->struct_size = capacity < sizeof *desc ? capacity : sizeof *desc;
  desc->abi_major = TSR_ABI_VERSION_MAJOR;
  desc->abi_minor = TSR_ABI_VERSION_MINOR;
  /* Needs nothing newer than 1.0. */
  desc->min_abi_minor = 0;
  if (TSR_FIELD_FITS(tsr_plugin_desc, op_set_minor, capacity)) { /* 1.1 fields */
    desc->op_set_major = 1;
    desc->op_set_minor = 0;
  }
  desc->name = str("cdemo");
  desc->version = str("1.0.0");
  /* A device type of its own (renamed "cdemo"); this plugin gives it no device interface, so
   * tensors never live there: its kernel runs on the CPU. */
  desc->device_type = TSR_DEVICE_PRIVATEUSE3;
  desc->device_name = str("cdemo");
  desc->register_fn = register_all;
  desc->unload_fn = NULL;
  desc->state = NULL;
  return NULL;
}
