/* Adversarial test plugins (issue 14, sections B and C): one C source, one variant per
 * misbehaviour, chosen by EVIL_VARIANT (see runtime/CMakeLists.txt). Each is loaded by
 * evil_plugin_test.cc in a child process of its own, which asserts the exact outcome: a clean
 * error, a refusal with its load report, a process that goes on. Every variant provides privateuse3
 * as "evildev". */
/* RTLD_DEFAULT (NESTED_LOAD finds the runtime's exported functions as plugin code can). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessera/c/loader.h" /* tsr_load_report: NESTED_LOAD calls the loader */
#include "tessera/c/plugin.h"

#define EVIL_SLOW_SYNC 1        /* a device whose synchronize takes a while */
#define EVIL_OP_FIND 2          /* register_fn looks an op up */
#define EVIL_FOREIGN_KERNEL 3   /* a cpu kernel for abs.out, an op it does not define */
#define EVIL_FOREIGN_DEVICE 4   /* a device interface for cuda */
#define EVIL_FOREIGN_FALLBACK 5 /* fallbacks for cuda */
#define EVIL_HOST_DELETER 6     /* a kernel returns host memory with the plugin's deleter */
#define EVIL_INIT_REGISTERS 7   /* registers in tsr_plugin_init, before the handshake */
#define EVIL_LAZY_REGISTER 8    /* registers from a kernel, on its first call */
#define EVIL_THREAD_REGISTER 9  /* registers from a helper thread during register_fn */
#define EVIL_NULL_ALLOC 10      /* allocate succeeds with NULL for a non-zero size */
#define EVIL_LYING_STRING 11    /* a descriptor string whose size lies ($EVIL_LIE picks which) */
#define EVIL_MANY_DEVICES 12    /* device_count reports INT32_MAX devices */
#define EVIL_DEVICE 13          /* a plain device */
#define EVIL_DEVICE_B 14        /* another plugin with the same device type; copies fail loudly */
#define EVIL_SHARED_OP 15       /* defines evil_shared::op ($EVIL_SCHEMA_V2: a newer schema) */
#define EVIL_SHARED_OP_TWIN 16  /* defines evil_shared::op too, on privateuse2 ("evildev_two") */
#define EVIL_BAD_RESULTS 17     /* an evildev exp kernel that returns its input */
#define EVIL_SLOW_KERNEL 18     /* a cpu kernel that stays inside until the test lets it go */
#define EVIL_SLOW_REFUSED 19    /* registers SLOW_KERNEL's kernel, then register_fn fails */
#define EVIL_NESTED_LOAD 20     /* loads, unloads, discovers from tsr_plugin_init and register_fn */

/* Every variant provides privateuse3 as "evildev" but the twin, so that both can be loaded. */
#if EVIL_VARIANT == EVIL_SHARED_OP_TWIN
#define EVIL_DEVICE_TYPE TSR_DEVICE_PRIVATEUSE2
#define EVIL_DEVICE_NAME "evildev_two"
#else
#define EVIL_DEVICE_TYPE TSR_DEVICE_PRIVATEUSE3
#define EVIL_DEVICE_NAME "evildev"
#endif

#ifndef EVIL_VARIANT
#error "define EVIL_VARIANT"
#endif

#define TSR_STR(s) \
  { s, sizeof(s) - 1 }

static const tsr_runtime_api* api = NULL;

static tsr_string str(const char* s) {
  tsr_string out;
  out.data = s;
  out.size = strlen(s);
  return out;
}

static tsr_error* fail(tsr_code code, const char* message) {
  return api->error_create(code, str(message));
}

static tsr_error* define(const char* schema) { return api->op_define(str(schema), NULL); }

static tsr_error* register_kernel(const char* op_name, int32_t device_type,
                                  tsr_boxed_kernel_fn fn) {
  tsr_kernel_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.struct_size = sizeof desc;
  desc.op_name = str(op_name);
  desc.device_type = device_type;
  desc.boxed = fn;
  desc.kernel_name = str(op_name);
  return api->kernel_register(&desc, NULL);
}

/* Returns its input (schema `(Tensor self) -> Tensor`). */
static tsr_error* identity_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  (void)context;
  (void)op;
  (void)stack;
  return NULL;
}

/* evil_slow::op (schema `(Tensor self) -> int`, returns 7): tells the test that it is running
 * (a byte on the pipe whose write end is in EVIL_KERNEL_FD), then stays inside the plugin until
 * the test writes a byte to the pipe whose read end is in EVIL_KERNEL_GO_FD. */
static tsr_error* slow_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  const char* running = getenv("EVIL_KERNEL_FD");
  const char* go = getenv("EVIL_KERNEL_GO_FD");
  char byte = 0;
  (void)context;
  (void)op;
  if (running == NULL || go == NULL) return fail(TSR_INTERNAL, "EVIL_KERNEL_FD/GO_FD unset");
  if (write(atoi(running), "k", 1) != 1) return fail(TSR_INTERNAL, "write failed");
  if (read(atoi(go), &byte, 1) != 1) return fail(TSR_INTERNAL, "read failed");
  api->stack_clear(stack);
  return api->stack_push_int(stack, 7);
}

/* A device over host memory (malloc and memcpy), enough for the runtime to register it. */
static tsr_error* dev_count(void* context, int32_t* out) {
  (void)context;
#if EVIL_VARIANT == EVIL_MANY_DEVICES
  *out = INT32_MAX;
#else
  *out = 1;
#endif
  return NULL;
}
static tsr_error* dev_allocate(void* context, int32_t index, size_t nbytes, void** out) {
  (void)context;
  (void)index;
#if EVIL_VARIANT == EVIL_NULL_ALLOC
  *out = NULL; /* "success" */
  return NULL;
#endif
  *out = malloc(nbytes ? nbytes : 1);
  return *out ? NULL : fail(TSR_RESOURCE_EXHAUSTED, "evildev: out of memory");
}
static void dev_free(void* context, int32_t index, void* ptr) {
  (void)context;
  (void)index;
  free(ptr);
}
static tsr_error* dev_h2d(void* context, int32_t index, void* dst, const void* src, size_t n) {
  (void)context;
  (void)index;
#if EVIL_VARIANT == EVIL_DEVICE_B
  /* It never allocated anything: whatever it gets is someone else's memory. */
  (void)dst;
  (void)src;
  (void)n;
  return fail(TSR_INTERNAL, "evil_device_b: a copy function got memory it never allocated");
#endif
  memcpy(dst, src, n);
  return NULL;
}
static tsr_error* dev_d2d(void* context, int32_t dst_index, void* dst, int32_t src_index,
                          const void* src, size_t n) {
  (void)context;
  (void)dst_index;
  (void)src_index;
  memcpy(dst, src, n);
  return NULL;
}
static tsr_error* dev_sync(void* context, int32_t index) {
  (void)context;
  (void)index;
#if EVIL_VARIANT == EVIL_SLOW_SYNC
  {
    /* Tell the test (a pipe whose write end is in EVIL_SYNC_FD) that synchronize is running,
     * then stay inside the plugin long enough for an unload to race it. */
    const char* fd = getenv("EVIL_SYNC_FD");
    if (fd != NULL && write(atoi(fd), "s", 1) != 1) return fail(TSR_INTERNAL, "write failed");
    usleep(300 * 1000);
  }
#endif
  return NULL;
}

static tsr_error* register_device(int32_t device_type) {
  tsr_device_interface iface;
  memset(&iface, 0, sizeof iface);
  iface.struct_size = sizeof iface;
  iface.device_type = device_type;
  iface.device_count = dev_count;
  iface.allocate = dev_allocate;
  iface.free = dev_free;
  iface.copy_host_to_device = dev_h2d;
  iface.copy_device_to_host = dev_h2d;
  iface.copy_device_to_device = dev_d2d;
  iface.synchronize = dev_sync;
  return api->device_register(&iface, NULL);
}

/* abs.out that writes 42 into out, whatever self holds. */
static tsr_error* forty_two_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  tsr_tensor* out = NULL;
  tsr_error* err;
  float* data;
  int64_t i, n;
  (void)context;
  (void)op;
  if ((err = api->stack_get_tensor(stack, 1, &out)) != NULL) return err;
  data = (float*)api->tensor_data_ptr(out);
  n = api->tensor_numel(out);
  for (i = 0; i < n; ++i) data[i] = 42.0f;
  api->tensor_retain(out);
  api->stack_clear(stack);
  err = api->stack_push_tensor(stack, out);
  api->tensor_release(out);
  return err;
}

/* abs for evil_device_b: it never allocated anything, so any tensor is someone else's. */
static tsr_error* foreign_memory_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  (void)context;
  (void)op;
  (void)stack;
  return fail(TSR_INTERNAL, "evil_device_b: a kernel got memory it never allocated");
}

/* evil_host::make(Tensor self) -> Tensor: a fresh float32[4] of host memory that the plugin's
 * own deleter frees. */
static void host_deleter(void* data, void* context) {
  (void)context;
  free(data);
}
static tsr_error* host_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  const int64_t size = 4;
  float* data = (float*)malloc(4 * sizeof(float));
  tsr_tensor* out = NULL;
  tsr_error* err;
  int i;
  (void)context;
  (void)op;
  if (data == NULL) return fail(TSR_RESOURCE_EXHAUSTED, "evil_host::make: out of memory");
  for (i = 0; i < 4; ++i) data[i] = 7.0f;
  err = api->tensor_from_host_memory(data, 4 * sizeof(float), &size, NULL, 1, TSR_DTYPE_FLOAT32,
                                     host_deleter, NULL, &out);
  if (err != NULL) {
    free(data);
    return err;
  }
  api->stack_clear(stack);
  err = api->stack_push_tensor(stack, out);
  api->tensor_release(out);
  return err;
}

/* Registers evil_late::op with a kernel; the test checks where that is refused. */
static tsr_error* register_late(void) {
  tsr_error* err = define("evil_late::op(Tensor self) -> Tensor");
  if (err != NULL) return err;
  return register_kernel("evil_late::op", TSR_DEVICE_CPU, identity_kernel);
}

/* evil_lazy::op: registers evil_late::op on its first call and returns that error. */
static tsr_error* lazy_kernel(void* context, const tsr_op* op, tsr_stack* stack) {
  (void)context;
  (void)op;
  (void)stack;
  return register_late();
}

static void* thread_main(void* out) {
  *(tsr_error**)out = register_late();
  return NULL;
}

#if EVIL_VARIANT == EVIL_NESTED_LOAD
/* What the nested calls answered: the first that was not the FAILED_PRECONDITION naming this
 * plugin ("" while each was), for register_fn to refuse the load with. Loading, unloading and
 * discovery from inside a load used to end the process (the loader's lock, held by this
 * thread). The runtime's functions are reached as plugin code can, through dlsym: in the
 * library's constructor (run by dlopen) there is no table yet. */
static char nested_wrong[1024] = "";

typedef tsr_code (*error_code_fn)(const tsr_error* error);
typedef tsr_string (*error_message_fn)(const tsr_error* error);
typedef void (*error_release_fn)(tsr_error* error);
typedef tsr_error* (*load_fn)(tsr_string path, const tsr_load_report** report);
typedef tsr_error* (*unload_fn)(tsr_string name);
typedef tsr_error* (*load_default_fn)(void);
typedef void (*reports_fn)(const tsr_load_report* const** reports, size_t* count);
typedef tsr_error* (*op_find_fn)(tsr_string name, const tsr_op** out);

static void expect_nested_refusal(const char* call, tsr_error* err, const char* names) {
  error_code_fn code_of = (error_code_fn)dlsym(RTLD_DEFAULT, "tsr_error_code");
  error_message_fn message_of = (error_message_fn)dlsym(RTLD_DEFAULT, "tsr_error_message");
  error_release_fn release = (error_release_fn)dlsym(RTLD_DEFAULT, "tsr_error_release");
  tsr_string message;
  if (nested_wrong[0] != '\0') {
    if (err != NULL) release(err);
    return;
  }
  if (err == NULL) {
    snprintf(nested_wrong, sizeof nested_wrong, "%s succeeded from inside the load", call);
    return;
  }
  message = message_of(err);
  if (code_of(err) != TSR_FAILED_PRECONDITION) {
    snprintf(nested_wrong, sizeof nested_wrong, "%s: code %d, expected FAILED_PRECONDITION: %.*s",
             call, (int)code_of(err), (int)message.size, message.data);
  } else {
    /* The message names the plugin being loaded and says that loads do not nest. */
    char text[1024];
    snprintf(text, sizeof text, "%.*s", (int)message.size, message.data);
    if (strstr(text, names) == NULL || strstr(text, "do not nest") == NULL) {
      snprintf(nested_wrong, sizeof nested_wrong, "%s: the message does not name %s: %.900s", call,
               names, text);
    }
  }
  release(err);
}

/* nested_calls: what plugin code may try while its own load runs, through the runtime's
 * exported functions. `names`: what each refusal must name (the library; in register_fn the
 * plugin's name too). $EVIL_NESTED_OTHER: a real plugin to try to load (else a missing path). */
static void nested_calls(const char* phase, const char* names) {
  load_fn load = (load_fn)dlsym(RTLD_DEFAULT, "tsr_plugin_load");
  unload_fn unload_plugin = (unload_fn)dlsym(RTLD_DEFAULT, "tsr_plugin_unload");
  load_default_fn load_default = (load_default_fn)dlsym(RTLD_DEFAULT, "tsr_plugin_load_default");
  reports_fn reports = (reports_fn)dlsym(RTLD_DEFAULT, "tsr_load_reports");
  op_find_fn op_find = (op_find_fn)dlsym(RTLD_DEFAULT, "tsr_op_find");
  error_release_fn release = (error_release_fn)dlsym(RTLD_DEFAULT, "tsr_error_release");
  const char* other = getenv("EVIL_NESTED_OTHER");
  const tsr_load_report* const* list = NULL;
  size_t count = 0;
  const tsr_op* op = NULL;
  tsr_error* err;
  if (nested_wrong[0] != '\0') return;
  if (!load || !unload_plugin || !load_default || !reports || !op_find || !release) {
    snprintf(nested_wrong, sizeof nested_wrong, "%s: dlsym found no tsr_* function", phase);
    return;
  }
  expect_nested_refusal("tsr_plugin_load", load(str(other != NULL ? other : "/nonexistent"), NULL),
                        names);
  expect_nested_refusal("tsr_plugin_unload", unload_plugin(str("evil_nested_load")), names);
  expect_nested_refusal("tsr_plugin_load_default", load_default(), names);
  /* Reading the reports and finding an op (without discovery) work from there. */
  reports(&list, &count);
  if (count > 0 && list == NULL && nested_wrong[0] == '\0') {
    snprintf(nested_wrong, sizeof nested_wrong, "%s: tsr_load_reports gave %zu reports and NULL",
             phase, count);
  }
  err = op_find(str("add.Tensor"), &op);
  if ((err != NULL || op == NULL) && nested_wrong[0] == '\0') {
    snprintf(nested_wrong, sizeof nested_wrong, "%s: tsr_op_find(add.Tensor) failed", phase);
  }
  if (err != NULL) release(err);
  if (nested_wrong[0] != '\0') {
    /* Say in which phase: the first wrong answer is what refuses the load. */
    char text[1024];
    snprintf(text, sizeof text, "%s: %.1000s", phase, nested_wrong);
    memcpy(nested_wrong, text, sizeof nested_wrong);
  }
}

/* dlopen runs this (the loader holds its lock from there on, too). */
__attribute__((constructor)) static void nested_calls_at_dlopen(void) {
  nested_calls("at dlopen", "libtsr_evil_plugin_nested_load.so");
}
#endif

static tsr_error* register_all(void* state, const tsr_runtime_api* runtime) {
  tsr_error* err = NULL;
  (void)state;
  (void)err;
  api = runtime;
#if EVIL_VARIANT == EVIL_SLOW_SYNC || EVIL_VARIANT == EVIL_NULL_ALLOC || \
    EVIL_VARIANT == EVIL_MANY_DEVICES || EVIL_VARIANT == EVIL_DEVICE
  return register_device(TSR_DEVICE_PRIVATEUSE3);
#endif
#if EVIL_VARIANT == EVIL_NESTED_LOAD
  nested_calls("in register_fn", "'evil_nested_load' (");
  if (nested_wrong[0] != '\0') return fail(TSR_INTERNAL, nested_wrong);
  if ((err = define("evil_nested::op(Tensor self) -> Tensor")) != NULL) return err;
  return register_kernel("evil_nested::op", EVIL_DEVICE_TYPE, identity_kernel);
#endif
#if EVIL_VARIANT == EVIL_SHARED_OP || EVIL_VARIANT == EVIL_SHARED_OP_TWIN
  /* A newer version of the plugin (the test sets EVIL_SCHEMA_V2 before loading it again)
   * changed its op's schema. */
  err = define(getenv("EVIL_SCHEMA_V2") != NULL ? "evil_shared::op(Tensor self, int n=1) -> Tensor"
                                                : "evil_shared::op(Tensor self) -> Tensor");
  if (err != NULL) return err;
  return register_kernel("evil_shared::op", EVIL_DEVICE_TYPE, identity_kernel);
#endif
#if EVIL_VARIANT == EVIL_DEVICE_B
  if ((err = register_device(TSR_DEVICE_PRIVATEUSE3)) != NULL) return err;
  return register_kernel("abs", TSR_DEVICE_PRIVATEUSE3, foreign_memory_kernel);
#endif
#if EVIL_VARIANT == EVIL_OP_FIND
  {
    const tsr_op* op = NULL;
    if ((err = define("evil_find::op(Tensor self) -> Tensor")) != NULL) return err;
    if ((err = api->op_find(str("evil_find::op"), &op)) != NULL) return err;
    if (op == NULL) return fail(TSR_INTERNAL, "op_find gave NULL");
    return register_kernel("evil_find::op", TSR_DEVICE_PRIVATEUSE3, identity_kernel);
  }
#endif
  /* The foreign variants ignore the errors they get on purpose: the load must be refused
   * anyway. */
#if EVIL_VARIANT == EVIL_FOREIGN_KERNEL
  err = register_kernel("abs.out", TSR_DEVICE_CPU, forty_two_kernel);
  if (err != NULL) api->error_release(err);
#endif
#if EVIL_VARIANT == EVIL_FOREIGN_DEVICE
  err = register_device(TSR_DEVICE_CUDA);
  if (err != NULL) api->error_release(err);
#endif
#if EVIL_VARIANT == EVIL_FOREIGN_FALLBACK
  err = api->fallback_register_cpu(TSR_DEVICE_CUDA, NULL);
  if (err != NULL) api->error_release(err);
  err = api->fallback_register(TSR_DEVICE_CUDA, identity_kernel, NULL, str("evil::fallback"), NULL);
  if (err != NULL) api->error_release(err);
#endif
#if EVIL_VARIANT == EVIL_HOST_DELETER
  if ((err = define("evil_host::make(Tensor self) -> Tensor")) != NULL) return err;
  return register_kernel("evil_host::make", TSR_DEVICE_CPU, host_kernel);
#endif
#if EVIL_VARIANT == EVIL_LAZY_REGISTER
  if ((err = define("evil_lazy::op(Tensor self) -> Tensor")) != NULL) return err;
  return register_kernel("evil_lazy::op", TSR_DEVICE_CPU, lazy_kernel);
#endif
#if EVIL_VARIANT == EVIL_BAD_RESULTS
  if ((err = register_device(TSR_DEVICE_PRIVATEUSE3)) != NULL) return err;
  return register_kernel("exp", TSR_DEVICE_PRIVATEUSE3, identity_kernel);
#endif
#if EVIL_VARIANT == EVIL_SLOW_KERNEL
  if ((err = define("evil_slow::op(Tensor self) -> int")) != NULL) return err;
  return register_kernel("evil_slow::op", TSR_DEVICE_CPU, slow_kernel);
#endif
#if EVIL_VARIANT == EVIL_SLOW_REFUSED
  /* The kernel is published once registered: the test may call it from another thread while
   * register_fn still runs. With EVIL_REFUSE_FD set, register_fn says so (an 'R' on the pipe in
   * EVIL_KERNEL_FD) and waits for a byte on the pipe whose read end is in EVIL_REFUSE_FD; then
   * (or at once without it) it fails, and the load is refused. */
  if ((err = define("evil_slow::op(Tensor self) -> int")) != NULL) return err;
  if ((err = register_kernel("evil_slow::op", TSR_DEVICE_CPU, slow_kernel)) != NULL) return err;
  {
    const char* refuse = getenv("EVIL_REFUSE_FD");
    const char* running = getenv("EVIL_KERNEL_FD");
    char byte = 0;
    if (refuse != NULL && running != NULL) {
      if (write(atoi(running), "R", 1) != 1) return fail(TSR_INTERNAL, "write failed");
      if (read(atoi(refuse), &byte, 1) != 1) return fail(TSR_INTERNAL, "read failed");
    }
  }
  return fail(TSR_INTERNAL, "evil_slow_refused: refused on purpose, after registering");
#endif
#if EVIL_VARIANT == EVIL_THREAD_REGISTER
  {
    pthread_t thread;
    tsr_error* thread_err = NULL;
    if (pthread_create(&thread, NULL, thread_main, &thread_err) != 0) {
      return fail(TSR_INTERNAL, "pthread_create failed");
    }
    pthread_join(thread, NULL);
    /* Ignored on purpose: the runtime must not have let the registration through. */
    if (thread_err != NULL) api->error_release(thread_err);
  }
#endif
  return NULL;
}

static void unload(void* state) {
  tsr_string message = TSR_STR("evil plugin unloaded");
  (void)state;
  api->log(TSR_LOG_WARNING, message);
}

TSR_PLUGIN_EXPORT tsr_error* tsr_plugin_init(const tsr_runtime_api* runtime,
                                             tsr_plugin_desc* desc) {
  tsr_string name = TSR_STR(EVIL_NAME);
  tsr_string device_name = TSR_STR(EVIL_DEVICE_NAME);
  tsr_string version = TSR_STR("0.1-evil");
  api = runtime;
#if EVIL_VARIANT == EVIL_NESTED_LOAD
  /* Before the descriptor is read the runtime knows the library only by its path. */
  nested_calls("in tsr_plugin_init", "libtsr_evil_plugin_nested_load.so");
#endif
#if EVIL_VARIANT == EVIL_INIT_REGISTERS
  {
    /* Before the handshake: the runtime has not checked this plugin's versions yet. The
     * errors are ignored on purpose: the load must be refused anyway. */
    tsr_error* err = register_late();
    if (err != NULL) api->error_release(err);
  }
#endif
  desc->struct_size = sizeof *desc;
  desc->abi_major = TSR_ABI_VERSION_MAJOR;
  desc->abi_minor = TSR_ABI_VERSION_MINOR;
  desc->min_abi_minor = 0;
  desc->device_type = EVIL_DEVICE_TYPE;
  desc->register_fn = register_all;
  desc->unload_fn = unload;
  desc->name = name;
  desc->version = version;
  desc->device_name = device_name;
#if EVIL_VARIANT == EVIL_LYING_STRING
  {
    /* The string is short; its size says otherwise. */
    const char* lie = getenv("EVIL_LIE");
    const char* field = lie != NULL ? lie : "name";
    if (strcmp(field, "name") == 0) desc->name.size = (size_t)-1;
    if (strcmp(field, "version") == 0) desc->version.size = (size_t)1 << 40;
    if (strcmp(field, "device_name") == 0) desc->device_name.size = 4097;
  }
#endif
  return NULL;
}
