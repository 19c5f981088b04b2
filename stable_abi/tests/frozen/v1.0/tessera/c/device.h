/* Tessera stable C ABI: devices.
 *
 * A backend registers its device type with an interface table: device count, memory, copies
 * and synchronization, plus optional streams and events. The runtime never dereferences
 * device memory; every access goes through these functions. */
#ifndef TESSERA_C_DEVICE_H_
#define TESSERA_C_DEVICE_H_

#include "tessera/c/common.h"
#include "tessera/c/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tsr_device_interface: zero-initialize, set struct_size to sizeof(tsr_device_interface) and
 * fill the slots. `context` is passed back to every function. Required slots must be
 * non-NULL; optional ones may be NULL. */
typedef struct tsr_device_interface {
  size_t struct_size;
  int32_t device_type; /* a tsr_device_type; the registering plugin's own */
  int32_t reserved;
  void* context;

  /* since 1.0, required */
  tsr_error* (*device_count)(void* context, int32_t* out);
  /* allocate: at least nbytes (nbytes may be 0) on device `index`. */
  tsr_error* (*allocate)(void* context, int32_t index, size_t nbytes, void** out);
  void (*free)(void* context, int32_t index, void* ptr);
  tsr_error* (*copy_host_to_device)(void* context, int32_t index, void* dst, const void* src,
                                    size_t nbytes);
  tsr_error* (*copy_device_to_host)(void* context, int32_t index, void* dst, const void* src,
                                    size_t nbytes);
  tsr_error* (*copy_device_to_device)(void* context, int32_t dst_index, void* dst,
                                      int32_t src_index, const void* src, size_t nbytes);
  tsr_error* (*synchronize)(void* context, int32_t index);

  /* since 1.0, optional (NULL: the device has no streams/events; work is synchronous) */
  tsr_error* (*stream_create)(void* context, int32_t index, void** out);
  void (*stream_destroy)(void* context, int32_t index, void* stream);
  tsr_error* (*stream_synchronize)(void* context, int32_t index, void* stream);
  tsr_error* (*event_create)(void* context, int32_t index, void** out);
  void (*event_destroy)(void* context, int32_t index, void* event);
  tsr_error* (*event_record)(void* context, int32_t index, void* event, void* stream);
  tsr_error* (*event_synchronize)(void* context, int32_t index, void* event);
} tsr_device_interface;

/* tsr_device_register makes `iface` (copied) the device type's implementation: tensors on it
 * are allocated, freed and copied through it. out: a new registration (NULL: keep). */
TSR_API tsr_error* tsr_device_register(const tsr_device_interface* iface, tsr_registration** out);

/* tsr_device_count: how many devices of `device_type` there are (0 when none registered). */
TSR_API tsr_error* tsr_device_count(int32_t device_type, int32_t* out);

/* tsr_device_synchronize waits for all work on `device`. */
TSR_API tsr_error* tsr_device_synchronize(tsr_device device);

/* tsr_device_rename gives PrivateUse1..3 a backend name, once (plugins do this through their
 * descriptor's device_name). name: borrowed. */
TSR_API tsr_error* tsr_device_rename(int32_t device_type, tsr_string name);

/* tsr_device_parse reads "npu:1", "cpu", "cuda:0" (text: borrowed). */
TSR_API tsr_error* tsr_device_parse(tsr_string text, tsr_device* out);

/* tsr_device_format writes the device's name ("npu:1") into buf (NUL-terminated, truncated to
 * size) and returns the length of the whole text. */
TSR_API size_t tsr_device_format(tsr_device device, char* buf, size_t size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_DEVICE_H_ */
