/* Tessera conformance: op database entries for a vendor's own ops ("cases libraries").
 *
 * The conformance suite's op database covers op set v1. An op a plugin defines itself
 * (tsr_op_define, the SDK's lib.define(): "xpu::fused_scale_bias(...)") is not in it. A vendor
 * describes such ops in a small shared library of its own, built against this header alone (it
 * links nothing of Tessera, and nothing of its plugin: its references are host arithmetic), and
 * hands it to the suite beside the plugin:
 *
 *   conformance --plugin libxpu.so --cases libxpu_cases.so
 *
 * The library exports one C function, tsr_conformance_cases (TSR_CASES_ENTRY), which returns a
 * description of its ops: per op its name, the dtypes it supports, a function that makes sample
 * inputs, a reference that computes the expected returns on the host, and optionally error
 * inputs. The suite runs each op through the same oracles as its own (reference, layouts, meta,
 * cross_backend, dtype_claims, error_inputs; docs/conformance.md, "Vendor ops").
 *
 * Versioning, as the C ABI's (docs/abi_policy.md): every struct begins with struct_size (its
 * size up to its last field, as the writer was built) and only ever grows at its end; a reader
 * touches only the fields within the struct_size it was given. TSR_CASES_VERSION_MAJOR changes
 * only for a breaking change: the suite refuses a library built against another major, naming
 * both versions; a library built against a newer minor is read within what the suite knows (a
 * minor only adds fields that may be left zero). Enums carry a *_FORCE_INT32 sentinel.
 *
 * Ownership: everything the suite hands a callback is borrowed for the call. What the library
 * hands the suite (its description, names, the values a sink function reads) is borrowed: the
 * description must stay valid while the library is loaded (a static), values only for the call
 * that passes them (the suite copies them).
 *
 * Threads and processes: the suite calls a library from one thread at a time; with --isolate,
 * in a child process per op (so a library must not rely on state kept between calls). */
#ifndef TESSERA_CONFORMANCE_CASES_H_
#define TESSERA_CONFORMANCE_CASES_H_

#include "tessera/c/op.h" /* tsr_string, tsr_dtype, tsr_code, tsr_scalar */

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_CASES_VERSION_MAJOR 1
#define TSR_CASES_VERSION_MINOR 0

/* The name of the entry point, for dlsym. */
#define TSR_CASES_ENTRY "tsr_conformance_cases"

#if defined(__GNUC__)
#define TSR_CASES_EXPORT __attribute__((visibility("default")))
#else
#define TSR_CASES_EXPORT
#endif

/* tsr_cases_sink: where a callback puts what it makes (samples, error inputs, or a reference's
 * returns), through the suite's functions in tsr_cases_host. Opaque; valid for one call. */
typedef struct tsr_cases_sink tsr_cases_sink;

/* tsr_cases_tensor: a tensor on the host: its dtype, sizes and row-major values as doubles.
 * Each value is rounded to the dtype as a cast to it would (integers truncate toward zero and
 * wrap, bool is value != 0, float16 and bfloat16 round to nearest even); NaN and infinities
 * are allowed for floating dtypes. */
typedef struct tsr_cases_tensor {
  size_t struct_size;
  int32_t dtype; /* a tsr_dtype */
  int32_t reserved;
  const int64_t* sizes; /* dim entries, each >= 0; may be NULL when dim is 0 */
  size_t dim;           /* at most 16 */
  const double* values; /* numel entries, row-major; may be NULL when numel is 0 */
  size_t numel;         /* the product of the sizes (1 for dim 0); at most 2^24 */
} tsr_cases_tensor;

/* The kind of a sample's argument, in the op's schema order. */
typedef enum tsr_cases_arg_kind {
  TSR_CASES_ARG_NONE = 0,        /* None (an optional argument left empty) */
  TSR_CASES_ARG_TENSOR = 1,      /* Tensor: tensors[0] */
  TSR_CASES_ARG_TENSOR_LIST = 2, /* Tensor[]: tensors[0..count) */
  TSR_CASES_ARG_SCALAR = 3,      /* Scalar: scalar */
  TSR_CASES_ARG_INT = 4,         /* int: i */
  TSR_CASES_ARG_BOOL = 5,        /* bool: i (0 or 1) */
  TSR_CASES_ARG_DOUBLE = 6,      /* float: d */
  TSR_CASES_ARG_INT_LIST = 7,    /* int[]: ints[0..count) */
  TSR_CASES_ARG_STRING = 8,      /* str: string */
  TSR_CASES_ARG_DTYPE = 9,       /* ScalarType: i (a tsr_dtype) */
  TSR_CASES_ARG_DEVICE = 10,     /* Device: the device under test */
  TSR_CASES_ARG_BOOL_LIST = 11,  /* bool[]: ints[0..count), each 0 or 1 (since op set 1.3) */
  TSR_CASES_ARG_KIND_FORCE_INT32 = 0x7fffffff
} tsr_cases_arg_kind;

/* tsr_cases_arg: one argument of a sample, as a reference reads it. */
typedef struct tsr_cases_arg {
  size_t struct_size;
  int32_t kind; /* a tsr_cases_arg_kind */
  int32_t reserved;
  const tsr_cases_tensor* const* tensors; /* TENSOR (1), TENSOR_LIST (count) */
  const int64_t* ints;                    /* INT_LIST, BOOL_LIST (count) */
  size_t count;
  int64_t i;         /* INT, BOOL, DTYPE */
  double d;          /* DOUBLE */
  tsr_scalar scalar; /* SCALAR */
  tsr_string string; /* STRING */
} tsr_cases_arg;

/* tsr_cases_sample: a sample as a reference receives it. */
typedef struct tsr_cases_sample {
  size_t struct_size;
  tsr_string description;           /* as the library gave it */
  const tsr_cases_arg* const* args; /* num_args, in schema order */
  size_t num_args;
} tsr_cases_sample;

/* tsr_cases_random: how tsr_cases_host.arg_random_tensor draws values. Zero-filled: the
 * suite's defaults, as PyTorch's make_tensor: bool {0, 1}; uint8 [0, 10); other integers
 * [-9, 10); floating [-9, 9]. */
typedef struct tsr_cases_random {
  size_t struct_size;
  double low, high;     /* the range, when low < high */
  int32_t exclude_zero; /* 1: no zeros (divisors) */
  int32_t positive;     /* 1: (0, 9] for floating dtypes, [1, 10) for integers */
} tsr_cases_random;

/* tsr_cases_host: the suite's functions, handed to the entry point and to every callback.
 * Valid for the process. Each function returns TSR_OK (0) or an error code, and records the
 * first error of the call with what was expected and what was found; the suite reports it when
 * the callback returns (a library may check the codes or not). `sink` is the one the callback
 * received. */
typedef struct tsr_cases_host {
  size_t struct_size;
  uint32_t version_major; /* the interface the suite implements */
  uint32_t version_minor;

  /* In `samples` and `errors`: begin a sample; the arguments that follow are its, in the
   * op's schema order (trailing arguments with defaults may be left out). `errors` begins each
   * with error_sample instead, stating the code the op must fail with. */
  int32_t (*sample)(tsr_cases_sink* sink, tsr_string description);
  int32_t (*error_sample)(tsr_cases_sink* sink, tsr_string description, int32_t code);

  /* A sample's arguments. */
  int32_t (*arg_tensor)(tsr_cases_sink* sink, const tsr_cases_tensor* tensor);
  /* A tensor of random values from the suite's generator (seeded from --seed, the op and the
   * dtype, so that runs repeat). options: NULL for the defaults. */
  int32_t (*arg_random_tensor)(tsr_cases_sink* sink, int32_t dtype, const int64_t* sizes,
                               size_t dim, const tsr_cases_random* options);
  int32_t (*arg_tensor_list)(tsr_cases_sink* sink, const tsr_cases_tensor* const* tensors,
                             size_t count);
  int32_t (*arg_none)(tsr_cases_sink* sink);
  int32_t (*arg_scalar)(tsr_cases_sink* sink, tsr_scalar value);
  int32_t (*arg_int)(tsr_cases_sink* sink, int64_t value);
  int32_t (*arg_bool)(tsr_cases_sink* sink, int32_t value);
  int32_t (*arg_double)(tsr_cases_sink* sink, double value);
  int32_t (*arg_int_list)(tsr_cases_sink* sink, const int64_t* values, size_t count);
  int32_t (*arg_string)(tsr_cases_sink* sink, tsr_string value);
  int32_t (*arg_dtype)(tsr_cases_sink* sink, int32_t dtype);
  int32_t (*arg_device)(tsr_cases_sink* sink);

  /* In `reference`: the op's expected returns, one call per return, in order. */
  int32_t (*result)(tsr_cases_sink* sink, const tsr_cases_tensor* tensor);

  /* In any callback: why it returned an error (copied). */
  void (*message)(tsr_cases_sink* sink, tsr_string text);
} tsr_cases_host;

/* samples: the op's sample inputs for `dtype`, through host->sample and host->arg_*. It is
 * called for every dtype the run selects, declared or not: for a dtype the op does not declare,
 * the first sample checks that the op refuses it (make one sample of that dtype; none skips the
 * check). `seed` derives from --seed, the op and the dtype, for a library that draws its own
 * values. Returns TSR_OK, or an error code (with host->message) that fails the dtype's cases. */
typedef int32_t (*tsr_cases_samples_fn)(void* context, const tsr_cases_host* host,
                                        tsr_cases_sink* sink, int32_t dtype, uint64_t seed);

/* reference: the expected returns for `sample`, through host->result, computed on the host
 * (never by the plugin under test). Returns TSR_OK; TSR_UNIMPLEMENTED when there is no
 * reference for this sample (its cases are `skipped`); any other code (with host->message)
 * fails its cases. */
typedef int32_t (*tsr_cases_reference_fn)(void* context, const tsr_cases_host* host,
                                          tsr_cases_sink* sink, const tsr_cases_sample* sample);

/* errors: inputs the op must refuse, each begun with host->error_sample and the code it must
 * return (TSR_INVALID_ARGUMENT, ...). */
typedef int32_t (*tsr_cases_errors_fn)(void* context, const tsr_cases_host* host,
                                       tsr_cases_sink* sink, uint64_t seed);

/* tsr_cases_op: one op of the library. */
typedef struct tsr_cases_op {
  size_t struct_size;
  tsr_string name; /* the op as its plugin defines it: "xpu::fused" or "xpu::fused.overload" */
  /* The dtypes the op supports: bit (1u << dtype) per tsr_dtype (bits 0..9); at least one. */
  uint32_t dtypes;
  int32_t elementwise;              /* 1: its inputs may also be expanded (stride 0) views */
  double tolerance_scale;           /* multiplies the per-dtype tolerances; 0 means 1 */
  tsr_cases_samples_fn samples;     /* required */
  tsr_cases_reference_fn reference; /* required */
  tsr_cases_errors_fn errors;       /* optional: NULL for none */
  void* context;                    /* passed to the three */
} tsr_cases_op;

/* tsr_cases_library: what the entry point returns. */
typedef struct tsr_cases_library {
  size_t struct_size;
  uint32_t version_major; /* TSR_CASES_VERSION_MAJOR and _MINOR, as the library was built */
  uint32_t version_minor;
  tsr_string name;                /* for messages: "xpu cases" */
  const tsr_cases_op* const* ops; /* num_ops, each with its own struct_size */
  size_t num_ops;
} tsr_cases_library;

/* The entry point a cases library exports (with C linkage):
 *
 *   TSR_CASES_EXPORT const tsr_cases_library* tsr_conformance_cases(const tsr_cases_host* host);
 *
 * host: borrowed, valid for the process. Returns the library's description (valid while the
 * library is loaded), or NULL to refuse to run (the suite then exits with 2; the library may
 * say why on stderr). It
 * runs after the plugins are loaded, so the ops it names are defined; the suite checks each
 * name, dtype mask and callback and refuses a library it cannot use, naming what it expected and
 * what it found. */
typedef const tsr_cases_library* (*tsr_cases_entry_fn)(const tsr_cases_host* host);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_CONFORMANCE_CASES_H_ */
