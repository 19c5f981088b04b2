/* Tessera stable C ABI: the runtime's thread pool, shared with plugins. */
#ifndef TESSERA_C_PARALLEL_H_
#define TESSERA_C_PARALLEL_H_

#include "tessera/c/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tsr_parallel_fn processes [begin, end); return NULL or a new error. */
typedef tsr_error* (*tsr_parallel_fn)(void* context, int64_t begin, int64_t end);

/* tsr_parallel_for splits [begin, end) into chunks of at least `grain` iterations and runs fn
 * on them on the runtime's threads, the caller's included. A range of at most `grain`
 * iterations, or a call from inside another chunk, runs inline on the calling thread. Chunk
 * boundaries depend only on the arguments and tsr_num_threads(), so per-chunk reductions
 * combined in chunk order are deterministic. A grain below 1 counts as 1; a range of more
 * than INT64_MAX iterations (end - begin overflows) is an INVALID_ARGUMENT error and runs
 * nothing. Returns the first error a chunk returned (the other errors are released). */
TSR_API tsr_error* tsr_parallel_for(int64_t begin, int64_t end, int64_t grain, tsr_parallel_fn fn,
                                    void* context);

/* tsr_num_threads: the pool's size (TESSERA_NUM_THREADS, else the number of cores, until
 * tsr_set_num_threads). */
TSR_API int32_t tsr_num_threads(void);

/* tsr_set_num_threads (since 1.2) sets the thread count every backend's parallel loops use from
 * now on (tsr_parallel_for, and the CPU backend's oneDNN calls), in [1, max(1024, cores)];
 * INVALID_ARGUMENT otherwise. Loops already running keep the count they started with. It is
 * Tessera's alone: it does not change, and is not changed by, another library's setting in the
 * same process (libtorch's torch::set_num_threads, OpenMP's omp_set_num_threads). */
TSR_API tsr_error* tsr_set_num_threads(int32_t threads);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_PARALLEL_H_ */
