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
 * copying. strides: borrowed, NULL for contiguous. The view must fit in `nbytes`, and `data`
 * must be aligned to the dtype's element size (tsr_dtype_size; INVALID_ARGUMENT). When the
 * last reference goes away the runtime calls deleter(data, deleter_context) (NULL deleter: the
 * memory is borrowed and must outlive every reference). out: a new reference. On error the
 * deleter is not called: the memory stays the caller's. */
TSR_API tsr_error* tsr_tensor_from_host_memory(void* data, size_t nbytes, const int64_t* sizes,
                                               const int64_t* strides, size_t ndim, tsr_dtype dtype,
                                               tsr_deleter_fn deleter, void* deleter_context,
                                               tsr_tensor** out);

/* tsr_host_memory_desc describes host memory for tsr_tensor_from_host_memory_desc. Zero-fill
 * it, set struct_size to sizeof(tsr_host_memory_desc) and fill the fields; a zero field has the
 * meaning noted beside it. The runtime reads no field beyond struct_size (a field a later minor
 * adds counts as zero when the caller's struct ends before it); a struct_size smaller than the
 * fields below is INVALID_ARGUMENT. Since 1.1. */
typedef struct tsr_host_memory_desc {
  size_t struct_size;
  void* data;             /* the start of the memory: the tensor's storage. NULL when nbytes is 0 */
  size_t nbytes;          /* bytes at `data` */
  const int64_t* sizes;   /* borrowed, ndim entries (NULL when ndim is 0) */
  const int64_t* strides; /* borrowed, ndim entries, in elements, non-negative; NULL: contiguous */
  size_t ndim;
  int32_t dtype; /* a tsr_dtype */
  int32_t reserved;
  int64_t storage_offset; /* elements from `data` to the tensor's element 0; 0: `data` itself */
  tsr_deleter_fn deleter; /* as in tsr_tensor_from_host_memory; NULL: the memory is borrowed */
  void* deleter_context;  /* passed to the deleter */
} tsr_host_memory_desc;

/* tsr_tensor_from_host_memory_desc is tsr_tensor_from_host_memory with a storage offset: the
 * storage is the whole of [data, data + nbytes), and the tensor views it from element
 * `storage_offset` on (tsr_tensor_storage_offset reports it; views taken later may reach the
 * memory before it). The view must fit: storage_offset plus the elements the sizes and strides
 * reach, times the element size, at most nbytes (INVALID_ARGUMENT names both). The deleter rule is
 * tsr_tensor_from_host_memory's: called once when the last reference goes, never on error.
 * desc: borrowed. out: a new reference. Since 1.1. */
TSR_API tsr_error* tsr_tensor_from_host_memory_desc(const tsr_host_memory_desc* desc,
                                                    tsr_tensor** out);

/* tsr_tensor_as_strided returns a view of `tensor`'s storage, PyTorch's as_strided: the given
 * sizes, strides (in elements) and storage offset (in elements from the start of the storage,
 * not from the tensor's element 0: pass tsr_tensor_storage_offset(tensor) to keep the
 * tensor's). No memory is copied or touched, on any device; the view shares the storage and
 * keeps it alive, and writes through either are seen by both. Refused: negative sizes, strides
 * or offset (INVALID_ARGUMENT), and a view that reaches past the end of the storage
 * (OUT_OF_RANGE, naming the elements needed and the elements the storage holds).
 * tensor: borrowed. sizes, strides: borrowed, ndim entries each (NULL when ndim is 0).
 * out: a new reference. Since 1.1. */
TSR_API tsr_error* tsr_tensor_as_strided(tsr_tensor* tensor, const int64_t* sizes,
                                         const int64_t* strides, size_t ndim,
                                         int64_t storage_offset, tsr_tensor** out);

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
 * noted. Arrays returned are borrowed and valid while the tensor is alive and keeps its shape:
 * an op that gives it another (an out= resized, resize_) may move them. */
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
/* tsr_tensor_immutable_id (since 1.2): nonzero when the tensor is immutable (TSR_VIEW_IMMUTABLE in
 * kernel_call.h: its elements do not change while it lives): an id unique in the process, never
 * reused, shared by the views view ops make of it. 0 for every other tensor and for NULL. */
TSR_API uint64_t tsr_tensor_immutable_id(const tsr_tensor* tensor);

/* tsr_dtype_size: bytes per element; 0 for an invalid dtype. */
TSR_API size_t tsr_dtype_size(tsr_dtype dtype);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_TENSOR_H_ */
