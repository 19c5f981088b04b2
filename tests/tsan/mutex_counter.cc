// The TSan build's check of its own absl::Mutex annotations (absl_mutex_annotations.cc): two
// threads increment a counter. With TESSERA_TSAN_GUARDED=1 every increment holds an
// absl::Mutex, and TSan must stay silent (without the annotations it reports a race here,
// since Debian's Abseil is not instrumented); with 0 the main thread's increments skip the
// lock, and TSan must still report that race (the annotations hide nothing).
#include <thread>

#include "absl/synchronization/mutex.h"

namespace {
absl::Mutex mu;
long counter = 0;
}  // namespace

int main() {
  std::thread worker([] {
    for (int i = 0; i < 10000; ++i) {
      absl::MutexLock lock(&mu);
      ++counter;
    }
  });
  for (int i = 0; i < 10000; ++i) {
    if (TESSERA_TSAN_GUARDED) {
      absl::MutexLock lock(&mu);
      ++counter;
    } else {
      ++counter;
    }
  }
  worker.join();
  return 0;
}
