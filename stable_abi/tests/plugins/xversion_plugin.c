/* Plugins of the cross-version matrix (tessera_abi_cross_version, cross_version.sh): one C99
 * source, one variant per column, chosen by XV_VARIANT (see ../../CMakeLists.txt). Each defines
 * its own op in its own namespace, `<ns>::twice(Tensor self) -> Tensor`, with a CPU kernel
 * (a plugin may register kernels for the ops it defined on any device type), so that the matrix
 * host can call it whichever runtime loaded it.
 *
 *   FROZEN_V1_0  (a) built against tests/frozen/v1.0 only, as a vendor's 1.0 plugin was.
 *   CAPACITY     (b) today's headers, min_abi_minor 0: fills the descriptor by the capacity
 *                    rule and uses the 1.1 op listing only where TSR_API_HAS says it exists.
 *   NEEDS_MINOR  (c) today's headers, min_abi_minor = today's minor: an older runtime refuses it.
 *   NEWER_MINOR  (e) a pretend next minor (today's + 1) whose descriptor has 16 more bytes; it
 *                    needs only 1.0 and writes its extra fields only within the capacity.
 *   FROZEN_V1_1  (f) built against tests/frozen/v1.1 only, needs 1.1, and registers its in-place
 *                    op `xv11::twice_` with 1.1's packed kernel entry (tsr_kernel_call, its
 *                    tsr_value arguments and tsr_tensor_view views), as a vendor's 1.1 plugin.
 * (Column d is the SDK's sample plugin, sdk/examples/npu.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/c/plugin.h"

#define XV_FROZEN_V1_0 1
#define XV_CAPACITY 2
#define XV_NEEDS_MINOR 3
#define XV_NEWER_MINOR 4
#define XV_FROZEN_V1_1 5

#ifndef XV_VARIANT
#error "define XV_VARIANT"
#endif

#if XV_VARIANT == XV_FROZEN_V1_0
#define XV_NS "xv10"
#elif XV_VARIANT == XV_CAPACITY
#define XV_NS "xvcap"
#elif XV_VARIANT == XV_NEEDS_MINOR
#define XV_NS "xvneeds"
#elif XV_VARIANT == XV_NEWER_MINOR
#define XV_NS "xvnewer"
#elif XV_VARIANT == XV_FROZEN_V1_1
#define XV_NS "xv11"
#else
#error "unknown XV_VARIANT"
#endif

static const tsr_runtime_api* api = NULL;

static tsr_string str(const char* s) {
  tsr_string t;
  t.data = s;
  t.size = strlen(s);
  return t;
}

static tsr_error* fail(tsr_code code, const char* message) {
  return api->error_create(code, str(message));
}

/* A contiguous float32 CPU tensor of `n` elements, filled by the caller through *data. */
static tsr_error* new_float32(const int64_t* sizes, size_t ndim, tsr_tensor** out, float** data) {
  tsr_device cpu;
  tsr_error* err;
  cpu.type = TSR_DEVICE_CPU;
  cpu.index = 0;
  if ((err = api->tensor_empty(sizes, ndim, TSR_DTYPE_FLOAT32, cpu, out)) != NULL) return err;
  *data = (float*)api->tensor_data_ptr(*out);
  return NULL;
}

/* Replaces the stack's arguments with `result` (the stack takes its own reference). */
static tsr_error* return_tensor(tsr_stack* stack, tsr_tensor* result) {
  tsr_error* err;
  api->stack_clear(stack);
  err = api->stack_push_tensor(stack, result);
  api->tensor_release(result);
  return err;
}

/* <ns>::twice(Tensor self) -> Tensor, for contiguous float32 CPU tensors. */
static tsr_error* twice_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  tsr_tensor* self = NULL;
  tsr_tensor* out = NULL;
  tsr_error* err;
  const float* in;
  float* result;
  int64_t i, n;
  (void)context;
  (void)op;
  if ((err = api->stack_get_tensor(stack, 0, &self)) != NULL) return err;
  if (api->tensor_dtype(self) != TSR_DTYPE_FLOAT32 || !api->tensor_is_contiguous(self)) {
    return fail(TSR_UNIMPLEMENTED, XV_NS "::twice: contiguous float32 tensors only");
  }
  err = new_float32(api->tensor_sizes(self), (size_t)api->tensor_dim(self), &out, &result);
  if (err != NULL) return err;
  in = (const float*)api->tensor_data_ptr(self);
  n = api->tensor_numel(self);
  for (i = 0; i < n; ++i) result[i] = 2.0f * in[i];
  return return_tensor(stack, out); /* drops self: `in` is not used after this */
}

#if XV_VARIANT == XV_CAPACITY
/* What register_fn found: -1 when the runtime's table has no op_list slot (a 1.0 runtime),
 * else the number of ops tsr_op_list counted. xvcap::ops_listed returns it, so the matrix host
 * sees which path the plugin took. */
static int64_t ops_listed = -1;

/* xvcap::ops_listed(Tensor self) -> Tensor: a one-element float32 tensor holding ops_listed. */
static tsr_error* ops_listed_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  const int64_t one = 1;
  tsr_tensor* out = NULL;
  float* value;
  tsr_error* err;
  (void)context;
  (void)op;
  if ((err = new_float32(&one, 1, &out, &value)) != NULL) return err;
  *value = (float)ops_listed;
  return return_tensor(stack, out);
}

/* count_ops runs the op listing where the runtime has it (ABI 1.1) and logs which path it took.
 * A 1.0 runtime's table ends before op_list: TSR_API_HAS reads api->struct_size first, so the
 * slot is never read beyond the table. */
static tsr_error* count_ops(void) {
  char line[160];
  size_t count = 0;
  tsr_error* err;
  if (!TSR_API_HAS(api, op_list) || !TSR_API_HAS(api, op_describe)) {
    ops_listed = -1;
    api->log(TSR_LOG_WARNING, str("xvcap: the runtime has no op listing (ABI < 1.1); skipped it"));
    return NULL;
  }
  if ((err = api->op_list(NULL, 0, &count)) != NULL) return err;
  {
    /* Our own op is among them and describes itself by its name. */
    const tsr_op** ops = (const tsr_op**)malloc(count * sizeof *ops);
    size_t i, listed = 0;
    int found = 0;
    if (ops == NULL) return fail(TSR_RESOURCE_EXHAUSTED, "xvcap: no memory for the op list");
    err = api->op_list(ops, count, &listed);
    for (i = 0; err == NULL && i < count && i < listed && !found; ++i) {
      tsr_op_info info;
      memset(&info, 0, sizeof info);
      info.struct_size = sizeof info;
      err = api->op_describe(ops[i], &info);
      found = err == NULL && info.name.size == strlen("xvcap::twice") &&
              memcmp(info.name.data, "xvcap::twice", info.name.size) == 0;
    }
    free(ops);
    if (err != NULL) return err;
    if (!found) return fail(TSR_INTERNAL, "xvcap: tsr_op_list did not list xvcap::twice");
  }
  ops_listed = (int64_t)count;
  snprintf(line, sizeof line, "xvcap: the runtime has the op listing (ABI >= 1.1): %lu ops defined",
           (unsigned long)count);
  api->log(TSR_LOG_WARNING, str(line));
  return NULL;
}
#endif

#if XV_VARIANT == XV_FROZEN_V1_1
/* xv11::twice_(Tensor(a!) self) -> Tensor(a!): doubles a contiguous float32 self in place,
 * reading it through the packed call (1.1): its argument as a tsr_value and its view, and
 * naming its return in call->returns. Every field is read only within the struct_size the
 * runtime states, as a kernel built against 1.1 must in any later runtime. */
static tsr_error* twice_inplace_packed(void* context, const tsr_kernel_call* call) {
  const tsr_tensor_view* self;
  float* data;
  int64_t i;
  (void)context;
  if (!TSR_FIELD_FITS(tsr_kernel_call, num_returns, call->struct_size)) {
    return fail(TSR_INTERNAL, "xv11::twice_: the runtime's tsr_kernel_call is smaller than 1.1's");
  }
  if (call->num_args != 1 || call->num_returns != 1 || call->args[0].kind != TSR_VALUE_TENSOR ||
      call->views[0] == NULL) {
    return fail(TSR_INTERNAL, "xv11::twice_: expected one tensor argument and one return");
  }
  self = call->views[0];
  if (!TSR_FIELD_FITS(tsr_tensor_view, flags, self->struct_size)) {
    return fail(TSR_INTERNAL, "xv11::twice_: the runtime's tsr_tensor_view is smaller than 1.1's");
  }
  if (self->tensor != call->args[0].u.tensor || self->dtype != TSR_DTYPE_FLOAT32 ||
      (self->flags & TSR_VIEW_CONTIGUOUS) == 0 || self->device.type != TSR_DEVICE_CPU) {
    return fail(TSR_UNIMPLEMENTED, "xv11::twice_: contiguous float32 CPU tensors only");
  }
  data = (float*)self->data;
  for (i = 0; i < self->numel; ++i) data[i] *= 2.0f;
  call->returns[0].kind = TSR_VALUE_TENSOR;
  call->returns[0].u.tensor = call->args[0].u.tensor; /* the written argument itself */
  return NULL;
}

/* The boxed entry of the same kernel. A 1.1 runtime calls the packed entry for an in-place op
 * (kernel.h, tsr_kernel_desc.packed), so this one failing is how the matrix sees that the
 * packed entry ran: a runtime that stopped calling packed entries built against 1.1 fails the
 * cell instead of passing it silently on the boxed path. */
static tsr_error* twice_inplace_boxed(void* context, const tsr_op* op, tsr_stack* stack) {
  (void)context;
  (void)op;
  (void)stack;
  return fail(TSR_INTERNAL,
              "xv11::twice_: the boxed entry ran; a 1.1 runtime calls the packed entry of an "
              "in-place op's kernel");
}
#endif

static tsr_error* register_kernel(const char* op_name, tsr_boxed_kernel_fn fn) {
  tsr_kernel_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  desc.op_name = str(op_name);
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = fn;
  desc.kernel_name = str(op_name);
  return api->kernel_register(&desc, NULL);
}

static tsr_error* register_all(void* state, const tsr_runtime_api* runtime) {
  tsr_error* err;
  (void)state;
  api = runtime;
  if ((err = api->op_define(str(XV_NS "::twice(Tensor self) -> Tensor"), NULL)) != NULL) return err;
  if ((err = register_kernel(XV_NS "::twice", twice_kernel)) != NULL) return err;
#if XV_VARIANT == XV_CAPACITY
  if ((err = api->op_define(str("xvcap::ops_listed(Tensor self) -> Tensor"), NULL)) != NULL) {
    return err;
  }
  if ((err = register_kernel("xvcap::ops_listed", ops_listed_kernel)) != NULL) return err;
  if ((err = count_ops()) != NULL) return err;
#endif
#if XV_VARIANT == XV_FROZEN_V1_1
  {
    tsr_kernel_desc desc;
    const char* name = "xv11::twice_";
    if ((err = api->op_define(str("xv11::twice_(Tensor(a!) self) -> Tensor(a!)"), NULL)) != NULL) {
      return err;
    }
    memset(&desc, 0, sizeof desc);
    desc.struct_size = sizeof desc; /* 1.1's: the runtime needs 1.1 (min_abi_minor) */
    desc.op_name = str(name);
    desc.device_type = TSR_DEVICE_CPU;
    desc.boxed = twice_inplace_boxed;
    desc.packed = twice_inplace_packed;
    desc.kernel_name = str(name);
    if ((err = api->kernel_register(&desc, NULL)) != NULL) return err;
  }
#endif
  return NULL;
}

#if XV_VARIANT == XV_NEWER_MINOR
/* The descriptor as the pretend next minor defines it: today's fields and 16 bytes more. */
typedef struct newer_plugin_desc {
  tsr_plugin_desc base;
  uint64_t newer_flags;
  uint64_t newer_limit;
} newer_plugin_desc;
#endif

TSR_PLUGIN_EXPORT tsr_error* tsr_plugin_init(const tsr_runtime_api* runtime,
                                             tsr_plugin_desc* desc) {
  api = runtime;
  if (runtime->abi_major != TSR_ABI_VERSION_MAJOR) {
    return fail(TSR_FAILED_PRECONDITION, XV_NS ": the runtime's ABI major differs");
  }
#if XV_VARIANT == XV_FROZEN_V1_0
  /* As 1.0 plugins were written: the 1.0 headers' descriptor is the 1.0 size. */
  desc->struct_size = sizeof *desc;
  desc->abi_minor = TSR_ABI_VERSION_MINOR; /* 0: the frozen headers' */
  desc->min_abi_minor = 0;
#elif XV_VARIANT == XV_NEWER_MINOR
  {
    /* Note [Descriptor capacity]: write the newer fields only within what the runtime offers,
     * and state what was filled. */
    const size_t capacity = tsr_plugin_desc_capacity(desc);
    newer_plugin_desc* newer = (newer_plugin_desc*)desc;
    if (TSR_FIELD_FITS(tsr_plugin_desc, op_set_minor, capacity)) {
      desc->op_set_major = 1;
      desc->op_set_minor = 0;
    }
    if (TSR_FIELD_FITS(newer_plugin_desc, newer_flags, capacity)) newer->newer_flags = 0x5a5a;
    if (TSR_FIELD_FITS(newer_plugin_desc, newer_limit, capacity)) newer->newer_limit = 0xa5a5;
    desc->struct_size = capacity < sizeof *newer ? capacity : sizeof *newer;
    desc->abi_minor = TSR_ABI_VERSION_MINOR + 1;
    desc->min_abi_minor = 0;
  }
#else
  {
    /* Today's headers: fill within the capacity (a 1.0 runtime offers 1.0's 96 bytes). */
    const size_t capacity = tsr_plugin_desc_capacity(desc);
    if (TSR_FIELD_FITS(tsr_plugin_desc, op_set_minor, capacity)) {
      desc->op_set_major = 1;
      desc->op_set_minor = 0;
    }
    desc->struct_size = capacity < sizeof *desc ? capacity : sizeof *desc;
    desc->abi_minor = TSR_ABI_VERSION_MINOR;
#if XV_VARIANT == XV_NEEDS_MINOR || XV_VARIANT == XV_FROZEN_V1_1
    desc->min_abi_minor = TSR_ABI_VERSION_MINOR; /* FROZEN_V1_1: the frozen headers' 1 */
#else
    desc->min_abi_minor = 0;
#endif
  }
#endif
  desc->abi_major = TSR_ABI_VERSION_MAJOR;
  desc->name = str(XV_NS);
  desc->version = str("1.0-xversion");
  desc->device_type = TSR_DEVICE_PRIVATEUSE3;
  desc->device_name = str(XV_NS "dev");
  desc->register_fn = register_all;
  desc->unload_fn = NULL;
  desc->state = NULL;
  return NULL;
}
