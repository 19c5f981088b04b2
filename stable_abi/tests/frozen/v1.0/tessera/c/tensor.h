/* Tessera stable C ABI: tensors.
 *
 * A tensor is a strided view (sizes, strides in elements, storage offset) of reference-counted
 * memory on one device. Handles are reference-counted: every function that returns a
 * tsr_tensor* returns a new reference that the caller releases with tsr_tensor_release. */
#ifndef TESSERA_C_TENSOR_H_
#define TESSERA_C_TENSOR_H_

#include "tessera/c/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tsr_deleter_fn frees memory handed to the runtime by tsr_tensor_from_host_memory. */
typedef void (*tsr_deleter_fn)(void* data, void* context);

/* tsr_tensor_empty allocates a contiguous tensor of uninitialized elements on `device`
 * through the device's allocator. sizes: borrowed, `ndim` entries (NULL when ndim is 0).
 * out: a new reference. */
TSR_API tsr_error* tsr_tensor_empty(const int64_t* sizes, size_t ndim, tsr_dtype dtype,
                                    tsr_device device, tsr_tensor** out);

/* tsr_tensor_empty_strided allocates just enough memory for the given non-negative strides.
 * sizes, strides: borrowed, `ndim` entries each. out: a new reference. */
TSR_API tsr_error* tsr_tensor_empty_strided(const int64_t* sizes, const int64_t* strides,
                                            size_t ndim, tsr_dtype dtype, tsr_device device,
                                            tsr_tensor** out);

/* tsr_tensor_from_host_memory wraps `nbytes` of host memory at `data` as a CPU tensor without
 * copying. strides: borrowed, NULL for contiguous. The view must fit in `nbytes`. When the
 * last reference goes away the runtime calls deleter(data, deleter_context) (NULL deleter: the
 * memory is borrowed and must outlive every reference). out: a new reference. On error the
 * deleter is not called: the memory stays the caller's. */
TSR_API tsr_error* tsr_tensor_from_host_memory(void* data, size_t nbytes, const int64_t* sizes,
                                               const int64_t* strides, size_t ndim, tsr_dtype dtype,
                                               tsr_deleter_fn deleter, void* deleter_context,
                                               tsr_tensor** out);

/* tsr_tensor_copy_from_host writes the tensor's elements, in row-major logical order, from
 * `nbytes` bytes at `src` (borrowed); nbytes must equal numel * element size. Strided and
 * non-CPU destinations are supported (the latter through the device's copy functions). */
TSR_API tsr_error* tsr_tensor_copy_from_host(tsr_tensor* dst, const void* src, size_t nbytes);

/* tsr_tensor_copy_to_host reads the tensor's elements, in row-major logical order, into
 * `nbytes` bytes at `dst` (borrowed); nbytes must equal numel * element size. */
TSR_API tsr_error* tsr_tensor_copy_to_host(const tsr_tensor* src, void* dst, size_t nbytes);

/* Reference counting. tensor: borrowed. tsr_tensor_release(NULL) is a no-op. */
TSR_API void tsr_tensor_retain(tsr_tensor* tensor);
TSR_API void tsr_tensor_release(tsr_tensor* tensor);

/* Metadata. tensor: borrowed; NULL gives 0, NULL or TSR_DTYPE_FLOAT32/cpu:0 defaults as
 * noted. Arrays returned are borrowed and valid while the tensor is alive. */
TSR_API int64_t tsr_tensor_dim(const tsr_tensor* tensor);
TSR_API const int64_t* tsr_tensor_sizes(const tsr_tensor* tensor);   /* dim entries */
TSR_API const int64_t* tsr_tensor_strides(const tsr_tensor* tensor); /* dim entries */
TSR_API int64_t tsr_tensor_storage_offset(const tsr_tensor* tensor);
TSR_API int64_t tsr_tensor_numel(const tsr_tensor* tensor);
TSR_API tsr_dtype tsr_tensor_dtype(const tsr_tensor* tensor);
TSR_API tsr_device tsr_tensor_device(const tsr_tensor* tensor);
TSR_API int32_t tsr_tensor_is_contiguous(const tsr_tensor* tensor);
/* tsr_tensor_data_ptr: the address of element 0; on a non-CPU device it is a device address
 * that only the device's own functions may dereference. NULL for meta and NULL tensors. */
TSR_API void* tsr_tensor_data_ptr(const tsr_tensor* tensor);

/* tsr_dtype_size: bytes per element; 0 for an invalid dtype. */
TSR_API size_t tsr_dtype_size(tsr_dtype dtype);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_TENSOR_H_ */
