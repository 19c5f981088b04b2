// ThreadPool and ParallelFor: the runtime's intra-op parallelism, shared with plugins through
// the C ABI (tsr_parallel_for) so that every backend uses the same threads.
//
// ParallelFor(begin, end, grain, fn) splits [begin, end) into chunks of at least `grain`
// iterations and runs fn(chunk_begin, chunk_end) on the pool, the calling thread included.
// Ranges of at most `grain` iterations run inline on the caller (small tensors stay on one
// thread), and so does a ParallelFor called from inside a pool task (no nested fan-out, no
// deadlock). Chunk boundaries depend only on (begin, end, grain, thread count), so a kernel
// that reduces per chunk and combines in chunk order is deterministic for a given count.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace tessera {

// NumThreads: the pool's size: TESSERA_NUM_THREADS when set (>= 1), else the number of cores.
// A value that is not a whole number >= 1 is logged and the cores are used; one above
// max(kMaxThreads, cores) is logged and capped there.
int NumThreads();

// SetNumThreads: the count ParallelFor uses from now on, in [1, max(kMaxThreads, cores)]
// (INVALID_ARGUMENT otherwise, naming the range). The pool starts the workers a larger count
// needs at the next ParallelFor; a smaller one leaves the extra workers asleep. A ParallelFor
// already running keeps the count it started with.
absl::Status SetNumThreads(int threads);

// kMaxThreads: the most threads a pool may have where the machine has fewer cores: more only
// wait on each other (and a value such as 100000 asks the system for more than it gives).
inline constexpr int kMaxThreads = 1024;

namespace internal {
// MaxThreads: max(kMaxThreads, cores).
int MaxThreads(int cores);
// ParseNumThreads: NumThreads' reading of TESSERA_NUM_THREADS (`value`, NULL when unset) on a
// machine of `cores`; *warning says what was wrong with the value, empty when nothing was.
int ParseNumThreads(const char* value, int cores, std::string* warning);
}  // namespace internal

// InParallelTask: whether this thread is running a ParallelFor chunk (a pool worker always is).
bool InParallelTask();

// ParallelFor returns the first error a chunk returned (the others still run to completion).
// A grain below 1 counts as 1; a range of more than INT64_MAX iterations is an error.
absl::Status ParallelFor(int64_t begin, int64_t end, int64_t grain,
                         const std::function<absl::Status(int64_t, int64_t)>& fn);

}  // namespace tessera
