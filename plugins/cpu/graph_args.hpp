// Reading the graph a graph compiler is shown (tessera/c/graph.h) for the CPU backend's claims
// (graph_compiler.cc's kinds of run): a node's literal arguments, and the steps of a run whose
// values live only inside it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tessera/c/graph.h"
#include "tessera/sdk/graph.hpp"

namespace tessera {
namespace cpu {

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

// IsOne: argument `i` of `node` is the literal Scalar 1 (an alpha or beta with no effect).
inline bool IsOne(const tsr_graph_node& node, size_t i) {
  double v = 0;
  return ScalarArg(node, i, &v) && v == 1;
}

// IntArg: argument `i` of `node` as a literal int.
inline bool IntArg(const tsr_graph_node& node, size_t i, int64_t* out) {
  if (i >= node.num_args || node.args[i].value.kind != TSR_VALUE_INT) return false;
  *out = node.args[i].value.u.i;
  return true;
}

// SizesArg: argument `i` of `node` as `count` ints; false for another kind or length.
inline bool SizesArg(const tsr_graph_node& node, size_t i, size_t count,
                     std::vector<int64_t>* out) {
  if (i >= node.num_args) return false;
  size_t n = 0;
  const int64_t* v = Ints(node.args[i], &n);
  if (node.args[i].value.kind != TSR_VALUE_INT_LIST || n != count) return false;
  out->assign(v, v + n);
  return true;
}

}  // namespace cpu
}  // namespace tessera
