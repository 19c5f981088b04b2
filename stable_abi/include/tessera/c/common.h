/* Tessera stable C ABI: common types.
 *
 * Version policy (also docs/abi_policy.md):
 * - TSR_ABI_VERSION_MAJOR changes only for a breaking change; MINOR for additive ones.
 * - Everything here is append-only: no enumerator, struct field, function or table slot is
 *   ever removed, reordered or retyped. Enums carry a *_FORCE_INT32 sentinel so that their size
 *   never changes.
 * - Every table and argument struct starts with `struct_size`; a reader touches only the
 *   fields inside the struct_size it was given.
 *
 * Conventions: functions return `tsr_error*` (NULL on success; the caller releases it with
 * tsr_error_release). Outputs are marked `out`. Every pointer parameter says who owns it:
 * `borrowed` (valid for the call only, unless stated), `new reference` (the caller releases
 * it). `*_release(NULL)` is a no-op. Strings are pointer + length, not NUL-terminated. */
#ifndef TESSERA_C_COMMON_H_
#define TESSERA_C_COMMON_H_

#include <stddef.h>
#include <stdint.h>

#include "tessera/c/dtypes.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_ABI_VERSION_MAJOR 1
#define TSR_ABI_VERSION_MINOR 2

#if defined(__GNUC__)
#define TSR_API __attribute__((visibility("default")))
#else
#define TSR_API
#endif

/* TSR_FIELD_FITS: whether `field` of struct `type` lies wholly within the first `size` bytes,
 * i.e. whether a struct whose struct_size is `size` has the field. */
#define TSR_FIELD_FITS(type, field, size) \
  (offsetof(type, field) + sizeof(((type*)0)->field) <= (size))

/* A borrowed string: `size` bytes at `data`, not necessarily NUL-terminated. NULL `data` is the
 * empty string. The runtime reads at most 1 MiB of a string it is given: a larger `size` is
 * taken for a wrong one (an uninitialised length, -1 cast to size_t), and the call fails with
 * TSR_INVALID_ARGUMENT naming the function and the string, without reading any of it
 * (tsr_error_create keeps its code and says so in the message; the table's log prints what was
 * wrong instead; tsr_fallback_count counts 0; a device's name or arch from its plugin's
 * get_properties fails tsr_device_get_properties with TSR_INTERNAL: the plugin's fault). A
 * plugin descriptor's strings are held to 256 bytes. */
typedef struct tsr_string {
  const char* data;
  size_t size;
} tsr_string;

/* Error codes: the values of Abseil's canonical codes (absl::StatusCode). */
typedef enum tsr_code {
  TSR_OK = 0,
  TSR_CANCELLED = 1,
  TSR_UNKNOWN = 2,
  TSR_INVALID_ARGUMENT = 3,
  TSR_DEADLINE_EXCEEDED = 4,
  TSR_NOT_FOUND = 5,
  TSR_ALREADY_EXISTS = 6,
  TSR_PERMISSION_DENIED = 7,
  TSR_RESOURCE_EXHAUSTED = 8,
  TSR_FAILED_PRECONDITION = 9,
  TSR_ABORTED = 10,
  TSR_OUT_OF_RANGE = 11,
  TSR_UNIMPLEMENTED = 12,
  TSR_INTERNAL = 13,
  TSR_UNAVAILABLE = 14,
  TSR_DATA_LOSS = 15,
  TSR_UNAUTHENTICATED = 16,
  TSR_CODE_FORCE_INT32 = 0x7fffffff
} tsr_code;

/* Element types: one enumerator TSR_DTYPE_<NAME> = value per entry of TSR_FOR_EACH_DTYPE
 * (dtypes.h, which also gives each one's name, size and category), from TSR_DTYPE_BOOL = 0 to
 * TSR_DTYPE_FLOAT64 = 9. */
#define TSR_DTYPE_ENUMERATOR_(NAME, Name, value, name, size, category) TSR_DTYPE_##NAME = value,
typedef enum tsr_dtype {
  TSR_FOR_EACH_DTYPE(TSR_DTYPE_ENUMERATOR_) TSR_DTYPE_FORCE_INT32 = 0x7fffffff
} tsr_dtype;
#undef TSR_DTYPE_ENUMERATOR_

/* Device types. PrivateUse1..3 are reserved for out-of-tree backends and renameable.
 *
 * TSR_FOR_EACH_DEVICE_TYPE(X) expands to X(NAME, Name, value, name, numbered) once per device
 * type, in enum order (added after 1.1: a macro only, so a plugin that uses it loads in every
 * runtime; the values are those of 1.0, frozen in abi.lock):
 *   NAME      the enumerator's suffix: `TSR_DEVICE_<NAME> = value` of tsr_device_type
 *   Name      the same in CamelCase, for generated C++ identifiers (the runtime's kPrivateUse1)
 *   value     the enumerator's value; a new device type takes the next one
 *   name      the type's default name in device strings and messages, as PyTorch spells it
 *             ("privateuseone"; a plugin renames PrivateUse1..3 to its own, "npu")
 *   numbered  another name a device string may use for the type ("privateuse1", the name
 *             manifests print), or "" for none
 * Everything that knows the device types (this enum, the runtime's DeviceType, dispatch keys and
 * names, the SDK's and tessera-plugin-info's names) is generated from this list. */
/* clang-format off */
#define TSR_FOR_EACH_DEVICE_TYPE(X)                                                         \
  X(CPU,         CPU,         0, "cpu",             "")                                     \
  X(CUDA,        CUDA,        1, "cuda",            "")                                     \
  X(HIP,         HIP,         2, "hip",             "")                                     \
  X(PRIVATEUSE1, PrivateUse1, 3, "privateuseone",   "privateuse1")                          \
  X(PRIVATEUSE2, PrivateUse2, 4, "privateusetwo",   "privateuse2")                          \
  X(PRIVATEUSE3, PrivateUse3, 5, "privateusethree", "privateuse3")                          \
  X(META,        Meta,        6, "meta",            "")
/* clang-format on */

#define TSR_DEVICE_ENUMERATOR_(NAME, Name, value, name, numbered) TSR_DEVICE_##NAME = value,
typedef enum tsr_device_type {
  TSR_FOR_EACH_DEVICE_TYPE(TSR_DEVICE_ENUMERATOR_) TSR_DEVICE_TYPE_FORCE_INT32 = 0x7fffffff
} tsr_device_type;
#undef TSR_DEVICE_ENUMERATOR_

/* Layouts: the values of the schema type `Layout` (`Layout? layout=None` of the factory ops and
 * _to_copy), pushed with tsr_stack_push_int and read with tsr_stack_get_int. PyTorch's
 * c10::Layout numbers; Tessera's tensors are all strided, so an op call with any other value is
 * refused (INVALID_ARGUMENT). Since 1.1. */
typedef enum tsr_layout {
  TSR_LAYOUT_STRIDED = 0, /* schema default text: strided */
  TSR_LAYOUT_FORCE_INT32 = 0x7fffffff
} tsr_layout;

/* Memory formats: the values of the schema type `MemoryFormat` (clone, contiguous, _to_copy,
 * empty.memory_format), pushed and read as ints like tsr_layout. PyTorch's c10::MemoryFormat
 * numbers; an op call with a value outside them is refused (INVALID_ARGUMENT). The core ops do
 * not implement the channels-last formats yet: they give contiguous strides for them (see
 * docs/embedding_guide.md). Since 1.1. */
typedef enum tsr_memory_format {
  TSR_MEMORY_FORMAT_CONTIGUOUS = 0,       /* contiguous_format: row-major strides */
  TSR_MEMORY_FORMAT_PRESERVE = 1,         /* preserve_format: keep a dense input's strides */
  TSR_MEMORY_FORMAT_CHANNELS_LAST = 2,    /* channels_last: NHWC strides for 4-d tensors */
  TSR_MEMORY_FORMAT_CHANNELS_LAST_3D = 3, /* channels_last_3d: NDHWC strides for 5-d tensors */
  TSR_MEMORY_FORMAT_FORCE_INT32 = 0x7fffffff
} tsr_memory_format;

/* A device: type and index ("cuda:1" is {TSR_DEVICE_CUDA, 1}). A value type. */
typedef struct tsr_device {
  int32_t type; /* a tsr_device_type */
  int32_t index;
} tsr_device;

/* Opaque handles; one type per object, so mixing them up is a compile error. */
typedef struct tsr_error tsr_error;
typedef struct tsr_tensor tsr_tensor;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_COMMON_H_ */
