#include "tessera/c/parallel.h"

#include "absl/strings/str_format.h"
#include "core/thread_pool.h"
#include "runtime/handles.h"

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

extern "C" {

tsr_error* tsr_parallel_for(int64_t begin, int64_t end, int64_t grain, tsr_parallel_fn fn,
                            void* context) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (fn == nullptr) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       "tsr_parallel_for: expected a function, got NULL");
    }
    return ToError(ParallelFor(begin, end, grain, [fn, context](int64_t b, int64_t e) {
      return StatusFrom(fn(context, b, e));
    }));
  });
}

int32_t tsr_num_threads(void) { return NumThreads(); }

tsr_error* tsr_set_num_threads(int32_t threads) {
  return Guard(__func__, [&]() -> tsr_error* {
    absl::Status s = SetNumThreads(threads);
    if (!s.ok()) {
      return MakeError(s.code(), absl::StrFormat("tsr_set_num_threads: %s", s.message()));
    }
    return nullptr;
  });
}

}  // extern "C"
