// Helpers for a plugin's graph compiler (tessera/c/graph.h; docs/plugin_guide.md, "A graph
// compiler"): reading the graph a compiler is shown, and a claimed node's own call, which an
// executable makes for what it cannot do better (inputs of a dtype or shape it does not fuse).
// Header-only, on the runtime table like the rest of the SDK.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/c/graph.h"
#include "tessera/c/model.h"
#include "tessera/sdk/api.hpp"
#include "tessera/sdk/error.hpp"
#include "tessera/sdk/tensor.hpp"

namespace tessera {
namespace sdk {

// op_name: the node's op ("add.Tensor").
inline std::string_view op_name(const tsr_graph_node& node) {
  return from_c(api().op_name(node.op));
}

// reads: whether the node reads value `v` (in any tensor argument).
inline bool reads(const tsr_graph_node& node, int32_t v) {
  for (size_t i = 0; i < node.num_args; ++i) {
    for (size_t k = 0; k < node.args[i].num_values; ++k) {
      if (node.args[i].values[k] == v) return true;
    }
  }
  return false;
}

// read_after: whether value `v` is read by a node after node `last`, or is a model output: then
// a run ending at `last` must produce it (tsr_graph_run's outputs).
inline bool read_after(const tsr_graph& graph, size_t last, int32_t v) {
  for (size_t k = 0; k < graph.num_outputs; ++k) {
    if (graph.outputs[k] == v) return true;
  }
  for (size_t n = last + 1; n < graph.num_nodes; ++n) {
    if (reads(graph.nodes[n], v)) return true;
  }
  return false;
}

// guarded runs `body` for a graph compiler's function `what` ("prepare") of compiler `who` and
// returns NULL, or every exception it throws as a tsr_error: none may cross the ABI.
template <typename F>
tsr_error* guarded(const char* who, const char* what, F&& body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const Error& e) {
    return e.to_c();
  } catch (const std::exception& e) {
    return api().error_create(TSR_INTERNAL,
                              to_c(std::string(who) + ", " + what + ": " + e.what()));
  } catch (...) {
    return api().error_create(TSR_INTERNAL,
                              to_c(std::string(who) + ", " + what + ": a non-standard exception"));
  }
}

// NodeCall: one node of a claimed run with its literals copied (the graph is borrowed only for
// claim and prepare), so that an executable can make the node's own call later: the op through
// the runtime (tsr_op_call_values), its tensors taken from the run's values. A folded node
// (TSR_NODE_FOLDED) passes its first argument on, as the runtime would.
class NodeCall {
 public:
  explicit NodeCall(const tsr_graph_node& node)
      : op_(node.op),
        folded_(node.route == TSR_NODE_FOLDED),
        outputs_(node.outputs, node.outputs + node.num_outputs) {
    if ((node.flags & TSR_GRAPH_NODE_OPAQUE) != 0) {
      throw Error(TSR_INVALID_ARGUMENT, "NodeCall: node of " + std::string(op_name(node)) +
                                            " has arguments known only at run time");
    }
    for (size_t i = 0; i < node.num_args; ++i) {
      const tsr_graph_arg& a = node.args[i];
      Arg arg;
      arg.value = a.value;
      arg.values.assign(a.values, a.values + a.num_values);
      const void* data = a.value.u.list.data;
      const size_t size = a.value.u.list.size;
      switch (a.value.kind) {
        case TSR_VALUE_INT_LIST:
          arg.ints.assign(static_cast<const int64_t*>(data),
                          static_cast<const int64_t*>(data) + size);
          break;
        case TSR_VALUE_DOUBLE_LIST:
          arg.doubles.assign(static_cast<const double*>(data),
                             static_cast<const double*>(data) + size);
          break;
        case TSR_VALUE_BOOL_LIST:
          arg.bools.assign(static_cast<const uint8_t*>(data),
                           static_cast<const uint8_t*>(data) + size);
          break;
        case TSR_VALUE_STRING:
          arg.str.assign(a.value.u.string.data ? a.value.u.string.data : "", a.value.u.string.size);
          break;
        default:
          break;
      }
      args_.push_back(std::move(arg));
    }
  }

  const std::vector<int32_t>& outputs() const { return outputs_; }

  // call makes the node's call: `value(id)` gives the tensor of a value it reads (const
  // Tensor&), `store(id, Tensor)` takes each output. Errors throw sdk::Error.
  template <typename Get, typename Store>
  void call(Get&& value, Store&& store) const {
    if (folded_) {
      store(outputs_.at(0), value(args_.at(0).values.at(0)));
      return;
    }
    std::vector<tsr_value> args(args_.size());
    std::vector<std::vector<tsr_tensor*>> lists;
    lists.reserve(args_.size());
    for (size_t i = 0; i < args_.size(); ++i) {
      const Arg& a = args_[i];
      tsr_value& v = args[i];
      v = a.value;
      switch (a.value.kind) {
        case TSR_VALUE_TENSOR:
          v.u.tensor = value(a.values.at(0)).get();
          break;
        case TSR_VALUE_TENSOR_LIST: {
          std::vector<tsr_tensor*>& list = lists.emplace_back();
          for (int32_t id : a.values) list.push_back(id >= 0 ? value(id).get() : nullptr);
          v.u.list.data = list.data();
          v.u.list.size = list.size();
          break;
        }
        case TSR_VALUE_INT_LIST:
          v.u.list.data = a.ints.data();
          break;
        case TSR_VALUE_DOUBLE_LIST:
          v.u.list.data = a.doubles.data();
          break;
        case TSR_VALUE_BOOL_LIST:
          v.u.list.data = a.bools.data();
          break;
        case TSR_VALUE_STRING:
          v.u.string = tsr_string{a.str.data(), a.str.size()};
          break;
        default:
          break;
      }
    }
    constexpr size_t kRoom = 8;
    tsr_value returns[kRoom] = {};
    size_t n = 0;
    check(api().op_call_values(op_, args.data(), args.size(), returns, kRoom, &n));
    std::vector<Tensor> got;
    for (size_t r = 0; r < n; ++r) {
      got.push_back(returns[r].kind == TSR_VALUE_TENSOR ? Tensor::adopt(returns[r].u.tensor)
                                                        : Tensor());
    }
    if (got.size() != outputs_.size()) {
      throw Error(TSR_INTERNAL, std::string(from_c(api().op_name(op_))) + " returned " +
                                    std::to_string(got.size()) + " tensors for " +
                                    std::to_string(outputs_.size()) + " outputs");
    }
    for (size_t k = 0; k < got.size(); ++k) store(outputs_[k], std::move(got[k]));
  }

 private:
  struct Arg {
    tsr_value value;              // the literal; tensors filled in per call
    std::vector<int32_t> values;  // the values a tensor argument reads
    std::vector<int64_t> ints;
    std::vector<double> doubles;
    std::vector<uint8_t> bools;
    std::string str;
  };
  const tsr_op* op_;
  bool folded_;
  std::vector<Arg> args_;
  std::vector<int32_t> outputs_;
};

}  // namespace sdk
}  // namespace tessera
