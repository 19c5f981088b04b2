/* default_plugins_test EXPECTED: what tsr_plugin_load_default (and the discovery tsr_op_find
 * starts) loaded under the environment ctest gives it, TESSERA_NO_DEFAULT_PLUGINS and
 * TESSERA_PLUGIN_PATH (tests/CMakeLists.txt). EXPECTED is the comma-separated device names of
 * the plugins that must have loaded, in load order, or "none"; with "none", add.Tensor on CPU
 * tensors must also be refused (no CPU backend), and a plugin loaded by path must still load.
 *
 * With --api first, it switches discovery off with tsr_plugin_discovery_disable (ABI 1.1) before
 * anything else, instead of through the environment; without it, it checks that the call is
 * refused once discovery has run.
 *
 *   default_plugins_test [--api] none [PLUGIN.so]
 *   default_plugins_test npu,cpu */
#include <stdio.h>
#include <string.h>

#include "tessera/c/tessera.h"

static tsr_string str(const char* s) {
  tsr_string t;
  t.data = s;
  t.size = strlen(s);
  return t;
}

/* The device names of the loaded plugins, comma-separated, in load order ("none" if none). */
static void loaded_devices(char* buf, size_t size) {
  const tsr_load_report* const* reports = NULL;
  size_t count = 0, i, used = 0;
  tsr_load_reports(&reports, &count);
  buf[0] = '\0';
  for (i = 0; i < count; ++i) {
    char line[1024];
    tsr_load_report_format(reports[i], line, sizeof line);
    fputs(line, stdout);
    if (!reports[i]->loaded) continue;
    used += (size_t)snprintf(buf + used, size - used, "%s%.*s", used ? "," : "",
                             (int)reports[i]->device_name.size, reports[i]->device_name.data);
    if (used >= size) used = size - 1;
  }
  if (used == 0) snprintf(buf, size, "none");
}

int main(int argc, char** argv) {
  const tsr_op* add = NULL;
  char found[512];
  tsr_error* err;
  int api = 0;
  if (argc > 1 && strcmp(argv[1], "--api") == 0) {
    api = 1;
    --argc;
    ++argv;
  }
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: default_plugins_test [--api] EXPECTED_DEVICES|none [PLUGIN.so]\n");
    return 2;
  }
  if (api) {
    /* Twice: the second call is a no-op. */
    if ((err = tsr_plugin_discovery_disable()) != NULL ||
        (err = tsr_plugin_discovery_disable()) != NULL) {
      fprintf(stderr, "FAIL: tsr_plugin_discovery_disable: %.*s\n",
              (int)tsr_error_message(err).size, tsr_error_message(err).data);
      return 1;
    }
  }
  /* Both ways into discovery: the explicit call, and the first tsr_op_find. */
  err = tsr_op_find(str("add.Tensor"), &add);
  if (err == NULL) err = tsr_plugin_load_default();
  if (err != NULL) {
    fprintf(stderr, "FAIL: %.*s\n", (int)tsr_error_message(err).size, tsr_error_message(err).data);
    return 1;
  }
  loaded_devices(found, sizeof found);
  if (!api) {
    /* Discovery has run: switching it off now is refused, and says why. */
    err = tsr_plugin_discovery_disable();
    if (err == NULL || tsr_error_code(err) != TSR_FAILED_PRECONDITION) {
      fprintf(stderr, "FAIL: tsr_plugin_discovery_disable after discovery was not refused\n");
      return 1;
    }
    tsr_error_release(err);
  }
  if (strcmp(found, argv[1]) != 0) {
    fprintf(stderr, "FAIL: default discovery loaded the plugins of devices [%s], expected [%s]\n",
            found, argv[1]);
    return 1;
  }
  if (strcmp(argv[1], "none") == 0) {
    /* No CPU backend: add.Tensor has no CPU kernel. */
    const int64_t size = 3;
    const tsr_device cpu = {TSR_DEVICE_CPU, 0};
    tsr_tensor* t = NULL;
    tsr_stack* stack = NULL;
    int ok = tsr_tensor_empty(&size, 1, TSR_DTYPE_FLOAT32, cpu, &t) == NULL &&
             tsr_stack_create(&stack) == NULL && tsr_stack_push_tensor(stack, t) == NULL &&
             tsr_stack_push_tensor(stack, t) == NULL;
    if (!ok) {
      fprintf(stderr, "FAIL: could not set up the call\n");
      return 1;
    }
    err = tsr_op_call(add, stack);
    if (err == NULL) {
      fprintf(stderr, "FAIL: add.Tensor ran on the CPU without the CPU backend\n");
      return 1;
    }
    printf("add.Tensor without plugins: %.*s\n", (int)tsr_error_message(err).size,
           tsr_error_message(err).data);
    tsr_error_release(err);
    tsr_stack_release(stack);
    tsr_tensor_release(t);
    /* Loading by path is unaffected. */
    if (argc == 3) {
      err = tsr_plugin_load(str(argv[2]), NULL);
      if (err != NULL) {
        fprintf(stderr, "FAIL: %s did not load by path: %.*s\n", argv[2],
                (int)tsr_error_message(err).size, tsr_error_message(err).data);
        return 1;
      }
      printf("loaded %s by path\n", argv[2]);
    }
  }
  printf("ok: default discovery loaded [%s]\n", found);
  return 0;
}
