// Note [Folding batch norm] (runtime/model/fold_batch_norm.h) through the C ABI: an inference
// batch norm after a convolution folds into it (its node's route is TSR_NODE_FOLDED) and the
// run gives what the unfolded program gives; every case the fold must leave alone runs both
// nodes; TESSERA_FOLD_BATCH_NORM=0 folds nothing.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/model/tests/model_file_writer.h"
#include "runtime/tests/c_test_support.h"
#include "tessera/c/tessera.h"

namespace {

using tessera_test::Consume;
using tessera_test::FileTensor;
using tessera_test::Floats;
using tessera_test::ModelFile;

constexpr char kConvSchema[] =
    "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
    "int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor";
constexpr char kNormSchema[] =
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? running_mean, "
    "Tensor(b!)? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, "
    "Tensor)";
// torch.export's inference batch norm: no training argument.
constexpr char kNoTrainingSchema[] =
    "_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor "
    "running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)";
constexpr char kAddInPlaceSchema[] =
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)";

// What a case changes in the graph of x -> convolution -> native_batch_norm -> y.
struct Case {
  bool conv_bias = true;           // the convolution has a bias constant (else None)
  bool affine = true;              // the norm has weight and bias (else None)
  bool training = false;           // the norm's training argument
  bool conv_output_shown = false;  // the convolution's output is a model output too
  bool stats_shown = false;        // the norm's save_mean (output 1) is a model output
  bool weight_written = false;     // an add_ writes the convolution's weight after the pair
  bool weight_shown = false;       // the convolution's weight is a model output
  bool mean_trained = false;       // a training batch norm after the pair updates its mean
  bool no_training_op = false;     // the norm is _native_batch_norm_legit_no_training
};

std::vector<float> Ramp(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i % 7);
  return v;
}

// ConvNormFile: x float32 [2, 3, 5, 5]; weight [4, 3, 3, 3], padding 1.
std::string ConvNormFile(const Case& c) {
  auto tensor = [](const std::string& v) { return "{\"tensor\":\"" + v + "\"}"; };
  const std::string bias = c.conv_bias ? tensor("b") : "{\"none\":null}";
  const std::string affine =
      c.affine ? tensor("gamma") + "," + tensor("beta") : "{\"none\":null},{\"none\":null}";
  std::string nodes = std::string(R"({"op":"convolution","schema":")") + kConvSchema +
                      R"(","args":[)" + tensor("x") + "," + tensor("w") + "," + bias +
                      R"(,{"ints":[1,1]},{"ints":[1,1]},{"ints":[1,1]},{"bool":false},)"
                      R"({"ints":[0,0]},{"int":1}],"outputs":["c"]},)";
  if (c.no_training_op) {
    nodes += std::string(R"({"op":"_native_batch_norm_legit_no_training","schema":")") +
             kNoTrainingSchema + R"(","args":[)" + tensor("c") + "," + affine + "," +
             tensor("mean") + "," + tensor("var") +
             R"(,{"float":0.1},{"float":1e-05}],"outputs":["y","save_mean","save_invstd"]})";
  } else {
    nodes += std::string(R"({"op":"native_batch_norm","schema":")") + kNormSchema +
             R"(","args":[)" + tensor("c") + "," + affine + "," + tensor("mean") + "," +
             tensor("var") + ",{\"bool\":" + (c.training ? "true" : "false") +
             R"(},{"float":0.1},{"float":1e-05}],"outputs":["y","save_mean","save_invstd"]})";
  }
  if (c.weight_written) {  // w += w, after the pair read it: the next run sees 2 * w
    nodes += std::string(R"(,{"op":"add_.Tensor","schema":")") + kAddInPlaceSchema +
             R"(","args":[)" + tensor("w") + "," + tensor("w") + R"(,{"int":1}],"outputs":["w2"]})";
  }
  if (c.mean_trained) {  // a training norm of y updates the shared running statistics
    nodes += std::string(R"(,{"op":"native_batch_norm","schema":")") + kNormSchema +
             R"(","args":[)" + tensor("y") + "," + affine + "," + tensor("mean") + "," +
             tensor("var") +
             R"(,{"bool":true},{"float":0.1},{"float":1e-05}],"outputs":["t","t1","t2"]})";
  }
  std::string outputs = R"({"name":"y","value":"y"})";
  if (c.conv_output_shown) outputs += R"(,{"name":"c","value":"c"})";
  if (c.stats_shown) outputs += R"(,{"name":"save_mean","value":"save_mean"})";
  if (c.weight_shown) outputs += R"(,{"name":"w","value":"w"})";
  const std::string graph =
      R"({"name":"conv_bn","producer":"test","op_set":"1.1",)"
      R"("inputs":[{"name":"x","dtype":"float32","sizes":[2,3,5,5]}],"nodes":[)" +
      nodes + "],\"outputs\":[" + outputs + "]}";
  return ModelFile(graph, {{"constant/w", "F32", {4, 3, 3, 3}, Floats(Ramp(108, -0.5f, 0.17f))},
                           {"constant/b", "F32", {4}, Floats({0.5f, -1, 0.25f, 2})},
                           {"constant/gamma", "F32", {4}, Floats({1.5f, 0.5f, -2, 1})},
                           {"constant/beta", "F32", {4}, Floats({0.1f, -0.2f, 0.3f, 0})},
                           {"constant/mean", "F32", {4}, Floats({0.2f, -0.1f, 1, 0})},
                           {"constant/var", "F32", {4}, Floats({0.5f, 2, 1, 0.01f})},
                           {"input/x", "F32", {2, 3, 5, 5}, Floats(Ramp(150, -1, 0.31f))}});
}

struct Result {
  std::vector<tsr_node_route> routes;
  std::vector<float> y;
};

class FoldBatchNorm : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(Consume(tsr_plugin_load_default()), ""); }
  void TearDown() override { unsetenv("TESSERA_FOLD_BATCH_NORM"); }

  // Run: the model's routes and its first output, compiled with TESSERA_FOLD_BATCH_NORM=`fold`.
  Result Run(const Case& c, const char* fold) {
    setenv("TESSERA_FOLD_BATCH_NORM", fold, 1);
    const std::string file = ConvNormFile(c);
    Result r;
    tsr_model* model = nullptr;
    EXPECT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
    if (model == nullptr) return r;
    tsr_compiled_model* compiled = nullptr;
    EXPECT_EQ(Consume(tsr_model_compile(model, tsr_device{TSR_DEVICE_CPU, 0}, &compiled)), "");
    tsr_tensor* x = nullptr;
    EXPECT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
    if (compiled != nullptr && x != nullptr) {
      for (size_t n = 0; n < tsr_model_num_nodes(model); ++n) {
        r.routes.push_back(tsr_compiled_model_node_route(compiled, n));
      }
      std::vector<tsr_tensor*> outs(tsr_model_num_outputs(model), nullptr);
      // Twice: a run leaves the folded constants as it found them.
      for (int run = 0; run < 2; ++run) {
        EXPECT_EQ(Consume(tsr_compiled_model_run(compiled, &x, 1, outs.data(), outs.size())), "");
        if (outs[0] == nullptr) break;
        r.y.assign(static_cast<size_t>(tsr_tensor_numel(outs[0])), 0.f);
        EXPECT_EQ(Consume(tsr_tensor_copy_to_host(outs[0], r.y.data(), r.y.size() * 4)), "");
        for (tsr_tensor*& t : outs) {
          tsr_tensor_release(t);
          t = nullptr;
        }
      }
    }
    tsr_tensor_release(x);
    tsr_compiled_model_release(compiled);
    tsr_model_release(model);
    return r;
  }

  // ExpectClose: the folded run's output is the unfolded one's within float32 rounding of the
  // folded weights (each output sums 27 products).
  static void ExpectClose(const std::vector<float>& folded, const std::vector<float>& unfolded) {
    ASSERT_EQ(folded.size(), unfolded.size());
    ASSERT_FALSE(folded.empty());
    for (size_t i = 0; i < folded.size(); ++i) {
      EXPECT_NEAR(folded[i], unfolded[i], 1e-5 + 1e-5 * std::fabs(unfolded[i])) << i;
    }
  }
};

TEST_F(FoldBatchNorm, AnInferenceNormAfterAConvolutionFolds) {
  Case no_training_op;
  no_training_op.no_training_op = true;
  for (const Case c :
       {Case{}, Case{false, true}, Case{true, false}, Case{false, false}, no_training_op}) {
    SCOPED_TRACE(testing::Message() << "conv bias " << c.conv_bias << ", affine " << c.affine
                                    << ", no-training op " << c.no_training_op);
    const Result folded = Run(c, "1");
    const Result unfolded = Run(c, "0");
    EXPECT_EQ(folded.routes, (std::vector<tsr_node_route>{TSR_NODE_NATIVE, TSR_NODE_FOLDED}));
    ASSERT_EQ(unfolded.routes.size(), 2u);
    EXPECT_NE(unfolded.routes[1], TSR_NODE_FOLDED);  // native (composite: the no-training op)
    ExpectClose(folded.y, unfolded.y);
  }
}

TEST_F(FoldBatchNorm, WhatMustNotFoldRunsEveryNode) {
  std::vector<Case> cases(6);
  cases[0].training = true;
  cases[1].conv_output_shown = true;
  cases[2].stats_shown = true;
  cases[3].weight_written = true;  // later runs must see the written weight
  cases[4].weight_shown = true;    // the application may write it
  cases[5].mean_trained = true;    // later runs must see the updated statistics
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message()
                 << "training " << c.training << ", conv output shown " << c.conv_output_shown
                 << ", stats shown " << c.stats_shown << ", weight written " << c.weight_written
                 << ", weight shown " << c.weight_shown << ", mean trained " << c.mean_trained);
    const Result r = Run(c, "1");
    ASSERT_GE(r.routes.size(), 2u);
    for (tsr_node_route route : r.routes) EXPECT_EQ(route, TSR_NODE_NATIVE);
    EXPECT_EQ(r.y, Run(c, "0").y);
  }
}

// Another value than 0 or 1 is logged and leaves folding on.
TEST_F(FoldBatchNorm, AnUnknownSettingLeavesFoldingOn) {
  EXPECT_EQ(Run(Case{}, "yes").routes,
            (std::vector<tsr_node_route>{TSR_NODE_NATIVE, TSR_NODE_FOLDED}));
}

}  // namespace
