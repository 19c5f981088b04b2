/* Tessera stable C ABI: the plugin entry point and the runtime's function table.
 *
 * A plugin is a shared object that exports exactly one symbol:
 *
 *   TSR_PLUGIN_EXPORT tsr_error* tsr_plugin_init(const tsr_runtime_api* api,
 *                                                tsr_plugin_desc* desc);
 *
 * It links nothing of the runtime: every runtime service reaches it through `api`.
 * Loading is two-phase. tsr_plugin_init only describes the plugin (fills `desc`, registers
 * nothing); the loader then checks the versions both ways and, if they are compatible, calls
 * desc->register_fn, in which the plugin registers its device and kernels.
 *
 * Version handshake: the runtime accepts a plugin when desc->abi_major equals its own major
 * and desc->min_abi_minor <= its own minor. A plugin built against a newer minor loads as
 * long as it does not need that minor (it checks api->struct_size before using newer slots;
 * slots added after 1.0 may be NULL). Either side may be the newer one, so every struct that
 * one side fills for the other says how large it is (Note [Descriptor capacity] below). */
#ifndef TESSERA_C_PLUGIN_H_
#define TESSERA_C_PLUGIN_H_

#include "tessera/c/common.h"
#include "tessera/c/device.h"
#include "tessera/c/error.h"
#include "tessera/c/generator.h"
#include "tessera/c/graph.h"
#include "tessera/c/kernel.h"
#include "tessera/c/op.h"
#include "tessera/c/parallel.h"
#include "tessera/c/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TSR_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define TSR_PLUGIN_EXPORT
#endif

/* Log levels for tsr_runtime_api.log. */
typedef enum tsr_log_level {
  TSR_LOG_DEBUG = 0,
  TSR_LOG_INFO = 1,
  TSR_LOG_WARNING = 2,
  TSR_LOG_ERROR = 3,
  TSR_LOG_LEVEL_FORCE_INT32 = 0x7fffffff
} tsr_log_level;

/* tsr_runtime_api: the runtime's services, handed to tsr_plugin_init (borrowed; valid while
 * the plugin is loaded). Append-only: slots are never removed or reordered. */
typedef struct tsr_runtime_api {
  size_t struct_size; /* bytes of this table that the runtime filled in */
  uint32_t abi_major; /* the runtime's TSR_ABI_VERSION_MAJOR */
  uint32_t abi_minor; /* the runtime's TSR_ABI_VERSION_MINOR */

  /* since 1.0: errors */
  tsr_error* (*error_create)(tsr_code code, tsr_string message);
  tsr_code (*error_code)(const tsr_error* error);
  tsr_string (*error_message)(const tsr_error* error);
  void (*error_release)(tsr_error* error);

  /* since 1.0: tensors */
  tsr_error* (*tensor_empty)(const int64_t* sizes, size_t ndim, tsr_dtype dtype, tsr_device device,
                             tsr_tensor** out);
  tsr_error* (*tensor_empty_strided)(const int64_t* sizes, const int64_t* strides, size_t ndim,
                                     tsr_dtype dtype, tsr_device device, tsr_tensor** out);
  tsr_error* (*tensor_from_host_memory)(void* data, size_t nbytes, const int64_t* sizes,
                                        const int64_t* strides, size_t ndim, tsr_dtype dtype,
                                        tsr_deleter_fn deleter, void* deleter_context,
                                        tsr_tensor** out);
  tsr_error* (*tensor_copy_from_host)(tsr_tensor* dst, const void* src, size_t nbytes);
  tsr_error* (*tensor_copy_to_host)(const tsr_tensor* src, void* dst, size_t nbytes);
  void (*tensor_retain)(tsr_tensor* tensor);
  void (*tensor_release)(tsr_tensor* tensor);
  int64_t (*tensor_dim)(const tsr_tensor* tensor);
  const int64_t* (*tensor_sizes)(const tsr_tensor* tensor);
  const int64_t* (*tensor_strides)(const tsr_tensor* tensor);
  int64_t (*tensor_storage_offset)(const tsr_tensor* tensor);
  int64_t (*tensor_numel)(const tsr_tensor* tensor);
  tsr_dtype (*tensor_dtype)(const tsr_tensor* tensor);
  tsr_device (*tensor_device)(const tsr_tensor* tensor);
  int32_t (*tensor_is_contiguous)(const tsr_tensor* tensor);
  void* (*tensor_data_ptr)(const tsr_tensor* tensor);
  size_t (*dtype_size)(tsr_dtype dtype);

  /* since 1.0: ops and stacks */
  tsr_error* (*op_find)(tsr_string name, const tsr_op** out);
  tsr_string (*op_name)(const tsr_op* op);
  tsr_string (*op_schema)(const tsr_op* op);
  tsr_error* (*op_call)(const tsr_op* op, tsr_stack* stack);
  tsr_error* (*op_define)(tsr_string schema, tsr_registration** out);
  void (*registration_release)(tsr_registration* registration);
  tsr_error* (*stack_create)(tsr_stack** out);
  void (*stack_release)(tsr_stack* stack);
  size_t (*stack_size)(const tsr_stack* stack);
  void (*stack_clear)(tsr_stack* stack);
  tsr_value_kind (*stack_kind)(const tsr_stack* stack, size_t index);
  tsr_error* (*stack_push_none)(tsr_stack* stack);
  tsr_error* (*stack_push_tensor)(tsr_stack* stack, tsr_tensor* tensor);
  tsr_error* (*stack_push_int)(tsr_stack* stack, int64_t value);
  tsr_error* (*stack_push_double)(tsr_stack* stack, double value);
  tsr_error* (*stack_push_bool)(tsr_stack* stack, int32_t value);
  tsr_error* (*stack_push_string)(tsr_stack* stack, tsr_string value);
  tsr_error* (*stack_push_int_list)(tsr_stack* stack, const int64_t* values, size_t n);
  tsr_error* (*stack_push_double_list)(tsr_stack* stack, const double* values, size_t n);
  tsr_error* (*stack_push_tensor_list)(tsr_stack* stack, tsr_tensor* const* tensors, size_t n);
  tsr_error* (*stack_push_scalar)(tsr_stack* stack, tsr_scalar value);
  tsr_error* (*stack_push_dtype)(tsr_stack* stack, tsr_dtype value);
  tsr_error* (*stack_push_device)(tsr_stack* stack, tsr_device value);
  tsr_error* (*stack_get_tensor)(const tsr_stack* stack, size_t index, tsr_tensor** out);
  tsr_error* (*stack_get_int)(const tsr_stack* stack, size_t index, int64_t* out);
  tsr_error* (*stack_get_double)(const tsr_stack* stack, size_t index, double* out);
  tsr_error* (*stack_get_bool)(const tsr_stack* stack, size_t index, int32_t* out);
  tsr_error* (*stack_get_string)(const tsr_stack* stack, size_t index, tsr_string* out);
  tsr_error* (*stack_get_int_list)(const tsr_stack* stack, size_t index, const int64_t** values,
                                   size_t* n);
  tsr_error* (*stack_get_double_list)(const tsr_stack* stack, size_t index, const double** values,
                                      size_t* n);
  tsr_error* (*stack_get_tensor_list)(const tsr_stack* stack, size_t index,
                                      tsr_tensor* const** tensors, size_t* n);
  tsr_error* (*stack_get_scalar)(const tsr_stack* stack, size_t index, tsr_scalar* out);
  tsr_error* (*stack_get_dtype)(const tsr_stack* stack, size_t index, tsr_dtype* out);
  tsr_error* (*stack_get_device)(const tsr_stack* stack, size_t index, tsr_device* out);

  /* since 1.0: kernels */
  tsr_error* (*kernel_register)(const tsr_kernel_desc* desc, tsr_registration** out);
  tsr_error* (*fallback_register)(int32_t device_type, tsr_boxed_kernel_fn fallback, void* context,
                                  tsr_string name, tsr_registration** out);

  /* since 1.0: devices */
  tsr_error* (*device_register)(const tsr_device_interface* iface, tsr_registration** out);
  tsr_error* (*device_count)(int32_t device_type, int32_t* out);
  tsr_error* (*device_synchronize)(tsr_device device);

  /* since 1.0: the CPU fallback */
  tsr_error* (*fallback_register_cpu)(int32_t device_type, tsr_registration** out);
  int64_t (*fallback_count)(tsr_string op_name);

  /* since 1.0: services */
  void (*log)(tsr_log_level level, tsr_string message);
  tsr_error* (*parallel_for)(int64_t begin, int64_t end, int64_t grain, tsr_parallel_fn fn,
                             void* context);
  int32_t (*num_threads)(void);

  /* since 1.1: the op listing (op.h). A plugin that also loads into 1.0 runtimes checks
   * api->struct_size before using these slots. */
  tsr_error* (*op_list)(const tsr_op** ops, size_t capacity, size_t* count);
  tsr_error* (*op_describe)(const tsr_op* op, tsr_op_info* out);
  tsr_error* (*op_argument)(const tsr_op* op, size_t index, tsr_arg_info* out);
  tsr_error* (*op_return)(const tsr_op* op, size_t index, tsr_arg_info* out);

  /* since 1.1: the kernel listing (kernel.h) */
  tsr_error* (*plugin_kernels)(tsr_string plugin_name, tsr_kernel_info* infos, size_t capacity,
                               size_t* count);

  /* since 1.1: tensor views and the call plan (kernel.h) */
  tsr_error* (*stack_get_tensor_views)(const tsr_stack* stack, size_t first, size_t count,
                                       tsr_tensor_view* views);
  tsr_error* (*stack_get_call_plan)(const tsr_stack* stack, tsr_call_plan* plan,
                                    tsr_tensor_view* outputs, size_t capacity);
  /* since 1.1: bool[] values (op.h), for kernels that read a bool[] argument and plugins that
   * call ops with one. The C++ SDK reads them as sdk::BoolSpan. */
  tsr_error* (*stack_push_bool_list)(tsr_stack* stack, const uint8_t* values, size_t n);
  tsr_error* (*stack_get_bool_list)(const tsr_stack* stack, size_t index, const uint8_t** values,
                                    size_t* n);
  /* since 1.1: asynchronous devices (device.h, Note [Asynchronous devices]): the stream a
   * kernel launches on. A 1.0 runtime has no slot: launch on the default stream (NULL). */
  void* (*stream_current_native)(tsr_device device);
  /* since 1.1: packed calls (op.h), for plugins that call ops on a hot path. A 1.0 runtime has
   * no slot: call through a stack (op_call). */
  tsr_error* (*op_call_values)(const tsr_op* op, const tsr_value* args, size_t num_args,
                               tsr_value* returns, size_t capacity, size_t* num_returns);
  /* since 1.2: immutable tensors (TSR_VIEW_IMMUTABLE, kernel_call.h). A runtime before 1.2 has no
   * slot and marks nothing immutable. */
  uint64_t (*tensor_immutable_id)(const tsr_tensor* tensor);
  /* since 1.2: generators (generator.h), for the C++ SDK's embedding API (sdk::Generator) and
   * plugins that call random ops with a generator of their own. A kernel needs none of them:
   * its draw is in the call plan. */
  tsr_error* (*generator_create)(uint64_t seed, tsr_generator** out);
  tsr_error* (*generator_default)(tsr_device device, tsr_generator** out);
  void (*generator_retain)(tsr_generator* generator);
  void (*generator_release)(tsr_generator* generator);
  tsr_error* (*generator_get_state)(const tsr_generator* generator, uint64_t* seed,
                                    uint64_t* offset);
  tsr_error* (*generator_set_state)(tsr_generator* generator, uint64_t seed, uint64_t offset);
  void (*manual_seed)(uint64_t seed);
  tsr_error* (*stack_push_generator)(tsr_stack* stack, tsr_generator* generator);
  /* since 1.2: the mode of deterministic algorithms (determinism.h), for a kernel with a
   * deterministic path of its own. A runtime before 1.2 has no slot and no switch: every kernel
   * runs. (Setting the mode is the application's: tsr_set_deterministic_algorithms.) */
  int32_t (*deterministic_algorithms)(void);
  /* since 1.2: a graph compiler for the plugin's device type (graph.h): claims runs of a
   * compiled model's nodes. A runtime before 1.2 has no slot: every node runs on its own. */
  tsr_error* (*graph_compiler_register)(const tsr_graph_compiler* compiler,
                                        tsr_registration** out);
} tsr_runtime_api;

/* TSR_API_HAS: whether the runtime's table `api` has the slot `slot`, set (a runtime of an
 * older minor has a smaller table). */
#define TSR_API_HAS(api, slot) \
  (TSR_FIELD_FITS(tsr_runtime_api, slot, (api)->struct_size) && (api)->slot != NULL)

/* tsr_runtime_api_get: the same table, for applications and the C++ SDK's embedding API
 * (plugins receive it in tsr_plugin_init instead and must not import this symbol). */
TSR_API const tsr_runtime_api* tsr_runtime_api_get(void);

/* tsr_plugin_desc: filled by tsr_plugin_init, in a buffer the runtime owns. Strings are
 * borrowed and must stay valid while the plugin is loaded (string literals are fine).
 *
 * Note [Descriptor capacity]
 * The runtime zero-fills the descriptor and, since 1.1, sets struct_size to the bytes it
 * provides (its own sizeof(tsr_plugin_desc)) before calling tsr_plugin_init. A 1.0 runtime
 * leaves it 0, which means TSR_PLUGIN_DESC_SIZE_1_0 bytes. The plugin writes only the fields
 * that end within that capacity (tsr_plugin_desc_capacity below, TSR_FIELD_FITS in common.h) and
 * then sets struct_size to the bytes it filled: the smaller of its own sizeof(tsr_plugin_desc) and
 * the capacity. A plugin built against a newer minor therefore loads into an older runtime
 * with its newer fields left out, and a runtime refuses (without being corrupted) a plugin
 * that claims more bytes than it was offered. The C++ SDK does all of this itself. */
typedef struct tsr_plugin_desc {
  size_t struct_size;
  tsr_string name;        /* "npu"; unique among loaded plugins */
  tsr_string version;     /* the plugin's own version, free-form */
  uint32_t abi_major;     /* TSR_ABI_VERSION_MAJOR the plugin was built against */
  uint32_t abi_minor;     /* TSR_ABI_VERSION_MINOR the plugin was built against */
  uint32_t min_abi_minor; /* the oldest runtime minor (same major) it works with */
  int32_t device_type;    /* the tsr_device_type it provides kernels for */
  tsr_string device_name; /* for PrivateUse1..3: the name to give it ("npu"); else empty */
  /* register_fn registers the plugin's device and kernels (required). state: desc->state. */
  tsr_error* (*register_fn)(void* state, const tsr_runtime_api* api);
  /* unload_fn (optional, NULL: none) runs when the plugin is unloaded, after every kernel and
   * tensor of it is gone; only for a plugin that loaded (not when register_fn fails). The C++
   * SDK sets it from Library::on_unload. */
  void (*unload_fn)(void* state);
  void* state;

  /* since 1.1: the op set version the plugin's kernels were compiled against (the
   * TSR_OP_SET_VERSION_* of the op-set header it used); 0.0 means unstated, taken as 1.0. A
   * kernel's own tsr_kernel_desc.schema, when set, is more precise. */
  uint32_t op_set_major;
  uint32_t op_set_minor;
} tsr_plugin_desc;

/* The size of a tsr_plugin_desc as ABI 1.0 defines it (what a 1.0 runtime provides). */
#define TSR_PLUGIN_DESC_SIZE_1_0 (offsetof(tsr_plugin_desc, state) + sizeof(void*))

/* tsr_plugin_desc_capacity: the bytes of `desc` a plugin may write in tsr_plugin_init (Note
 * [Descriptor capacity]): what the runtime stated in desc->struct_size, or the 1.0 size when
 * a 1.0 runtime left it 0. */
static inline size_t tsr_plugin_desc_capacity(const tsr_plugin_desc* desc) {
  return desc->struct_size != 0 ? desc->struct_size : TSR_PLUGIN_DESC_SIZE_1_0;
}

/* The type of the entry symbol, for dlsym. */
typedef tsr_error* (*tsr_plugin_init_fn)(const tsr_runtime_api* api, tsr_plugin_desc* desc);

#define TSR_PLUGIN_INIT_SYMBOL "tsr_plugin_init"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_PLUGIN_H_ */
