/* Tessera stable C ABI: DLPack import and export (since ABI 1.1).
 *
 * DLPack (github.com/dmlc/dlpack) is the tensor exchange format of NumPy, PyTorch, CuPy, JAX and
 * others. These functions turn a Tessera tensor into a DLPack managed tensor and back without
 * copying: both sides then view the same memory, and a write on one side is seen on the other.
 * Both DLPack forms are supported: DLManagedTensorVersioned (DLPack 1.x, Python capsule name
 * "dltensor_versioned") and the older, unversioned DLManagedTensor (capsule "dltensor").
 *
 * The two structs are only declared here, so that this header compiles as C99 with or without
 * DLPack's; include <dlpack/dlpack.h> before or after it to read their fields (DLPack 1.0 or
 * newer for DLManagedTensorVersioned: Debian 12's libdlpack-dev is 0.6 and has only
 * DLManagedTensor). Tessera itself does not need that header.
 *
 * Ownership (the DLPack spec's rules, docs/embedding_guide.md "DLPack"):
 * - Export: the managed tensor keeps the tensor's memory alive by a reference of its own, so
 *   the caller may release the tsr_tensor at once. Whoever holds the managed tensor last (the
 *   caller, or the consumer it was handed to) calls `managed->deleter(managed)` exactly once.
 *   Tessera's deleter may be called from any thread; libtessera.so must stay loaded until it
 *   has run.
 * - Import: on success the runtime owns the managed tensor and calls its deleter exactly once,
 *   when the last tensor viewing the memory (views included) is released. On error it has not
 *   touched the managed tensor and never will: it stays the caller's, who calls its deleter
 *   (for a DLPack major version other than 1 as well: the spec says the deleter is safe to call
 *   then, and nothing else is).
 *
 * Devices: cpu <-> kDLCPU (device_id 0), cuda:N <-> kDLCUDA N, hip:N <-> kDLROCM N,
 * privateuse1..3 (renamed: "npu", ...) index N <-> kDLExtDev N. kDLCUDAHost and kDLROCMHost
 * (pinned host memory) import as cpu. Meta tensors have no memory and cannot be exported.
 * Importing device memory needs the device: a plugin must have registered its type and index.
 * dtypes: bool <-> kDLBool/8, uint8 <-> kDLUInt/8, int8..int64 <-> kDLInt/8..64,
 * float16/32/64 <-> kDLFloat/16/32/64, bfloat16 <-> kDLBfloat/16; lanes is always 1.
 * Exported tensors have byte_offset 0 and `data` at element 0 (NULL when there are no
 * elements), with strides always filled in; imports accept any byte_offset. */
#ifndef TESSERA_C_DLPACK_H_
#define TESSERA_C_DLPACK_H_

#include "tessera/c/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* DLPack's managed tensors, defined by <dlpack/dlpack.h>. */
struct DLManagedTensor;
struct DLManagedTensorVersioned;

/* tsr_dlpack_options: optional settings of an import or export. NULL, or a zero-initialized
 * struct with struct_size set, means the defaults. */
typedef struct tsr_dlpack_options {
  size_t struct_size;
  /* Import: the device type (TSR_DEVICE_PRIVATEUSE1..3) that a kDLExtDev tensor lands on.
   * 0 (default): the one PrivateUse type that has a registered device; an error when none or
   * more than one has. Export: must be 0. */
  int32_t ext_device_type;
  int32_t reserved; /* must be 0 */
  /* Export of a DLManagedTensorVersioned: DLPack flags the exported tensor carries. Only
   * DLPACK_FLAG_BITMASK_READ_ONLY (bit 0: the consumer must not write) may be set; default 0.
   * Must be 0 for an import and for the unversioned export, which has no flags. */
  uint64_t flags;
} tsr_dlpack_options;

/* tsr_tensor_to_dlpack_versioned exports `tensor` (borrowed) as a DLPack 1.x managed tensor
 * (version 1.1, flags from `options`, default 0). options: borrowed, NULL for the defaults.
 * out: a new managed tensor; its owner calls out->deleter(out) once. */
TSR_API tsr_error* tsr_tensor_to_dlpack_versioned(tsr_tensor* tensor,
                                                  const tsr_dlpack_options* options,
                                                  struct DLManagedTensorVersioned** out);

/* tsr_tensor_to_dlpack: the same as an unversioned DLManagedTensor, for consumers that predate
 * DLPack 1.0 (Debian 12's NumPy 1.24 and PyTorch 1.13 among them). Exported bool tensors use
 * kDLBool (DLPack >= 0.8). */
TSR_API tsr_error* tsr_tensor_to_dlpack(tsr_tensor* tensor, const tsr_dlpack_options* options,
                                        struct DLManagedTensor** out);

/* tsr_tensor_from_dlpack_versioned views the memory of `managed` as a tensor, without copying.
 * managed: on success owned by the runtime (see Ownership above), on error still the caller's.
 * options: borrowed, NULL for the defaults. out: a new reference. Refused, with an error naming
 * what was expected and what was found: a major version other than 1, the READ_ONLY flag
 * (Tessera has no read-only tensors: copy on the producer's side first), unknown flags, lanes
 * other than 1, a dtype Tessera has not (complex, float8, ...), a negative ndim, a NULL shape
 * or negative sizes, negative strides, NULL data for a tensor with elements, element 0 not
 * aligned to the element size, sizes whose byte count overflows, and a device Tessera cannot
 * reach (an error naming the device when no plugin provides it). Strides NULL mean compact
 * row-major. The IS_COPIED flag is accepted (the memory is then the runtime's alone). */
TSR_API tsr_error* tsr_tensor_from_dlpack_versioned(struct DLManagedTensorVersioned* managed,
                                                    const tsr_dlpack_options* options,
                                                    tsr_tensor** out);

/* tsr_tensor_from_dlpack: the same for an unversioned DLManagedTensor (no version, no flags). */
TSR_API tsr_error* tsr_tensor_from_dlpack(struct DLManagedTensor* managed,
                                          const tsr_dlpack_options* options, tsr_tensor** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_DLPACK_H_ */
