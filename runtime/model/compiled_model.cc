#include "runtime/model/compiled_model.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "dispatcher/dispatch_key.h"
#include "dispatcher/prepared_call.h"
#include "dispatcher/schema.h"
#include "dispatcher/schema_compat.h"
#include "dispatcher/unboxed_call.h"
#include "runtime/call_recorder.h"
#include "runtime/graph_compiler.h"
#include "runtime/model/fold_batch_norm.h"

namespace tessera {
namespace model {
namespace {

std::string NodeName(size_t index, const GraphNode& node) {
  return absl::StrFormat("node %d (%s)", index, node.op);
}

// ToValue: a literal argument as the schema type wants it (Note [Compiling a model]).
Value ToValue(const GraphArg& a, const SchemaType& type, Device device) {
  using K = GraphArg::Kind;
  const bool scalar = type.base == BaseType::kScalar && !type.is_list;
  switch (a.kind) {
    case K::kNone:
    case K::kTensor:
    case K::kTensors:
      return Value();
    case K::kInt:
      if (scalar) return Value(Scalar(a.i));
      if (type.base == BaseType::kFloat && !type.is_list) return Value(static_cast<double>(a.i));
      return Value(a.i);
    case K::kFloat:
      return scalar ? Value(Scalar(a.d)) : Value(a.d);
    case K::kBool:
      return scalar ? Value(Scalar(a.b)) : Value(a.b);
    case K::kStr:
      return Value(a.s);
    case K::kDtype:
      return Value(a.dtype);
    case K::kDevice:
      return Value(device);
    case K::kMemoryFormat:
    case K::kLayout:
      return Value(a.i);
    case K::kInts:
      if (type.base == BaseType::kFloat) {
        return Value(std::vector<double>(a.ints.begin(), a.ints.end()));
      }
      return Value(IntList(a.ints.begin(), a.ints.end()));
    case K::kFloats:
      return Value(a.floats);
    case K::kBools:
      return Value(a.bools);
  }
  return Value();
}

// KindName: an argument kind as the format writes it.
std::string_view KindName(GraphArg::Kind k) {
  using K = GraphArg::Kind;
  switch (k) {
    case K::kNone:
      return "none";
    case K::kTensor:
      return "tensor";
    case K::kTensors:
      return "tensors";
    case K::kInt:
      return "int";
    case K::kFloat:
      return "float";
    case K::kBool:
      return "bool";
    case K::kStr:
      return "str";
    case K::kDtype:
      return "dtype";
    case K::kDevice:
      return "device";
    case K::kMemoryFormat:
      return "memory_format";
    case K::kLayout:
      return "layout";
    case K::kInts:
      return "ints";
    case K::kFloats:
      return "floats";
    case K::kBools:
      return "bools";
  }
  return "?";
}

// KindFits: whether an argument the file gives as `k` is one the schema type `t` takes (the
// table in docs/model_format.md, "The graph"), so that a file that does not fit its schema is
// refused at compile, naming the argument, not at its first run.
bool KindFits(GraphArg::Kind k, const SchemaType& t) {
  using K = GraphArg::Kind;
  if (k == K::kNone) return t.optional || t.base == BaseType::kGenerator;
  if (t.is_list) {
    switch (t.base) {
      case BaseType::kTensor:
        return k == K::kTensors;
      case BaseType::kInt:
        return k == K::kInts || (k == K::kInt && t.list_size.has_value());
      case BaseType::kFloat:
        return k == K::kFloats || k == K::kInts;
      case BaseType::kBool:
        return k == K::kBools;
      default:
        return true;  // lists the format has no kind for: the run decides
    }
  }
  switch (t.base) {
    case BaseType::kTensor:
      return k == K::kTensor;
    case BaseType::kInt:
      return k == K::kInt;
    case BaseType::kFloat:
      return k == K::kFloat || k == K::kInt;
    case BaseType::kBool:
      return k == K::kBool;
    case BaseType::kStr:
      return k == K::kStr;
    case BaseType::kScalar:
      return k == K::kInt || k == K::kFloat || k == K::kBool;
    case BaseType::kScalarType:
      return k == K::kDtype;
    case BaseType::kDevice:
      return k == K::kDevice;
    case BaseType::kLayout:
      return k == K::kLayout;
    case BaseType::kMemoryFormat:
      return k == K::kMemoryFormat;
    case BaseType::kGenerator:
      return false;
  }
  return false;
}

// CopyTo: `t` on `device`, a copy of its own when `copy` (else `t` itself where it already is).
absl::StatusOr<Tensor> CopyTo(const Tensor& t, Device device, bool copy, OpRegistry& registry) {
  if (t.device() == device && !copy) return t;
  TSR_ASSIGN_OR_RETURN(OperatorHandle to_copy, registry.Find("_to_copy"));
  // _to_copy(Tensor self, *, ScalarType? dtype, Layout? layout, Device? device, ...): a copy.
  Stack stack;
  stack.push_back(Value(t));
  stack.push_back(Value(ArgumentName{"device"}));
  stack.push_back(Value(device));
  TSR_RETURN_IF_ERROR(registry.Call(to_copy, &stack));
  return stack[0].tensor();
}

// ConstantRoots follows the schemas' alias annotations: root[v] is the constant value `v` is
// (or is a view of, or was written in place from), -1 for none. It returns the constants some
// node writes (an argument `Tensor(a!)` whose value has a root) and those an output shows (the
// application holds them after a run, and may write them).
class ConstantRoots {
 public:
  explicit ConstantRoots(const Model& m) : root_(m.value_names.size(), -1) {
    for (const auto& [id, t] : m.constants) root_[id] = id;
  }
  // Node: the node's arguments (as the file's schema types them) and outputs (as `returns`).
  void Node(const GraphNode& node, const FunctionSchema& saved,
            const std::vector<Argument>& returns) {
    for (size_t i = 0; i < node.args.size() && i < saved.arguments.size(); ++i) {
      const std::optional<AliasInfo>& alias = saved.arguments[i].alias;
      if (!alias) continue;
      const bool writes = alias->is_write && !StatisticsWrittenOnlyInTraining(node, i);
      for (int32_t v : node.args[i].values) {
        if (v < 0 || root_[v] < 0) continue;
        if (writes) written_.insert(root_[v]);
        // A single list return (Tensor(a)[]) is every output of the node; otherwise output k
        // is return k.
        const bool list_return = returns.size() == 1 && returns[0].type.is_list;
        for (size_t k = 0; k < node.outputs.size() && (list_return || k < returns.size()); ++k) {
          const Argument& ret = returns[list_return ? 0 : k];
          if (ret.alias && ret.alias->set == alias->set) root_[node.outputs[k]] = root_[v];
        }
      }
    }
  }
  const absl::flat_hash_set<int32_t>& written() const { return written_; }

  absl::flat_hash_set<int32_t> shown(const std::vector<GraphOutput>& outputs) const {
    absl::flat_hash_set<int32_t> shown;
    for (const GraphOutput& out : outputs) {
      if (out.value >= 0 && root_[out.value] >= 0) shown.insert(root_[out.value]);
    }
    return shown;
  }

 private:
  std::vector<int32_t> root_;
  absl::flat_hash_set<int32_t> written_;
};

// LiveBytes: the bytes of the intermediates' storages a run holds, for RunStats.
class LiveBytes {
 public:
  explicit LiveBytes(RunStats* stats) : stats_(stats) {}
  // Outside: the storages of inputs and constants, which are not intermediates.
  void Outside(const Tensor& t) {
    if (t.defined()) outside_.insert(t.impl()->storage().get());
  }
  void Hold(const Tensor& t) {
    if (!t.defined()) return;
    const StorageImpl* s = t.impl()->storage().get();
    if (outside_.contains(s)) return;
    if (++held_[s] == 1) {
      live_ += s->nbytes();
      stats_->total_intermediate_bytes += s->nbytes();
      stats_->peak_intermediate_bytes = std::max(stats_->peak_intermediate_bytes, live_);
    }
  }
  // Drop: a value let go of its tensor. A storage no value holds is forgotten (its address
  // may come back as a new storage's).
  void Drop(const Tensor& t) {
    if (!t.defined()) return;
    auto it = held_.find(t.impl()->storage().get());
    if (it == held_.end() || --it->second > 0) return;
    live_ -= it->first->nbytes();
    held_.erase(it);
  }

 private:
  RunStats* stats_;
  uint64_t live_ = 0;
  absl::flat_hash_set<const StorageImpl*> outside_;
  absl::flat_hash_map<const StorageImpl*, int> held_;  // values holding each storage
};

}  // namespace

std::string_view NodeRouteName(NodeRoute route) {
  switch (route) {
    case NodeRoute::kNative:
      return "native";
    case NodeRoute::kComposite:
      return "composite";
    case NodeRoute::kFallback:
      return "fallback";
    case NodeRoute::kFolded:
      return "folded";
    case NodeRoute::kClaimed:
      return "claimed";
  }
  return "?";
}

void CompiledModel::PointAt(BoundNode& node, size_t arg, int32_t value) {
  auto slot = std::find_if(node.tensors.begin(), node.tensors.end(),
                           [&](const TensorSlot& s) { return s.arg == arg; });
  if (slot != node.tensors.end()) {
    *slot = TensorSlot{arg, {value}, false};
  } else {
    node.tensors.push_back(TensorSlot{arg, {value}, false});  // was None
  }
  if (node.unboxed) {
    node.unboxed_args[arg].value = value;
    node.unboxed_args[arg].none = false;
  }
}

absl::StatusOr<std::vector<CompiledModel::FoldedConstant>> CompiledModel::Fold(
    const absl::flat_hash_set<int32_t>& written, const absl::flat_hash_set<int32_t>& shown) {
  std::vector<FoldedConstant> folded;
  if (!BatchNormFoldingEnabled()) return folded;
  TSR_ASSIGN_OR_RETURN(std::vector<BatchNormFold> folds, FoldBatchNorms(*model_, written, shown));
  for (BatchNormFold& fold : folds) {
    BoundNode& conv = nodes_[fold.conv];
    // The file's argument positions are the bound ones (today's schema added none).
    if (conv.arguments.size() != model_->nodes[fold.conv].args.size()) continue;
    const auto weight = static_cast<int32_t>(num_values_++);
    const auto bias = static_cast<int32_t>(num_values_++);
    PointAt(conv, 1, weight);  // convolution(input, weight, bias, ...)
    PointAt(conv, 2, bias);
    folded.push_back({weight, std::move(fold.weight), fold.conv, "weight"});
    folded.push_back({bias, std::move(fold.bias), fold.conv, "bias"});
    BoundNode& norm = nodes_[fold.norm];
    norm.route = NodeRoute::kFolded;
    norm.forward_from = model_->nodes[fold.conv].outputs[0];
    norm.unboxed = false;
    // It reads only its input now (Note [Claimed runs]: what a graph compiler is shown); its
    // constants stay on the host unless another node reads them.
    norm.tensors.erase(std::remove_if(norm.tensors.begin(), norm.tensors.end(),
                                      [](const TensorSlot& s) { return s.arg != 0; }),
                       norm.tensors.end());
  }
  return folded;
}

CompiledModel::CompiledModel(std::shared_ptr<const Model> model, Device device,
                             OpRegistry& registry)
    : model_(std::move(model)), device_(device), registry_(registry) {}

CompiledModel::~CompiledModel() {
  if (prepared_ == nullptr) return;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    delete prepared_[n].call.load();
  }
}

absl::StatusOr<std::unique_ptr<CompiledModel>> CompiledModel::Compile(
    std::shared_ptr<const Model> model, Device device, OpRegistry& registry,
    CompileOptions options) {
  std::unique_ptr<CompiledModel> compiled(new CompiledModel(model, device, registry));
  const DispatchKey key = DispatchKeyFor(device.type);
  std::vector<std::string> refused;  // every node that cannot run, named in one error
  std::vector<int32_t> last_reader(model->value_names.size(), -1);
  ConstantRoots roots(*model);

  for (size_t n = 0; n < model->nodes.size(); ++n) {
    const GraphNode& node = model->nodes[n];
    const std::string where = NodeName(n, node);
    absl::StatusOr<OperatorHandle> op = registry.Find(node.op);
    if (!op.ok()) {
      // Find's message names the op, and the overloads of its name where there are some.
      refused.push_back(absl::StrFormat("%s: %s", where, op.status().message()));
      continue;
    }
    absl::StatusOr<FunctionSchema> saved = ParseSchema(node.schema);
    if (!saved.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: the file's schema does not parse: %s",
                                                        where, saved.status().message()));
    }
    if (saved->FullName() != node.op) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the file's schema is of %s, not of the node's op", where, saved->FullName()));
    }
    const SchemaChange change = CompareSchemas(*saved, op->schema());
    if (change.change_class == SchemaChangeClass::kBreaking) {
      refused.push_back(absl::StrFormat(
          "%s: the op's schema changed incompatibly since the file was written (file: `%s`; "
          "runtime: `%s`: %s)",
          where, node.schema, op->schema_text(), absl::StrJoin(change.findings, "; ")));
      continue;
    }
    if (node.args.size() != saved->arguments.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: expected %d arguments (the file's schema `%s`), found %d", where,
                          saved->arguments.size(), node.schema, node.args.size()));
    }
    const std::vector<Argument>& returns = op->schema().returns;
    const bool list_return = returns.size() == 1 && returns[0].type.is_list;
    // A model's values are tensors: an op returning a host value (sym_size.int's int, item's
    // Scalar, equal's bool) has nowhere to put it, so it is named here, not at its first run.
    if (auto value =
            std::find_if(returns.begin(), returns.end(),
                         [](const Argument& r) { return r.type.base != BaseType::kTensor; });
        value != returns.end()) {
      refused.push_back(absl::StrFormat(
          "%s: returns a host value (%s), and a model's values are tensors (such nodes, as "
          "torch.export's sym_size.int for a dynamic dim, are not supported in models yet)",
          where, value->type.ToString()));
      continue;
    }
    if (!list_return && node.outputs.size() != returns.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: expected %d outputs (the schema's returns), found %d", where,
                          returns.size(), node.outputs.size()));
    }
    absl::StatusOr<KernelLookup> lookup = registry.Lookup(*op, key);
    if (!lookup.ok()) {
      refused.push_back(absl::StrFormat("%s: nothing runs it on %s: %s", where,
                                        DeviceToString(device), lookup.status().message()));
      continue;
    }
    BoundNode bound(*op);
    bound.list_return = list_return;
    switch (lookup->source) {
      case KernelSource::kComposite:
        bound.route = NodeRoute::kComposite;
        break;
      case KernelSource::kFallback:
        bound.route = NodeRoute::kFallback;
        break;
      default:
        bound.route = NodeRoute::kNative;
        break;
    }
    for (size_t i = 0; i < node.args.size(); ++i) {
      const GraphArg& a = node.args[i];
      const Argument& param = saved->arguments[i];
      if (!KindFits(a.kind, param.type)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: argument '%s' is a %s, but the file gives a '%s' value", where,
                            param.name, param.type.ToString(), KindName(a.kind)));
      }
      bound.arguments.push_back(ToValue(a, param.type, device));
      if (!a.exprs.empty()) bound.dynamic.push_back({i, &a, param.type, param.name});
      if (a.kind == GraphArg::Kind::kTensor || a.kind == GraphArg::Kind::kTensors) {
        bound.tensors.push_back({i, a.values, a.kind == GraphArg::Kind::kTensors});
        for (int32_t v : a.values) {
          if (v >= 0) last_reader[v] = static_cast<int32_t>(n);
        }
      }
    }
    roots.Node(node, *saved, returns);
    // An argument today's schema added with a default: the default, as for an older kernel.
    for (size_t position : change.added_arguments) {
      bound.arguments.insert(bound.arguments.begin() + position, Value(DefaultArgument{}));
      for (TensorSlot& slot : bound.tensors) {
        if (slot.arg >= position) ++slot.arg;
      }
      for (DynamicArg& slot : bound.dynamic) {
        if (slot.arg >= position) ++slot.arg;
      }
    }
    // The fast path takes single tensors, Scalars and None in today's schema's order, from
    // the block built at compile (so not a node whose arguments a run evaluates).
    bound.unboxed =
        op->may_call_unboxed() && change.added_arguments.empty() && bound.dynamic.empty();
    if (bound.unboxed) {
      bound.unboxed_args.resize(bound.arguments.size());
      for (const TensorSlot& slot : bound.tensors) {
        if (slot.list) {
          bound.unboxed = false;
          break;
        }
        bound.unboxed_args[slot.arg].value = slot.values[0];  // a kTensor argument has one value
      }
      // What AddAs would refuse on every run is refused once, here: a run adds each argument
      // as it is (RunUnboxed).
      const std::vector<Argument>& params = op->schema().arguments;
      UnboxedArgs probe;
      for (size_t i = 0; bound.unboxed && i < bound.unboxed_args.size(); ++i) {
        BoundNode::UnboxedSource& source = bound.unboxed_args[i];
        const Value& v = bound.arguments[i];
        const SchemaType& type = params[i].type;
        if (source.value >= 0) {
          bound.unboxed = type.base == BaseType::kTensor && !type.is_list;
        } else if (v.is_scalar()) {
          bound.unboxed = AddAs(params[i], nullptr, &v.scalar(), false, &probe);
          source.scalar = v.scalar();
        } else {
          bound.unboxed = v.is_none() && AddAs(params[i], nullptr, nullptr, true, &probe);
          source.none = true;
        }
      }
    }
    bound.outputs.assign(node.outputs.begin(), node.outputs.end());
    for (int32_t v : node.outputs) last_reader[v] = static_cast<int32_t>(n);  // if none reads it
    compiled->nodes_.push_back(std::move(bound));
  }
  if (!refused.empty()) {
    const size_t total = model->nodes.size();
    const std::string which =
        total == 1            ? std::string("its one node has")
        : refused.size() == 1 ? absl::StrFormat("1 of its %d nodes has", total)
                              : absl::StrFormat("%d of its %d nodes have", refused.size(), total);
    return absl::FailedPreconditionError(
        absl::StrFormat("model '%s' cannot run on %s: %s no way to run:\n  %s", model->name,
                        DeviceToString(device), which, absl::StrJoin(refused, "\n  ")));
  }
  // Outputs live to the end; every other value is dropped after its last reader.
  for (const GraphOutput& out : model->outputs) last_reader[out.value] = -1;
  for (size_t v = 0; v < last_reader.size(); ++v) {
    if (last_reader[v] >= 0) {
      compiled->nodes_[last_reader[v]].release_after.push_back(static_cast<int32_t>(v));
    }
  }
  compiled->prepared_ = std::make_unique<PreparedSlot[]>(compiled->nodes_.size());
  compiled->writes_constants_ = !roots.written().empty();
  compiled->num_values_ = model->value_names.size();
  const absl::flat_hash_set<int32_t> shown = roots.shown(model->outputs);
  std::vector<FoldedConstant> folded;
  if (options.fold) {
    TSR_ASSIGN_OR_RETURN(folded, compiled->Fold(roots.written(), shown));
  }
  // While calls are recorded, every node makes its own call, to be recorded (docs/build.md).
  if (options.claims && !CallsRecorded()) {
    TSR_RETURN_IF_ERROR(compiled->ClaimRuns(last_reader, folded, roots.written()));
  }
  compiled->SettleRunStates();
  // The constants a run reads: the nodes' (a folded one reads only its input) and the outputs'.
  absl::flat_hash_set<int32_t> read;
  for (const BoundNode& node : compiled->nodes_) {
    for (const TensorSlot& slot : node.tensors) read.insert(slot.values.begin(), slot.values.end());
  }
  for (const GraphOutput& out : model->outputs) read.insert(out.value);
  // copy: constant `id` on the device. One a node writes is this compiled model's own copy;
  // the others may be shared, and those no output shows are immutable.
  auto copy = [&](int32_t id, const Tensor& host, const std::string& name) -> absl::Status {
    const bool written = roots.written().contains(id);
    absl::StatusOr<Tensor> on_device = CopyTo(host, device, written, registry);
    if (on_device.ok() && !written && !shown.contains(id)) on_device = ImmutableAlias(*on_device);
    if (!on_device.ok()) {
      return absl::Status(on_device.status().code(),
                          absl::StrFormat("copying %s to %s: %s", name, DeviceToString(device),
                                          on_device.status().message()));
    }
    compiled->constants_.emplace_back(id, *std::move(on_device));
    return absl::OkStatus();
  };
  for (const auto& [id, host] : model->constants) {
    if (!read.contains(id)) continue;  // a folded node's, or none's: it stays on the host
    TSR_RETURN_IF_ERROR(copy(id, host, absl::StrFormat("constant \"%s\"", model->value_names[id])));
  }
  for (const FoldedConstant& f : folded) {
    const std::string name =
        absl::StrFormat("the folded %s of %s", f.what, NodeName(f.node, model->nodes[f.node]));
    TSR_RETURN_IF_ERROR(copy(f.id, f.host, name));
  }
  return compiled;
}

absl::Status CompiledModel::NodeError(size_t n, const absl::Status& s) const {
  return absl::Status(s.code(), absl::StrFormat("model '%s': %s: %s", model_->name,
                                                NodeName(n, model_->nodes[n]), s.message()));
}

absl::Status CompiledModel::StoreReturns(size_t n, Tensor* returns, size_t count,
                                         std::vector<Tensor>& values) const {
  const absl::InlinedVector<int32_t, 1>& outs = nodes_[n].outputs;
  if (count != outs.size()) {
    return NodeError(
        n, absl::InvalidArgumentError(absl::StrFormat(
               "it returned %d tensors, where the file names %d outputs", count, outs.size())));
  }
  for (size_t k = 0; k < count; ++k) values[outs[k]] = std::move(returns[k]);
  return absl::OkStatus();
}

absl::StatusOr<bool> CompiledModel::RunUnboxed(const BoundNode& node, size_t n,
                                               RunState& state) const {
  const std::vector<Tensor>& values = state.values;
  // Each argument's kind was checked against its schema type at compile.
  UnboxedArgs args;
  for (const BoundNode::UnboxedSource& source : node.unboxed_args) {
    bool ok;
    if (source.value >= 0) {
      const Tensor& t = values[source.value];
      ok = t.defined() && args.AddTensor(t.impl());
    } else {
      ok = source.none ? args.AddNone() : args.AddScalar(source.scalar);
    }
    if (!ok) return false;
  }
  UnboxedReturns returns;
  bool taken = false;
  absl::Status s;
  if (const PreparedCall* prepared = Prepared(n, args)) {
    const TensorSpec* spec = prepared->single_output();
    Tensor spare = spec != nullptr ? state.spares.Take(*spec) : Tensor();
    s = registry_.CallPrepared(*prepared, &args, &returns, &taken, &spare);
    if (spare.defined()) state.spares.Keep(spare);  // not written: kept for a later node
  }
  if (!taken) s = registry_.CallUnboxed(node.op, &args, &returns, &taken);
  if (!taken) return false;
  if (!s.ok()) return NodeError(n, s);
  TSR_RETURN_IF_ERROR(StoreReturns(n, returns.tensors, returns.size, state.values));
  return true;
}

void CompiledModel::SettleRunStates() {
  std::vector<bool> released(num_values_, false);
  for (const BoundNode& node : nodes_) {
    for (int32_t v : node.release_after) released[v] = true;
  }
  for (size_t v = 0; v < num_values_; ++v) {
    if (!released[v]) values_left_defined_.push_back(static_cast<int32_t>(v));
  }
  may_spare_.assign(num_values_, 0);
  for (const BoundNode& node : nodes_) {
    if (node.route == NodeRoute::kNative && node.unboxed && node.outputs.size() == 1) {
      may_spare_[node.outputs[0]] = 1;
    }
  }
}

std::unique_ptr<CompiledModel::RunState> CompiledModel::AcquireState() const {
  {
    std::lock_guard<std::mutex> lock(states_mu_);
    if (!idle_states_.empty()) {
      std::unique_ptr<RunState> state = std::move(idle_states_.back());
      idle_states_.pop_back();
      return state;
    }
  }
  auto state = std::make_unique<RunState>();
  state->values.resize(num_values_);
  return state;
}

void CompiledModel::ReturnState(std::unique_ptr<RunState> state, bool finished) const {
  if (finished) {
    for (int32_t v : values_left_defined_) state->values[v] = Tensor();
  } else {
    for (Tensor& t : state->values) t = Tensor();
  }
  std::lock_guard<std::mutex> lock(states_mu_);
  idle_states_.push_back(std::move(state));
}

const PreparedCall* CompiledModel::Prepared(size_t n, const UnboxedArgs& args) const {
  PreparedSlot& slot = prepared_[n];
  if (const PreparedCall* p = slot.call.load(std::memory_order_acquire)) return p;
  if (slot.refused.load(std::memory_order_relaxed)) return nullptr;
  bool never = false;
  std::unique_ptr<PreparedCall> made = registry_.PrepareUnboxed(nodes_[n].op, args, &never);
  if (made == nullptr) {
    // A call that failed (another run's inputs may not) is tried again on the next run.
    if (never) slot.refused.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  const PreparedCall* published = nullptr;
  if (slot.call.compare_exchange_strong(published, made.get(), std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
    return made.release();
  }
  return published;  // another run's, prepared from a call of the same node
}

absl::Status CompiledModel::RunNode(size_t n, bool fast_path, absl::Span<const int64_t> dims,
                                    RunState& state) const {
  std::vector<Tensor>& values = state.values;
  const BoundNode& node = nodes_[n];
  if (node.route == NodeRoute::kFolded) {  // Note [Folding batch norm]: the convolution did it
    values[model_->nodes[n].outputs[0]] = values[node.forward_from];
    return absl::OkStatus();
  }
  if (node.unboxed && fast_path) {
    TSR_ASSIGN_OR_RETURN(const bool done, RunUnboxed(node, n, state));
    if (done) return absl::OkStatus();
  }
  Stack stack = node.arguments;
  // Note [Dynamic dims] in dims.h: this run's values of the node's size expressions.
  for (const DynamicArg& d : node.dynamic) {
    const std::vector<SizeExpr>& exprs = d.source->exprs;
    GraphArg evaluated;  // the kind and the integers only: ToValue reads no more of it
    evaluated.kind = d.source->kind;
    evaluated.ints.resize(d.source->kind == GraphArg::Kind::kInts ? exprs.size() : 0);
    for (size_t k = 0; k < exprs.size(); ++k) {
      absl::StatusOr<int64_t> v = exprs[k].Evaluate(dims);
      if (!v.ok()) {
        return NodeError(n, absl::OutOfRangeError(absl::StrFormat("argument '%s' (%s): %s", d.name,
                                                                  exprs[k].ToString(model_->dims),
                                                                  v.status().message())));
      }
      (evaluated.kind == GraphArg::Kind::kInt ? evaluated.i : evaluated.ints[k]) = *v;
    }
    stack[d.arg] = ToValue(evaluated, d.type, device_);
  }
  for (const TensorSlot& slot : node.tensors) {
    if (!slot.list) {
      stack[slot.arg] = Value(values[slot.values[0]]);
      continue;
    }
    std::vector<Tensor> list;
    list.reserve(slot.values.size());
    for (int32_t v : slot.values) list.push_back(v >= 0 ? values[v] : Tensor());
    stack[slot.arg] = Value(std::move(list));
  }
  // A node is a call the application makes (Note [Recording calls] in runtime/call_recorder.cc).
  if (absl::Status s = ABSL_PREDICT_FALSE(CallsRecorded()) ? CallRecorded(node.op, &stack)
                                                           : registry_.Call(node.op, &stack);
      !s.ok()) {
    return NodeError(n, s);
  }
  std::vector<Tensor> returned;
  if (node.list_return) {
    if (stack.empty() || !stack[0].is_tensor_list()) {
      return NodeError(n, absl::InternalError("its Tensor[] return is not a list of tensors"));
    }
    returned = stack[0].tensor_list();
  } else {
    for (size_t k = 0; k < stack.size(); ++k) {
      if (!stack[k].is_tensor()) {
        return NodeError(n,
                         absl::InternalError(absl::StrFormat("its return %d is not a tensor", k)));
      }
      returned.push_back(stack[k].tensor());
    }
  }
  return StoreReturns(n, returned.data(), returned.size(), values);
}

absl::StatusOr<std::vector<int64_t>> CompiledModel::CheckInputs(
    absl::Span<const Tensor> inputs) const {
  const Model& m = *model_;
  if (inputs.size() != m.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrFormat("model '%s': expected %d inputs, got %d",
                                                      m.name, m.inputs.size(), inputs.size()));
  }
  std::vector<IntArrayRef> sizes;  // for BindDims: kept only in a model with dims
  if (!m.dims.empty()) sizes.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const GraphInput& want = m.inputs[i];
    const Tensor& x = inputs[i];
    if (!x.defined()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("model '%s': input %d ('%s'): expected a tensor, got an undefined one",
                          m.name, i, want.name));
    }
    if (x.dtype() != want.dtype || !FitsFixedSizes(want, x.sizes()) || x.device() != device_) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "model '%s': input %d ('%s'): expected %s %s on %s, got %s %s on %s", m.name, i,
          want.name, ScalarTypeName(want.dtype), SizesToString(want.sizes, want.size_exprs, m.dims),
          DeviceToString(device_), ScalarTypeName(x.dtype()), ShapeToString(x.sizes()),
          DeviceToString(x.device())));
    }
    if (!m.dims.empty()) sizes.push_back(x.sizes());
  }
  if (m.dims.empty()) return std::vector<int64_t>();
  absl::StatusOr<std::vector<int64_t>> dims = BindDims(m, sizes);
  if (!dims.ok()) {
    return absl::Status(dims.status().code(),
                        absl::StrFormat("model '%s': %s", m.name, dims.status().message()));
  }
  return dims;
}

absl::StatusOr<std::vector<Tensor>> CompiledModel::Run(absl::Span<const Tensor> inputs,
                                                       RunStats* stats) const {
  TSR_ASSIGN_OR_RETURN(const std::vector<int64_t> dims, CheckInputs(inputs));
  // A model that writes its constants runs one run at a time (Note [Compiling a model]).
  std::unique_lock<std::mutex> turn(run_mu_, std::defer_lock);
  if (writes_constants_) turn.lock();
  std::unique_ptr<RunState> state = AcquireState();
  absl::StatusOr<std::vector<Tensor>> outputs = RunWith(*state, inputs, dims, stats);
  ReturnState(std::move(state), outputs.ok());
  return outputs;
}

absl::StatusOr<std::vector<Tensor>> CompiledModel::RunWith(RunState& state,
                                                           absl::Span<const Tensor> inputs,
                                                           absl::Span<const int64_t> dims,
                                                           RunStats* stats) const {
  const Model& m = *model_;
  std::vector<Tensor>& values = state.values;
  for (size_t i = 0; i < inputs.size(); ++i) values[m.inputs[i].value] = inputs[i];
  for (const auto& [id, t] : constants_) values[id] = t;

  std::optional<LiveBytes> live;
  if (stats != nullptr) {
    *stats = RunStats();
    stats->node_ns.reserve(nodes_.size());
    live.emplace(stats);
    for (const Tensor& t : values) live->Outside(t);
  }
  const bool fast_path = UnboxedPathEnabled() && !CallsRecorded();
  for (size_t n = 0; n < nodes_.size();) {
    // One step: node n, or the claimed run that starts there (its nodes' releases at its end).
    const ClaimedRun* run = nodes_[n].run >= 0 ? &runs_[nodes_[n].run] : nullptr;
    const size_t end = run != nullptr ? n + run->count : n + 1;
    const auto start =
        live ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    TSR_RETURN_IF_ERROR(run != nullptr ? RunClaimed(*run, values)
                                       : RunNode(n, fast_path, dims, state));
    if (live) {
      // A run's time is its first node's; its other nodes took none of their own.
      stats->node_ns.push_back(
          static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - start)
                                    .count()));
      stats->node_ns.resize(end, 0);
      for (size_t k = n; k < end; ++k) {
        for (int32_t v : m.nodes[k].outputs) live->Hold(values[v]);
      }
    }
    for (; n < end; ++n) {
      for (int32_t v : nodes_[n].release_after) {
        if (live) {
          live->Drop(values[v]);
        } else if (may_spare_[v]) {
          state.spares.Keep(values[v]);
        }
        values[v] = Tensor();
      }
    }
  }
  std::vector<Tensor> outputs;
  outputs.reserve(m.outputs.size());
  for (const GraphOutput& out : m.outputs) outputs.push_back(values[out.value]);
  return outputs;
}

}  // namespace model
}  // namespace tessera
