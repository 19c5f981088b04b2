/* Tessera stable C ABI: ops and the boxed value stack.
 *
 * An op is named "name.overload" ("add.Tensor"), looked up once with tsr_op_find, and called
 * with a stack of boxed values: push the arguments in schema order (trailing ones with
 * defaults may be left out), call, then read the returns from the stack. Kernels receive the
 * same stack: they read the arguments, clear it and push the returns.
 *
 * Since 1.1 a caller may also skip a defaulted argument in the middle (tsr_stack_push_default)
 * and pass arguments by name after the positional ones (tsr_stack_name_next), as Python does:
 *
 *   _to_copy(self, memory_format=contiguous_format):
 *     tsr_stack_push_tensor(stack, self);
 *     tsr_stack_name_next(stack, (tsr_string){"memory_format", 13});
 *     tsr_stack_push_int(stack, TSR_MEMORY_FORMAT_CONTIGUOUS);
 *
 * tsr_op_call binds such a stack to schema order before anything else, so a kernel always sees
 * every argument in its place. */
#ifndef TESSERA_C_OP_H_
#define TESSERA_C_OP_H_

#include "tessera/c/common.h"
#include "tessera/c/kernel_call.h" /* tsr_op, tsr_stack, tsr_value, tsr_scalar */

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handles (tsr_op and tsr_stack: kernel_call.h). */
typedef struct tsr_registration tsr_registration;

/* --- ops ----------------------------------------------------------------------------------- */

/* tsr_op_find looks up a defined op. name: borrowed. out: borrowed, valid for the process. */
TSR_API tsr_error* tsr_op_find(tsr_string name, const tsr_op** out);

/* tsr_op_name: "add.Tensor"; borrowed, valid for the process. */
TSR_API tsr_string tsr_op_name(const tsr_op* op);

/* tsr_op_schema: the op's schema in canonical form; borrowed, valid for the process. */
TSR_API tsr_string tsr_op_schema(const tsr_op* op);

/* tsr_op_call checks the arguments on `stack` against the op's schema, dispatches on the
 * devices of its tensors and runs the kernel; on success the stack holds the returns, and after
 * an error what it holds is unspecified (clear it before the next call).
 * op, stack: borrowed. */
TSR_API tsr_error* tsr_op_call(const tsr_op* op, tsr_stack* stack);

/* --- packed calls (since 1.1) --------------------------------------------------------------
 *
 * One call with every argument in an array, instead of one table call per pushed value: for
 * applications on a hot path (Note [Packed calls] in the runtime). */

/* tsr_op_call_values runs `op` as tsr_op_call does, on the arguments args[0, num_args) in
 * schema order (trailing defaulted arguments may be left out; TSR_VALUE_DEFAULT skips one in
 * the middle; TSR_VALUE_NAME is not accepted), and stores its returns in returns[0, *num_returns)
 * with tensors as new references that the caller releases. The op's returns must fit:
 * `capacity` at least the schema's number of returns, and none of them a list or string (call
 * such ops with tsr_op_call); both are checked before anything runs. A return holds the kind
 * the schema says (NONE for a None of an optional one, Tensor?), but a Scalar return may come
 * back as INT or DOUBLE. On error nothing is stored and *num_returns is 0. args, returns:
 * borrowed; returns may be NULL when capacity is 0. num_returns: out, may be NULL. */
TSR_API tsr_error* tsr_op_call_values(const tsr_op* op, const tsr_value* args, size_t num_args,
                                      tsr_value* returns, size_t capacity, size_t* num_returns);

/* tsr_op_define defines a new op by schema; vendors use their own namespace
 * ("npu::fused_gelu(Tensor self) -> Tensor"). out: a new registration whose release
 * undefines the op (NULL: keep it for the process). */
TSR_API tsr_error* tsr_op_define(tsr_string schema, tsr_registration** out);

/* tsr_registration_release undoes a registration (a definition, kernel, fallback or device).
 * NULL is a no-op. */
TSR_API void tsr_registration_release(tsr_registration* registration);

/* --- the op listing (since 1.1) ------------------------------------------------------------ */

/* tsr_op_list stores up to `capacity` defined ops, sorted by name, in ops[0..capacity) (ops may
 * be NULL when capacity is 0) and sets *count to how many ops are defined, so that a first
 * call with capacity 0 sizes the array. The handles are borrowed, valid for the process. It
 * lists what is defined now: it does not start default plugin discovery (tsr_op_find does; an
 * application that wants the discovered plugins' ops calls tsr_plugin_load_default first). */
TSR_API tsr_error* tsr_op_list(const tsr_op** ops, size_t capacity, size_t* count);

/* tsr_op_info describes an op. The caller zero-fills it and sets struct_size to the size it was
 * built with; the runtime fills only the fields that fit in it (a caller built against an older
 * minor gets the older fields). Strings are borrowed, valid while the op stays defined. */
typedef struct tsr_op_info {
  size_t struct_size;
  tsr_string name;        /* "add.Tensor" */
  tsr_string schema;      /* as tsr_op_schema */
  uint64_t num_arguments; /* described by tsr_op_argument */
  uint64_t num_returns;   /* described by tsr_op_return */
  /* The op set version that introduced the op (ops.lock); 0.0 for an op defined at run time
   * (by a plugin or the application). */
  uint32_t op_set_major;
  uint32_t op_set_minor;
  /* Deprecation (docs/op_schema_policy.md): 1 when the op is deprecated, with the op to use
   * instead (empty: none) and the op set version that removes it. */
  int32_t deprecated;
  int32_t reserved;
  tsr_string replacement;
  tsr_string removed_in;
} tsr_op_info;

/* tsr_arg_info describes one argument or return, with the same struct_size rule. */
typedef struct tsr_arg_info {
  size_t struct_size;
  tsr_string name;          /* empty for an unnamed return */
  tsr_string type;          /* as the schema writes it: "Tensor(a!)", "int[2]", "Scalar?" */
  int32_t kind;             /* the tsr_value_kind a caller pushes (besides NONE when optional) */
  int32_t optional;         /* 1: None is accepted */
  int32_t kwarg_only;       /* 1: after `*` in the schema */
  int32_t has_default;      /* 1: the argument may be left out (see tsr_op_info above) */
  tsr_string default_value; /* the default as schema text ("1", "None", "[0, 0]"); else empty */
  int32_t writes;           /* 1: the op writes this tensor (an alias annotation with `!`) */
  int32_t reserved;
} tsr_arg_info;

/* tsr_op_deprecate marks `op` deprecated (an application's own op, say): its first call
 * through tsr_op_call logs a warning, kernels registered for it get a note in their plugin's load
 * report, and tsr_op_describe reports it. replacement (may be empty), removed_in ("2.0"):
 * borrowed, copied. Since 1.1. */
TSR_API tsr_error* tsr_op_deprecate(const tsr_op* op, tsr_string replacement,
                                    tsr_string removed_in);

/* tsr_op_describe fills `out` (struct_size set by the caller; see tsr_op_info). */
TSR_API tsr_error* tsr_op_describe(const tsr_op* op, tsr_op_info* out);

/* tsr_op_argument and tsr_op_return describe the index-th argument or return; an index out of
 * range is OUT_OF_RANGE. */
TSR_API tsr_error* tsr_op_argument(const tsr_op* op, size_t index, tsr_arg_info* out);
TSR_API tsr_error* tsr_op_return(const tsr_op* op, size_t index, tsr_arg_info* out);

/* --- stacks -------------------------------------------------------------------------------- */

/* tsr_stack_create: an empty stack. out: new, release with tsr_stack_release. */
TSR_API tsr_error* tsr_stack_create(tsr_stack** out);
TSR_API void tsr_stack_release(tsr_stack* stack);

TSR_API size_t tsr_stack_size(const tsr_stack* stack);
/* tsr_stack_clear drops every value (kernels do this before pushing their returns). */
TSR_API void tsr_stack_clear(tsr_stack* stack);
/* tsr_stack_kind: the kind of value `index`; TSR_VALUE_NONE when out of range. */
TSR_API tsr_value_kind tsr_stack_kind(const tsr_stack* stack, size_t index);

/* Push: each value is copied onto the stack; a tensor is retained (tensor: borrowed). */
TSR_API tsr_error* tsr_stack_push_none(tsr_stack* stack);
TSR_API tsr_error* tsr_stack_push_tensor(tsr_stack* stack, tsr_tensor* tensor);
TSR_API tsr_error* tsr_stack_push_int(tsr_stack* stack, int64_t value);
TSR_API tsr_error* tsr_stack_push_double(tsr_stack* stack, double value);
TSR_API tsr_error* tsr_stack_push_bool(tsr_stack* stack, int32_t value);
TSR_API tsr_error* tsr_stack_push_string(tsr_stack* stack, tsr_string value);
TSR_API tsr_error* tsr_stack_push_int_list(tsr_stack* stack, const int64_t* values, size_t n);
TSR_API tsr_error* tsr_stack_push_double_list(tsr_stack* stack, const double* values, size_t n);
TSR_API tsr_error* tsr_stack_push_tensor_list(tsr_stack* stack, tsr_tensor* const* tensors,
                                              size_t n);
TSR_API tsr_error* tsr_stack_push_scalar(tsr_stack* stack, tsr_scalar value);
TSR_API tsr_error* tsr_stack_push_dtype(tsr_stack* stack, tsr_dtype value);
TSR_API tsr_error* tsr_stack_push_device(tsr_stack* stack, tsr_device value);

/* tsr_stack_push_bool_list pushes a bool[] of `n` bytes, each 0 (False) or not (True); NULL
 * values with n == 0 is the empty list. Since 1.1. */
TSR_API tsr_error* tsr_stack_push_bool_list(tsr_stack* stack, const uint8_t* values, size_t n);

/* Keyword and skipped arguments (since 1.1; a caller's stack only, not a kernel's returns).
 *
 * tsr_stack_push_default pushes a placeholder meaning "this argument's default": the argument
 * at its position (or the one named just before it) takes the value its schema gives it, as if
 * it had been left out. tsr_op_call refuses it for an argument without a default.
 *
 * tsr_stack_name_next says that the next value pushed is the argument called `name` (borrowed,
 * copied; not empty), like a Python keyword argument. Every argument after the first named
 * one must be named too; arguments neither pushed nor named take their defaults. tsr_op_call
 * refuses, naming the op: an unknown name (listing the op's argument names), an argument given
 * twice (by position and by name, or by two names), a positional value after a named one, a
 * name with no value after it, a missing argument that has no default, and a placeholder for
 * an argument without a default. A name right after another name is refused here.
 *
 * A stack with neither costs nothing more than before: tsr_op_call looks for the markers only
 * when the plain positional reading of the stack fails. */
TSR_API tsr_error* tsr_stack_push_default(tsr_stack* stack);
TSR_API tsr_error* tsr_stack_name_next(tsr_stack* stack, tsr_string name);

/* Get: read value `index`; an error names the expected and the found kind. Out values are
 * borrowed from the stack and valid until it changes (a tensor: call tsr_tensor_retain to
 * keep it longer). */
TSR_API tsr_error* tsr_stack_get_tensor(const tsr_stack* stack, size_t index, tsr_tensor** out);
TSR_API tsr_error* tsr_stack_get_int(const tsr_stack* stack, size_t index, int64_t* out);
TSR_API tsr_error* tsr_stack_get_double(const tsr_stack* stack, size_t index, double* out);
TSR_API tsr_error* tsr_stack_get_bool(const tsr_stack* stack, size_t index, int32_t* out);
TSR_API tsr_error* tsr_stack_get_string(const tsr_stack* stack, size_t index, tsr_string* out);
TSR_API tsr_error* tsr_stack_get_int_list(const tsr_stack* stack, size_t index,
                                          const int64_t** values, size_t* n);
TSR_API tsr_error* tsr_stack_get_double_list(const tsr_stack* stack, size_t index,
                                             const double** values, size_t* n);
/* tensors[i] for i < *n; a NULL entry stands for None in a Tensor?[] list. */
TSR_API tsr_error* tsr_stack_get_tensor_list(const tsr_stack* stack, size_t index,
                                             tsr_tensor* const** tensors, size_t* n);
TSR_API tsr_error* tsr_stack_get_scalar(const tsr_stack* stack, size_t index, tsr_scalar* out);
TSR_API tsr_error* tsr_stack_get_dtype(const tsr_stack* stack, size_t index, tsr_dtype* out);
TSR_API tsr_error* tsr_stack_get_device(const tsr_stack* stack, size_t index, tsr_device* out);
/* tsr_stack_get_bool_list: values[i] for i < *n, each 0 or 1 (values may be NULL when *n is
 * 0). Since 1.1. */
TSR_API tsr_error* tsr_stack_get_bool_list(const tsr_stack* stack, size_t index,
                                           const uint8_t** values, size_t* n);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_OP_H_ */
