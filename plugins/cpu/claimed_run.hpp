// ClaimedRun: what the CPU backend's graph compiler prepared for one claimed run of a compiled
// model (graph_compiler.cc): a chain of convolutions (conv_chain.hpp) or a batched product read
// in place (batched_product.hpp). Each runs its fused form where its inputs allow and its nodes'
// own calls otherwise (RunNodes).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tessera/c/graph.h"
#include "tessera/sdk/graph.hpp"
#include "tessera/sdk/tensor.hpp"

namespace tessera {
namespace cpu {

class ClaimedRun {
 public:
  virtual ~ClaimedRun() = default;
  // Execute: the run's outputs (tsr_graph_run's order) for its inputs (likewise).
  virtual std::vector<sdk::Tensor> Execute(const std::vector<sdk::Tensor>& inputs) const = 0;
};

// Ints: an int[] argument's elements (*n of them; 0 for another kind).
inline const int64_t* Ints(const tsr_graph_arg& a, size_t* n) {
  *n = a.value.kind == TSR_VALUE_INT_LIST ? a.value.u.list.size : 0;
  return static_cast<const int64_t*>(a.value.u.list.data);
}

// TensorArg: tensor argument `i` of `node`: its one value, or -1.
inline int32_t TensorArg(const tsr_graph_node& node, size_t i) {
  if (i >= node.num_args || node.args[i].value.kind != TSR_VALUE_TENSOR ||
      node.args[i].num_values != 1) {
    return -1;
  }
  return node.args[i].values[0];
}

// IsReshape: the ops that give a tensor new sizes over the same elements.
inline bool IsReshape(std::string_view op) {
  return op == "reshape" || op == "view" || op == "_unsafe_view";
}

// Step: node `k` of `g`, when it is one of the run's (not opaque) and reads `v` as its first
// argument, which nothing after it reads: `v` then lives only inside the run.
inline const tsr_graph_node* Step(const tsr_graph& g, size_t k, int32_t v) {
  if (k >= g.num_nodes || (g.nodes[k].flags & TSR_GRAPH_NODE_OPAQUE) != 0 ||
      g.nodes[k].num_outputs != 1 || TensorArg(g.nodes[k], 0) != v || sdk::read_after(g, k, v)) {
    return nullptr;
  }
  return &g.nodes[k];
}

// ScalarArg: argument `i` of `node` as a literal Scalar's value.
inline bool ScalarArg(const tsr_graph_node& node, size_t i, double* out) {
  if (i >= node.num_args || node.args[i].value.kind != TSR_VALUE_SCALAR) return false;
  const tsr_scalar& s = node.args[i].value.u.scalar;
  if (s.kind == TSR_SCALAR_DOUBLE) {
    *out = s.d;
  } else if (s.kind == TSR_SCALAR_INT) {
    *out = static_cast<double>(s.i);
  } else {
    return false;
  }
  return true;
}

// Values: a run's values by id while it executes.
using Values = std::unordered_map<int32_t, sdk::Tensor>;

// RunNodes: the run's `outputs` made by each node's own call, as without the claim, from
// `values` (its inputs, and what the nodes add to them).
inline std::vector<sdk::Tensor> RunNodes(const std::vector<sdk::NodeCall>& nodes, Values values,
                                         const std::vector<int32_t>& outputs) {
  for (const sdk::NodeCall& node : nodes) {
    node.call([&](int32_t v) -> const sdk::Tensor& { return values.at(v); },
              [&](int32_t v, sdk::Tensor t) { values[v] = std::move(t); });
  }
  std::vector<sdk::Tensor> out;
  for (int32_t v : outputs) out.push_back(values.at(v));
  return out;
}

}  // namespace cpu
}  // namespace tessera
