/* Tessera stable C ABI: kernels and fallbacks.
 *
 * A kernel is registered for (op, device type). The boxed form receives the op's stack: the
 * arguments in schema order, defaults filled in, types checked; it leaves the op's returns.
 * Lookup order on a call: the device type's kernel -> the op's composite -> the device type's
 * fallback -> a "not implemented" error. */
#ifndef TESSERA_C_KERNEL_H_
#define TESSERA_C_KERNEL_H_

#include "tessera/c/common.h"
#include "tessera/c/kernel_call.h"
#include "tessera/c/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tsr_boxed_kernel_fn: context is the desc's; op and stack are borrowed. Return NULL on
 * success (with the returns on the stack) or a new error (tsr_error_create). */
typedef tsr_error* (*tsr_boxed_kernel_fn)(void* context, const tsr_op* op, tsr_stack* stack);

/* tsr_typed_kernel_fn: a plain C function whose parameters follow the op's schema (cast it to
 * this type to register it). Its real signature is
 *
 *   tsr_error* fn(void* context, <one parameter per schema argument>, <one out per return>)
 *
 * with these C types per schema type:
 *   Tensor -> tsr_tensor* (borrowed; NULL for None when the type is Tensor?)
 *   int, SymInt -> int64_t; float -> double; bool -> int32_t; ScalarType -> tsr_dtype;
 *   Scalar -> tsr_scalar; Device -> tsr_device; str -> tsr_string (all by value)
 *   int[] -> two parameters: const int64_t* values, size_t count
 *   bool[] -> two parameters: const uint8_t* values (each 0 or 1), size_t count (since 1.1)
 *   an optional non-tensor type (int?, float?, Scalar?, ScalarType?, str?, ...) -> a const
 *   pointer to the value's C type, NULL for None
 *   each Tensor return -> tsr_tensor** out, where the kernel stores a new reference.
 * Other types (Tensor[], float[], ...) need a boxed kernel. The runtime prepares a libffi call
 * interface once, at registration; it cannot see the function's real parameters. The C++ SDK's
 * Library::impl_typed checks them against this mapping (tessera/sdk/typed_c.hpp);
 * docs/plugin_guide.md ("Typed C kernels") has the table and an example. */
typedef void (*tsr_typed_kernel_fn)(void);

/* tsr_kernel_desc describes one kernel registration. Zero-initialize, set struct_size to
 * sizeof(tsr_kernel_desc), fill the fields, and set exactly one of `boxed` and `typed`. */
typedef struct tsr_kernel_desc {
  size_t struct_size;
  tsr_string op_name;  /* "add.Tensor"; borrowed */
  int32_t device_type; /* a tsr_device_type: the dispatch key */
  int32_t reserved;
  tsr_boxed_kernel_fn boxed; /* a boxed kernel, or NULL when `typed` is set */
  void* context;             /* passed to the kernel; must outlive the registration */
  tsr_string kernel_name;    /* for traces and reports ("npu::add_kernel"); borrowed, copied */
  tsr_typed_kernel_fn typed; /* a typed C kernel, or NULL when `boxed` is set */

  /* since 1.1: the schema the kernel was compiled against (borrowed, copied), e.g. from the
   * op-set header it was built with (tessera/opset/v1_0.h: TSR_OP_V1_0_add_Tensor). Empty: the
   * op's schema in the op set the plugin states (tsr_plugin_desc.op_set_*, 1.0 when unstated)
   * or, for an op no op set has (a plugin's own), the op's schema as defined. When it differs
   * from the op's schema in the runtime (Note [Kernels built against another schema]):
   *   - the runtime's schema has trailing arguments with defaults that the kernel's lacks (an
   *     older kernel): the kernel runs when those arguments hold their defaults, which are
   *     dropped from its stack; otherwise the call goes to the op's composite or the device
   *     type's fallback, and the first such call is logged with the reason;
   *   - the kernel's schema has trailing arguments with defaults that the runtime's lacks (a
   *     newer kernel): the runtime passes the kernel's defaults for them;
   *   - any other difference: the kernel is refused, never called. A plugin's registration
   *     then succeeds without registering, and the load report lists the kernel and why (the
   *     plugin's other kernels load); an application's registration fails with the reason. */
  tsr_string schema;
  /* since 1.1: the packed entry of the same kernel (optional; only beside `boxed`). A runtime
   * calls it instead of `boxed` where it can: for an op whose returns are all written arguments,
   * with the kernel built against the op's schema. Everywhere else (older runtimes included)
   * `boxed` runs, so both must compute the same. The C++ SDK sets both (Library::impl). */
  tsr_packed_kernel_fn packed;
  /* since 1.2: why two identical calls of the kernel may give different bits (borrowed, copied;
   * "atomic adds in scheduling order"), or empty for a deterministic kernel. With deterministic
   * algorithms on (determinism.h) such a kernel does not run. The kernel listing, the plugin's
   * manifest and the conformance suite's determinism oracle read it. */
  tsr_string nondeterministic;
} tsr_kernel_desc;

/* tsr_kernel_register registers a kernel. A second kernel for the same (op, device type) is
 * an error. out: a new registration whose release removes the kernel; NULL keeps it. */
TSR_API tsr_error* tsr_kernel_register(const tsr_kernel_desc* desc, tsr_registration** out);

/* tsr_fallback_register registers the kernel that runs every op without a kernel or
 * composite on `device_type`. The kernel receives the op and may redispatch it. */
TSR_API tsr_error* tsr_fallback_register(int32_t device_type, tsr_boxed_kernel_fn fallback,
                                         void* context, tsr_string name, tsr_registration** out);

/* tsr_fallback_register_cpu opts `device_type` into the runtime's CPU fallback: an op without
 * a kernel or composite there copies its tensor arguments to the CPU, runs the CPU kernel and
 * copies the results back (and into arguments the op writes). Every such call is counted per
 * op (tsr_fallback_count) and the first one of each op is logged at INFO level. */
TSR_API tsr_error* tsr_fallback_register_cpu(int32_t device_type, tsr_registration** out);

/* tsr_fallback_count: how many calls of `op_name` (borrowed) ran on the CPU fallback, over all
 * device types, since the process started. */
TSR_API int64_t tsr_fallback_count(tsr_string op_name);

/* --- the kernel listing (since 1.1) -------------------------------------------------------- */

/* What became of a kernel a plugin registered. */
typedef enum tsr_kernel_status {
  TSR_KERNEL_REGISTERED = 0, /* built against its op's schema: called as it is */
  TSR_KERNEL_ADAPTED = 1,    /* built against another compatible schema: called adapted */
  TSR_KERNEL_REFUSED = 2,    /* built against an incompatible schema: never called */
  TSR_KERNEL_STATUS_FORCE_INT32 = 0x7fffffff
} tsr_kernel_status;

/* tsr_kernel_info describes one kernel a plugin registered (fallbacks are not listed). Strings
 * are borrowed, valid while the plugin stays loaded. */
typedef struct tsr_kernel_info {
  size_t struct_size;
  tsr_string op_name;     /* "add.Tensor" */
  int32_t device_type;    /* a tsr_device_type: the dispatch key */
  int32_t status;         /* a tsr_kernel_status */
  tsr_string kernel_name; /* as registered ("npu::add_kernel"; "<plugin>::<unnamed>" if none) */
  /* The schema the kernel was built against, in canonical form: the one its desc states, or
   * the op's schema in the plugin's op set when it states none (tsr_kernel_desc.schema). Empty
   * only for a refused kernel that stated none; its note names the schema. */
  tsr_string schema;
  /* Empty for TSR_KERNEL_REGISTERED; else the load report's line about the kernel: both
   * schemas and how they differ. */
  tsr_string note;
  /* since 1.2: the kernel's tsr_kernel_desc.nondeterministic: empty for a deterministic one */
  tsr_string nondeterministic;
} tsr_kernel_info;

/* tsr_plugin_kernels lists the kernels that the loaded plugin named `plugin_name` (borrowed)
 * registered, refused ones included, in the order it registered them. It sets *count to how
 * many there are and fills infos[0..min(capacity, *count)) (infos may be NULL when capacity is
 * 0, so that a first call sizes the array). The caller zero-fills the array and sets the
 * struct_size of every element to the size it was built with (sizeof(tsr_kernel_info)); the
 * runtime steps through the array by that size and fills only the fields that fit in it (a
 * caller built against an older minor gets the older fields). A plugin that is not loaded
 * (never, refused, or unloaded) is NOT_FOUND. */
TSR_API tsr_error* tsr_plugin_kernels(tsr_string plugin_name, tsr_kernel_info* infos,
                                      size_t capacity, size_t* count);

/* --- tensor views and the call plan from a stack (since 1.1) ---------------------------------
 *
 * For a boxed kernel: the views and the plan that a packed kernel receives in its
 * tsr_kernel_call (kernel_call.h), read from the kernel's stack in one call each. */

/* tsr_stack_get_tensor_views fills views[k] for the stack values first + k, k in [0, count):
 * a view of each defined tensor, and for any other value (None, an int, ...) a view whose
 * `tensor` is NULL and ndim -1. The caller sets each element's struct_size to the size it was
 * built with (sizeof(tsr_tensor_view)); the runtime fills only the fields that fit. OUT_OF_RANGE
 * when first + count exceeds the stack's size. stack, views: borrowed. */
TSR_API tsr_error* tsr_stack_get_tensor_views(const tsr_stack* stack, size_t first, size_t count,
                                              tsr_tensor_view* views);

/* tsr_stack_get_call_plan: the plan of the call whose kernel runs on `stack`. Fills *plan (the
 * caller sets plan->struct_size) and outputs[0, min(capacity, num_outputs)) with the planned
 * outputs as views whose `tensor` and `data` are NULL (sizes, strides, dtype, numel, flags;
 * each element's struct_size set by the caller; outputs may be NULL when capacity is 0). An
 * out= or in-place kernel finds its outputs already allocated (or resized) as planned on its
 * stack; a functional kernel may allocate them from the plan. stack: borrowed. */
TSR_API tsr_error* tsr_stack_get_call_plan(const tsr_stack* stack, tsr_call_plan* plan,
                                           tsr_tensor_view* outputs, size_t capacity);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_KERNEL_H_ */
