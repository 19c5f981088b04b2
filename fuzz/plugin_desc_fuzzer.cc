// Fuzz target: the plugin loader's handshake with a plugin whose descriptor, register_fn and
// tables come from the fuzz input (fuzz_plugin.c): struct sizes, versions, device types,
// strings, NULL function pointers, errors with any code, kernels, op definitions, devices and
// fallbacks registered (or refused) in any order.
//
// Checked (besides no crash and no sanitizer report): the load report agrees with the result
// (loaded exactly when tsr_plugin_load returns NULL, with the error's code), formats into
// buffers of any size, and a plugin that loaded unloads by its name. Descriptor and table
// strings whose size lies in a way the runtime can see (2^40, SIZE_MAX) are refused with an
// error and a load report, and NULL with a length is the empty string (docs/reliability.md).
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tessera/c/tessera.h"

extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:intercept_tls_get_addr=0";
}

namespace {

const uint8_t* g_data = nullptr;
size_t g_size = 0;

[[noreturn]] void Fail(const char* what, const tsr_load_report* report) {
  char text[2048];
  tsr_load_report_format(report, text, sizeof text);
  std::fprintf(stderr, "plugin_desc: %s\n%s\n", what, text);
  std::abort();
}

}  // namespace

// The fuzz plugin's tsr_plugin_init reads the current input through this (exported from the
// executable: ENABLE_EXPORTS in fuzz/CMakeLists.txt).
extern "C" __attribute__((visibility("default"))) void tessera_fuzz_plugin_input(
    const uint8_t** data, size_t* size) {
  *data = g_data;
  *size = g_size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Held open for the process: the loader closes the plugin after every refusal, and mapping
  // an instrumented object again each run costs time and registers its coverage again.
  static void* const kept = dlopen(TESSERA_FUZZ_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  if (kept == nullptr) {
    std::fprintf(stderr, "plugin_desc: cannot open %s: %s\n", TESSERA_FUZZ_PLUGIN_PATH, dlerror());
    std::abort();
  }
  static const auto release_kept = reinterpret_cast<void (*)()>(
      kept ? dlsym(kept, "tessera_fuzz_plugin_release_kept") : nullptr);
  if (release_kept == nullptr) {
    std::fprintf(stderr, "plugin_desc: %s lacks tessera_fuzz_plugin_release_kept\n",
                 TESSERA_FUZZ_PLUGIN_PATH);
    std::abort();
  }
  if (size > 1024) return 0;
  g_data = data;
  g_size = size;
  const char* path = TESSERA_FUZZ_PLUGIN_PATH;
  const tsr_load_report* report = nullptr;
  tsr_error* error = tsr_plugin_load(tsr_string{path, std::strlen(path)}, &report);
  if (report == nullptr) {
    std::fprintf(stderr, "plugin_desc: tsr_plugin_load left no report\n");
    std::abort();
  }
  if (report->loaded != (error == nullptr))
    Fail("the report's 'loaded' contradicts the result", report);
  if (report->code != static_cast<int32_t>(tsr_error_code(error))) {
    Fail("the report's code is not the error's", report);
  }
  if (error != nullptr && tsr_error_code(error) == TSR_OK) Fail("an error with code OK", report);
  char small[7];
  const size_t length = tsr_load_report_format(report, small, sizeof small);
  std::string whole(length + 1, '\0');
  if (tsr_load_report_format(report, whole.data(), whole.size()) != length) {
    Fail("tsr_load_report_format's length depends on the buffer", report);
  }
  if (error == nullptr) {
    const std::string name(report->plugin_name.data, report->plugin_name.size);
    tsr_error* unloaded = tsr_plugin_unload(tsr_string{name.data(), name.size()});
    if (unloaded != nullptr) Fail("a loaded plugin does not unload by its name", report);
  }
  tsr_error_release(error);
  release_kept();
  g_data = nullptr;
  g_size = 0;
  return 0;
}
