/* Tessera stable C ABI: errors. */
#ifndef TESSERA_C_ERROR_H_
#define TESSERA_C_ERROR_H_

#include "tessera/c/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tsr_error_create makes an error (for plugins to return from kernels and callbacks).
 * message: borrowed (copied). Returns a new error: the receiver releases it. A code of
 * TSR_OK or outside the known codes is recorded as TSR_UNKNOWN. */
TSR_API tsr_error* tsr_error_create(tsr_code code, tsr_string message);

/* tsr_error_code: the error's code; TSR_OK for NULL. error: borrowed. */
TSR_API tsr_code tsr_error_code(const tsr_error* error);

/* tsr_error_message: the error's message, valid until the error is released (empty for
 * NULL). error: borrowed. */
TSR_API tsr_string tsr_error_message(const tsr_error* error);

/* tsr_error_release frees the error. NULL is a no-op. */
TSR_API void tsr_error_release(tsr_error* error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_ERROR_H_ */
