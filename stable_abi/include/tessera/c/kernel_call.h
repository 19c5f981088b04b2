/* Tessera stable C ABI: what a kernel receives, in one header for kernel authors.
 *
 * Every kernel, CPU and GPU, ours and a vendor's, has one form (DESIGN.md): a function over
 * borrowed DLTensor-shaped views of its tensors (tsr_tensor_view) plus the call plan the
 * dispatcher computed (tsr_call_plan), reached in one packed call (tsr_kernel_call, to a
 * tsr_packed_kernel_fn) with every argument as a tagged value (tsr_value). Op-semantics checks
 * (shapes, dtypes, dims, alpha) ran in the op's plan before the kernel, once for every backend;
 * a kernel reads what it needs here, with no table call on its hot path. op.h and kernel.h
 * include this header; since 1.1 except where marked (it gathers what op.h and kernel.h
 * declared: the layouts and abi.lock are unchanged). */
#ifndef TESSERA_C_KERNEL_CALL_H_
#define TESSERA_C_KERNEL_CALL_H_

#include "tessera/c/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handles (since 1.0). A tsr_op is owned by the runtime and valid for the whole
 * process; a tsr_stack holds boxed values (op.h). */
typedef struct tsr_op tsr_op;
typedef struct tsr_stack tsr_stack;
/* Since 1.2: a random number generator (generator.h): a seed and the next offset of a
 * counter-based generator, shared by reference. */
typedef struct tsr_generator tsr_generator;

/* --- values (tsr_value_kind, tsr_scalar: since 1.0) ---------------------------------------- */

/* The kind of a boxed value. */
typedef enum tsr_value_kind {
  TSR_VALUE_NONE = 0,
  TSR_VALUE_TENSOR = 1,
  TSR_VALUE_INT = 2,
  TSR_VALUE_DOUBLE = 3,
  TSR_VALUE_BOOL = 4,
  TSR_VALUE_STRING = 5,
  TSR_VALUE_INT_LIST = 6,
  TSR_VALUE_DOUBLE_LIST = 7,
  TSR_VALUE_BOOL_LIST = 8,
  TSR_VALUE_TENSOR_LIST = 9,
  TSR_VALUE_SCALAR = 10,
  TSR_VALUE_DTYPE = 11,
  TSR_VALUE_DEVICE = 12,
  /* since 1.1: the markers of tsr_stack_push_default and tsr_stack_name_next. They occupy a slot
   * of a caller's stack until tsr_op_call binds it; a kernel never sees them. */
  TSR_VALUE_DEFAULT = 13,
  TSR_VALUE_NAME = 14,
  /* since 1.2: a Generator argument (u.generator). A random op's kernel does not read it: its
   * draw is in the call plan (tsr_call_plan.rng_seed, rng_offset). */
  TSR_VALUE_GENERATOR = 15,
  TSR_VALUE_KIND_FORCE_INT32 = 0x7fffffff
} tsr_value_kind;

/* A Scalar: a number that remembers whether it is a bool, an integer or a double. */
typedef enum tsr_scalar_kind {
  TSR_SCALAR_BOOL = 0,
  TSR_SCALAR_INT = 1,
  TSR_SCALAR_DOUBLE = 2,
  TSR_SCALAR_KIND_FORCE_INT32 = 0x7fffffff
} tsr_scalar_kind;

typedef struct tsr_scalar {
  int32_t kind; /* a tsr_scalar_kind */
  int32_t reserved;
  int64_t i; /* the value for TSR_SCALAR_BOOL (0 or 1) and TSR_SCALAR_INT */
  double d;  /* the value for TSR_SCALAR_DOUBLE */
} tsr_scalar;

/* tsr_value: one argument or return of a packed call, tagged by its kind. It never grows (an
 * array element: a later minor adds kinds, not fields). Lists and strings are borrowed for the
 * call; `list.data` points at int64_t (INT_LIST), double (DOUBLE_LIST), uint8_t 0 or 1
 * (BOOL_LIST) or tsr_tensor* (TENSOR_LIST) elements. */
typedef struct tsr_value {
  int32_t kind;     /* a tsr_value_kind: NONE for None, DEFAULT for a defaulted argument skipped */
  int32_t reserved; /* 0 */
  union {
    tsr_tensor* tensor;       /* TENSOR: borrowed; a new reference in tsr_op_call_values' returns */
    int64_t i;                /* INT */
    double d;                 /* DOUBLE */
    int32_t b;                /* BOOL: 0 or 1 */
    int32_t dtype;            /* DTYPE: a tsr_dtype */
    tsr_device device;        /* DEVICE */
    tsr_scalar scalar;        /* SCALAR */
    tsr_string string;        /* STRING */
    tsr_generator* generator; /* GENERATOR (since 1.2): borrowed */
    struct {
      const void* data;
      size_t size;
    } list; /* INT_LIST, DOUBLE_LIST, BOOL_LIST, TENSOR_LIST */
  } u;
} tsr_value;

/* --- views, the call plan and the packed call (since 1.1) ---------------------------------
 *
 * What a kernel's hot path reads, in one call each instead of one table call per property
 * (Note [Call plans] in the runtime: the dispatcher computes a call's outputs and compute dtype
 * once, before the kernel runs, and hands them on). */

/* tsr_tensor_view: a borrowed description of a tensor, shaped like DLPack's DLTensor. For a
 * kernel's argument it stays valid until the kernel returns. */
typedef struct tsr_tensor_view {
  size_t struct_size;
  tsr_tensor* tensor;     /* the tensor itself (borrowed): NULL when the value is no tensor */
  void* data;             /* the address of element 0 (storage offset applied); NULL for a meta
                           * tensor or a planned output; a device address on other devices */
  const int64_t* sizes;   /* ndim entries; borrowed */
  const int64_t* strides; /* ndim entries, in elements; borrowed */
  int64_t storage_offset; /* in elements */
  int64_t numel;
  tsr_device device;
  int32_t dtype; /* a tsr_dtype */
  int32_t ndim;
  uint32_t flags; /* TSR_VIEW_* bits; test each with &: later minors add bits */
  uint32_t reserved;
} tsr_tensor_view;

/* The view is row-major dense (tsr_tensor_is_contiguous). */
#define TSR_VIEW_CONTIGUOUS 1u
/* Since 1.2: the tensor is immutable: its elements do not change while it lives, and
 * tsr_tensor_immutable_id (tensor.h; the runtime table's tensor_immutable_id) names it, never
 * reused; a view of it (made by a view op) is immutable with the same id. A kernel may keep data
 * it derives from an immutable argument (a convolution's weights reordered into its kernels'
 * layout, say) under that id and the view's dtype, offset, sizes and strides. A compiled
 * model's constants are immutable where no node writes them and no output shows them (model.h,
 * tsr_model_compile); runtimes before 1.2 never set the bit. */
#define TSR_VIEW_IMMUTABLE 2u

/* tsr_call_plan: what the dispatcher computed for the running kernel's call. */
typedef struct tsr_call_plan {
  size_t struct_size;
  /* The dtype the op computes in (a tsr_dtype), or -1 where the plan does not say: the promoted
   * dtype of a pointwise op's operands, also for a comparison (whose output is bool), float32
   * for true division of integers. */
  int32_t compute_dtype;
  /* How many outputs the plan describes: one per return of the op's functional form; 0 when
   * the call has no plan (an op without a Meta function, a stack that is no kernel's). */
  int32_t num_outputs;
  tsr_device device; /* the call's device */
  /* Since 1.2: a random op's draw (an op with a Generator argument): the seed and the offset
   * its numbers come from, reserved for this call from the generator the caller passed or the
   * default generator of the call's device. Element i of the output takes Philox-4x32-10 with
   * key = rng_seed and counter = (i, rng_offset), each distribution as docs/random.md defines
   * it, so that every backend gives the same bits (the SDK's tessera/sdk/random.hpp computes
   * it). Both 0 for an op that is not random. A runtime before 1.2 states a struct_size
   * without them; it has no random op. */
  uint64_t rng_seed;
  uint64_t rng_offset;
} tsr_call_plan;

/* tsr_kernel_call: what a packed kernel receives (tsr_packed_kernel_fn); every pointer is
 * borrowed for the kernel's call. The arguments are the ones a boxed kernel finds on its stack:
 * schema order, defaults filled in, kinds as the schema says (a double where a float is due);
 * out= outputs allocated or resized as planned. The runtime states struct_size; a kernel reads
 * only the fields within it. */
struct tsr_kernel_call {
  size_t struct_size;
  const tsr_op* op; /* the op whose kernel runs */
  /* The same arguments as a stack, with the call plan attached (tsr_stack_get_call_plan, the
   * planned outputs): for what the fields below lack. Read-only: the values below point into
   * it. */
  const tsr_stack* stack;
  const tsr_value* args; /* num_args arguments; tensors, lists and strings borrowed */
  /* views[i]: the view of args[i], NULL when it is no tensor. The runtime fills the views and
   * states each one's struct_size (the size it was built with): a kernel built against a later
   * minor reads only the fields within it. */
  const tsr_tensor_view* const* views;
  size_t num_args;
  /* The call's plan: compute dtype, device and num_outputs. Never NULL: a call without a plan
   * (an op without a Meta function) has compute_dtype -1 and num_outputs 0, as
   * tsr_stack_get_call_plan says. */
  const tsr_call_plan* plan;
  /* num_returns slots, each zeroed (TSR_VALUE_NONE) on entry: the kernel stores each return
   * there as the written argument's tensor (borrowed, as in args). The runtime checks that each
   * one is the argument the schema names, with the planned shape. */
  tsr_value* returns;
  size_t num_returns;
};

/* tsr_packed_kernel_fn (since 1.1): the fast entry of a boxed kernel for an op whose returns
 * are all arguments it writes (out= forms, in-place ops). It reads its arguments, their views
 * and the call plan from `call` (borrowed, below) with no table call,
 * and stores its returns in call->returns. Return NULL or a new error, as a boxed kernel. */
typedef struct tsr_kernel_call tsr_kernel_call;
typedef tsr_error* (*tsr_packed_kernel_fn)(void* context, const tsr_kernel_call* call);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_KERNEL_CALL_H_ */
