// Graph compilers (tessera/c/graph.h, Note [Claimed runs] in runtime/model/claimed_runs.cc): the
// sample NPU claims a chain of elementwise nodes and runs it fused or one by one with its
// nodes' results; what a compiler is shown; a claim the runtime must refuse; registration
// errors; a run after the plugin's unload.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/model/tests/model_file_writer.h"
#include "runtime/tests/c_test_support.h"
#include "tessera/c/tessera.h"
#include "tessera/sdk/tensor_view.hpp"

namespace {

using tessera_test::Consume;
using tessera_test::Floats;
using tessera_test::LoadAndCompile;
using tessera_test::ModelFile;
using tessera_test::S;
using ::testing::HasSubstr;

// The tests below register graph compilers of their own for the CPU, which has one of its own
// (plugins/cpu/graph_compiler.cc; its tests are the CPU plugin's): it is kept out of this test
// binary, before any test loads the plugins.
[[maybe_unused]] const bool kNoCpuGraphCompiler = setenv("TESSERA_CPU_FUSION", "0", 1) == 0;

constexpr tsr_device kCpu = {TSR_DEVICE_CPU, 0};
constexpr tsr_device kNpu = {TSR_DEVICE_PRIVATEUSE1, 0};

// r = relu(x); a = r + 2 * w; n = neg(a); out = (n, r), then m = mm(...) would end a chain: here
// the chain is relu -> add -> neg, and r is also a model output (so a run output).
// `extra`: more nodes after the chain (",{...}").
std::string ChainFile(const std::vector<int64_t>& w_sizes, const std::vector<float>& w,
                      const std::string& extra = "") {
  const std::string graph =
      R"({"name":"chain","producer":"test","op_set":"1.1",)"
      R"("inputs":[{"name":"x","dtype":"float32","sizes":[2,3]}],)"
      R"("nodes":[)"
      R"({"op":"relu","schema":"relu(Tensor self) -> Tensor","args":[{"tensor":"x"}],"outputs":["r"]},)"
      R"({"op":"add.Tensor","schema":"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",)"
      R"("args":[{"tensor":"r"},{"tensor":"w"},{"int":2}],"outputs":["a"]},)"
      R"({"op":"neg","schema":"neg(Tensor self) -> Tensor","args":[{"tensor":"a"}],"outputs":["n"]})" +
      extra + R"(],"outputs":[{"name":"n","value":"n"},{"name":"r","value":"r"}]})";
  return ModelFile(graph, {{"constant/w", "F32", w_sizes, Floats(w)},
                           {"input/x", "F32", {2, 3}, Floats({-1, 2, -3, 4, -5, 6})}});
}

std::vector<float> Values(tsr_tensor* t) {
  std::vector<float> v(static_cast<size_t>(tsr_tensor_numel(t)));
  EXPECT_EQ(Consume(tsr_tensor_copy_to_host(t, v.data(), v.size() * sizeof(float))), "");
  return v;
}

class ClaimedRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(Consume(tsr_plugin_load_default()), "");
    ASSERT_EQ(Consume(tsr_plugin_load(S(TESSERA_NPU_PLUGIN), nullptr)), "");
  }
  void TearDown() override { Consume(tsr_plugin_unload(S("npu"))); }

  // Outputs: the model's outputs for input x on `device`, compiled with `flags`; the routes of
  // its nodes in *routes.
  std::vector<std::vector<float>> Outputs(const std::string& file, tsr_device device,
                                          uint32_t flags, std::vector<int>* routes) {
    tsr_model* model = nullptr;
    tsr_compiled_model* compiled = nullptr;
    EXPECT_EQ(LoadAndCompile(file, device, flags, &model, &compiled), "");
    std::vector<std::vector<float>> out;
    if (compiled == nullptr) {
      tsr_model_release(model);
      return out;
    }
    for (size_t i = 0; i < tsr_model_num_nodes(model); ++i) {
      routes->push_back(tsr_compiled_model_node_route(compiled, i));
    }
    const float x_values[] = {-1, 2, -3, 4, -5, 6};
    const int64_t sizes[] = {2, 3};
    tsr_tensor* x = nullptr;
    EXPECT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, device, &x)), "");
    EXPECT_EQ(Consume(tsr_tensor_copy_from_host(x, x_values, sizeof x_values)), "");
    tsr_tensor* y[2] = {};
    EXPECT_EQ(Consume(tsr_compiled_model_run(compiled, &x, 1, y, 2)), "");
    for (tsr_tensor* t : y) {
      if (t != nullptr) out.push_back(Values(t));
      tsr_tensor_release(t);
    }
    tsr_tensor_release(x);
    tsr_compiled_model_release(compiled);
    tsr_model_release(model);
    return out;
  }
};

TEST_F(ClaimedRuns, TheNpuRunsAChainAsItsNodesDo) {
  // w of x's shape: fused in one pass; w of shape [3]: broadcast, run one by one. Both give
  // what the nodes give one by one, and what the CPU gives.
  const std::vector<std::string> files = {ChainFile({2, 3}, {1, 2, 3, 4, 5, 6}),
                                          ChainFile({3}, {0.5f, -1, 2})};
  for (const std::string& file : files) {
    std::vector<int> claimed, alone, cpu;
    const auto fused = Outputs(file, kNpu, 0, &claimed);
    const auto nodes = Outputs(file, kNpu, TSR_COMPILE_NO_CLAIMS, &alone);
    const auto reference = Outputs(file, kCpu, 0, &cpu);
    EXPECT_EQ(claimed, (std::vector<int>{TSR_NODE_CLAIMED, TSR_NODE_CLAIMED, TSR_NODE_CLAIMED}));
    EXPECT_EQ(alone, (std::vector<int>{TSR_NODE_NATIVE, TSR_NODE_NATIVE, TSR_NODE_NATIVE}));
    EXPECT_EQ(cpu, alone) << "the CPU backend registers no graph compiler";
    ASSERT_EQ(fused.size(), 2u);
    EXPECT_EQ(fused, nodes);
    EXPECT_EQ(fused, reference);
  }
  // Spot-check the first: r = relu(x); n = -(r + 2 w).
  std::vector<int> routes;
  const auto out = Outputs(files[0], kNpu, 0, &routes);
  EXPECT_EQ(out[1], (std::vector<float>{0, 2, 0, 4, 0, 6}));
  EXPECT_EQ(out[0], (std::vector<float>{-2, -6, -6, -12, -10, -18}));
}

TEST_F(ClaimedRuns, CompileOptionsAreChecked) {
  const std::string file = ChainFile({3}, {1, 2, 3});
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_compiled_model* compiled = nullptr;
  tsr_compile_options options = {};
  options.struct_size = 4;
  EXPECT_THAT(Consume(tsr_model_compile_with_options(model, kCpu, &options, &compiled)),
              HasSubstr("options->struct_size is 4, expected at least 12"));
  options.struct_size = sizeof options;
  options.flags = 0x10;
  EXPECT_THAT(Consume(tsr_model_compile_with_options(model, kCpu, &options, &compiled)),
              HasSubstr("flags has bits 0x10 that this runtime does not know (it knows 0x3)"));
  EXPECT_EQ(compiled, nullptr);
  ASSERT_EQ(Consume(tsr_model_compile_with_options(model, kCpu, nullptr, &compiled)), "");
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

// A graph compiler the test registers for the CPU (as an application may): it records what it
// is shown and claims what `claim_at` says.
struct Recorder {
  size_t claim_at = 0, claim_count = 0;
  std::vector<std::string> ops;
  std::vector<int32_t> run_inputs, run_outputs;
  bool saw_constant = false;  // add's w: a tensor argument with its host tensor, r without
  bool w_is_tensor = false;   // add's w: a tensor argument reading one value
  int64_t alpha = 0;
  int executed = 0, released = 0;
  // Of each input execute got: whether sdk::view_of says it is immutable (a constant is).
  std::vector<bool> inputs_immutable;
};
Recorder* g_recorder = nullptr;

tsr_graph_compiler RecordingCompiler() {
  tsr_graph_compiler c = {};
  c.struct_size = sizeof c;
  c.device_type = TSR_DEVICE_CPU;
  c.claim = [](void*, const tsr_graph* g, size_t first, size_t* count) -> tsr_error* {
    if (first == 0) {
      for (size_t i = 0; i < g->num_nodes; ++i) {
        const tsr_string name = tsr_op_name(g->nodes[i].op);
        g_recorder->ops.emplace_back(name.data, name.size);
      }
      const tsr_graph_node& add = g->nodes[1];
      g_recorder->w_is_tensor =
          add.args[1].value.kind == TSR_VALUE_TENSOR && add.args[1].num_values == 1;
      g_recorder->saw_constant = add.args[1].value.kind == TSR_VALUE_TENSOR &&
                                 add.args[1].value.u.tensor != nullptr &&
                                 add.args[0].value.u.tensor == nullptr;
      g_recorder->alpha = add.args[2].value.u.scalar.i;
    }
    *count = first == g_recorder->claim_at ? g_recorder->claim_count : 0;
    return nullptr;
  };
  c.prepare = [](void*, const tsr_graph*, const tsr_graph_run* run, void** e) -> tsr_error* {
    g_recorder->run_inputs.assign(run->inputs, run->inputs + run->num_inputs);
    g_recorder->run_outputs.assign(run->outputs, run->outputs + run->num_outputs);
    *e = g_recorder;
    return nullptr;
  };
  c.execute = [](void*, void*, tsr_tensor* const* in, size_t, tsr_tensor** out,
                 size_t n) -> tsr_error* {
    ++g_recorder->executed;
    tessera::sdk::api_slot() = tsr_runtime_api_get();
    g_recorder->inputs_immutable.clear();
    for (size_t k = 0; k < g_recorder->run_inputs.size(); ++k) {
      const tessera::sdk::TensorView view =
          tessera::sdk::view_of(tessera::sdk::Tensor::borrow(in[k]));
      g_recorder->inputs_immutable.push_back(view.immutable_id() != 0);
    }
    for (size_t k = 0; k < n; ++k) {  // wrong values, right device: the runtime cannot tell
      tsr_tensor_retain(in[0]);
      out[k] = in[0];
    }
    return nullptr;
  };
  c.release = [](void*, void*) { ++g_recorder->released; };
  return c;
}

TEST_F(ClaimedRuns, ACompilerSeesTheGraphAndItsRunsBoundaries) {
  Recorder recorder;
  g_recorder = &recorder;
  recorder.claim_at = 1;
  recorder.claim_count = 2;  // add and neg
  const tsr_graph_compiler c = RecordingCompiler();
  tsr_registration* reg = nullptr;
  ASSERT_EQ(Consume(tsr_graph_compiler_register(&c, &reg)), "");
  std::vector<int> routes;
  const auto out = Outputs(ChainFile({3}, {1, 2, 3}), kCpu, 0, &routes);
  EXPECT_EQ(recorder.ops, (std::vector<std::string>{"relu", "add.Tensor", "neg"}));
  EXPECT_TRUE(recorder.saw_constant) << "w is a constant, r a value of the run";
  EXPECT_EQ(recorder.alpha, 2);
  // Values: x 0, w 1 (the file's order: inputs, then constants), r 2, a 3, n 4. The run reads r
  // and w and must give n; a lives only inside it.
  ASSERT_EQ(recorder.run_inputs.size(), 2u);
  EXPECT_EQ(recorder.run_inputs[0], 2);  // r, which add reads first
  EXPECT_EQ(recorder.run_inputs[1], 1);  // w
  // The constant reaches execute immutable, and the SDK's view of it says so.
  EXPECT_EQ(recorder.inputs_immutable, (std::vector<bool>{false, true}));
  EXPECT_EQ(recorder.run_outputs.size(), 1u);
  EXPECT_EQ(routes, (std::vector<int>{TSR_NODE_NATIVE, TSR_NODE_CLAIMED, TSR_NODE_CLAIMED}));
  EXPECT_EQ(recorder.executed, 1);
  EXPECT_EQ(recorder.released, 1);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1], (std::vector<float>{0, 2, 0, 4, 0, 6}));  // r, from relu's own kernel
  tsr_registration_release(reg);
  g_recorder = nullptr;
}

// A constant some node writes (a training step's parameter) changes from run to run: the
// compiler is shown it as a run-time value (NULL), not as the file's tensor.
TEST_F(ClaimedRuns, AWrittenConstantIsShownAsARunTimeValue) {
  Recorder recorder;
  g_recorder = &recorder;
  recorder.claim_at = 99;  // claims nothing: only what it is shown matters here
  const tsr_graph_compiler c = RecordingCompiler();
  tsr_registration* reg = nullptr;
  ASSERT_EQ(Consume(tsr_graph_compiler_register(&c, &reg)), "");
  // w += w after the chain: the chain's add reads a written constant.
  const std::string file = ChainFile(
      {2, 3}, {1, 2, 3, 4, 5, 6},
      R"j(,{"op":"add_.Tensor","schema":"add_.Tensor(Tensor(a!) self, Tensor other, *, )j"
      R"j(Scalar alpha=1) -> Tensor(a!)","args":[{"tensor":"w"},{"tensor":"w"},{"int":1}],)j"
      R"j("outputs":["w2"]})j");
  tsr_model* model = nullptr;
  tsr_compiled_model* compiled = nullptr;
  const std::string error = LoadAndCompile(file, kCpu, 0, &model, &compiled);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
  tsr_registration_release(reg);
  g_recorder = nullptr;
  ASSERT_EQ(error, "");
  EXPECT_TRUE(recorder.w_is_tensor);
  EXPECT_FALSE(recorder.saw_constant) << "w is written: shown as a run-time value";
}

TEST_F(ClaimedRuns, AClaimPastTheEndFailsTheCompile) {
  Recorder recorder;
  g_recorder = &recorder;
  recorder.claim_at = 1;
  recorder.claim_count = 5;
  const tsr_graph_compiler c = RecordingCompiler();
  tsr_registration* reg = nullptr;
  ASSERT_EQ(Consume(tsr_graph_compiler_register(&c, &reg)), "");
  const std::string file = ChainFile({3}, {1, 2, 3});
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_compiled_model* compiled = nullptr;
  const std::string error = Consume(tsr_model_compile(model, kCpu, &compiled));
  EXPECT_THAT(error, HasSubstr("graph compiler of plugin 'application', claiming at node 1"));
  EXPECT_THAT(error, HasSubstr("claimed 5 nodes from node 1 on, past the graph's 3 nodes"));
  EXPECT_EQ(compiled, nullptr);
  EXPECT_EQ(recorder.released, 0);
  tsr_model_release(model);
  tsr_registration_release(reg);
  g_recorder = nullptr;
}

TEST_F(ClaimedRuns, RegistrationIsChecked) {
  tsr_graph_compiler c = RecordingCompiler();
  c.execute = nullptr;
  EXPECT_THAT(Consume(tsr_graph_compiler_register(&c, nullptr)),
              HasSubstr("the required function 'execute' is NULL"));
  c = RecordingCompiler();
  c.struct_size = 16;
  EXPECT_THAT(Consume(tsr_graph_compiler_register(&c, nullptr)),
              HasSubstr("compiler->struct_size is 16, expected at least"));
  c = RecordingCompiler();
  c.device_type = TSR_DEVICE_PRIVATEUSE1;  // the NPU's, which has one
  EXPECT_THAT(Consume(tsr_graph_compiler_register(&c, nullptr)),
              HasSubstr("device type 'npu' already has a graph compiler (plugin 'npu')"));
  c.device_type = 99;
  EXPECT_THAT(Consume(tsr_graph_compiler_register(&c, nullptr)),
              HasSubstr("expected a tsr_device_type"));
  EXPECT_THAT(Consume(tsr_graph_compiler_register(nullptr, nullptr)),
              HasSubstr("compiler is NULL"));
}

// As for a tensor: the compiled model keeps the plugin's code mapped, a run after the unload
// is refused naming the plugin, and releasing the model afterwards releases the executable.
TEST_F(ClaimedRuns, ARunAfterTheUnloadIsRefused) {
  const std::string file = ChainFile({2, 3}, {1, 2, 3, 4, 5, 6});
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(Consume(tsr_model_compile(model, kNpu, &compiled)), "");
  const int64_t sizes[] = {2, 3};
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, kNpu, &x)), "");
  ASSERT_EQ(Consume(tsr_plugin_unload(S("npu"))), "");
  tsr_tensor* y[2] = {};
  const std::string error = Consume(tsr_compiled_model_run(compiled, &x, 1, y, 2));
  EXPECT_THAT(error, HasSubstr("nodes 0 (relu) to 2 (neg), claimed by plugin 'npu'"));
  EXPECT_THAT(error, HasSubstr("the graph compiler's plugin 'npu' has been unloaded"));
  EXPECT_EQ(y[0], nullptr);
  tsr_tensor_release(x);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

}  // namespace
