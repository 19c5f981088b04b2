/* tessera_instruction_workloads: the fixed micro workloads of the instruction-count gate
 * (docs/performance.md, benchmarks/instruction_gate.py). Each runs through the public C ABI as
 * a C application calls it: libtessera.so with the CPU plugin from default discovery, one
 * tsr_stack created once and reused, and the gate's own plugin
 * (instruction_workload_plugin.c) loaded by path.
 *
 *   tessera_instruction_workloads <workload> <iterations>
 *   tessera_instruction_workloads --list
 *
 * Set-up and a few warm-up calls (first-call costs: lazy initialisation, buffers growing to
 * size) run before the measured region; under callgrind the region is bracketed by client
 * requests, so with --instr-atstart=no the counts are the region's alone and instructions per
 * call are the total divided by <iterations>. Without valgrind the program prints the region's
 * time per call instead (a sanity check; Google Benchmark measures time properly).
 *
 * Every call's error is checked and every workload's result verified after the region: a
 * call that fails fast must stop the program, not look like a speed-up. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tessera/c/tessera.h"

#ifdef TESSERA_HAVE_CALLGRIND_H
#include <valgrind/callgrind.h>
#endif

#ifndef TESSERA_GATE_PLUGIN_PATH
#error "define TESSERA_GATE_PLUGIN_PATH (the path of the gate's plugin)"
#endif

#define GATE_STR(s) \
  { s, sizeof(s) - 1 }

static const char* current = "setup"; /* what the program is doing, for error messages */

static void check(tsr_error* err, const char* what) {
  tsr_string message;
  if (err == NULL) return;
  message = tsr_error_message(err);
  fprintf(stderr, "tessera_instruction_workloads: %s: %s: %.*s\n", current, what, (int)message.size,
          message.data);
  tsr_error_release(err);
  exit(1);
}

static void die(const char* message) {
  fprintf(stderr, "tessera_instruction_workloads: %s: %s\n", current, message);
  exit(1);
}

static tsr_string str(const char* s) {
  tsr_string r;
  r.data = s;
  r.size = strlen(s);
  return r;
}

/* ---- state shared by the workloads (set up once, outside the measured region) ---- */

static tsr_stack* stack = NULL;
static const tsr_op* op = NULL;
static tsr_tensor* a = NULL;
static tsr_tensor* b = NULL;
static tsr_tensor* out = NULL;
static tsr_tensor* cond = NULL;
static char cpu_plugin_path[4096];

static tsr_scalar one(void) {
  tsr_scalar s;
  memset(&s, 0, sizeof s);
  s.kind = TSR_SCALAR_INT;
  s.i = 1;
  return s;
}

static tsr_tensor* filled(tsr_device device, float value) {
  const int64_t sizes[1] = {1};
  tsr_tensor* t = NULL;
  check(tsr_tensor_empty(sizes, 1, TSR_DTYPE_FLOAT32, device, &t), "tsr_tensor_empty");
  check(tsr_tensor_copy_from_host(t, &value, sizeof value), "tsr_tensor_copy_from_host");
  return t;
}

/* shaped: a CPU float32 tensor of `ndim` dims of size 1 holding `value`; a bool one (value != 0)
 * for `is_bool`. */
static tsr_tensor* shaped(size_t ndim, float value, int is_bool) {
  tsr_device cpu;
  const int64_t sizes[2] = {1, 1};
  const unsigned char flag = value != 0;
  tsr_tensor* t = NULL;
  cpu.type = TSR_DEVICE_CPU;
  cpu.index = 0;
  check(tsr_tensor_empty(sizes, ndim, is_bool ? TSR_DTYPE_BOOL : TSR_DTYPE_FLOAT32, cpu, &t),
        "tsr_tensor_empty");
  if (is_bool) {
    check(tsr_tensor_copy_from_host(t, &flag, sizeof flag), "tsr_tensor_copy_from_host");
  } else {
    check(tsr_tensor_copy_from_host(t, &value, sizeof value), "tsr_tensor_copy_from_host");
  }
  return t;
}

static float value_of(const tsr_tensor* t) {
  float v = 0;
  if (tsr_tensor_numel(t) != 1 || tsr_tensor_dtype(t) != TSR_DTYPE_FLOAT32) {
    die("expected a 1-element float32 result");
  }
  check(tsr_tensor_copy_to_host(t, &v, sizeof v), "tsr_tensor_copy_to_host");
  return v;
}

static const tsr_op* find(const char* name) {
  const tsr_op* o = NULL;
  check(tsr_op_find(str(name), &o), name);
  return o;
}

static tsr_device device(const char* text) {
  tsr_device d;
  check(tsr_device_parse(str(text), &d), text);
  return d;
}

/* result: the call's first return (borrowed from the stack). */
static tsr_tensor* result(void) {
  tsr_tensor* t = NULL;
  check(tsr_stack_get_tensor(stack, 0, &t), "tsr_stack_get_tensor");
  return t;
}

/* ---- add: c = a + b, add.Tensor on the CPU plugin (its add.out kernel, functional form
 * derived by the dispatcher), as tessera::add(a, b) pushes it: a, b, alpha ---- */

static void add_setup(void) {
  op = find("add.Tensor");
  a = filled(device("cpu"), 1.0f);
  b = filled(device("cpu"), 2.0f);
}

static void add_run(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_stack_push_tensor(stack, b), "push other");
  check(tsr_stack_push_scalar(stack, one()), "push alpha");
  check(tsr_op_call(op, stack), "tsr_op_call");
  (void)result();
  tsr_stack_clear(stack);
}

static void add_verify(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_stack_push_tensor(stack, b), "push other");
  check(tsr_stack_push_scalar(stack, one()), "push alpha");
  check(tsr_op_call(op, stack), "tsr_op_call");
  if (value_of(result()) != 3.0f) die("add(1, 2) is not 3");
  tsr_stack_clear(stack);
}

/* ---- add_values: the same add through the packed entry point, tsr_op_call_values (one call
 * with every argument in an array, the result a new reference), as tessera::add(a, b) calls it
 * on a 1.1 runtime ---- */

static tsr_tensor* add_values_call(void) {
  tsr_value args[3], ret;
  size_t n = 0;
  memset(args, 0, sizeof args);
  args[0].kind = TSR_VALUE_TENSOR;
  args[0].u.tensor = a;
  args[1].kind = TSR_VALUE_TENSOR;
  args[1].u.tensor = b;
  args[2].kind = TSR_VALUE_SCALAR;
  args[2].u.scalar = one();
  check(tsr_op_call_values(op, args, 3, &ret, 1, &n), "tsr_op_call_values");
  if (n != 1 || ret.kind != TSR_VALUE_TENSOR) die("add.Tensor did not return one tensor");
  return ret.u.tensor;
}

static void add_values_run(void) { tsr_tensor_release(add_values_call()); }

static void add_values_verify(void) {
  tsr_tensor* c = add_values_call();
  if (value_of(c) != 3.0f) die("add(1, 2) is not 3");
  tsr_tensor_release(c);
}

/* ---- add_: a += b in place, add_.Tensor on the CPU plugin (b = 0 keeps a fixed) ---- */

static void add_inplace_setup(void) {
  op = find("add_.Tensor");
  a = filled(device("cpu"), 1.0f);
  b = filled(device("cpu"), 0.0f);
}

static void add_inplace_run(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_stack_push_tensor(stack, b), "push other");
  check(tsr_op_call(op, stack), "tsr_op_call");
  (void)result();
  tsr_stack_clear(stack);
}

static void add_inplace_verify(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_stack_push_tensor(stack, b), "push other");
  check(tsr_op_call(op, stack), "tsr_op_call");
  if (result() != a) die("add_ did not return self");
  tsr_stack_clear(stack);
  if (value_of(a) != 1.0f) die("add_(1, 0) did not leave 1");
}

/* ---- noop: gate::noop(a), the gate plugin's CPU kernel that does nothing: the dispatcher's
 * own cost (argument checks, dispatch key, kernel lookup, result check) ---- */

static void noop_setup(void) {
  op = find("gate::noop");
  a = filled(device("cpu"), 1.0f);
}

static void noop_run(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_op_call(op, stack), "tsr_op_call");
  tsr_stack_clear(stack);
}

static void noop_verify(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_op_call(op, stack), "tsr_op_call");
  if (tsr_stack_size(stack) != 0) die("gate::noop left values on the stack");
}

/* ---- derived_out: add.out(a, b, out=c) on gatedev, whose plugin has only the functional
 * add.Tensor (and copy_): the dispatcher derives out= from it (Meta, the functional kernel,
 * copy_ into out) ---- */

static void derived_out_setup(void) {
  op = find("add.out");
  a = filled(device("gatedev:0"), 1.0f);
  b = filled(device("gatedev:0"), 2.0f);
  out = filled(device("gatedev:0"), 0.0f);
}

static void derived_out_run(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_stack_push_tensor(stack, b), "push other");
  check(tsr_stack_push_scalar(stack, one()), "push alpha");
  check(tsr_stack_push_tensor(stack, out), "push out");
  check(tsr_op_call(op, stack), "tsr_op_call");
  (void)result();
  tsr_stack_clear(stack);
}

static void derived_out_verify(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_stack_push_tensor(stack, b), "push other");
  check(tsr_stack_push_scalar(stack, one()), "push alpha");
  check(tsr_stack_push_tensor(stack, out), "push out");
  check(tsr_op_call(op, stack), "tsr_op_call");
  if (result() != out) die("add.out did not return out");
  tsr_stack_clear(stack);
  if (value_of(out) != 3.0f) die("add.out(1, 2) did not write 3");
}

/* ---- plugin_load: unload the CPU plugin and load it again from the path default discovery
 * found it at (dlopen, the handshake, registering every kernel; unloading) ---- */

static void plugin_load_setup(void) {
  const tsr_load_report* const* reports = NULL;
  size_t count = 0, i;
  tsr_load_reports(&reports, &count);
  for (i = 0; i < count; ++i) {
    const tsr_load_report* r = reports[i];
    if (r->loaded && r->plugin_name.size == 3 && memcmp(r->plugin_name.data, "cpu", 3) == 0) {
      if (r->path.size >= sizeof cpu_plugin_path) die("the CPU plugin's path is too long");
      memcpy(cpu_plugin_path, r->path.data, r->path.size);
      cpu_plugin_path[r->path.size] = '\0';
    }
  }
  if (cpu_plugin_path[0] == '\0') die("default discovery did not load the CPU plugin");
}

static const tsr_load_report* last_report = NULL;

static void plugin_load_run(void) {
  const tsr_string cpu = GATE_STR("cpu");
  check(tsr_plugin_unload(cpu), "tsr_plugin_unload");
  check(tsr_plugin_load(str(cpu_plugin_path), &last_report), cpu_plugin_path);
}

static void plugin_load_verify(void) {
  if (last_report == NULL || !last_report->loaded || last_report->kernels_registered < 100) {
    die("the CPU plugin did not load again with its kernels");
  }
}

/* ---- one op on 1-element CPU tensors, each a family of the CPU plugin's kernels (issue 29's
 * targets): abs (unary), where (ternary), sum (reduction), mm (1x1 matrices), cat (two) ---- */

static void call_and_clear(void) {
  check(tsr_op_call(op, stack), "tsr_op_call");
  (void)result();
  tsr_stack_clear(stack);
}

static void abs_setup(void) {
  op = find("abs");
  a = filled(device("cpu"), -1.0f);
}
static void abs_run(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  call_and_clear();
}
static void abs_verify(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_op_call(op, stack), "tsr_op_call");
  if (value_of(result()) != 1.0f) die("abs(-1) is not 1");
  tsr_stack_clear(stack);
}

static void where_setup(void) {
  op = find("where.self");
  cond = shaped(1, 1.0f, 1);
  a = filled(device("cpu"), 1.0f);
  b = filled(device("cpu"), 2.0f);
}
static void where_push(void) {
  check(tsr_stack_push_tensor(stack, cond), "push condition");
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_stack_push_tensor(stack, b), "push other");
}
static void where_run(void) {
  where_push();
  call_and_clear();
}
static void where_verify(void) {
  where_push();
  check(tsr_op_call(op, stack), "tsr_op_call");
  if (value_of(result()) != 1.0f) die("where(true, 1, 2) is not 1");
  tsr_stack_clear(stack);
}

static void sum_setup(void) {
  op = find("sum");
  a = filled(device("cpu"), 3.0f);
}
static void sum_run(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  call_and_clear();
}
static void sum_verify(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_op_call(op, stack), "tsr_op_call");
  if (value_of(result()) != 3.0f) die("sum([3]) is not 3");
  tsr_stack_clear(stack);
}

static void mm_setup(void) {
  op = find("mm");
  a = shaped(2, 2.0f, 0);
  b = shaped(2, 3.0f, 0);
}
static void mm_push(void) {
  check(tsr_stack_push_tensor(stack, a), "push self");
  check(tsr_stack_push_tensor(stack, b), "push mat2");
}
static void mm_run(void) {
  mm_push();
  call_and_clear();
}
static void mm_verify(void) {
  mm_push();
  check(tsr_op_call(op, stack), "tsr_op_call");
  if (value_of(result()) != 6.0f) die("mm([[2]], [[3]]) is not [[6]]");
  tsr_stack_clear(stack);
}

static void cat_setup(void) {
  op = find("cat");
  a = filled(device("cpu"), 1.0f);
  b = filled(device("cpu"), 2.0f);
}
static void cat_push(void) {
  tsr_tensor* both[2];
  both[0] = a;
  both[1] = b;
  check(tsr_stack_push_tensor_list(stack, both, 2), "push tensors");
}
static void cat_run(void) {
  cat_push();
  call_and_clear();
}
static void cat_verify(void) {
  float v[2] = {0, 0};
  cat_push();
  check(tsr_op_call(op, stack), "tsr_op_call");
  if (tsr_tensor_numel(result()) != 2) die("cat of two 1-element tensors has not 2 elements");
  check(tsr_tensor_copy_to_host(result(), v, sizeof v), "tsr_tensor_copy_to_host");
  if (v[0] != 1.0f || v[1] != 2.0f) die("cat([1], [2]) is not [1, 2]");
  tsr_stack_clear(stack);
}

/* ---- the table ---- */

typedef struct workload {
  const char* name;
  const char* what;
  void (*setup)(void);
  void (*run)(void);
  void (*verify)(void);
  long warmup; /* calls before the measured region */
} workload;

static const workload kWorkloads[] = {
    {"add", "1-element float32 add.Tensor on the CPU plugin (out= kernel, functional derived)",
     add_setup, add_run, add_verify, 100},
    {"add_values", "the same add through tsr_op_call_values (packed arguments, one call)",
     add_setup, add_values_run, add_values_verify, 100},
    {"add_", "1-element float32 add_.Tensor on the CPU plugin (in-place derived from out=)",
     add_inplace_setup, add_inplace_run, add_inplace_verify, 100},
    {"noop", "gate::noop on a 1-element CPU tensor: a kernel that does nothing (dispatcher only)",
     noop_setup, noop_run, noop_verify, 100},
    {"derived_out",
     "1-element add.out on gatedev, out= derived from the gate plugin's functional add.Tensor",
     derived_out_setup, derived_out_run, derived_out_verify, 100},
    {"plugin_load", "one unload + load of the CPU plugin (dlopen, handshake, every kernel)",
     plugin_load_setup, plugin_load_run, plugin_load_verify, 2},
    {"abs", "1-element float32 abs on the CPU plugin (unary out= kernel, functional derived)",
     abs_setup, abs_run, abs_verify, 100},
    {"where", "1-element where.self on the CPU plugin (bool condition, two float32 operands)",
     where_setup, where_run, where_verify, 100},
    {"sum", "sum of a 1-element float32 tensor on the CPU plugin (a reduction)", sum_setup, sum_run,
     sum_verify, 100},
    {"mm", "mm of two 1x1 float32 matrices on the CPU plugin", mm_setup, mm_run, mm_verify, 100},
    {"cat", "cat of two 1-element float32 tensors on the CPU plugin", cat_setup, cat_run,
     cat_verify, 100},
};
#define NUM_WORKLOADS (sizeof kWorkloads / sizeof kWorkloads[0])

static int under_valgrind(void) {
#ifdef TESSERA_HAVE_CALLGRIND_H
  return RUNNING_ON_VALGRIND != 0;
#else
  return 0;
#endif
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int usage(void) {
  size_t i;
  fprintf(stderr,
          "usage: tessera_instruction_workloads <workload> <iterations>\n"
          "       tessera_instruction_workloads --list\n"
          "workloads:\n");
  for (i = 0; i < NUM_WORKLOADS; ++i) {
    fprintf(stderr, "  %-12s %s\n", kWorkloads[i].name, kWorkloads[i].what);
  }
  return 2;
}

int main(int argc, char** argv) {
  const workload* w = NULL;
  const tsr_load_report* report = NULL;
  long iterations, i;
  char* end = NULL;
  double start;
  size_t k;

  if (argc == 2 && strcmp(argv[1], "--list") == 0) {
    for (k = 0; k < NUM_WORKLOADS; ++k) printf("%s\n", kWorkloads[k].name);
    return 0;
  }
  if (argc != 3) return usage();
  for (k = 0; k < NUM_WORKLOADS; ++k) {
    if (strcmp(argv[1], kWorkloads[k].name) == 0) w = &kWorkloads[k];
  }
  if (w == NULL) {
    fprintf(stderr, "tessera_instruction_workloads: unknown workload '%s'\n", argv[1]);
    return usage();
  }
  iterations = strtol(argv[2], &end, 10);
  if (*argv[2] == '\0' || *end != '\0' || iterations < 1) {
    fprintf(stderr, "tessera_instruction_workloads: expected iterations >= 1, got '%s'\n", argv[2]);
    return 2;
  }
  current = w->name;
  check(tsr_plugin_load_default(), "tsr_plugin_load_default");
  check(tsr_plugin_load(str(TESSERA_GATE_PLUGIN_PATH), &report), TESSERA_GATE_PLUGIN_PATH);
  check(tsr_stack_create(&stack), "tsr_stack_create");
  w->setup();
  for (i = 0; i < w->warmup; ++i) w->run();

  start = now_ns();
#ifdef TESSERA_HAVE_CALLGRIND_H
  CALLGRIND_ZERO_STATS;
  CALLGRIND_START_INSTRUMENTATION;
#endif
  for (i = 0; i < iterations; ++i) w->run();
#ifdef TESSERA_HAVE_CALLGRIND_H
  CALLGRIND_STOP_INSTRUMENTATION;
#endif
  {
    const double ns = (now_ns() - start) / (double)iterations;
    w->verify();
    /* The driver reads "measured": without it (a build without valgrind/callgrind.h, whose
     * region callgrind cannot see) it refuses the counts. */
    if (under_valgrind()) {
      printf("%s: %ld calls measured\n", w->name, iterations);
    } else {
      printf("%s: %ld calls, %.0f ns per call\n", w->name, iterations, ns);
    }
  }
  if (a != NULL) tsr_tensor_release(a);
  if (b != NULL) tsr_tensor_release(b);
  if (out != NULL) tsr_tensor_release(out);
  if (cond != NULL) tsr_tensor_release(cond);
  tsr_stack_release(stack);
  return 0;
}
