// The CPU backend's additive mask and softmax as one run (Note [Masked softmax] in
// plugins/cpu/masked_softmax.hpp): which runs its graph compiler claims, and that each gives what
// its nodes give one by one (compiled with TSR_COMPILE_NO_CLAIMS), fused or not.
#include <cmath>
#include <string>
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
using tessera_test::kComposite;
using tessera_test::kNative;
using tessera_test::kPermuteSchema;
using tessera_test::kSoftmaxSchema;
using tessera_test::ModelFile;
using tessera_test::Node;
using tessera_test::Q;
using tessera_test::Ramp;
using tessera_test::T;

// A model: the scores (the input x, or the view xs that `before` makes of it) plus `alpha` times
// the mask m (a constant), then the softmax over `dim`; it returns p (and the sum s with
// `return_sum`).
struct Masked {
  std::vector<int64_t> x_sizes = {2, 3, 4, 5};
  std::vector<int64_t> mask_sizes = {2, 1, 1, 5};  // BERT's [B, 1, 1, N]
  bool mask_first = false;
  int dim = -1;
  std::string dtype = "float32";
  int alpha = 1;
  bool return_sum = false;
  std::string before;  // nodes making "xs" from "x"

  std::string File() const {
    const std::string x = before.empty() ? "x" : "xs";
    const std::string add = Node("add.Tensor", kAddSchema,
                                 (mask_first ? T("m") + "," + T(x) : T(x) + "," + T("m")) +
                                     ",{\"int\":" + std::to_string(alpha) + "}",
                                 Q("s"));
    const std::string softmax =
        Node("_softmax", kSoftmaxSchema,
             T("s") + ",{\"int\":" + std::to_string(dim) + R"(},{"bool":false})", Q("p"));
    std::string sizes;
    for (int64_t d : x_sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(d);
    const std::string graph =
        R"({"name":"masked","producer":"test","op_set":"1.1","inputs":[{"name":"x","dtype":")" +
        dtype + R"(","sizes":[)" + sizes + R"(]}],"nodes":[)" +
        (before.empty() ? "" : before + ",") + add + "," + softmax +
        R"(],"outputs":[{"name":"p","value":"p"})" +
        (return_sum ? R"(,{"name":"s","value":"s"})" : "") + "]}";
    // The mask: 0 or -10000, as BERT's (1 - attention_mask) * -10000.
    std::vector<float> mask(static_cast<size_t>(Numel(mask_sizes)));
    for (size_t i = 0; i < mask.size(); ++i) mask[i] = i % 3 == 2 ? -10000.f : 0.f;
    return ModelFile(graph, {{"constant/m", DtypeName(), mask_sizes, Bytes(mask)},
                             {"input/x", DtypeName(), x_sizes,
                              Bytes(Ramp(static_cast<size_t>(Numel(x_sizes)), -2.5f, 0.61f, 13))}});
  }

 private:
  static int64_t Numel(const std::vector<int64_t>& sizes) {
    int64_t n = 1;
    for (int64_t d : sizes) n *= d;
    return n;
  }
  std::string DtypeName() const { return dtype == "float64" ? "F64" : "F32"; }
  std::string Bytes(const std::vector<float>& v) const {
    if (dtype != "float64") return Floats(v);
    std::vector<double> d(v.begin(), v.end());
    return std::string(reinterpret_cast<const char*>(d.data()), d.size() * sizeof(double));
  }
};

const std::vector<int> kRun = {kClaimed, kClaimed};

class MaskedSoftmax : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(Consume(tsr_plugin_load_default()), ""); }
};

// BERT's form, a [2, 1, 1, 5] mask on [2, 3, 4, 5] scores; the mask as the add's first operand; a
// mask of the scores' own sizes with the dim written as 3; a mask over dim 1 alone (broadcast
// along each row too); one broadcast over all but the last dim. Every row sums to 1.
TEST_F(MaskedSoftmax, MaskAndSoftmaxAsOne) {
  const std::vector<Masked> cases = [] {
    std::vector<Masked> c(5);
    c[1].mask_first = true;
    c[2].mask_sizes = {2, 3, 4, 5};
    c[2].dim = 3;
    c[3].mask_sizes = {1, 3, 1, 1};
    c[4].mask_sizes = {1, 1, 1, 5};
    return c;
  }();
  for (const Masked& m : cases) {
    const Compiled c = CheckAgainstNodes(m.File(), kRun);
    ASSERT_EQ(c.outputs.size(), 1u);
    ASSERT_EQ(c.outputs[0].size(), 120u);
    for (size_t row = 0; row < 24; ++row) {
      double sum = 0;
      for (size_t j = 0; j < 5; ++j) sum += c.outputs[0][row * 5 + j];
      EXPECT_NEAR(sum, 1, 1e-6) << "row " << row;
    }
  }
}

// Scores of 3 dims, and of enough rows (4 x 8 x 32 of 64) to be split across threads.
TEST_F(MaskedSoftmax, OtherRanksAndManyRows) {
  Masked three;
  three.x_sizes = {6, 4, 5};
  three.mask_sizes = {6, 1, 5};
  CheckAgainstNodes(three.File(), kRun);
  Masked many;
  many.x_sizes = {4, 8, 32, 64};
  many.mask_sizes = {4, 1, 1, 64};
  CheckAgainstNodes(many.File(), kRun);
}

// Claimed, but run by the nodes' own calls: float64 operands; a mask of another rank ([5]); a
// softmax over another dim; scores that are not contiguous (a permuted view of the input).
TEST_F(MaskedSoftmax, WhatRunsNodeByNode) {
  Masked f64;
  f64.dtype = "float64";
  CheckAgainstNodes(f64.File(), kRun);
  Masked rank;
  rank.mask_sizes = {5};
  CheckAgainstNodes(rank.File(), kRun);
  Masked dim;
  dim.dim = 2;
  CheckAgainstNodes(dim.File(), kRun);
  Masked strided;
  strided.x_sizes = {2, 3, 5, 4};
  strided.before = Node("permute", kPermuteSchema, T("x") + R"(,{"ints":[0,1,3,2]})", Q("xs"));
  CheckAgainstNodes(strided.File(), {kComposite, kClaimed, kClaimed});
}

// Not claimed: an add with alpha 2, a sum the model also returns.
TEST_F(MaskedSoftmax, WhatIsNotClaimed) {
  Masked alpha;
  alpha.alpha = 2;
  CheckAgainstNodes(alpha.File(), {kNative, kNative});
  Masked returned;
  returned.return_sum = true;
  CheckAgainstNodes(returned.File(), {kNative, kNative});
}

}  // namespace
