// The CPU backend's convolution chains (Note [Convolution chains] in plugins/cpu/conv_chain.hpp):
// which runs its graph compiler claims in a compiled model, and that each gives what its nodes
// give one by one (compiled with TSR_COMPILE_NO_CLAIMS), as a chain or not.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/model/tests/claim_check.h"
#include "runtime/model/tests/model_file_writer.h"
#include "runtime/tests/c_test_support.h"
#include "tessera/c/tessera.h"

namespace {

using tessera_test::CheckAgainstNodes;
using tessera_test::CompileAndRun;
using tessera_test::Compiled;
using tessera_test::Consume;
using tessera_test::Floats;
using tessera_test::kAddSchema;
using tessera_test::kClaimed;
using tessera_test::kNative;
using tessera_test::LoadAndCompile;
using tessera_test::ModelFile;
using tessera_test::Node;
using tessera_test::Ramp;
using tessera_test::T;

constexpr tsr_device kCpu = {TSR_DEVICE_CPU, 0};
constexpr char kConv[] =
    "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
    "int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor";
constexpr char kNorm[] =
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? running_mean, "
    "Tensor(b!)? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, "
    "Tensor)";
constexpr char kAddInPlace[] =
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)";
constexpr char kReluInPlace[] = "relu_(Tensor(a!) self) -> Tensor(a!)";
constexpr char kHardswish[] = "hardswish(Tensor self) -> Tensor";

// The 3x3 convolution of x [2, 4, 6, 6] (padding 1, so [2, 4, 6, 6] out) with weight w, bias b.
std::string Conv(const std::string& in, const std::string& out, const std::string& kernel = "w",
                 int pad = 1) {
  const std::string p = std::to_string(pad);
  return Node("convolution", kConv,
              T(in) + "," + T(kernel) + "," + T("b") + R"(,{"ints":[1,1]},{"ints":[)" + p + "," +
                  p + R"(]},{"ints":[1,1]},{"bool":false},{"ints":[0,0]},{"int":1})",
              "\"" + out + "\"");
}

// File: a graph of `nodes` over input x, its outputs named by value.
std::string File(const std::string& nodes, const std::vector<std::string>& outputs,
                 const std::string& x_dtype = "float32") {
  std::string outs;
  for (const std::string& o : outputs) {
    outs +=
        (outs.empty() ? "" : ",") + std::string("{\"name\":\"") + o + "\",\"value\":\"" + o + "\"}";
  }
  const std::string graph = R"({"name":"fusion","producer":"test","op_set":"1.1",)"
                            R"("inputs":[{"name":"x","dtype":")" +
                            x_dtype + R"(","sizes":[2,4,6,6]}],"nodes":[)" + nodes +
                            "],\"outputs\":[" + outs + "]}";
  const bool f64 = x_dtype == "float64";
  auto values = [&](const std::vector<float>& v) {
    if (!f64) return Floats(v);
    std::vector<double> d(v.begin(), v.end());
    return std::string(reinterpret_cast<const char*>(d.data()), d.size() * sizeof(double));
  };
  const std::string dt = f64 ? "F64" : "F32";
  return ModelFile(graph, {{"constant/w", dt, {4, 4, 3, 3}, values(Ramp(144, -0.5f, 0.13f))},
                           {"constant/w1", dt, {4, 4, 1, 1}, values(Ramp(16, -0.5f, 0.21f))},
                           {"constant/b", dt, {4}, values({0.5f, -1, 0.25f, 2})},
                           {"constant/gamma", dt, {4}, values({1.5f, 0.5f, -2, 1})},
                           {"constant/beta", dt, {4}, values({0.1f, -0.2f, 0.3f, 0})},
                           {"constant/mean", dt, {4}, values({0.2f, -0.1f, 1, 0})},
                           {"constant/var", dt, {4}, values({0.5f, 2, 1, 0.01f})},
                           {"constant/chan", dt, {1, 4, 1, 1}, values({1, -2, 3, -4})},
                           {"input/x", dt, {2, 4, 6, 6}, values(Ramp(288, -1.5f, 0.37f, 11))}});
}

class ConvChains : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(Consume(tsr_plugin_load_default()), ""); }
};

TEST_F(ConvChains, ConvolutionAndReluAsOne) {
  const Compiled c = CheckAgainstNodes(
      File(Conv("x", "c") + "," + Node("relu_", kReluInPlace, T("c"), "\"r\""), {"r"}),
      {kClaimed, kClaimed});
  // relu ran: nothing negative, and the convolution's negative results became zeros.
  size_t negative = 0, zero = 0;
  for (double v : c.outputs[0]) {
    negative += v < 0;
    zero += v == 0;
  }
  EXPECT_EQ(negative, 0u);
  EXPECT_GT(zero, 0u);
}

// ResNet's block end: conv -> batch norm (folded) -> add_ of the residual -> relu_, all four one.
TEST_F(ConvChains, ResidualBlockEndAsOne) {
  const std::string nodes =
      Conv("x", "c") + "," +
      Node("native_batch_norm", kNorm,
           T("c") + "," + T("gamma") + "," + T("beta") + "," + T("mean") + "," + T("var") +
               R"(,{"bool":false},{"float":0.1},{"float":1e-05})",
           R"("y","m","v")") +
      "," + Node("add_.Tensor", kAddInPlace, T("y") + "," + T("x") + R"(,{"int":1})", "\"s\"") +
      "," + Node("relu_", kReluInPlace, T("s"), "\"r\"");
  CheckAgainstNodes(File(nodes, {"r"}), {kClaimed, kClaimed, kClaimed, kClaimed}, 1e-6);
}

TEST_F(ConvChains, HardswishAsOne) {
  CheckAgainstNodes(
      File(Conv("x", "c") + "," + Node("hardswish", kHardswish, T("c"), "\"h\""), {"h"}),
      {kClaimed, kClaimed}, 1e-6);
}

// A chain of three units: relu_'s result feeds the next convolution and is a model output too
// (so the run gives it from its middle), the block's input x is the second unit's residual, and
// an out-of-place hardswish ends the third.
TEST_F(ConvChains, ThreeUnitsAsOneRun) {
  const std::string nodes =
      Conv("x", "c1") + "," + Node("relu_", kReluInPlace, T("c1"), "\"r1\"") + "," +
      Conv("r1", "c2") + "," +
      Node("add_.Tensor", kAddInPlace, T("c2") + "," + T("x") + R"(,{"int":1})", "\"s\"") + "," +
      Node("relu_", kReluInPlace, T("s"), "\"r2\"") + "," + Conv("r2", "c3") + "," +
      Node("hardswish", kHardswish, T("c3"), "\"h\"");
  const Compiled c =
      CheckAgainstNodes(File(nodes, {"h", "r1"}), std::vector<int>(7, kClaimed), 1e-5);
  ASSERT_EQ(c.outputs.size(), 2u);
}

// add_(y, c) writes y, not the convolution's result c: where c is read afterwards (a model
// output here), the add stays out of the unit, which leaves a lone convolution, not claimed.
TEST_F(ConvChains, AnAddIntoTheOtherOperandLeavesTheResultAlone) {
  constexpr char kRelu[] = "relu(Tensor self) -> Tensor";
  const std::string nodes =
      Node("relu", kRelu, T("x"), "\"y\"") + "," + Conv("x", "c") + "," +
      Node("add_.Tensor", kAddInPlace, T("y") + "," + T("c") + R"(,{"int":1})", "\"s\"");
  CheckAgainstNodes(File(nodes, {"s", "c"}), {kNative, kNative, kNative});
}

// The out-of-place add, its convolution second: add(x, c) then relu, one unit.
TEST_F(ConvChains, AnOutOfPlaceAddAsOne) {
  CheckAgainstNodes(
      File(Conv("x", "c") + "," +
               Node("add.Tensor", kAddSchema, T("x") + "," + T("c") + R"(,{"int":1})", "\"s\"") +
               "," + Node("relu_", kReluInPlace, T("s"), "\"r\""),
           {"r"}),
      {kClaimed, kClaimed, kClaimed}, 1e-6);
}

// c and relu_(c) are one tensor node by node; as outputs of a run they stay one tensor.
TEST_F(ConvChains, TwoNamesOfOneResultAreOneTensor) {
  const std::string file =
      File(Conv("x", "c") + "," + Node("relu_", kReluInPlace, T("c"), "\"r\""), {"r", "c"});
  tsr_model* model = nullptr;
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(LoadAndCompile(file, kCpu, 0, &model, &compiled), "");
  EXPECT_EQ(tsr_compiled_model_node_route(compiled, 0), TSR_NODE_CLAIMED);
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
  tsr_tensor* y[2] = {};
  ASSERT_EQ(Consume(tsr_compiled_model_run(compiled, &x, 1, y, 2)), "");
  EXPECT_EQ(tsr_tensor_data_ptr(y[0]), tsr_tensor_data_ptr(y[1]));
  for (tsr_tensor* t : y) tsr_tensor_release(t);
  tsr_tensor_release(x);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

// torchvision's downsampling block end: add_(main, shortcut) writes the main branch's result,
// an earlier unit's: taken where nothing after reads it (one run of five nodes), not where the
// model shows it too (the add and the relu after it then run node by node).
TEST_F(ConvChains, AnAddIntoAnEarlierUnitsResult) {
  const std::string nodes =
      Conv("x", "c1") + "," + Node("relu_", kReluInPlace, T("c1"), "\"y1\"") + "," +
      Conv("x", "c2") + "," +
      Node("add_.Tensor", kAddInPlace, T("y1") + "," + T("c2") + R"(,{"int":1})", "\"s\"") + "," +
      Node("relu_", kReluInPlace, T("s"), "\"r\"");
  CheckAgainstNodes(File(nodes, {"r"}), std::vector<int>(5, kClaimed), 1e-6);
  CheckAgainstNodes(File(nodes, {"r", "c1"}), {kClaimed, kClaimed, kClaimed, kNative, kNative},
                    1e-6);
}

// A malformed file's convolution (a stride of three values for two spatial dims) is not
// claimed: its own call refuses it, as it would without the compiler, rather than the chain
// computing something from part of the list.
TEST_F(ConvChains, AMalformedConvolutionIsLeftToItsOwnCall) {
  const std::string conv = Node(
      "convolution", kConv,
      T("x") + "," + T("w") + "," + T("b") +
          R"(,{"ints":[1,1,1]},{"ints":[1,1]},{"ints":[1,1]},{"bool":false},{"ints":[0,0]},{"int":1})",
      "\"c\"");
  const std::string file = File(conv + "," + Node("relu_", kReluInPlace, T("c"), "\"r\""), {"r"});
  tsr_model* model = nullptr;
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(LoadAndCompile(file, kCpu, 0, &model, &compiled), "");
  EXPECT_EQ(tsr_compiled_model_node_route(compiled, 0), TSR_NODE_NATIVE);
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
  tsr_tensor* y = nullptr;
  EXPECT_THAT(Consume(tsr_compiled_model_run(compiled, &x, 1, &y, 1)),
              ::testing::HasSubstr("node 0 (convolution)"));
  EXPECT_EQ(y, nullptr);
  tsr_tensor_release(x);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

// What is not claimed: a 1x1 convolution (the product path runs it), a convolution whose output
// is read after the activation (a model output here), a convolution with nothing after it.
TEST_F(ConvChains, WhatStaysNodeByNode) {
  CheckAgainstNodes(
      File(Conv("x", "c", "w1", 0) + "," + Node("relu_", kReluInPlace, T("c"), "\"r\""), {"r"}),
      {kNative, kNative});
  CheckAgainstNodes(
      File(Conv("x", "c") + "," + Node("hardswish", kHardswish, T("c"), "\"h\""), {"h", "c"}),
      {kNative, kNative});
  CheckAgainstNodes(File(Conv("x", "c"), {"c"}), {kNative});
}

// Claimed runs whose inputs the fused path does not take make their nodes' own calls: a
// broadcast residual, float64.
TEST_F(ConvChains, UnfusableInputsRunNodeByNode) {
  CheckAgainstNodes(File(Conv("x", "c") + "," +
                             Node("add_.Tensor", kAddInPlace,
                                  T("c") + "," + T("chan") + R"(,{"int":1})", "\"s\"") +
                             "," + Node("relu_", kReluInPlace, T("s"), "\"r\""),
                         {"r"}),
                    {kClaimed, kClaimed, kClaimed});
  CheckAgainstNodes(
      File(Conv("x", "c") + "," + Node("relu_", kReluInPlace, T("c"), "\"r\""), {"r"}, "float64"),
      {kClaimed, kClaimed});
}

}  // namespace
