// Regression check for the sanitizer test environment (cmake/TesseraHelpers.cmake,
// tessera_sanitizer_test_environment): dlopens a module with thread_local data, touches it
// from 64 threads and exits while they are still alive, as the conformance runner does with
// oneDNN's OpenMP workers. Under gcc 12's sanitizer runtime with its __tls_get_addr
// interceptor on, LeakSanitizer's exit-time scan of those threads dies with "Tracer caught
// signal 11" on every run; the environment turns the interceptor off, so this exits 0.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s path/to/tls_module.so\n", argv[0]);
    return 2;
  }
  void* module = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    std::fprintf(stderr, "dlopen failed: %s\n", dlerror());
    return 2;
  }
  using TouchFn = char* (*)();
  auto touch = reinterpret_cast<TouchFn>(dlsym(module, "tls_module_touch"));
  if (touch == nullptr) {
    std::fprintf(stderr, "tls_module_touch not found in %s\n", argv[1]);
    return 2;
  }
  constexpr int kThreads = 64;
  std::atomic<int> touched{0};
  for (int i = 0; i < kThreads; ++i) {
    std::thread([&touched, touch] {
      touch();
      touched.fetch_add(1);
      for (;;) pause();  // alive at exit, its TLS still allocated
    }).detach();
  }
  while (touched.load() < kThreads) std::this_thread::yield();
  std::printf("%d threads hold dynamic TLS of %s; exiting with them alive\n", kThreads, argv[1]);
  std::fflush(stdout);
  std::exit(0);  // LeakSanitizer's check runs here
}
