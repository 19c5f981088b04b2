// Checks of a graph compiler's claimed runs on model files built here (the CPU backend's:
// plugins/cpu/graph_compiler.cc): the routes a compile gives each node, and the outputs of a
// model compiled with claims against the same model run node by node (TSR_COMPILE_NO_CLAIMS).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/tests/c_test_support.h"
#include "tessera/c/tessera.h"

namespace tessera_test {

// The routes a compiled model gives its nodes (tsr_node_route), as ints to compare.
constexpr int kClaimed = TSR_NODE_CLAIMED, kNative = TSR_NODE_NATIVE,
              kComposite = TSR_NODE_COMPOSITE;

// Schemas the graph compiler's tests share.
constexpr char kViewSchema[] = "view(Tensor(a) self, int[] size) -> Tensor(a)";
constexpr char kAddSchema[] = "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
constexpr char kPermuteSchema[] = "permute(Tensor(a) self, int[] dims) -> Tensor(a)";
constexpr char kSoftmaxSchema[] = "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor";

// Ramp: n values start + step * (i % mod), a test tensor's elements.
inline std::vector<float> Ramp(size_t n, float start, float step, int mod = 7) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = start + step * static_cast<float>(static_cast<int>(i) % mod);
  }
  return v;
}

// Q: a JSON string (a value's name); T: a graph argument reading value `v`; Node: a graph node
// of `op` (its `schema`).
inline std::string Q(const std::string& v) { return "\"" + v + "\""; }

inline std::string T(const std::string& v) { return "{\"tensor\":\"" + v + "\"}"; }

inline std::string Node(const std::string& op, const std::string& schema, const std::string& args,
                        const std::string& outputs) {
  return "{\"op\":\"" + op + "\",\"schema\":\"" + schema + "\",\"args\":[" + args +
         "],\"outputs\":[" + outputs + "]}";
}

// Compiled: each node's route and the outputs of one run (as doubles) of the model's example
// inputs; CompileAndRun makes them on the CPU with compile `flags`.
struct Compiled {
  std::vector<int> routes;
  std::vector<std::vector<double>> outputs;
};

inline Compiled CompileAndRun(const std::string& file, uint32_t flags) {
  constexpr tsr_device kCpu = {TSR_DEVICE_CPU, 0};
  Compiled c;
  tsr_model* model = nullptr;
  tsr_compiled_model* compiled = nullptr;
  EXPECT_EQ(LoadAndCompile(file, kCpu, flags, &model, &compiled), "");
  if (compiled == nullptr) {
    tsr_model_release(model);
    return c;
  }
  for (size_t i = 0; i < tsr_model_num_nodes(model); ++i) {
    c.routes.push_back(tsr_compiled_model_node_route(compiled, i));
  }
  tsr_tensor* x = nullptr;
  EXPECT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
  std::vector<tsr_tensor*> y(tsr_model_num_outputs(model), nullptr);
  EXPECT_EQ(Consume(tsr_compiled_model_run(compiled, &x, 1, y.data(), y.size())), "");
  for (tsr_tensor* t : y) {
    if (t == nullptr) continue;
    std::vector<double> v(static_cast<size_t>(tsr_tensor_numel(t)));
    if (tsr_tensor_dtype(t) == TSR_DTYPE_FLOAT64) {
      EXPECT_EQ(Consume(tsr_tensor_copy_to_host(t, v.data(), v.size() * sizeof(double))), "");
    } else {
      std::vector<float> f(v.size());
      EXPECT_EQ(Consume(tsr_tensor_copy_to_host(t, f.data(), f.size() * sizeof(float))), "");
      v.assign(f.begin(), f.end());
    }
    c.outputs.push_back(v);
    tsr_tensor_release(t);
  }
  tsr_tensor_release(x);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
  return c;
}

// RunError: the error of one run of `file` compiled on the CPU with `flags` (TSR_COMPILE_*),
// "" for none; the compile must succeed. *routes, where given, gets each node's route.
inline std::string RunError(const std::string& file, uint32_t flags,
                            std::vector<int>* routes = nullptr) {
  constexpr tsr_device kCpu = {TSR_DEVICE_CPU, 0};
  tsr_model* model = nullptr;
  tsr_compiled_model* compiled = nullptr;
  std::string error = LoadAndCompile(file, kCpu, flags, &model, &compiled);
  EXPECT_EQ(error, "") << "the compile";
  if (compiled != nullptr) {
    for (size_t i = 0; routes != nullptr && i < tsr_model_num_nodes(model); ++i) {
      routes->push_back(tsr_compiled_model_node_route(compiled, i));
    }
    tsr_tensor* x = nullptr;
    EXPECT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
    std::vector<tsr_tensor*> y(tsr_model_num_outputs(model), nullptr);
    error = Consume(tsr_compiled_model_run(compiled, &x, 1, y.data(), y.size()));
    for (tsr_tensor* t : y) tsr_tensor_release(t);
    tsr_tensor_release(x);
  }
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
  return error;
}

// CheckAgainstNodes: `file` compiled with claims has `routes`, and gives its nodes' outputs
// (within `tolerance`, relative to 1 + |value|); returns the claimed run's outputs.
inline Compiled CheckAgainstNodes(const std::string& file, const std::vector<int>& routes,
                                  double tolerance = 0) {
  const Compiled claimed = CompileAndRun(file, 0);
  const Compiled nodes = CompileAndRun(file, TSR_COMPILE_NO_CLAIMS);
  EXPECT_EQ(claimed.routes, routes);
  for (int r : nodes.routes) EXPECT_NE(r, TSR_NODE_CLAIMED);
  EXPECT_EQ(claimed.outputs.size(), nodes.outputs.size());
  for (size_t k = 0; k < claimed.outputs.size() && k < nodes.outputs.size(); ++k) {
    EXPECT_EQ(claimed.outputs[k].size(), nodes.outputs[k].size());
    for (size_t i = 0; i < claimed.outputs[k].size() && i < nodes.outputs[k].size(); ++i) {
      const double a = claimed.outputs[k][i], b = nodes.outputs[k][i];
      if (std::fabs(a - b) > tolerance * (1 + std::fabs(b))) {
        ADD_FAILURE() << "output " << k << " element " << i << ": claimed " << a
                      << ", node by node " << b;
        break;
      }
    }
  }
  return claimed;
}

}  // namespace tessera_test
