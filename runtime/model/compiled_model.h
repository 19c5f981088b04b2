// A model compiled for one device: every node bound to its op once, its argument block built
// once, its intermediates released at their last use; then run any number of times.
//
// Note [Compiling a model]
// Compile does, once, what an eager program does on every call of every op:
//  - finds each node's op by name and holds the file's schema against today's (CompareSchemas,
//    the rule kernels follow): the same schema is bound as is; a backward-compatible change
//    (an argument added with a default) is bound with that default; a breaking change or an op
//    the runtime does not define is refused, every such node named in one error;
//  - asks the registry what runs each node on the device (a kernel, a derived form, a
//    composite, the device's fallback) and refuses nodes nothing runs, by node and op;
//  - converts every literal argument to its schema type (an int for a Scalar, a dtype, a device:
//    a device argument is the device the program was traced on and becomes the compile
//    device), so a run only copies the block and puts the tensors in (and, in a model with
//    dynamic dims, evaluates the size expressions of the nodes that have them: Note [Dynamic
//    dims] in dims.h);
//  - copies the constants to the device, and gives the compiled model its own copy of every
//    constant a node writes in place (an optimizer's update, batch norm's running statistics;
//    found by following the schemas' alias annotations through views): the model and its other
//    compiled forms never see the writes, and each run sees the previous run's, as the PyTorch
//    program would;
//  - marks immutable the other constants that no output shows (core's ImmutableAlias, Note
//  [Immutable
//    tensors] in core/tensor.cc): nothing writes them while the compiled model lives, so a
//    kernel may prepare one once and keep it (the CPU backend's convolution weights, reordered
//    into oneDNN's blocked layout);
//  - shows the graph to the device's graph compiler, if its plugin registered one
//    (tessera/c/graph.h), which may claim runs of consecutive nodes to execute as one (Note
//    [Claimed runs] in claimed_runs.cc); each claimed run is prepared now and is one step of a
//    run;
//  - folds each inference batch norm into the convolution before it where it may (Note
//    [Folding batch norm] in fold_batch_norm.h): the convolution runs with the folded weight and
//    bias, new constants of this compiled model, and the batch norm's node hands its output on;
//    constants no node reads any more stay on the host;
//  - computes each value's last reader, so a run drops an intermediate (and the memory returns
//    to the device's allocator) as soon as no later node reads it; a small CPU one that nothing
//    else holds is kept instead for a later node of its layout to write into (Note [Spare
//    outputs] in dispatcher/prepared_call.cc, Note [Run states] below);
//  - marks the nodes whose calls may take the unboxed fast path (Note [The unboxed fast path]
//    in dispatcher/unboxed_call.cc): the op has an unboxed plan and every argument is a tensor,
//    a Scalar or None as the schema has it. A run hands those their tensors in place, with no
//    Stack; a call the fast path does not take (a dtype or device it does not serve) goes the
//    boxed way, with the same results and errors. Such a node's first run prepares its call
//    (Note [Prepared calls] in dispatcher/prepared_call.cc): later runs whose tensors have the
//    same metadata skip planning it again.
// A run keeps its values in its own table (Note [Run states]): runs of one compiled model may
// go on in several threads at once, except for a model that writes its constants, whose runs
// take turns (a lock), since each reads what the last one wrote.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/device.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/prepared_call.h"
#include "dispatcher/value.h"
#include "runtime/model/model.h"

namespace tessera::capi {
class GraphExecutable;  // runtime/graph_compiler.h
}  // namespace tessera::capi

namespace tessera {
namespace model {

// How a node runs on the compiled device.
enum class NodeRoute : int32_t {
  kNative = 0,     // a kernel of the device (or a form derived from one)
  kComposite = 1,  // the op's composite: other ops, each dispatched on its own
  kFallback = 2,   // the device's fallback (e.g. copied to the CPU and back)
  kFolded = 3,     // folded into an earlier node at compile time (fold_batch_norm.h): no call
  kClaimed = 4,    // part of a run of nodes the device's graph compiler executes as one
};
std::string_view NodeRouteName(NodeRoute route);

// RunStats: what a profiled run measured (tsr_compiled_model_run_profiled).
struct RunStats {
  // Bytes of the intermediates' storages (node outputs that are not views of inputs or
  // constants; a storage counted once however many views share it): the most alive at once,
  // and the sum over the run as if none were freed.
  uint64_t peak_intermediate_bytes = 0;
  uint64_t total_intermediate_bytes = 0;
  // Each node's wall time in ns (on an asynchronous device: the time to enqueue it).
  std::vector<uint64_t> node_ns;
};

// CompileOptions: what compiling may do beyond binding each node (tsr_compile_options).
struct CompileOptions {
  bool claims = true;  // offer the graph to the device's graph compiler (claimed_runs.cc)
  bool fold = true;    // fold batch norms (fold_batch_norm.h); TESSERA_FOLD_BATCH_NORM=0 too
};

class CompiledModel {
 public:
  static absl::StatusOr<std::unique_ptr<CompiledModel>> Compile(std::shared_ptr<const Model> model,
                                                                Device device, OpRegistry& registry,
                                                                CompileOptions options = {});
  ~CompiledModel();

  const Model& model() const { return *model_; }
  Device device() const { return device_; }
  size_t num_nodes() const { return nodes_.size(); }
  NodeRoute route(size_t node) const { return nodes_[node].route; }
  const std::string& op_name(size_t node) const { return nodes_[node].op.name(); }

  // writes_constants: whether nodes write constants in place (its runs take turns).
  bool writes_constants() const { return writes_constants_; }

  // Run checks `inputs` (one per model input: its dtype and sizes, on the compiled device) and
  // returns the model's outputs. An error from a node names the node and its op.
  // With `stats`, the run also measures it (at some cost per node).
  absl::StatusOr<std::vector<Tensor>> Run(absl::Span<const Tensor> inputs,
                                          RunStats* stats = nullptr) const;

 private:
  struct TensorSlot {
    size_t arg;                   // index in the argument block
    std::vector<int32_t> values;  // one value (a Tensor argument) or a list's (-1: None)
    bool list = false;
  };
  // DynamicArg: a literal argument with size expressions (Note [Dynamic dims] in dims.h),
  // evaluated into each run's argument block.
  struct DynamicArg {
    size_t arg;              // index in the argument block
    const GraphArg* source;  // the model's argument (the model outlives its compiled forms)
    SchemaType type;         // the file's schema type of the argument
    std::string name;        // the argument's name, for errors
  };
  struct BoundNode {
    explicit BoundNode(OperatorHandle o) : op(std::move(o)) {}
    OperatorHandle op;
    NodeRoute route = NodeRoute::kNative;
    Stack arguments;  // literals converted; tensor slots None until a run fills them
    std::vector<TensorSlot> tensors;
    std::vector<DynamicArg> dynamic;
    // What a run reads of a node on its fast path is held in the node itself, not in blocks of
    // its own on the heap (Note [Run states]: a line missed costs more than the work).
    absl::InlinedVector<int32_t, 2> release_after;  // values no later node or output reads
    absl::InlinedVector<int32_t, 1> outputs;        // the model node's
    // unboxed: the node may take the unboxed fast path (Note [Compiling a model]); then
    // unboxed_args[i] is where argument i comes from (the fast path's form of `arguments` and
    // `tensors`, made from them at compile and changed with them by PointAt).
    bool unboxed = false;
    struct UnboxedSource {
      int32_t value = -1;  // the value a tensor argument reads; -1: a literal
      bool none = false;   // the literal: None, else `scalar`
      Scalar scalar;
    };
    absl::InlinedVector<UnboxedSource, 4> unboxed_args;
    // list_return: the op's one return is a Tensor[], whose elements are the node's outputs.
    bool list_return = false;
    // A kFolded node's output 0 is this value (the convolution's output that absorbed it).
    int32_t forward_from = -1;
    // The first node of a claimed run: the run's index in runs_ (else -1).
    int32_t run = -1;
  };
  // A run of nodes the device's graph compiler claimed (Note [Claimed runs] in claimed_runs.cc).
  struct ClaimedRun {
    size_t first = 0, count = 0;
    std::vector<int32_t> inputs, outputs;  // tsr_graph_run's
    std::unique_ptr<capi::GraphExecutable> executable;
  };
  // ClaimRuns offers the bound nodes to the device's graph compiler, if any; `last_reader[v]`:
  // the last node that reads value v (or defines it, when none reads it), -1 for a model output;
  // `folded`: the constants folding made, shown as constants too; `written`: the constants
  // nodes write, shown as run-time values.
  struct FoldedConstant;
  absl::Status ClaimRuns(const std::vector<int32_t>& last_reader,
                         const std::vector<FoldedConstant>& folded,
                         const absl::flat_hash_set<int32_t>& written);
  // RunName: "node 3 (relu)" or "nodes 3 (relu) to 5 (add.Tensor)", for errors.
  std::string RunName(size_t first, size_t count) const;
  // RunClaimed executes run `r`, storing its outputs in `values`.
  absl::Status RunClaimed(const ClaimedRun& r, std::vector<Tensor>& values) const;
  // PointAt makes node argument `arg` read value `value` (a folded constant).
  static void PointAt(BoundNode& node, size_t arg, int32_t value);
  // A constant compiling made (fold_batch_norm.h): a host tensor under a new value id.
  struct FoldedConstant {
    int32_t id;
    Tensor host;
    size_t node;       // the convolution that reads it
    const char* what;  // "weight" or "bias"
  };
  // Fold applies Note [Folding batch norm] to the bound nodes (`written`, `shown`: the
  // constants nodes write and outputs show, which never fold) and returns the constants it made.
  absl::StatusOr<std::vector<FoldedConstant>> Fold(const absl::flat_hash_set<int32_t>& written,
                                                   const absl::flat_hash_set<int32_t>& shown);

  // Note [Run states]
  // What a run changes lives in a RunState: its table of values and its spare outputs (Note
  // [Spare outputs] in dispatcher/prepared_call.cc). A run acquires an idle state from the
  // compiled model (or makes one when every state is in use by runs in other threads) and
  // returns it at its end with every value undefined and the spares kept, so a run reuses the
  // table and the spares of the run before it without an atomic operation per node.
  // The spares are a short stack (SpareStack) of the tensors the run released most recently
  // among the outputs of the nodes that may write one (may_spare_), and a node's prepared call
  // takes one whose layout is its output's. In a chain, the output a node writes is then the
  // tensor its own input was a node earlier, still in the core's first-level cache: one spare
  // per node, kept from one run to the next, was a tensor last touched a whole run before (four
  // cache lines missed per node; replay of a 1-element chain spent more time waiting for such
  // lines than computing). The idle states are as many as the most runs that went on at once;
  // each holds at most SpareStack::kSpares spares of at most kMaxSpareBytes, and they go only
  // with the compiled model.
  struct RunState {
    std::vector<Tensor> values;  // one per value; every one undefined between runs
    SpareStack spares;
  };
  // SettleRunStates computes values_left_defined_ and may_spare_, once the nodes are final
  // (after folding and claiming).
  void SettleRunStates();
  // AcquireState: an idle state, or a new one.
  std::unique_ptr<RunState> AcquireState() const;
  // ReturnState makes `state` idle again; `finished`: its run finished, which left defined
  // only the values in values_left_defined_ (otherwise every value is released here).
  void ReturnState(std::unique_ptr<RunState> state, bool finished) const;
  // RunWith is Run's work, in `state`, with `dims` its inputs' (CheckInputs).
  absl::StatusOr<std::vector<Tensor>> RunWith(RunState& state, absl::Span<const Tensor> inputs,
                                              absl::Span<const int64_t> dims,
                                              RunStats* stats) const;

  // RunNode makes node `n`'s call and stores its returns in `state`'s values.
  // `dims`: the run's value of each dim of the model.
  absl::Status RunNode(size_t n, bool fast_path, absl::Span<const int64_t> dims,
                       RunState& state) const;
  // CheckInputs: `inputs` fit the model's inputs (count, dtype, sizes, device); the run's dims.
  absl::StatusOr<std::vector<int64_t>> CheckInputs(absl::Span<const Tensor> inputs) const;
  // NodeError: `s` from node `n`, its message prefixed with the model, the node and its op.
  absl::Status NodeError(size_t n, const absl::Status& s) const;
  // RunUnboxed makes node `n`'s call the short way when the fast path takes it, storing its
  // returns in `state`'s values; false: not taken, nothing done.
  absl::StatusOr<bool> RunUnboxed(const BoundNode& node, size_t n, RunState& state) const;
  absl::Status StoreReturns(size_t n, Tensor* returns, size_t count,
                            std::vector<Tensor>& values) const;
  // Prepared: node `n`'s prepared call, made from `args` (its call on this run) if it has none
  // yet; NULL when its op's calls are never prepared, or this call could not be (its plan
  // failed: a later run tries again).
  const PreparedCall* Prepared(size_t n, const UnboxedArgs& args) const;

  CompiledModel(std::shared_ptr<const Model> model, Device device, OpRegistry& registry);

  std::shared_ptr<const Model> model_;
  Device device_;
  OpRegistry& registry_;
  std::vector<BoundNode> nodes_;
  std::vector<ClaimedRun> runs_;
  // Values of a run: the model's, and the folded constants' after them.
  size_t num_values_ = 0;
  std::vector<std::pair<int32_t, Tensor>> constants_;  // on device_
  bool writes_constants_ = false;
  mutable std::mutex run_mu_;  // held by a run when writes_constants_
  // One per node: its prepared call, published once by the first run that makes it (runs in
  // other threads may race to; the first one published is kept), owned here.
  struct PreparedSlot {
    std::atomic<const PreparedCall*> call{nullptr};
    std::atomic<bool> refused{false};  // its op's calls are never prepared
  };
  // Written by runs (const): the slots are what a run may change.
  mutable std::unique_ptr<PreparedSlot[]> prepared_;
  // The values a finished run has not released: those no node releases (the outputs, the
  // inputs and constants nothing reads, the constants folding made).
  std::vector<int32_t> values_left_defined_;
  // Per value: whether it is the one output of a node that may write a spare (a native node
  // called unboxed, not folded or claimed), and so may be kept as one when released.
  std::vector<uint8_t> may_spare_;
  // Note [Run states]: the idle ones.
  mutable std::mutex states_mu_;
  mutable std::vector<std::unique_ptr<RunState>> idle_states_;
};

}  // namespace model
}  // namespace tessera
