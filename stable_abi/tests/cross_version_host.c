/* The cross-version matrix host (tessera_abi_cross_version, cross_version.sh): an application
 * written in C99 against the frozen 1.0 headers only (tests/frozen/v1.0), as one built when 1.0
 * was released. It dlopens a given libtessera.so (RTLD_NOW | RTLD_LOCAL: it links no runtime),
 * binds the 1.0 functions it uses by dlsym, loads one plugin, prints the load report and, when
 * the plugin loaded, calls an op on a small float32 tensor and checks the values. One matrix
 * cell per run, so a crash in one cell cannot hide another's outcome.
 *
 * usage: tessera_abi_cross_version_host --runtime LIB --plugin SO --cell NAME
 *          --expect ran|refused [--expect-reason TEXT]...
 *          [--op OP [--scale K] [--device cpu|privateuse1|privateuse2|privateuse3]]
 *          [--listing-op OP --expect-listing absent|present]
 *
 *   --op       OP(Tensor self) -> Tensor is called on [1.5, -2, 0, 3.25] made on --device
 *              (index 0; default cpu); the result must be K times it (default 2), on the same
 *              device, and is copied back to the host to be checked.
 *   --listing-op  an op returning one float: -1 when the plugin found no op listing in the
 *              runtime's table, else the number of ops it listed (the xvcap plugin's probe).
 *
 * Prints one line `cross_version cell=NAME outcome=... verdict=expected|UNEXPECTED` and exits
 * 0 when the outcome is the expected one, 1 when it is not, 2 on a usage error. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/c/tessera.h"

/* The 1.0 functions the host uses, bound by dlsym. */
typedef struct runtime {
  tsr_error* (*plugin_load)(tsr_string path, const tsr_load_report** report);
  size_t (*load_report_format)(const tsr_load_report* report, char* buf, size_t size);
  tsr_code (*error_code)(const tsr_error* error);
  tsr_string (*error_message)(const tsr_error* error);
  void (*error_release)(tsr_error* error);
  tsr_error* (*op_find)(tsr_string name, const tsr_op** out);
  tsr_error* (*op_call)(const tsr_op* op, tsr_stack* stack);
  tsr_error* (*tensor_empty)(const int64_t* sizes, size_t ndim, tsr_dtype dtype,
                             tsr_device device, tsr_tensor** out);
  tsr_error* (*tensor_copy_from_host)(tsr_tensor* dst, const void* src, size_t nbytes);
  tsr_error* (*tensor_copy_to_host)(const tsr_tensor* src, void* dst, size_t nbytes);
  void (*tensor_release)(tsr_tensor* tensor);
  int64_t (*tensor_numel)(const tsr_tensor* tensor);
  tsr_dtype (*tensor_dtype)(const tsr_tensor* tensor);
  tsr_device (*tensor_device)(const tsr_tensor* tensor);
  tsr_error* (*stack_create)(tsr_stack** out);
  void (*stack_release)(tsr_stack* stack);
  tsr_error* (*stack_push_tensor)(tsr_stack* stack, tsr_tensor* tensor);
  tsr_error* (*stack_get_tensor)(const tsr_stack* stack, size_t index, tsr_tensor** out);
} runtime;

static runtime rt;
static const char* cell = "?";

/* bind looks `symbol` up in `lib` and stores it in *slot (a function pointer of `size` bytes;
 * copied as bytes, the POSIX way of turning dlsym's void* into a function pointer). */
static int bind(void* lib, const char* symbol, void* slot, size_t size) {
  void* address = dlsym(lib, symbol);
  if (address == NULL || size != sizeof address) {
    printf("cross_version cell=%s outcome=error what=\"the runtime does not export %s\"\n", cell,
           symbol);
    return 0;
  }
  memcpy(slot, &address, size);
  return 1;
}

/* BIND also checks at compile time that the slot has the type of the frozen header's
 * declaration (the assignment inside sizeof is type-checked, never evaluated). */
#define BIND(lib, slot, symbol) \
  ((void)sizeof(rt.slot = symbol), bind(lib, #symbol, (void*)&rt.slot, sizeof rt.slot))

static int bind_all(void* lib) {
  return BIND(lib, plugin_load, tsr_plugin_load) &&
         BIND(lib, load_report_format, tsr_load_report_format) &&
         BIND(lib, error_code, tsr_error_code) && BIND(lib, error_message, tsr_error_message) &&
         BIND(lib, error_release, tsr_error_release) && BIND(lib, op_find, tsr_op_find) &&
         BIND(lib, op_call, tsr_op_call) && BIND(lib, tensor_empty, tsr_tensor_empty) &&
         BIND(lib, tensor_copy_from_host, tsr_tensor_copy_from_host) &&
         BIND(lib, tensor_copy_to_host, tsr_tensor_copy_to_host) &&
         BIND(lib, tensor_release, tsr_tensor_release) &&
         BIND(lib, tensor_numel, tsr_tensor_numel) && BIND(lib, tensor_dtype, tsr_tensor_dtype) &&
         BIND(lib, tensor_device, tsr_tensor_device) &&
         BIND(lib, stack_create, tsr_stack_create) &&
         BIND(lib, stack_release, tsr_stack_release) &&
         BIND(lib, stack_push_tensor, tsr_stack_push_tensor) &&
         BIND(lib, stack_get_tensor, tsr_stack_get_tensor);
}

static tsr_string str(const char* s) {
  tsr_string t;
  t.data = s;
  t.size = strlen(s);
  return t;
}

static const char* code_name(int32_t code) {
  static const char* const names[] = {
      "OK",       "CANCELLED",         "UNKNOWN", "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS",   "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
      "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  return code >= 0 && code <= 16 ? names[code] : "(unknown code)";
}

/* A failed step: its description, with the error's message when there is one. */
static char failure[512];

static int failed(const char* what, tsr_error* error) {
  if (error != NULL) {
    tsr_string m = rt.error_message(error);
    snprintf(failure, sizeof failure, "%s: %s: %.*s", what, code_name(rt.error_code(error)),
             (int)m.size, m.data);
    rt.error_release(error);
  } else {
    snprintf(failure, sizeof failure, "%s", what);
  }
  return 0;
}

#define N 4
static const float kInput[N] = {1.5f, -2.0f, 0.0f, 3.25f};

/* call runs `op_name` on kInput made on `device`; on success fills out[0..*count). */
static int call(const char* op_name, tsr_device device, float* out, int64_t* count) {
  const int64_t size = N;
  const tsr_op* op = NULL;
  tsr_tensor* input = NULL;
  tsr_tensor* result = NULL;
  tsr_stack* stack = NULL;
  tsr_error* err;
  tsr_device where;
  int ok = 0;
  char what[160];
  snprintf(what, sizeof what, "tsr_op_find(%s)", op_name);
  if ((err = rt.op_find(str(op_name), &op)) != NULL) return failed(what, err);
  if ((err = rt.tensor_empty(&size, 1, TSR_DTYPE_FLOAT32, device, &input)) != NULL) {
    return failed("tsr_tensor_empty", err);
  }
  if ((err = rt.tensor_copy_from_host(input, kInput, sizeof kInput)) != NULL) {
    failed("tsr_tensor_copy_from_host", err);
  } else if ((err = rt.stack_create(&stack)) != NULL) {
    failed("tsr_stack_create", err);
  } else if ((err = rt.stack_push_tensor(stack, input)) != NULL) {
    failed("tsr_stack_push_tensor", err);
  } else if ((err = rt.op_call(op, stack)) != NULL) {
    snprintf(what, sizeof what, "tsr_op_call(%s)", op_name);
    failed(what, err);
  } else if ((err = rt.stack_get_tensor(stack, 0, &result)) != NULL) {
    failed("tsr_stack_get_tensor", err);
  } else if (rt.tensor_dtype(result) != TSR_DTYPE_FLOAT32 || rt.tensor_numel(result) > N) {
    failed("the result is not float32 of at most 4 elements", NULL);
  } else if (where = rt.tensor_device(result),
             where.type != device.type || where.index != device.index) {
    failed("the result is on another device than the input", NULL);
  } else {
    *count = rt.tensor_numel(result);
    err = rt.tensor_copy_to_host(result, out, (size_t)*count * sizeof(float));
    ok = err == NULL ? 1 : failed("tsr_tensor_copy_to_host", err);
  }
  rt.stack_release(stack);
  rt.tensor_release(input);
  return ok;
}

static int parse_device(const char* name, tsr_device* device) {
  static const struct {
    const char* name;
    tsr_device_type type;
  } kTypes[] = {{"cpu", TSR_DEVICE_CPU},
                {"privateuse1", TSR_DEVICE_PRIVATEUSE1},
                {"privateuse2", TSR_DEVICE_PRIVATEUSE2},
                {"privateuse3", TSR_DEVICE_PRIVATEUSE3}};
  size_t i;
  for (i = 0; i < sizeof kTypes / sizeof kTypes[0]; ++i) {
    if (strcmp(name, kTypes[i].name) == 0) {
      device->type = kTypes[i].type;
      device->index = 0;
      return 1;
    }
  }
  return 0;
}

static int usage(const char* message) {
  fprintf(stderr, "tessera_abi_cross_version_host: %s (see the comment at the top of %s)\n",
          message, __FILE__);
  return 2;
}

int main(int argc, char** argv) {
  const char* runtime_path = NULL;
  const char* plugin_path = NULL;
  const char* expect = NULL;
  const char* reasons[8];
  int num_reasons = 0;
  const char* op_name = NULL;
  const char* listing_op = NULL;
  const char* expect_listing = NULL;
  double scale = 2.0;
  tsr_device device;
  void* lib;
  const tsr_load_report* report = NULL;
  tsr_error* load_error;
  char* text;
  size_t length;
  int i, expected;
  char outcome[1024];

  device.type = TSR_DEVICE_CPU;
  device.index = 0;
  for (i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (value == NULL) return usage("a flag without its value");
    ++i;
    if (strcmp(flag, "--runtime") == 0) {
      runtime_path = value;
    } else if (strcmp(flag, "--plugin") == 0) {
      plugin_path = value;
    } else if (strcmp(flag, "--cell") == 0) {
      cell = value;
    } else if (strcmp(flag, "--expect") == 0) {
      expect = value;
    } else if (strcmp(flag, "--expect-reason") == 0) {
      if (num_reasons == 8) return usage("more than 8 --expect-reason");
      reasons[num_reasons++] = value;
    } else if (strcmp(flag, "--op") == 0) {
      op_name = value;
    } else if (strcmp(flag, "--scale") == 0) {
      scale = atof(value);
    } else if (strcmp(flag, "--device") == 0) {
      if (!parse_device(value, &device)) return usage("unknown --device");
    } else if (strcmp(flag, "--listing-op") == 0) {
      listing_op = value;
    } else if (strcmp(flag, "--expect-listing") == 0) {
      expect_listing = value;
    } else {
      return usage("unknown flag");
    }
  }
  if (runtime_path == NULL || plugin_path == NULL || expect == NULL ||
      (strcmp(expect, "ran") != 0 && strcmp(expect, "refused") != 0) ||
      (listing_op != NULL) != (expect_listing != NULL)) {
    return usage("--runtime, --plugin and --expect ran|refused are required; --listing-op and "
                 "--expect-listing go together");
  }

  lib = dlopen(runtime_path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    printf("cross_version cell=%s outcome=error what=\"dlopen: %s\" verdict=UNEXPECTED\n", cell,
           dlerror());
    return 1;
  }
  if (!bind_all(lib)) return 1;

  load_error = rt.plugin_load(str(plugin_path), &report);
  if (report == NULL) {
    failed("tsr_plugin_load gave no report", load_error);
    printf("cross_version cell=%s outcome=error what=\"%s\" verdict=UNEXPECTED\n", cell, failure);
    return 1;
  }
  if (load_error != NULL) rt.error_release(load_error);
  length = rt.load_report_format(report, NULL, 0);
  text = (char*)malloc(length + 1);
  if (text != NULL) {
    rt.load_report_format(report, text, length + 1);
    printf("--- load report (cell %s) ---\n%s%s", cell, text,
           length > 0 && text[length - 1] == '\n' ? "" : "\n");
    free(text);
  }

  if (!report->loaded) {
    /* Refused: the outcome is the code and the reason, which must name what we expect. */
    char reason[768];
    snprintf(reason, sizeof reason, "%.*s", (int)report->reason.size,
             report->reason.data != NULL ? report->reason.data : "");
    expected = strcmp(expect, "refused") == 0;
    for (i = 0; i < num_reasons; ++i) {
      if (strstr(reason, reasons[i]) == NULL) expected = 0;
    }
    snprintf(outcome, sizeof outcome, "outcome=refused code=%s reason=\"%s\"",
             code_name(report->code), reason);
  } else {
    /* Loaded: run the op and check its values; then the listing probe. */
    int ran = 1;
    char listing[64] = "";
    float out[N];
    int64_t count = 0, k;
    if (op_name != NULL) {
      ran = call(op_name, device, out, &count);
      if (ran && count != N) ran = failed("the result has the wrong number of elements", NULL);
      for (k = 0; ran && k < N; ++k) {
        if (out[k] != (float)(scale * kInput[k])) {
          snprintf(failure, sizeof failure, "%s: element %d is %g, expected %g", op_name, (int)k,
                   (double)out[k], scale * kInput[k]);
          ran = 0;
        }
      }
    }
    if (ran && listing_op != NULL) {
      tsr_device cpu;
      cpu.type = TSR_DEVICE_CPU;
      cpu.index = 0;
      ran = call(listing_op, cpu, out, &count);
      if (ran && count != 1) ran = failed("the listing probe gave no single value", NULL);
      if (ran) {
        const int present = out[0] >= 0;
        if (present) {
          snprintf(listing, sizeof listing, " listing=present ops_listed=%ld", (long)out[0]);
        } else {
          snprintf(listing, sizeof listing, " listing=absent");
        }
        if (strcmp(expect_listing, present ? "present" : "absent") != 0) {
          ran = 0;
          snprintf(failure, sizeof failure, "the plugin found the op listing %s, expected %s",
                   present ? "present" : "absent", expect_listing);
        }
      }
    }
    expected = ran && strcmp(expect, "ran") == 0;
    if (ran) {
      snprintf(outcome, sizeof outcome, "outcome=ran runtime_abi=%u.%u plugin_abi=%u.%u%s%s%s",
               report->runtime_abi_major, report->runtime_abi_minor, report->plugin_abi_major,
               report->plugin_abi_minor, op_name != NULL ? " values=ok op=" : "",
               op_name != NULL ? op_name : "", listing);
    } else {
      snprintf(outcome, sizeof outcome, "outcome=failed what=\"%s\"", failure);
    }
  }
  printf("cross_version cell=%s %s verdict=%s\n", cell, outcome,
         expected ? "expected" : "UNEXPECTED");
  fflush(stdout);
  /* The runtime stays loaded: plugins unload at process exit, as for any application. */
  return expected ? 0 : 1;
}
