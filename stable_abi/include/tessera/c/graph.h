/* Tessera stable C ABI: a plugin's graph compiler, since 1.2. Optional.
 *
 * When an application compiles a model for a device (tsr_model_compile, model.h), the runtime
 * binds every node to what runs it there and would then run the nodes one by one. A plugin
 * that registered a graph compiler for the device type is first shown the bound graph and may
 * claim runs of consecutive nodes to execute as one: a graph-compiling NPU takes whole
 * subgraphs, a backend fuses a chain of elementwise ops or a convolution with the activation
 * after it. The runtime runs every node nobody claimed as before.
 *
 *   for first = 0 .. num_nodes-1, skipping what was claimed:
 *     claim(graph, first, &count)             count 0: the runtime runs node `first` itself
 *     prepare(graph, run, &executable)        once per claimed run, at compile time
 *   each model run: execute(executable, inputs, outputs)
 *   the compiled model released: release(executable)
 *
 * A claimed run's executable sees the run's constants that no node writes at compile time (the
 * model's host copies, in tsr_graph_arg.value), so it may transform them once (reorder a weight
 * into its own layout, fold a scale): that is the place for compile-time transforms of
 * constants. A constant some node writes (a training step's parameters) is shown as a value of
 * the run, known only when it runs. Constants that no claim takes reach their kernels immutable
 * (TSR_VIEW_IMMUTABLE, kernel_call.h), where a kernel may prepare them once too.
 *
 * The graph's element structs (tsr_graph_arg, tsr_graph_node) never grow: they are array
 * elements, indexed by their size as the plugin was built. A later minor adds what it shows of a
 * node as a new array in tsr_graph, whose struct_size tells whether the runtime filled it.
 *
 * Threads: claim and prepare run in the thread that compiles. execute may run in several threads
 * at once for one executable (runs of one compiled model may, model.h), so an executable keeps
 * no per-run state of its own. Unloading: a compiled model holding executables keeps the
 * plugin's code mapped until it is released (as a tensor does); an execute after the unload is an
 * UNAVAILABLE error naming the plugin, and release is still called. */
#ifndef TESSERA_C_GRAPH_H_
#define TESSERA_C_GRAPH_H_

#include "tessera/c/common.h"
#include "tessera/c/error.h"
#include "tessera/c/kernel_call.h"
#include "tessera/c/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tsr_graph_arg: one argument of a node, in the schema order of the runtime's op (defaults
 * filled in, literals converted to their schema types as a kernel receives them). */
typedef struct tsr_graph_arg {
  /* A literal: its value (lists and strings borrowed, valid during the call that shows it).
   * A Tensor argument: TSR_VALUE_TENSOR, with u.tensor the constant's host tensor when the
   * argument reads a constant of the model that no node writes (borrowed, read-only, valid
   * during the call) and NULL when it reads a value known only at run time. A Tensor[]
   * argument: TSR_VALUE_TENSOR_LIST, each element so. None: TSR_VALUE_NONE. */
  tsr_value value;
  /* The model values the argument reads: one for a Tensor, one per element for a Tensor[] (-1
   * for a None element); NULL and 0 for a literal or None. */
  const int32_t* values;
  size_t num_values;
} tsr_graph_arg;

/* tsr_graph_node: one node of the compiled graph. Values are numbered across the graph (model
 * inputs, constants, node outputs); a node reads only values defined before it. */
typedef struct tsr_graph_node {
  const tsr_op* op; /* the runtime's op (op.h: tsr_op_name, tsr_op_schema) */
  const tsr_graph_arg* args;
  size_t num_args;
  const int32_t* outputs; /* the values it defines, one per return (or per element of a
                           * Tensor[] return) */
  size_t num_outputs;
  /* How the runtime would run it (a tsr_node_route, model.h): a plugin may claim nodes that
   * would otherwise take the CPU fallback. TSR_NODE_FOLDED: the runtime folded it (a batch norm)
   * into the node that defines its first argument (a convolution, whose weight and bias
   * arguments show the folded constants); it reads only that argument, and its output is that
   * argument's value, passed on. A claimed folded node becomes TSR_NODE_CLAIMED. */
  int32_t route;
  uint32_t flags; /* TSR_GRAPH_NODE_* bits; test each with &: later minors add bits */
} tsr_graph_node;

/* Some of the node's literal arguments are known only when the model runs (size expressions of
 * its dynamic dims, defaults of arguments its op gained since the file was written); args shows
 * them as TSR_VALUE_NONE. A claim may not include such a node: the compile fails, naming it. */
#define TSR_GRAPH_NODE_OPAQUE 1u

/* tsr_graph: what a graph compiler is shown; borrowed for the call. */
typedef struct tsr_graph {
  size_t struct_size;
  tsr_device device; /* the device the model is compiled for */
  const tsr_graph_node* nodes;
  size_t num_nodes;
  size_t num_values;
  /* The model's outputs (values), which a run must produce. */
  const int32_t* outputs;
  size_t num_outputs;
} tsr_graph;

/* tsr_graph_run: a claimed run of nodes [first, first + count) and how it meets the rest of
 * the graph. inputs: the values its nodes read that none of them defines (model inputs,
 * constants, other nodes' outputs), each once, in the order its nodes first read them (node
 * order, then argument order, then list order). outputs: the values its nodes define that a
 * later node or a model output reads, in the order its nodes define them. execute receives and
 * returns tensors in these orders. */
typedef struct tsr_graph_run {
  size_t struct_size;
  size_t first;
  size_t count;
  const int32_t* inputs;
  size_t num_inputs;
  const int32_t* outputs;
  size_t num_outputs;
} tsr_graph_run;

/* tsr_graph_compiler: registered once per device type (tsr_graph_compiler_register); copied. */
typedef struct tsr_graph_compiler {
  size_t struct_size; /* sizeof(tsr_graph_compiler) as the plugin was built */
  int32_t device_type; /* the device type it compiles for (a tsr_device_type) */
  int32_t reserved;    /* 0 */
  void* context; /* passed to every function below */
  /* claim stores in *count how many nodes from `first` on it takes as one run: 0 for none, at
   * most num_nodes - first, with no TSR_GRAPH_NODE_OPAQUE node among them. An error fails the
   * compile, naming the plugin and the node. */
  tsr_error* (*claim)(void* context, const tsr_graph* graph, size_t first,
                      size_t* count /* out */);
  /* prepare makes the executable of a claimed run (*executable: the plugin's handle, passed to
   * execute and release). An error fails the compile, naming the plugin and the run. */
  tsr_error* (*prepare)(void* context, const tsr_graph* graph, const tsr_graph_run* run,
                        void** executable /* out */);
  /* execute runs the run on inputs[0, num_inputs) (borrowed; on the compiled device) and stores
   * a new reference to each of its outputs in outputs[0, num_outputs) (each a tensor on the
   * compiled device; the runtime checks). On error it stores nothing it keeps. */
  tsr_error* (*execute)(void* context, void* executable, tsr_tensor* const* inputs,
                        size_t num_inputs, tsr_tensor** outputs, size_t num_outputs);
  /* release frees an executable; once per prepare that succeeded. */
  void (*release)(void* context, void* executable);
} tsr_graph_compiler;

/* tsr_graph_compiler_register makes `compiler` (copied; every function required) the graph
 * compiler of its device type: tsr_model_compile shows it each graph compiled for a device of
 * that type. A plugin registers one for its own device type, in its register function (plugins
 * reach this through the runtime table's graph_compiler_register). ALREADY_EXISTS when the
 * device type has one; INVALID_ARGUMENT for a NULL function or a struct_size below the 1.2
 * size. out: a new registration (NULL: keep). */
TSR_API tsr_error* tsr_graph_compiler_register(const tsr_graph_compiler* compiler,
                                               tsr_registration** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_C_GRAPH_H_ */
