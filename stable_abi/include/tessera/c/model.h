/* Tessera stable C ABI: models, since 1.2. A model file (docs/model_format.md, written by the
 * exporter tessera_export) is loaded once, compiled for a device once, and run many times:
 *
 *     tsr_model* model;                       tsr_compiled_model* compiled;
 *     tsr_model_load(path, &model);           tsr_model_compile(model, device, &compiled);
 *     tsr_compiled_model_run(compiled, inputs, 1, outputs, 1);   ... as often as needed
 *     tsr_compiled_model_release(compiled);   tsr_model_release(model);
 *
 * Loading reads and checks the whole file (a malformed, truncated or newer-format file is an
 * error naming the field or byte; nothing is run). Compiling binds every node to its op and to
 * what runs it on the device, copies the constants there, and refuses a model with nodes that
 * cannot run, naming each node and op. A compiled model holds its model; either may be released
 * first. Runs of one compiled model may go on in several threads at once, except those of a
 * model whose nodes write its constants in place (a training step), which take turns. */
#ifndef TESSERA_C_MODEL_H_
#define TESSERA_C_MODEL_H_

#include "tessera/c/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsr_model tsr_model;
typedef struct tsr_compiled_model tsr_compiled_model;

/* tsr_model_load reads the model file at `path` (borrowed). out: new, release with
 * tsr_model_release. NOT_FOUND: no such file; PERMISSION_DENIED: it cannot be opened;
 * INVALID_ARGUMENT: not a valid model file; FAILED_PRECONDITION: a format version newer than
 * this runtime reads (both are named). */
TSR_API tsr_error* tsr_model_load(tsr_string path, tsr_model** out);
/* tsr_model_load_from_memory reads a model file's bytes (borrowed; not needed after the call). */
TSR_API tsr_error* tsr_model_load_from_memory(const void* data, size_t nbytes, tsr_model** out);
TSR_API void tsr_model_release(tsr_model* model);

/* The model's name, inputs, outputs and nodes; names are borrowed, valid as long as the model.
 * A name asked for an index out of range is empty. */
TSR_API tsr_string tsr_model_name(const tsr_model* model);
TSR_API size_t tsr_model_num_inputs(const tsr_model* model);
TSR_API size_t tsr_model_num_outputs(const tsr_model* model);
TSR_API size_t tsr_model_num_nodes(const tsr_model* model);
TSR_API tsr_string tsr_model_input_name(const tsr_model* model, size_t index);
TSR_API tsr_string tsr_model_output_name(const tsr_model* model, size_t index);

/* Dynamic dims (docs/model_format.md, "Dynamic dims"): the dims, a batch or a sequence length,
 * whose every size in a range the model serves through one compiled form; none for a model of
 * fixed sizes. A run reads each dim off its inputs and refuses a size outside its range, or
 * inputs that disagree on a dim (INVALID_ARGUMENT naming the input, the axis and the dims). A
 * dim's name is borrowed, valid as long as the model; empty for an index out of range. */
TSR_API size_t tsr_model_num_dims(const tsr_model* model);
TSR_API tsr_string tsr_model_dim_name(const tsr_model* model, size_t index);
/* tsr_model_dim_range stores the dim's smallest and largest size in *min and *max (INT64_MAX:
 * no bound). OUT_OF_RANGE for an index past the dims; INVALID_ARGUMENT for a NULL pointer. */
TSR_API tsr_error* tsr_model_dim_range(const tsr_model* model, size_t index, int64_t* min /* out */,
                                       int64_t* max /* out */);

/* tsr_model_example_input / tsr_model_expected_output: the file's example input `index` and
 * PyTorch's output `index` for the example inputs, as CPU tensors. out: a new reference (the
 * tensor is the model's; do not write to it). NOT_FOUND when the file has none;
 * OUT_OF_RANGE for an index past the inputs or outputs. */
TSR_API tsr_error* tsr_model_example_input(const tsr_model* model, size_t index, tsr_tensor** out);
TSR_API tsr_error* tsr_model_expected_output(const tsr_model* model, size_t index,
                                             tsr_tensor** out);

/* tsr_model_compile binds `model` for `device`: every node's op and what runs it there, each
 * literal argument converted to its schema type, the constants copied to the device (those a
 * node writes in place: a copy of the compiled model's own; those no node writes and no output
 * shows reach kernels immutable, TSR_VIEW_IMMUTABLE in kernel_call.h, since 1.2: the model's
 * weights never change while it is compiled, so a backend may prepare each once). out: new,
 * release with tsr_compiled_model_release. FAILED_PRECONDITION: nodes that cannot run on the device
 * (an op the runtime does not define, a schema changed incompatibly since the file was written,
 * nothing registered for the device), each named by node index and op; INVALID_ARGUMENT: an
 * argument that does not fit its schema type, named. */
TSR_API tsr_error* tsr_model_compile(const tsr_model* model, tsr_device device,
                                     tsr_compiled_model** out);
TSR_API void tsr_compiled_model_release(tsr_compiled_model* compiled);

/* tsr_compile_options (since 1.2): what compiling may do beyond binding each node. Zero-fill it
 * and set struct_size to sizeof (a later minor may append fields; the runtime reads only those
 * within struct_size). */
typedef struct tsr_compile_options {
  uint64_t struct_size;
  uint32_t flags; /* TSR_COMPILE_* bits */
  uint32_t reserved;
} tsr_compile_options;
/* No graph compiler (graph.h) is shown the graph: every node runs on its own. Conformance
 * compiles so to check a plugin's claimed runs against its nodes one by one. */
#define TSR_COMPILE_NO_CLAIMS 1u
/* No batch norm is folded into the convolution before it (as TESSERA_FOLD_BATCH_NORM=0). */
#define TSR_COMPILE_NO_FOLDING 2u

/* tsr_model_compile_with_options (since 1.2) compiles as tsr_model_compile does, as `options`
 * say (NULL: as tsr_model_compile). INVALID_ARGUMENT for a struct_size below 12 (through
 * flags) or a flag this runtime does not know (named). */
TSR_API tsr_error* tsr_model_compile_with_options(const tsr_model* model, tsr_device device,
                                                  const tsr_compile_options* options,
                                                  tsr_compiled_model** out);

/* tsr_compiled_model_run runs the model on inputs[0, num_inputs), one per model input with its
 * dtype and sizes, on the compiled device (borrowed), and stores a new reference to each output
 * in outputs[0, num_outputs) (num_outputs must be tsr_model_num_outputs). On error nothing is
 * stored; an error from a node names the node and its op. */
TSR_API tsr_error* tsr_compiled_model_run(const tsr_compiled_model* compiled,
                                          tsr_tensor* const* inputs, size_t num_inputs,
                                          tsr_tensor** outputs, size_t num_outputs);

/* tsr_model_run_stats: what tsr_compiled_model_run_profiled measured. The caller zero-fills it
 * and sets struct_size to sizeof (a later minor may append fields; the runtime writes only the
 * fields that fit in struct_size). */
typedef struct tsr_model_run_stats {
  uint64_t struct_size;
  /* Bytes of the intermediates' storages (node outputs that are not views of inputs or
   * constants; a storage counted once however many views share it): the most alive at once
   * (intermediates are released at their last use), and the sum over the run as if none were
   * freed. */
  uint64_t peak_intermediate_bytes;
  uint64_t total_intermediate_bytes;
  /* node_ns: NULL, or the caller's array of node_ns_capacity entries, which receives each
   * node's wall time in ns (on an asynchronous device: the time to enqueue it), in node order;
   * entries past the node count are left alone. */
  uint64_t* node_ns;
  uint64_t node_ns_capacity;
} tsr_model_run_stats;

/* tsr_compiled_model_run_profiled runs as tsr_compiled_model_run does and fills `stats`
 * (required); measuring costs a little per node. */
TSR_API tsr_error* tsr_compiled_model_run_profiled(const tsr_compiled_model* compiled,
                                                   tsr_tensor* const* inputs, size_t num_inputs,
                                                   tsr_tensor** outputs, size_t num_outputs,
                                                   tsr_model_run_stats* stats);

/* How a compiled node runs on its device. */
typedef enum tsr_node_route {
  TSR_NODE_NATIVE = 0,    /* a kernel of the device's plugin */
  TSR_NODE_COMPOSITE = 1, /* the op's composite of other ops, each dispatched on its own */
  TSR_NODE_FALLBACK = 2,  /* the device's fallback (for example, copied to the CPU and back) */
  /* since 1.2: folded at compile time into an earlier node, which computes its output (an
   * inference batch norm into the convolution before it: docs/embedding_guide.md, "Running a
   * model"); the node makes no call. */
  TSR_NODE_FOLDED = 3,
  /* since 1.2: part of a run of nodes that the device's graph compiler claimed and executes as
   * one (graph.h); a profiled run gives the run's time to its first node, 0 to the others. */
  TSR_NODE_CLAIMED = 4,
  TSR_NODE_ROUTE_FORCE_INT32 = 0x7fffffff
} tsr_node_route;

/* tsr_compiled_model_node_route / _node_op: how node `index` runs and its op ("add.Tensor",
 * borrowed, valid as long as the compiled model); FALLBACK and empty for an index out of range. */
TSR_API tsr_node_route tsr_compiled_model_node_route(const tsr_compiled_model* compiled,
                                                     size_t index);
TSR_API tsr_string tsr_compiled_model_node_op(const tsr_compiled_model* compiled, size_t index);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_MODEL_H_ */
