/* c_embedding: a complete C99 application that embeds Tessera through the C ABI
 * (tessera/c/tessera.h), the steps of docs/embedding_guide.md: load the default plugins (the
 * CPU backend), and optionally one more by path; make tensors; find an op once; call it with
 * its arguments pushed on a stack in schema order; read the returns back.
 *
 *   c_embedding                  # add.Tensor on the CPU backend
 *   c_embedding ./libcdemo.so    # also cdemo::twice from the plain-C plugin (c_plugin.c)
 *
 * Installed as share/tessera/examples/c/c_embedding.c. Build it with the installed CMake package
 * (CMakeLists.txt beside it: Tessera::runtime) or with pkg-config:
 *
 *   cc -std=c99 $(pkg-config --cflags tessera) c_embedding.c $(pkg-config --libs tessera) \
 *      -Wl,-rpath,$(pkg-config --variable=libdir tessera) -o c_embedding */
#include <stdio.h>
#include <string.h>

#include "tessera/c/tessera.h"

static tsr_string str(const char* s) {
  tsr_string t;
  t.data = s;
  t.size = strlen(s);
  return t;
}

/* Prints and frees err; returns 1 when there was one. Messages are pointer + length, not
 * NUL-terminated. */
static int failed(const char* what, tsr_error* err) {
  tsr_string message;
  if (err == NULL) return 0;
  message = tsr_error_message(err);
  fprintf(stderr, "c_embedding: %s: %.*s\n", what, (int)message.size, message.data);
  tsr_error_release(err);
  return 1;
}

/* Calls the op `name` with one or two tensor arguments (the rest left at their defaults) and
 * returns its first return in *out (a new reference). */
static int call(const char* name, tsr_tensor* a, tsr_tensor* b, tsr_tensor** out) {
  const tsr_op* op = NULL;
  tsr_stack* stack = NULL;
  int bad;
  if (failed(name, tsr_op_find(str(name), &op))) return 1; /* look ops up once in real code */
  if (failed("tsr_stack_create", tsr_stack_create(&stack))) return 1;
  bad = failed(name, tsr_stack_push_tensor(stack, a)) ||
        (b != NULL && failed(name, tsr_stack_push_tensor(stack, b))) ||
        failed(name, tsr_op_call(op, stack)) || failed(name, tsr_stack_get_tensor(stack, 0, out));
  if (!bad) tsr_tensor_retain(*out); /* stack_get_tensor lends it; keep it past the stack */
  tsr_stack_release(stack);
  return bad;
}

int main(int argc, char** argv) {
  const int64_t sizes[2] = {2, 3};
  const float values[6] = {1, 2, 3, 4, 5, 6};
  const tsr_device cpu = {TSR_DEVICE_CPU, 0};
  const tsr_load_report* const* reports = NULL;
  size_t count = 0, i;
  tsr_tensor* a = NULL;
  tsr_tensor* sum = NULL;
  float out[6];
  char text[1024];

  if (argc > 2) {
    fprintf(stderr, "usage: c_embedding [PLUGIN.so]\n");
    return 2;
  }
  /* TESSERA_PLUGIN_PATH's plugins and the installation's lib/tessera/plugins (the CPU
   * backend); none with TESSERA_NO_DEFAULT_PLUGINS=1. */
  if (failed("tsr_plugin_load_default", tsr_plugin_load_default())) return 1;
  if (argc == 2 && failed(argv[1], tsr_plugin_load(str(argv[1]), NULL))) return 1;
  tsr_load_reports(&reports, &count);
  for (i = 0; i < count; ++i) {
    tsr_load_report_format(reports[i], text, sizeof text);
    fputs(text, stdout);
  }

  if (failed("tsr_tensor_empty", tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, cpu, &a)) ||
      failed("tsr_tensor_copy_from_host", tsr_tensor_copy_from_host(a, values, sizeof values))) {
    return 1;
  }
  /* add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor: alpha left out. */
  if (call("add.Tensor", a, a, &sum)) return 1;
  if (failed("tsr_tensor_copy_to_host", tsr_tensor_copy_to_host(sum, out, sizeof out))) return 1;
  printf("a + a = [%g, %g, %g, %g, %g, %g]\n", out[0], out[1], out[2], out[3], out[4], out[5]);
  for (i = 0; i < 6; ++i) {
    if (out[i] != 2 * values[i]) {
      fprintf(stderr, "c_embedding: add.Tensor: wrong value at %lu\n", (unsigned long)i);
      return 1;
    }
  }
  tsr_tensor_release(sum);

  if (argc == 2) {
    tsr_tensor* twice = NULL;
    if (call("cdemo::twice", a, NULL, &twice)) return 1;
    if (failed("tsr_tensor_copy_to_host", tsr_tensor_copy_to_host(twice, out, sizeof out))) {
      return 1;
    }
    printf("cdemo::twice(a) = [%g, %g, %g, %g, %g, %g]\n", out[0], out[1], out[2], out[3], out[4],
           out[5]);
    if (memcmp(out, (const float[6]){2, 4, 6, 8, 10, 12}, sizeof out) != 0) {
      fprintf(stderr, "c_embedding: cdemo::twice: wrong values\n");
      return 1;
    }
    tsr_tensor_release(twice);
  }
  tsr_tensor_release(a);
  printf("c_embedding: ok\n");
  return 0;
}
