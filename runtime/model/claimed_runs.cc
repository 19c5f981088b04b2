// CompiledModel's claimed runs: the graph a graph compiler is shown, its claims, and their
// execution (ClaimRuns and RunClaimed, declared in compiled_model.h).
//
// Note [Claimed runs]
// After binding every node and folding batch norms, compiling shows the graph to the
// graph compiler registered for the device type, if there is one and the compile allows it
// (CompileOptions::claims, tsr_compile_options): walking the nodes in order, it asks the compiler
// how many nodes from each unclaimed node on it takes; a run it takes is prepared at once
// (compile time), its nodes get the route kClaimed and a model run executes it as one step:
// its inputs (the values its nodes read from outside it) in, its outputs (the values it defines
// that later nodes or the model's outputs read) out. The values only its own nodes read never
// exist in the runtime. The rest runs node by node, as it would without a compiler.
//  - The graph shows each literal argument converted to its schema type (what a kernel gets)
//    and the host tensor of each constant argument that no node writes, so that prepare may
//    transform it once; a written constant (a training step's parameter) is a run-time value.
//    A node whose literals a run evaluates (dynamic dims) or fills in (an argument the op gained
//    since the file) is shown TSR_GRAPH_NODE_OPAQUE, and a claim including one fails the compile.
//  - Folded nodes are shown as such (TSR_NODE_FOLDED): the convolution's weight and bias
//    arguments read the folded constants, and the batch norm reads only its input, which its
//    output passes on. A claim may take them; they are then claimed nodes.
//  - Releases: a value's last reader may be inside a run; it is released when the run ends.
//  - Conformance runs each zoo model compiled with and without claims and compares
//    (conformance/model_checks.cc): a claimed run must give what its nodes give one by one.
#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "runtime/graph_compiler.h"
#include "runtime/handles.h"
#include "runtime/model/compiled_model.h"
#include "runtime/values.h"

namespace tessera {
namespace model {
namespace {

// GraphView: the C description of the bound graph (tsr_graph), borrowing from the compiled
// model's nodes and the model's constants; valid while both are unchanged.
struct GraphView {
  tsr_graph graph{};
  std::vector<tsr_graph_node> nodes;
  std::vector<std::vector<tsr_graph_arg>> args;              // per node
  std::vector<std::vector<std::vector<tsr_tensor*>>> lists;  // per node, per list argument
  std::vector<int32_t> outputs;
};

}  // namespace

std::string CompiledModel::RunName(size_t first, size_t count) const {
  const std::vector<GraphNode>& nodes = model_->nodes;
  return count == 1 ? absl::StrFormat("node %d (%s)", first, nodes[first].op)
                    : absl::StrFormat("nodes %d (%s) to %d (%s)", first, nodes[first].op,
                                      first + count - 1, nodes[first + count - 1].op);
}

absl::Status CompiledModel::ClaimRuns(const std::vector<int32_t>& last_reader,
                                      const std::vector<FoldedConstant>& folded,
                                      const absl::flat_hash_set<int32_t>& written) {
  std::shared_ptr<const capi::GraphCompiler> compiler = capi::GraphCompilerFor(device_.type);
  if (compiler == nullptr || nodes_.empty()) return absl::OkStatus();
  const Model& m = *model_;
  absl::flat_hash_map<int32_t, const TensorImpl*> constants;
  // A constant some node writes changes from run to run: shown as a run-time value.
  for (const auto& [id, t] : m.constants) {
    if (!written.contains(id)) constants[id] = t.impl();
  }
  for (const FoldedConstant& f : folded) constants[f.id] = f.host.impl();
  auto constant = [&](int32_t v) -> tsr_tensor* {
    auto it = constants.find(v);
    return it == constants.end()
               ? nullptr
               : reinterpret_cast<tsr_tensor*>(const_cast<TensorImpl*>(it->second));
  };

  GraphView view;
  const size_t n_nodes = nodes_.size();
  view.nodes.resize(n_nodes);
  view.args.resize(n_nodes);
  view.lists.resize(n_nodes);
  std::vector<bool> opaque(n_nodes, false);
  for (size_t n = 0; n < n_nodes; ++n) {
    const BoundNode& b = nodes_[n];
    absl::flat_hash_set<size_t> unknown;  // literals a run evaluates or a call fills in
    for (const DynamicArg& d : b.dynamic) unknown.insert(d.arg);
    for (size_t i = 0; i < b.arguments.size(); ++i) {
      if (b.arguments[i].is_binding_marker()) unknown.insert(i);
    }
    opaque[n] = !unknown.empty();
    std::vector<tsr_graph_arg>& args = view.args[n];
    args.resize(b.arguments.size());
    for (size_t i = 0; i < b.arguments.size(); ++i) {
      if (!unknown.contains(i))
        args[i].value = capi::ValueToC(b.arguments[i]);
      else
        args[i].value.kind = TSR_VALUE_NONE;
    }
    view.lists[n].reserve(b.tensors.size());  // stable addresses: one per list argument at most
    for (const TensorSlot& slot : b.tensors) {
      tsr_graph_arg& a = args[slot.arg];
      a.values = slot.values.data();
      a.num_values = slot.values.size();
      if (!slot.list) {
        a.value.kind = TSR_VALUE_TENSOR;
        a.value.u.tensor = constant(slot.values[0]);
        continue;
      }
      std::vector<tsr_tensor*>& list = view.lists[n].emplace_back();
      for (int32_t v : slot.values) list.push_back(v >= 0 ? constant(v) : nullptr);
      a.value.kind = TSR_VALUE_TENSOR_LIST;
      a.value.u.list.data = list.data();
      a.value.u.list.size = list.size();
    }
    tsr_graph_node& c = view.nodes[n];
    c.op = capi::Wrap(b.op);
    c.args = args.data();
    c.num_args = args.size();
    c.outputs = m.nodes[n].outputs.data();
    c.num_outputs = m.nodes[n].outputs.size();
    c.route = static_cast<int32_t>(b.route);
    c.flags = opaque[n] ? TSR_GRAPH_NODE_OPAQUE : 0u;
  }
  for (const GraphOutput& out : m.outputs) view.outputs.push_back(out.value);
  tsr_graph& g = view.graph;
  g.struct_size = sizeof g;
  g.device = tsr_device{static_cast<int32_t>(device_.type), device_.index};
  g.nodes = view.nodes.data();
  g.num_nodes = n_nodes;
  g.num_values = num_values_;  // the model's values, then the folded constants
  g.outputs = view.outputs.data();
  g.num_outputs = view.outputs.size();

  auto where = [&](size_t first, size_t count) { return RunName(first, count); };
  auto failed = [&](const absl::Status& s, const std::string& what) {
    return absl::Status(s.code(), absl::StrFormat("model '%s' on %s: graph compiler of plugin "
                                                  "'%s', %s: %s",
                                                  m.name, DeviceToString(device_),
                                                  compiler->plugin_name(), what, s.message()));
  };
  for (size_t first = 0; first < n_nodes;) {
    absl::StatusOr<size_t> count = compiler->Claim(g, first);
    if (!count.ok()) return failed(count.status(), absl::StrFormat("claiming at node %d", first));
    if (*count == 0) {
      ++first;
      continue;
    }
    const size_t end = first + *count;
    for (size_t n = first; n < end; ++n) {
      if (opaque[n]) {
        return failed(absl::InvalidArgumentError(absl::StrFormat(
                          "the run includes %s, whose arguments are known only at run time "
                          "(TSR_GRAPH_NODE_OPAQUE), which a claim may not include",
                          RunName(n, 1))),
                      absl::StrFormat("claiming %s", where(first, *count)));
      }
    }
    ClaimedRun run;
    run.first = first;
    run.count = *count;
    absl::flat_hash_set<int32_t> defined, seen;
    for (size_t n = first; n < end; ++n) {
      for (const TensorSlot& slot : nodes_[n].tensors) {
        for (int32_t v : slot.values) {
          if (v >= 0 && !defined.contains(v) && seen.insert(v).second) run.inputs.push_back(v);
        }
      }
      for (int32_t v : m.nodes[n].outputs) defined.insert(v);
    }
    for (size_t n = first; n < end; ++n) {
      for (int32_t v : m.nodes[n].outputs) {
        // A model output (-1), or read by a node after the run.
        if (last_reader[v] < 0 || static_cast<size_t>(last_reader[v]) >= end) {
          run.outputs.push_back(v);
        }
      }
    }
    tsr_graph_run c{};
    c.struct_size = sizeof c;
    c.first = first;
    c.count = *count;
    c.inputs = run.inputs.data();
    c.num_inputs = run.inputs.size();
    c.outputs = run.outputs.data();
    c.num_outputs = run.outputs.size();
    absl::StatusOr<std::unique_ptr<capi::GraphExecutable>> executable = compiler->Prepare(g, c);
    if (!executable.ok()) {
      return failed(executable.status(), absl::StrFormat("preparing %s", where(first, *count)));
    }
    run.executable = *std::move(executable);
    nodes_[first].run = static_cast<int32_t>(runs_.size());
    for (size_t n = first; n < end; ++n) {
      nodes_[n].route = NodeRoute::kClaimed;
      nodes_[n].unboxed = false;
    }
    runs_.push_back(std::move(run));
    first = end;
  }
  return absl::OkStatus();
}

absl::Status CompiledModel::RunClaimed(const ClaimedRun& r, std::vector<Tensor>& values) const {
  std::vector<Tensor> inputs;
  inputs.reserve(r.inputs.size());
  for (int32_t v : r.inputs) inputs.push_back(values[v]);
  std::vector<Tensor> outputs(r.outputs.size());
  if (absl::Status s = r.executable->Execute(inputs, absl::MakeSpan(outputs), device_); !s.ok()) {
    return absl::Status(s.code(), absl::StrFormat("model '%s': %s, claimed by plugin '%s': %s",
                                                  model_->name, RunName(r.first, r.count),
                                                  r.executable->plugin_name(), s.message()));
  }
  for (size_t k = 0; k < outputs.size(); ++k) values[r.outputs[k]] = std::move(outputs[k]);
  return absl::OkStatus();
}

}  // namespace model
}  // namespace tessera
