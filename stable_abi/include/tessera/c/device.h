/* Tessera stable C ABI: devices.
 *
 * A backend registers its device type with an interface table: device count, memory, copies
 * and synchronization, plus optional streams and events. The runtime never dereferences
 * device memory; every access goes through these functions. Asynchronous devices (GPUs) add
 * streams, events and stream-ordered copies (since 1.1, Note [Asynchronous devices] below). */
#ifndef TESSERA_C_DEVICE_H_
#define TESSERA_C_DEVICE_H_

#include "tessera/c/common.h"
#include "tessera/c/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- asynchronous devices: types (since 1.1) -------------------------------------------------
 * The functions are at the end of this header; Note [Asynchronous devices] explains the model. */

/* Opaque handles (since 1.1), reference-counted: every function returning one returns a new
 * reference that the caller releases. A stream or event belongs to one device (type:index) and
 * to the plugin instance that provides it; it keeps that plugin loaded while it exists. */
typedef struct tsr_stream tsr_stream;
typedef struct tsr_event tsr_event;

/* tsr_device_properties (since 1.1): what tsr_device_get_properties reports. */
typedef struct tsr_device_properties {
  size_t struct_size;
  /* The device's name ("NVIDIA H200") and architecture ("sm_90", "gfx90a"); empty when the
   * plugin does not say. Borrowed from the runtime, valid for the process. */
  tsr_string name;
  tsr_string arch;
  uint64_t total_memory;        /* bytes of device memory; 0 when unknown */
  int32_t multiprocessor_count; /* SMs, CUs; 0 when unknown */
  uint32_t flags;               /* TSR_DEVICE_PROPERTY_* bits */
} tsr_device_properties;

/* The device runs work asynchronously to the host, on streams (Note [Asynchronous devices]). */
#define TSR_DEVICE_PROPERTY_ASYNC 1u

/* tsr_memory_stats (since 1.1): a device allocator's counters (tsr_device_memory_stats), in
 * bytes and calls, since the plugin loaded. */
typedef struct tsr_memory_stats {
  size_t struct_size;
  uint64_t allocated_bytes;      /* in live allocations now */
  uint64_t reserved_bytes;       /* taken from the device now: allocated plus cached */
  uint64_t peak_allocated_bytes; /* the largest allocated_bytes so far */
  uint64_t peak_reserved_bytes;  /* the largest reserved_bytes so far */
  uint64_t allocations;          /* allocate calls that succeeded */
  uint64_t cache_hits;           /* of them, served from memory the allocator had cached */
  uint64_t device_allocations;   /* calls of the device's own allocator (cudaMalloc) */
  uint64_t device_frees;         /* device allocations given back (empty_cache, retries) */
} tsr_memory_stats;

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
  /* allocate: at least nbytes (nbytes may be 0) on device `index`, aligned to at least 16
   * bytes; TSR_RESOURCE_EXHAUSTED when the device cannot provide them (both stated in 1.2, for
   * every plugin: the SDK's kernels read any dtype in place, and conformance
   * --device-contract checks both). */
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

  /* since 1.1, optional: asynchronous devices (Note [Asynchronous devices]). `stream` is a
   * handle stream_create returned, or NULL for the device's default stream; `event` one that
   * event_create returned. What the runtime does when a slot is NULL is written beside it. */

  /* get_properties fills *out within out->struct_size (set by the runtime); strings are
   * borrowed for the call (the runtime copies them). NULL: the device type's name, no arch,
   * zeros, no flags. */
  tsr_error* (*get_properties)(void* context, int32_t index, tsr_device_properties* out);
  /* stream_wait_event: work queued on `stream` after this call starts only after the work
   * before `event`'s record has completed; returns without waiting. The event may be of another
   * device of the plugin (the runtime orders copies between two devices so). NULL: the runtime
   * waits on the host (event_synchronize). */
  tsr_error* (*stream_wait_event)(void* context, int32_t index, void* stream, void* event);
  /* Stream-ordered copies: queued on `stream` after the work already queued there; they may
   * return before the copy is done. The host buffer must stay valid (and, for the source,
   * unchanged) until the stream has passed the copy: the runtime's callers promise that. NULL:
   * the runtime synchronizes `stream`, then calls the 1.0 copy. copy_device_to_device_async
   * queues on `stream`, a stream of device dst_index. */
  tsr_error* (*copy_host_to_device_async)(void* context, int32_t index, void* dst, const void* src,
                                          size_t nbytes, void* stream);
  tsr_error* (*copy_device_to_host_async)(void* context, int32_t index, void* dst, const void* src,
                                          size_t nbytes, void* stream);
  tsr_error* (*copy_device_to_device_async)(void* context, int32_t dst_index, void* dst,
                                            int32_t src_index, const void* src, size_t nbytes,
                                            void* stream);
  /* record_stream: the allocation `ptr` (as allocate returned it) is also used by work queued
   * on `stream`; when it is freed, its memory must not be handed out again before `stream` has
   * passed the work queued on it by then (PyTorch's record_stream). NULL: the runtime
   * synchronizes every recorded stream before it calls `free` for the allocation. */
  tsr_error* (*record_stream)(void* context, int32_t index, void* ptr, void* stream);
  /* memory_stats fills *out within out->struct_size (set by the runtime). NULL: UNIMPLEMENTED
   * from tsr_device_memory_stats. */
  tsr_error* (*memory_stats)(void* context, int32_t index, tsr_memory_stats* out);
  /* empty_cache gives memory the allocator caches (not in use) back to the device, as far as
   * the device allows (a device allocation partly in use may stay). NULL: nothing is cached,
   * nothing to do. */
  tsr_error* (*empty_cache)(void* context, int32_t index);
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

/* --- asynchronous devices: streams, events, stream-ordered copies (since 1.1) ---------------
 *
 * Note [Asynchronous devices]
 * A device whose interface has stream_create is asynchronous: its kernels and copies are queued
 * on streams and run later, in order per stream, while the host goes on. The model is CUDA's
 * (and PyTorch's on top of it):
 *
 * - Every (device, thread) has a current stream, the device's default stream (native handle
 *   NULL) until the thread sets another (tsr_stream_set_current; the C++ SDK's StreamGuard).
 *   Kernels launch on the current stream of their device, which a plugin reads with the
 *   table's stream_current_native (one thread-local lookup). A plugin's allocator may use it
 *   as well (to keep a pool per stream). A thread's current stream holds a reference to it.
 * - The 1.0 copies (copy_host_to_device, ...) are synchronous: they start after the work
 *   queued on the calling thread's current stream and return when the copy is complete, so the
 *   runtime's own copies (tsr_tensor_copy_to_host, the CPU fallback, copy_ across devices) see
 *   every result computed before them on that stream. The *_async slots queue on a stream and
 *   return at once (tsr_tensor_copy_*_async).
 * - Events order streams: tsr_event_record marks a point in a stream, tsr_stream_wait_event
 *   makes another stream wait for it, tsr_event_synchronize makes the host wait.
 * - copy_ between two devices of one plugin (cuda:0 -> cuda:1) goes device to device: with
 *   non_blocking=True, queued on the destination's current stream, ordered after the source's
 *   (copy_device_to_device_async and events); else the synchronous copy_device_to_device.
 * - Memory freed while another stream may still use it: tsr_tensor_record_stream says so, and
 *   the memory is not handed out again before that stream has passed its work.
 * - Errors of work that ran asynchronously (an illegal address in a kernel) cannot be returned
 *   by the call that queued it. The plugin keeps them and returns them, with the device's own
 *   text, from the next synchronizing call: synchronize, stream_synchronize, event_synchronize
 *   and the 1.0 copies. The runtime passes them on as a tsr_error whose message names the
 *   function and the device and then quotes the device's text (TSR_INTERNAL unless the plugin
 *   chose another code).
 *
 * A device without stream_create (every 1.0 device, the CPU) is synchronous: it has only its
 * default stream, tsr_stream_create is UNIMPLEMENTED, synchronizing it is synchronize, and
 * record_stream has nothing to wait for. The 1.1 slots are optional for every device: when one
 * is NULL the runtime does what its comment in tsr_device_interface says, so a 1.0 plugin's
 * device (a smaller struct_size) keeps working unchanged.
 *
 * Streams and events belong to the plugin instance that made them. Once it is unloaded (or
 * replaced by another plugin for the device type), using them is FAILED_PRECONDITION; releasing
 * them still destroys them through the plugin that made them. */

/* tsr_device_get_properties fills *out (the caller sets out->struct_size; only fields within it
 * are written) for `device`, which must exist. cpu: "cpu", no flags. */
TSR_API tsr_error* tsr_device_get_properties(tsr_device device, tsr_device_properties* out);

/* tsr_device_memory_stats fills *out (the caller sets out->struct_size) with the allocator
 * counters of `device`. UNIMPLEMENTED for a device whose plugin keeps none, and for the CPU. */
TSR_API tsr_error* tsr_device_memory_stats(tsr_device device, tsr_memory_stats* out);

/* tsr_device_empty_cache gives the memory that the allocator of `device` caches back to the
 * device; memory in use stays. A no-op for devices that cache nothing. */
TSR_API tsr_error* tsr_device_empty_cache(tsr_device device);

/* tsr_stream_create makes a new stream on `device`. out: a new reference. UNIMPLEMENTED for a
 * synchronous device (no stream_create). */
TSR_API tsr_error* tsr_stream_create(tsr_device device, tsr_stream** out);

/* tsr_stream_get_default: the default stream of `device` (every device has one, the CPU too).
 * out: a new reference. */
TSR_API tsr_error* tsr_stream_get_default(tsr_device device, tsr_stream** out);

/* tsr_stream_get_current: the calling thread's current stream on `device` (its default stream
 * until the thread sets another). out: a new reference. */
TSR_API tsr_error* tsr_stream_get_current(tsr_device device, tsr_stream** out);

/* tsr_stream_set_current makes `stream` (borrowed; the thread keeps its own reference) the
 * calling thread's current stream on the stream's device. */
TSR_API tsr_error* tsr_stream_set_current(tsr_stream* stream);

/* tsr_stream_current_native: the plugin's own handle of the calling thread's current stream on
 * `device` (what its stream_create returned), NULL for the default stream and for devices
 * without streams. Borrowed: valid while the stream is current. This is what kernels launch on
 * (the table's stream_current_native); an application may pass it to the vendor's libraries. */
TSR_API void* tsr_stream_current_native(tsr_device device);

/* tsr_stream_native: the plugin's own handle of `stream` (NULL for a default stream). Borrowed:
 * valid while the stream exists. */
TSR_API void* tsr_stream_native(const tsr_stream* stream);

/* tsr_stream_device: the device `stream` belongs to ({cpu, 0} for NULL). */
TSR_API tsr_device tsr_stream_device(const tsr_stream* stream);

/* tsr_stream_synchronize waits until the work queued on `stream` has completed; an error of
 * that work comes back here (Note [Asynchronous devices]). */
TSR_API tsr_error* tsr_stream_synchronize(tsr_stream* stream);

/* tsr_stream_wait_event: work queued on `stream` after this call waits for the work before the
 * last tsr_event_record of `event` (an event never recorded: nothing to wait for). Both must be
 * of the same device. Returns without waiting on a device that can order streams itself. */
TSR_API tsr_error* tsr_stream_wait_event(tsr_stream* stream, tsr_event* event);

/* tsr_stream_release drops a reference; the last one destroys the stream (work already queued
 * on it still completes). NULL is a no-op. */
TSR_API void tsr_stream_release(tsr_stream* stream);

/* tsr_event_create makes an event on `device`. out: a new reference. UNIMPLEMENTED for a
 * device without event_create. */
TSR_API tsr_error* tsr_event_create(tsr_device device, tsr_event** out);

/* tsr_event_record marks the current end of `stream`'s work in `event` (stream NULL: the
 * calling thread's current stream on the event's device). Both must be of the same device. */
TSR_API tsr_error* tsr_event_record(tsr_event* event, tsr_stream* stream);

/* tsr_event_synchronize waits until the work before the event's last record has completed; an
 * error of that work comes back here. An event never recorded is complete. */
TSR_API tsr_error* tsr_event_synchronize(tsr_event* event);

/* tsr_event_release drops a reference; the last one destroys the event. NULL is a no-op. */
TSR_API void tsr_event_release(tsr_event* event);

/* tsr_tensor_record_stream says that `tensor`'s memory is also used by work queued on `stream`
 * (of the tensor's device): when the memory is freed, it is not handed out again before that
 * work has completed (PyTorch's Tensor.record_stream). tensor, stream: borrowed. */
TSR_API tsr_error* tsr_tensor_record_stream(tsr_tensor* tensor, tsr_stream* stream);

/* tsr_tensor_copy_from_host_async / tsr_tensor_copy_to_host_async: tsr_tensor_copy_from_host /
 * tsr_tensor_copy_to_host queued on `stream` (NULL: the calling thread's current stream on the
 * tensor's device; else a stream of that device), returning before the copy is done. The host
 * buffer must stay valid, and for copy_from_host unchanged, until the stream has passed the copy
 * (synchronize the stream or an event recorded after it); the tensor must stay alive as well
 * (or be recorded on the stream). A strided (not contiguous) tensor, and a device without the
 * asynchronous copy slot, are copied synchronously after the stream: the call returns with the
 * copy done. CPU tensors are copied at once. */
TSR_API tsr_error* tsr_tensor_copy_from_host_async(tsr_tensor* dst, const void* src, size_t nbytes,
                                                   tsr_stream* stream);
TSR_API tsr_error* tsr_tensor_copy_to_host_async(const tsr_tensor* src, void* dst, size_t nbytes,
                                                 tsr_stream* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_DEVICE_H_ */
