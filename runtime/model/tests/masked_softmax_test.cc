// The CPU backend's additive mask and softmax as one run (Note [Masked softmax] in
// plugins/cpu/masked_softmax.hpp): which runs its graph compiler claims, and that each gives what
// its nodes give one by one (compiled with TSR_COMPILE_NO_CLAIMS), fused or not.
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/tests/claim_check.h"
#include "runtime/model/tests/model_file_writer.h"
#include "runtime/tests/c_test_support.h"
#include "tessera/c/tessera.h"

namespace {

using tessera_test::CheckAgainstNodes;
using tessera_test::Compiled;
using tessera_test::Consume;
using tessera_test::Floats;
using tessera_test::kAddSchema;
using tessera_test::kClaimed;
using tessera_test::kNative;
using tessera_test::ModelFile;
using tessera_test::Node;
using tessera_test::Q;
using tessera_test::Ramp;
using tessera_test::T;

constexpr char kSoftmax[] = "_softmax(Tensor self, int dim, bool half_to_float) -> Tensor";

// The scores x [2, 3, 4, 5] (an input) plus `alpha` times the mask m (a constant of
// `mask_sizes`), then the softmax over `dim`; the model returns p (and the sum s with
// `return_sum`).
std::string File(const std::vector<int64_t>& mask_sizes, bool mask_first = false, int dim = -1,
                 const std::string& dtype = "float32", int alpha = 1, bool return_sum = false) {
  const std::string add = Node("add.Tensor", kAddSchema,
                               (mask_first ? T("m") + "," + T("x") : T("x") + "," + T("m")) +
                                   ",{\"int\":" + std::to_string(alpha) + "}",
                               Q("s"));
  const std::string softmax =
      Node("_softmax", kSoftmax,
           T("s") + ",{\"int\":" + std::to_string(dim) + R"(},{"bool":false})", Q("p"));
  const std::string graph =
      R"({"name":"masked","producer":"test","op_set":"1.1","inputs":[{"name":"x","dtype":")" +
      dtype + R"(","sizes":[2,3,4,5]}],"nodes":[)" + add + "," + softmax +
      R"(],"outputs":[{"name":"p","value":"p"})" +
      (return_sum ? R"(,{"name":"s","value":"s"})" : "") + "]}";
  int64_t mask_numel = 1;
  for (int64_t s : mask_sizes) mask_numel *= s;
  auto bytes = [&](const std::vector<float>& v) {
    if (dtype != "float64") return Floats(v);
    std::vector<double> d(v.begin(), v.end());
    return std::string(reinterpret_cast<const char*>(d.data()), d.size() * sizeof(double));
  };
  const std::string dt = dtype == "float64" ? "F64" : "F32";
  // The mask: 0 or -10000, as BERT's (1 - attention_mask) * -10000.
  std::vector<float> mask(static_cast<size_t>(mask_numel));
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = i % 3 == 2 ? -10000.f : 0.f;
  return ModelFile(graph, {{"constant/m", dt, mask_sizes, bytes(mask)},
                           {"input/x", dt, {2, 3, 4, 5}, bytes(Ramp(120, -2.5f, 0.61f, 13))}});
}

class MaskedSoftmax : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(Consume(tsr_plugin_load_default()), ""); }
};

// BERT's form: a mask [B, 1, 1, N] added to the scores [B, H, M, N]; and the mask first, and
// one of the scores' own sizes, and the dim written as 3. The rows sum to 1, the masked
// elements are 0: the softmax of the sum.
TEST_F(MaskedSoftmax, MaskAndSoftmaxAsOne) {
  for (const auto& [mask, first, dim] :
       std::vector<std::tuple<std::vector<int64_t>, bool, int>>{{{2, 1, 1, 5}, false, -1},
                                                                {{2, 1, 1, 5}, true, -1},
                                                                {{2, 3, 4, 5}, false, 3},
                                                                {{1, 3, 1, 1}, false, -1}}) {
    const Compiled c = CheckAgainstNodes(File(mask, first, dim), {kClaimed, kClaimed});
    ASSERT_EQ(c.outputs.size(), 1u);
    ASSERT_EQ(c.outputs[0].size(), 120u);
    for (size_t row = 0; row < 24; ++row) {
      double sum = 0;
      for (size_t j = 0; j < 5; ++j) sum += c.outputs[0][row * 5 + j];
      EXPECT_NEAR(sum, 1, 1e-6) << "row " << row;
    }
  }
}

// Claimed, but run by the nodes' own calls: float64 operands, a mask of another rank ([5]), a
// softmax over another dim.
TEST_F(MaskedSoftmax, WhatRunsNodeByNode) {
  CheckAgainstNodes(File({2, 1, 1, 5}, false, -1, "float64"), {kClaimed, kClaimed});
  CheckAgainstNodes(File({5}), {kClaimed, kClaimed});
  CheckAgainstNodes(File({2, 1, 1, 5}, false, 2), {kClaimed, kClaimed});
}

// Not claimed: an add with alpha 2, a sum the model also returns.
TEST_F(MaskedSoftmax, WhatIsNotClaimed) {
  CheckAgainstNodes(File({2, 1, 1, 5}, false, -1, "float32", 2), {kNative, kNative});
  CheckAgainstNodes(File({2, 1, 1, 5}, false, -1, "float32", 1, true), {kNative, kNative});
}

}  // namespace
