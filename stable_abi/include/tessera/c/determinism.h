/* Tessera stable C ABI: deterministic algorithms (since 1.2).
 *
 * A kernel whose results may differ between two identical calls (a GPU's atomic adds, which
 * accumulate in scheduling order) says so when it is registered: tsr_kernel_desc's
 * `nondeterministic` holds the reason. The switch here is PyTorch's
 * torch.use_deterministic_algorithms: with it on, such a kernel does not run; the call takes the
 * op's composite or the device type's fallback (the CPU fallback computes deterministically),
 * and where neither exists it fails with FAILED_PRECONDITION naming the kernel and its reason.
 * Note [Deterministic algorithms] in dispatcher/deterministic.h has the details. */
#ifndef TESSERA_C_DETERMINISM_H_
#define TESSERA_C_DETERMINISM_H_

#include "tessera/c/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tsr_deterministic_mode {
  TSR_DETERMINISTIC_OFF = 0,  /* every kernel runs (the default) */
  TSR_DETERMINISTIC_ON = 1,   /* nondeterministic kernels do not run (above) */
  TSR_DETERMINISTIC_WARN = 2, /* they run, and the first call of each op logs a warning */
  TSR_DETERMINISTIC_MODE_FORCE_INT32 = 0x7fffffff
} tsr_deterministic_mode;

/* tsr_set_deterministic_algorithms sets the mode for the whole process, every thread, from the
 * next op call on. The environment variable TESSERA_DETERMINISTIC (0, 1 or warn) gives the mode
 * at start. INVALID_ARGUMENT for a value outside tsr_deterministic_mode. */
TSR_API tsr_error* tsr_set_deterministic_algorithms(int32_t mode);

/* tsr_deterministic_algorithms: the mode now (a tsr_deterministic_mode). A kernel that has a
 * deterministic path of its own may read it and take that path (and then registers as
 * deterministic). */
TSR_API int32_t tsr_deterministic_algorithms(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_DETERMINISM_H_ */
