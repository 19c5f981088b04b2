/* Test plugins for the loader, one source with variants chosen by PLUGIN_VARIANT (see
 * runtime/CMakeLists.txt). Written in C99 against the public headers only, linking nothing of the
 * runtime: every service comes through the tsr_runtime_api table. */
#include <stdlib.h>
#include <string.h>

#include "tessera/c/plugin.h"

#define TSR_STR(s) \
  { s, sizeof(s) - 1 }

#define VARIANT_GOOD 0
#define VARIANT_WRONG_MAJOR 1
#define VARIANT_NEEDS_NEWER_MINOR 2
#define VARIANT_OPTIONAL_NEWER_MINOR 3
#define VARIANT_NO_ENTRY 4
#define VARIANT_INIT_ERROR 5
#define VARIANT_SMALL_DESC 6
#define VARIANT_LARGE_DESC 7
#define VARIANT_REGISTER_ERROR 8
#define VARIANT_DUPLICATE_NAME 9
#define VARIANT_DEVICE_TAKEN 10
#define VARIANT_FROZEN_V1_0 11 /* built against tests/frozen/v1.0 headers */
#define VARIANT_NAIVE_NEWER_MINOR 12
#define VARIANT_MISSIZED_DESC 13
#define VARIANT_SCHEMAS 14 /* kernels built against other schemas than their ops' */
/* A device of its own (copydev, host memory) with a functional kernel (neg) and an out= kernel
 * (abs.out), without a copy_ kernel and with the CPU fallback; without either; with both. */
#define VARIANT_NOCOPY 15
#define VARIANT_NOCOPY_NOFALLBACK 16
#define VARIANT_WITHCOPY 17
#define COPYDEV_VARIANT                                                               \
  (PLUGIN_VARIANT == VARIANT_NOCOPY || PLUGIN_VARIANT == VARIANT_NOCOPY_NOFALLBACK || \
   PLUGIN_VARIANT == VARIANT_WITHCOPY)

#ifndef PLUGIN_VARIANT
#error "define PLUGIN_VARIANT"
#endif

static const tsr_runtime_api* api = NULL;

#if PLUGIN_VARIANT == VARIANT_NEEDS_NEWER_MINOR || \
    PLUGIN_VARIANT == VARIANT_OPTIONAL_NEWER_MINOR || PLUGIN_VARIANT == VARIANT_NAIVE_NEWER_MINOR
/* The descriptor as a pretend newer minor (today's + 7) defines it: today's fields and 16 bytes
 * more, the case of issue 10 section 1. */
#define NEWER_MINOR (TSR_ABI_VERSION_MINOR + 7)
typedef struct newer_plugin_desc {
  tsr_plugin_desc base;
  uint64_t newer_flags;
  uint64_t newer_limit;
} newer_plugin_desc;

/* fill_newer writes the newer fields as the rule says (only what fits in the runtime's
 * capacity) or, naively, as the newer header's sizeof says. */
static void fill_newer(tsr_plugin_desc* desc, int naive) {
  const size_t capacity = naive ? sizeof(newer_plugin_desc) : tsr_plugin_desc_capacity(desc);
  newer_plugin_desc* newer = (newer_plugin_desc*)desc;
  if (TSR_FIELD_FITS(newer_plugin_desc, newer_flags, capacity)) newer->newer_flags = 0x5a5a;
  if (TSR_FIELD_FITS(newer_plugin_desc, newer_limit, capacity)) newer->newer_limit = 0xa5a5;
  desc->struct_size = capacity < sizeof *newer ? capacity : sizeof *newer;
}
#endif

static tsr_error* fail(tsr_code code, const char* message) {
  tsr_string s;
  s.data = message;
  s.size = strlen(message);
  return api->error_create(code, s);
}

/* good::twice(Tensor self) -> Tensor, for contiguous float32 CPU tensors. */
static tsr_error* twice_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  tsr_tensor* self = NULL;
  tsr_tensor* out = NULL;
  tsr_error* err;
  const float* in;
  float* result;
  int64_t i, n;
  tsr_device device;
  (void)context;
  (void)op;
  if ((err = api->stack_get_tensor(stack, 0, &self)) != NULL) return err;
  if (api->tensor_dtype(self) != TSR_DTYPE_FLOAT32 || !api->tensor_is_contiguous(self)) {
    return fail(TSR_UNIMPLEMENTED, "good::twice: contiguous float32 tensors only");
  }
  device = api->tensor_device(self);
  err = api->tensor_empty(api->tensor_sizes(self), (size_t)api->tensor_dim(self), TSR_DTYPE_FLOAT32,
                          device, &out);
  if (err != NULL) return err;
  in = (const float*)api->tensor_data_ptr(self);
  result = (float*)api->tensor_data_ptr(out);
  n = api->tensor_numel(self);
  for (i = 0; i < n; ++i) result[i] = 2.0f * in[i];
  api->stack_clear(stack); /* drops self: `in` is not used after this */
  err = api->stack_push_tensor(stack, out);
  api->tensor_release(out); /* the stack holds its own reference */
  return err;
}

static tsr_error* failing_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  (void)context;
  (void)op;
  (void)stack;
  return fail(TSR_FAILED_PRECONDITION, "good::fail: failed on purpose");
}

static tsr_error* register_kernel(const char* op_name, tsr_boxed_kernel_fn fn,
                                  const char* kernel_name) {
  tsr_kernel_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  desc.op_name.data = op_name;
  desc.op_name.size = strlen(op_name);
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = fn;
  desc.kernel_name.data = kernel_name;
  desc.kernel_name.size = strlen(kernel_name);
  return api->kernel_register(&desc, NULL);
}

static tsr_error* define(const char* schema) {
  tsr_string s;
  s.data = schema;
  s.size = strlen(schema);
  return api->op_define(s, NULL);
}

#if PLUGIN_VARIANT == VARIANT_SCHEMAS
/* scale_shift_kernel: x * a + b for float32 CPU tensors, built against
 * "xs::scale_shift(Tensor x, float a, float b) -> Tensor" (an older schema than the op's, which
 * gained `Tensor? mask=None`): it checks that it gets exactly its three arguments. */
static tsr_error* scale_shift_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  tsr_tensor* x = NULL;
  tsr_tensor* out = NULL;
  double a, b;
  tsr_error* err;
  int64_t i, n;
  (void)context;
  (void)op;
  if (api->stack_size(stack) != 3) return fail(TSR_INTERNAL, "scale_shift: expected 3 arguments");
  if ((err = api->stack_get_tensor(stack, 0, &x)) != NULL) return err;
  if ((err = api->stack_get_double(stack, 1, &a)) != NULL) return err;
  if ((err = api->stack_get_double(stack, 2, &b)) != NULL) return err;
  err = api->tensor_empty(api->tensor_sizes(x), (size_t)api->tensor_dim(x), TSR_DTYPE_FLOAT32,
                          api->tensor_device(x), &out);
  if (err != NULL) return err;
  n = api->tensor_numel(x);
  for (i = 0; i < n; ++i) {
    ((float*)api->tensor_data_ptr(out))[i] =
        (float)(((const float*)api->tensor_data_ptr(x))[i] * a + b);
  }
  api->stack_clear(stack);
  err = api->stack_push_tensor(stack, out);
  api->tensor_release(out);
  return err;
}

/* The typed form of the same kernel: one C parameter per argument of the older schema. */
static tsr_error* scale_shift_typed(void* context, tsr_tensor* x, double a, double b,
                                    tsr_tensor** out) {
  tsr_error* err;
  int64_t i, n;
  (void)context;
  err = api->tensor_empty(api->tensor_sizes(x), (size_t)api->tensor_dim(x), TSR_DTYPE_FLOAT32,
                          api->tensor_device(x), out);
  if (err != NULL) return err;
  n = api->tensor_numel(x);
  for (i = 0; i < n; ++i) {
    ((float*)api->tensor_data_ptr(*out))[i] =
        (float)(((const float*)api->tensor_data_ptr(x))[i] * a + b);
  }
  return NULL;
}

/* register_with_schema registers `fn` (boxed) or `typed` for `op_name`, stating the schema the
 * kernel was built against (tsr_kernel_desc.schema, ABI 1.1). */
static tsr_error* register_with_schema(const char* op_name, tsr_boxed_kernel_fn fn,
                                       tsr_typed_kernel_fn typed, const char* kernel_name,
                                       const char* schema) {
  tsr_kernel_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  desc.op_name.data = op_name;
  desc.op_name.size = strlen(op_name);
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = fn;
  desc.typed = typed;
  desc.kernel_name.data = kernel_name;
  desc.kernel_name.size = strlen(kernel_name);
  desc.schema.data = schema;
  desc.schema.size = strlen(schema);
  return api->kernel_register(&desc, NULL);
}
#endif

#if COPYDEV_VARIANT
/* copydev: one device whose memory is host memory, so that its kernels may read it directly. */
static tsr_error* copydev_count(void* context, int32_t* out) {
  (void)context;
  *out = 1;
  return NULL;
}
static tsr_error* copydev_allocate(void* context, int32_t index, size_t nbytes, void** out) {
  (void)context;
  (void)index;
  *out = nbytes == 0 ? NULL : malloc(nbytes);
  return nbytes != 0 && *out == NULL ? fail(TSR_RESOURCE_EXHAUSTED, "copydev: out of memory")
                                     : NULL;
}
static void copydev_free(void* context, int32_t index, void* ptr) {
  (void)context;
  (void)index;
  free(ptr);
}
static tsr_error* copydev_copy(void* context, int32_t index, void* dst, const void* src,
                               size_t nbytes) {
  (void)context;
  (void)index;
  if (nbytes != 0) memcpy(dst, src, nbytes);
  return NULL;
}
static tsr_error* copydev_copy_d2d(void* context, int32_t dst_index, void* dst, int32_t src_index,
                                   const void* src, size_t nbytes) {
  (void)src_index;
  return copydev_copy(context, dst_index, dst, src, nbytes);
}
static tsr_error* copydev_synchronize(void* context, int32_t index) {
  (void)context;
  (void)index;
  return NULL;
}

/* The kernels take contiguous float32 tensors on copydev only. */
static tsr_error* check_float32(const char* what, tsr_tensor* t) {
  if (api->tensor_dtype(t) != TSR_DTYPE_FLOAT32 || !api->tensor_is_contiguous(t)) {
    return fail(TSR_UNIMPLEMENTED, what);
  }
  return NULL;
}

/* neg(Tensor self) -> Tensor: a functional kernel, so that neg.out and neg_ are derived. */
static tsr_error* copydev_neg(void* context, const tsr_op* op, tsr_stack* stack) {
  tsr_tensor* self = NULL;
  tsr_tensor* out = NULL;
  tsr_error* err;
  int64_t i, n;
  (void)context;
  (void)op;
  if ((err = api->stack_get_tensor(stack, 0, &self)) != NULL) return err;
  if ((err = check_float32("copydev neg: contiguous float32 only", self)) != NULL) return err;
  err = api->tensor_empty(api->tensor_sizes(self), (size_t)api->tensor_dim(self), TSR_DTYPE_FLOAT32,
                          api->tensor_device(self), &out);
  if (err != NULL) return err;
  n = api->tensor_numel(self);
  for (i = 0; i < n; ++i) {
    ((float*)api->tensor_data_ptr(out))[i] = -((const float*)api->tensor_data_ptr(self))[i];
  }
  api->stack_clear(stack);
  err = api->stack_push_tensor(stack, out);
  api->tensor_release(out);
  return err;
}

/* abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!): an out= kernel, from which abs and
 * abs_ derive without a copy. */
static tsr_error* copydev_abs_out(void* context, const tsr_op* op, tsr_stack* stack) {
  tsr_tensor* self = NULL;
  tsr_tensor* out = NULL;
  tsr_error* err;
  int64_t i, n;
  (void)context;
  (void)op;
  if ((err = api->stack_get_tensor(stack, 0, &self)) != NULL) return err;
  if ((err = api->stack_get_tensor(stack, 1, &out)) != NULL) return err;
  if ((err = check_float32("copydev abs.out: contiguous float32 only", self)) != NULL ||
      (err = check_float32("copydev abs.out: contiguous float32 only", out)) != NULL) {
    return err;
  }
  n = api->tensor_numel(self);
  for (i = 0; i < n; ++i) {
    const float v = ((const float*)api->tensor_data_ptr(self))[i];
    ((float*)api->tensor_data_ptr(out))[i] = v < 0 ? -v : v;
  }
  api->tensor_retain(out);
  api->stack_clear(stack);
  err = api->stack_push_tensor(stack, out);
  api->tensor_release(out);
  return err;
}

/* copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!), on copydev, for
 * equal shapes. */
static tsr_error* copydev_copy_(void* context, const tsr_op* op, tsr_stack* stack) {
  tsr_tensor* self = NULL;
  tsr_tensor* src = NULL;
  tsr_error* err;
  (void)context;
  (void)op;
  if ((err = api->stack_get_tensor(stack, 0, &self)) != NULL) return err;
  if ((err = api->stack_get_tensor(stack, 1, &src)) != NULL) return err;
  if ((err = check_float32("copydev copy_: contiguous float32 only", self)) != NULL ||
      (err = check_float32("copydev copy_: contiguous float32 only", src)) != NULL) {
    return err;
  }
  if (api->tensor_numel(self) != api->tensor_numel(src)) {
    return fail(TSR_UNIMPLEMENTED, "copydev copy_: equal shapes only");
  }
  copydev_copy(NULL, 0, api->tensor_data_ptr(self), api->tensor_data_ptr(src),
               (size_t)api->tensor_numel(self) * sizeof(float));
  api->tensor_retain(self);
  api->stack_clear(stack);
  err = api->stack_push_tensor(stack, self);
  api->tensor_release(self);
  return err;
}

static tsr_error* register_copydev_kernel(const char* op_name, tsr_boxed_kernel_fn fn) {
  tsr_kernel_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  desc.op_name.data = op_name;
  desc.op_name.size = strlen(op_name);
  desc.device_type = TSR_DEVICE_PRIVATEUSE1;
  desc.boxed = fn;
  return api->kernel_register(&desc, NULL);
}

static tsr_error* register_copydev(void) {
  tsr_device_interface iface;
  tsr_error* err;
  memset(&iface, 0, sizeof iface);
  iface.struct_size = sizeof iface;
  iface.device_type = TSR_DEVICE_PRIVATEUSE1;
  iface.device_count = copydev_count;
  iface.allocate = copydev_allocate;
  iface.free = copydev_free;
  iface.copy_host_to_device = copydev_copy;
  iface.copy_device_to_host = copydev_copy;
  iface.copy_device_to_device = copydev_copy_d2d;
  iface.synchronize = copydev_synchronize;
  if ((err = api->device_register(&iface, NULL)) != NULL) return err;
  if ((err = register_copydev_kernel("neg", copydev_neg)) != NULL) return err;
  if ((err = register_copydev_kernel("abs.out", copydev_abs_out)) != NULL) return err;
#if PLUGIN_VARIANT == VARIANT_WITHCOPY
  if ((err = register_copydev_kernel("copy_", copydev_copy_)) != NULL) return err;
#endif
#if PLUGIN_VARIANT == VARIANT_NOCOPY_NOFALLBACK
  return NULL;
#else
  return api->fallback_register_cpu(TSR_DEVICE_PRIVATEUSE1, NULL);
#endif
}
#endif

static tsr_error* register_all(void* state, const tsr_runtime_api* runtime) {
  tsr_error* err;
  (void)state;
  api = runtime;
#if PLUGIN_VARIANT == VARIANT_FROZEN_V1_0
  if ((err = define("frozen::twice(Tensor self) -> Tensor")) != NULL) return err;
  return register_kernel("frozen::twice", twice_kernel, "frozen::twice_kernel");
#elif PLUGIN_VARIANT == VARIANT_REGISTER_ERROR
  if ((err = define("regerr::op(Tensor self) -> Tensor")) != NULL) return err;
  if ((err = register_kernel("regerr::op", twice_kernel, "regerr::op_kernel")) != NULL) return err;
  return fail(TSR_RESOURCE_EXHAUSTED, "out of device memory while registering");
#elif PLUGIN_VARIANT == VARIANT_SCHEMAS
  /* Today's schemas; each kernel states the one it was built against. */
  if ((err = define("xs::scale_shift(Tensor x, float a, float b, Tensor? mask=None) -> Tensor")) ||
      (err =
           define("xs::scale_shift_t(Tensor x, float a, float b, Tensor? mask=None) -> Tensor")) ||
      (err = define("xs::newer(Tensor x, float a) -> Tensor")) ||
      (err = define("xs::retyped(Tensor x, int a, float b) -> Tensor"))) {
    return err;
  }
  /* Older kernels: adapted (the runtime drops `mask` when it is None). */
  if ((err = register_with_schema("xs::scale_shift", scale_shift_kernel, NULL,
                                  "xs::scale_shift_kernel",
                                  "xs::scale_shift(Tensor x, float a, float b) -> Tensor")) ||
      (err = register_with_schema("xs::scale_shift_t", NULL, (tsr_typed_kernel_fn)scale_shift_typed,
                                  "xs::scale_shift_typed",
                                  "xs::scale_shift_t(Tensor x, float a, float b) -> Tensor"))) {
    return err;
  }
  /* A newer kernel: the runtime passes its default for `b`, which the op does not have. */
  if ((err = register_with_schema("xs::newer", scale_shift_kernel, NULL, "xs::newer_kernel",
                                  "xs::newer(Tensor x, float a, float b=0.5) -> Tensor"))) {
    return err;
  }
  /* An incompatible kernel (float a where the op has int a): refused, never called; the
   * registration still returns success and the load report says why. */
  return register_with_schema("xs::retyped", scale_shift_kernel, NULL, "xs::retyped_kernel",
                              "xs::retyped(Tensor x, float a, float b) -> Tensor");
#elif COPYDEV_VARIANT
  (void)err;
  return register_copydev();
#elif PLUGIN_VARIANT == VARIANT_OPTIONAL_NEWER_MINOR
  if ((err = define("newer::twice(Tensor self) -> Tensor")) != NULL) return err;
  return register_kernel("newer::twice", twice_kernel, "newer::twice_kernel");
#else
  if ((err = define("good::twice(Tensor self) -> Tensor")) != NULL) return err;
  if ((err = define("good::fail(Tensor self) -> Tensor")) != NULL) return err;
  if ((err = register_kernel("good::twice", twice_kernel, "good::twice_kernel")) != NULL)
    return err;
  return register_kernel("good::fail", failing_kernel, "good::fail_kernel");
#endif
}

static void unload(void* state) {
  tsr_string message = TSR_STR("test plugin unloaded");
  (void)state;
  api->log(TSR_LOG_WARNING, message);
}

#if PLUGIN_VARIANT == VARIANT_NO_ENTRY
#define ENTRY tsr_plugin_initialize /* misspelt: the loader must not find an entry point */
#else
#define ENTRY tsr_plugin_init
#endif

TSR_PLUGIN_EXPORT tsr_error* ENTRY(const tsr_runtime_api* runtime, tsr_plugin_desc* desc) {
  tsr_string name = TSR_STR("good");
  tsr_string device_name = TSR_STR("testdev");
  tsr_string version = TSR_STR("0.1-test");
  api = runtime;
  if (runtime->abi_major != TSR_ABI_VERSION_MAJOR) {
    return fail(TSR_FAILED_PRECONDITION, "runtime ABI major differs");
  }
  desc->struct_size = sizeof *desc;
  desc->abi_major = TSR_ABI_VERSION_MAJOR;
  desc->abi_minor = TSR_ABI_VERSION_MINOR;
  desc->min_abi_minor = 0;
  desc->device_type = TSR_DEVICE_PRIVATEUSE3;
  desc->register_fn = register_all;
  desc->unload_fn = unload;
#if PLUGIN_VARIANT == VARIANT_WRONG_MAJOR
  desc->abi_major = TSR_ABI_VERSION_MAJOR + 1;
  desc->abi_minor = 0;
  name.data = "wrong_major";
  name.size = 11;
#elif PLUGIN_VARIANT == VARIANT_NEEDS_NEWER_MINOR
  fill_newer(desc, /*naive=*/0);
  desc->abi_minor = NEWER_MINOR;
  desc->min_abi_minor = NEWER_MINOR;
  name.data = "needs_newer";
  name.size = 11;
#elif PLUGIN_VARIANT == VARIANT_OPTIONAL_NEWER_MINOR
  fill_newer(desc, /*naive=*/0);
  desc->abi_minor = NEWER_MINOR;
  desc->min_abi_minor = 0;
  desc->device_type = TSR_DEVICE_PRIVATEUSE2;
  name.data = "newer_optional";
  name.size = 14;
  device_name.data = "newdev";
  device_name.size = 6;
#elif PLUGIN_VARIANT == VARIANT_NAIVE_NEWER_MINOR
  fill_newer(desc, /*naive=*/1);
  desc->abi_minor = NEWER_MINOR;
  desc->min_abi_minor = 0;
  name.data = "naive_newer";
  name.size = 11;
#elif PLUGIN_VARIANT == VARIANT_SCHEMAS
  name.data = "schemas";
  name.size = 7;
  desc->device_type = TSR_DEVICE_HIP;
  device_name.size = 0;
#elif PLUGIN_VARIANT == VARIANT_MISSIZED_DESC
  desc->struct_size = TSR_PLUGIN_DESC_SIZE_1_0; /* claims today's minor with 1.0's size */
#elif PLUGIN_VARIANT == VARIANT_INIT_ERROR
  return fail(TSR_UNAVAILABLE, "no test device is attached");
#elif PLUGIN_VARIANT == VARIANT_SMALL_DESC
  desc->struct_size = 16;
#elif PLUGIN_VARIANT == VARIANT_LARGE_DESC
  desc->struct_size = sizeof *desc + 64;
#elif PLUGIN_VARIANT == VARIANT_REGISTER_ERROR
  name.data = "register_error";
  name.size = 14;
  desc->device_type = TSR_DEVICE_HIP; /* not renameable: a failed load leaves no rename */
  device_name.size = 0;
#elif PLUGIN_VARIANT == VARIANT_FROZEN_V1_0
  name.data = "frozen_v1_0";
  name.size = 11;
  desc->device_type = TSR_DEVICE_CUDA;
  device_name.size = 0;
#elif COPYDEV_VARIANT
  name.data = PLUGIN_VARIANT == VARIANT_NOCOPY              ? "nocopy"
              : PLUGIN_VARIANT == VARIANT_NOCOPY_NOFALLBACK ? "nocopy_nofallback"
                                                            : "withcopy";
  name.size = strlen(name.data);
  desc->device_type = TSR_DEVICE_PRIVATEUSE1;
  device_name.data = "copydev";
  device_name.size = 7;
#elif PLUGIN_VARIANT == VARIANT_DEVICE_TAKEN
  name.data = "device_taken";
  name.size = 12;
  device_name.data = "otherdev";
  device_name.size = 8;
#endif
  desc->name = name;
  desc->version = version;
  desc->device_name = device_name;
  return NULL;
}
