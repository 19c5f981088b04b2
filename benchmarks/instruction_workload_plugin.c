/* The plugin of the instruction-count gate (docs/performance.md): trivial kernels, so that the
 * gate's `noop` and `derived_out` workloads count the dispatcher's instructions and hardly any
 * kernel's. Written in C99 against the public headers only, like any vendor's plugin; loaded by
 * path (it sits outside default discovery).
 *
 * It registers:
 *   - gate::noop(Tensor self) -> () on the CPU: a kernel that only clears the stack;
 *   - the device type PrivateUse2, named "gatedev": one device whose memory is host memory;
 *   - on gatedev, the functional add.Tensor (float32, contiguous; alpha must be 1) and copy_
 *     (same dtype and shape, contiguous). add.out on gatedev is then derived by the dispatcher
 *     from the functional kernel (Note [Variants] in dispatcher/variants.cc: out= <-
 *     functional runs the Meta function, the functional kernel, then copy_ into `out`).
 * Anything else is refused with an error, never computed wrongly. */
#include <stdlib.h>
#include <string.h>

#include "tessera/c/plugin.h"

#define GATE_STR(s) \
  { s, sizeof(s) - 1 }

static const tsr_runtime_api* api = NULL;

static tsr_error* fail(const char* message) {
  tsr_string s;
  s.data = message;
  s.size = strlen(message);
  return api->error_create(TSR_UNIMPLEMENTED, s);
}

/* ---- the device: host memory ---- */

static tsr_error* device_count(void* context, int32_t* out) {
  (void)context;
  *out = 1;
  return NULL;
}

static tsr_error* device_allocate(void* context, int32_t index, size_t nbytes, void** out) {
  (void)context;
  (void)index;
  *out = malloc(nbytes == 0 ? 1 : nbytes);
  if (*out == NULL) {
    tsr_string s = GATE_STR("gatedev: out of host memory");
    return api->error_create(TSR_RESOURCE_EXHAUSTED, s);
  }
  return NULL;
}

static void device_free(void* context, int32_t index, void* ptr) {
  (void)context;
  (void)index;
  free(ptr);
}

static tsr_error* device_copy(void* context, int32_t index, void* dst, const void* src,
                              size_t nbytes) {
  (void)context;
  (void)index;
  if (nbytes != 0) memcpy(dst, src, nbytes);
  return NULL;
}

static tsr_error* device_copy_d2d(void* context, int32_t dst_index, void* dst, int32_t src_index,
                                  const void* src, size_t nbytes) {
  (void)src_index;
  return device_copy(context, dst_index, dst, src, nbytes);
}

static tsr_error* device_synchronize(void* context, int32_t index) {
  (void)context;
  (void)index;
  return NULL;
}

/* ---- kernels ---- */

/* gate::noop(Tensor self) -> (): nothing to compute, nothing to return. */
static tsr_error* noop_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  (void)context;
  (void)op;
  api->stack_clear(stack);
  return NULL;
}

static int is_dense_float(const tsr_tensor* t) {
  return api->tensor_dtype(t) == TSR_DTYPE_FLOAT32 && api->tensor_is_contiguous(t);
}

/* add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor, for float32 tensors of one
 * shape on gatedev with alpha 1: the functional form only (add.out is derived from it). */
static tsr_error* add_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  tsr_tensor* self = NULL;
  tsr_tensor* other = NULL;
  tsr_tensor* out = NULL;
  tsr_scalar alpha;
  tsr_error* err;
  const float* a;
  const float* b;
  float* c;
  int64_t i, n, d;
  (void)context;
  (void)op;
  if ((err = api->stack_get_tensor(stack, 0, &self)) != NULL) return err;
  if ((err = api->stack_get_tensor(stack, 1, &other)) != NULL) return err;
  if ((err = api->stack_get_scalar(stack, 2, &alpha)) != NULL) return err;
  if (!is_dense_float(self) || !is_dense_float(other)) {
    return fail("add.Tensor on gatedev: expected contiguous float32 tensors");
  }
  if (!((alpha.kind == TSR_SCALAR_INT && alpha.i == 1) ||
        (alpha.kind == TSR_SCALAR_DOUBLE && alpha.d == 1.0))) {
    return fail("add.Tensor on gatedev: expected alpha 1");
  }
  n = api->tensor_dim(self);
  if (n != api->tensor_dim(other)) return fail("add.Tensor on gatedev: expected equal shapes");
  for (d = 0; d < n; ++d) {
    if (api->tensor_sizes(self)[d] != api->tensor_sizes(other)[d]) {
      return fail("add.Tensor on gatedev: expected equal shapes");
    }
  }
  err = api->tensor_empty(api->tensor_sizes(self), (size_t)n, TSR_DTYPE_FLOAT32,
                          api->tensor_device(self), &out);
  if (err != NULL) return err;
  a = (const float*)api->tensor_data_ptr(self);
  b = (const float*)api->tensor_data_ptr(other);
  c = (float*)api->tensor_data_ptr(out);
  n = api->tensor_numel(out);
  for (i = 0; i < n; ++i) c[i] = a[i] + b[i];
  api->stack_clear(stack); /* drops self and other: a and b are not read after this */
  err = api->stack_push_tensor(stack, out);
  api->tensor_release(out); /* the stack holds its own reference */
  return err;
}

/* copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!), between tensors of
 * one dtype and shape on gatedev, both contiguous. */
static tsr_error* copy_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  tsr_tensor* self = NULL;
  tsr_tensor* src = NULL;
  tsr_error* err;
  int64_t d, n;
  (void)context;
  (void)op;
  if ((err = api->stack_get_tensor(stack, 0, &self)) != NULL) return err;
  if ((err = api->stack_get_tensor(stack, 1, &src)) != NULL) return err;
  if (api->tensor_dtype(self) != api->tensor_dtype(src) || !api->tensor_is_contiguous(self) ||
      !api->tensor_is_contiguous(src)) {
    return fail("copy_ on gatedev: expected contiguous tensors of one dtype");
  }
  n = api->tensor_dim(self);
  if (n != api->tensor_dim(src)) return fail("copy_ on gatedev: expected equal shapes");
  for (d = 0; d < n; ++d) {
    if (api->tensor_sizes(self)[d] != api->tensor_sizes(src)[d]) {
      return fail("copy_ on gatedev: expected equal shapes");
    }
  }
  if (api->tensor_data_ptr(self) != api->tensor_data_ptr(src)) {
    memmove(api->tensor_data_ptr(self), api->tensor_data_ptr(src),
            (size_t)api->tensor_numel(self) * api->dtype_size(api->tensor_dtype(self)));
  }
  api->tensor_retain(self); /* keep self alive across the clear */
  api->stack_clear(stack);
  err = api->stack_push_tensor(stack, self);
  api->tensor_release(self);
  return err;
}

static tsr_error* register_kernel(const char* op_name, int32_t device_type, tsr_boxed_kernel_fn fn,
                                  const char* kernel_name) {
  tsr_kernel_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  desc.op_name.data = op_name;
  desc.op_name.size = strlen(op_name);
  desc.device_type = device_type;
  desc.boxed = fn;
  desc.kernel_name.data = kernel_name;
  desc.kernel_name.size = strlen(kernel_name);
  return api->kernel_register(&desc, NULL);
}

static tsr_error* register_all(void* state, const tsr_runtime_api* runtime) {
  tsr_device_interface device;
  tsr_string noop_schema = GATE_STR("gate::noop(Tensor self) -> ()");
  tsr_error* err;
  (void)state;
  api = runtime;
  memset(&device, 0, sizeof device);
  device.struct_size = sizeof device;
  device.device_type = TSR_DEVICE_PRIVATEUSE2;
  device.device_count = device_count;
  device.allocate = device_allocate;
  device.free = device_free;
  device.copy_host_to_device = device_copy;
  device.copy_device_to_host = device_copy;
  device.copy_device_to_device = device_copy_d2d;
  device.synchronize = device_synchronize;
  if ((err = api->device_register(&device, NULL)) != NULL) return err;
  if ((err = api->op_define(noop_schema, NULL)) != NULL) return err;
  if ((err = register_kernel("gate::noop", TSR_DEVICE_CPU, noop_kernel, "gate::noop_kernel"))) {
    return err;
  }
  if ((err =
           register_kernel("add.Tensor", TSR_DEVICE_PRIVATEUSE2, add_kernel, "gate::add_kernel"))) {
    return err;
  }
  return register_kernel("copy_", TSR_DEVICE_PRIVATEUSE2, copy_kernel, "gate::copy_kernel");
}

TSR_PLUGIN_EXPORT tsr_error* tsr_plugin_init(const tsr_runtime_api* runtime,
                                             tsr_plugin_desc* desc) {
  tsr_string name = GATE_STR("instruction_gate");
  tsr_string version = GATE_STR("1");
  tsr_string device_name = GATE_STR("gatedev");
  api = runtime;
  if (runtime->abi_major != TSR_ABI_VERSION_MAJOR) {
    return fail("instruction_gate: the runtime's ABI major differs from the plugin's");
  }
  /* Only 1.0 fields are written: they fit in any runtime's descriptor. */
  desc->struct_size = TSR_PLUGIN_DESC_SIZE_1_0;
  desc->name = name;
  desc->version = version;
  desc->abi_major = TSR_ABI_VERSION_MAJOR;
  desc->abi_minor = 0;
  desc->min_abi_minor = 0;
  desc->device_type = TSR_DEVICE_PRIVATEUSE2;
  desc->device_name = device_name;
  desc->register_fn = register_all;
  return NULL;
}
