// The CPU backend's linear layers with their epilogue (Note [Linear layers with their epilogue]
// in plugins/cpu/linear_epilogue.hpp): which runs its graph compiler claims after an addmm, and
// that each gives what its nodes give one by one (compiled with TSR_COMPILE_NO_CLAIMS), fused or
// not.
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
using tessera_test::kViewSchema;
using tessera_test::ModelFile;
using tessera_test::Node;
using tessera_test::Q;
using tessera_test::Ramp;
using tessera_test::RunError;
using tessera_test::T;

constexpr char kT[] = "t(Tensor(a) self) -> Tensor(a)";
constexpr char kNormSchema[] =
    "native_layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, "
    "float eps) -> (Tensor, Tensor, Tensor)";
constexpr char kAddmm[] =
    "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor";
constexpr char kGelu[] = "gelu(Tensor self, *, str approximate='none') -> Tensor";

// A linear layer x [M, K] @ w^T (w [N, K]) + b, its result viewed as [2, M/2, N] (M even).
struct Layer {
  int64_t M = 6, K = 5, N = 7;
  std::string dtype = "float32";
  std::vector<int64_t> bias_sizes;  // default [N]

  // `view_n`: the view's last size (N unless a test wants a wrong one).
  std::string Linear(const std::string& beta = "1", bool view = true, int64_t view_n = 0) const {
    std::string s =
        Node("t", kT, T("w"), Q("wt")) + "," +
        Node("addmm", kAddmm,
             T("b") + "," + T("x") + "," + T("wt") + R"(,{"int":)" + beta + R"(},{"int":1})",
             Q(view ? "y" : "y3"));
    if (view) {
      s += "," + Node("view", kViewSchema,
                      T("y") + R"(,{"ints":[2,)" + std::to_string(M / 2) + "," +
                          std::to_string(view_n ? view_n : N) + "]}",
                      Q("y3"));
    }
    return s;
  }

  // The model file: inputs x, constants w, b and r (r: `r_sizes`, [2, M/2, N] by default).
  std::string File(const std::string& nodes, const std::vector<std::string>& outputs,
                   std::vector<int64_t> r_sizes = {}, const std::vector<float>& b = {},
                   const std::vector<float>& r = {}) const {
    if (r_sizes.empty()) r_sizes = {2, M / 2, N};
    int64_t r_numel = 1;
    for (int64_t s : r_sizes) r_numel *= s;
    std::string outs, rs;
    for (const std::string& o : outputs) {
      outs += (outs.empty() ? "" : ",") + std::string("{\"name\":\"") + o + "\",\"value\":\"" + o +
              "\"}";
    }
    const std::string graph = R"({"name":"linear","producer":"test","op_set":"1.1",)"
                              R"("inputs":[{"name":"x","dtype":")" +
                              dtype + R"(","sizes":[)" + std::to_string(M) + "," +
                              std::to_string(K) + R"(]}],"nodes":[)" + nodes + "],\"outputs\":[" +
                              outs + "]}";
    const bool f64 = dtype == "float64";
    auto bytes = [&](const std::vector<float>& v) {
      if (!f64) return Floats(v);
      std::vector<double> d(v.begin(), v.end());
      return std::string(reinterpret_cast<const char*>(d.data()), d.size() * sizeof(double));
    };
    const std::string dt = f64 ? "F64" : "F32";
    return ModelFile(
        graph,
        {{"constant/w", dt, {N, K}, bytes(Ramp(static_cast<size_t>(N * K), -0.5f, 0.13f, 9))},
         {"constant/b", dt, bias_sizes.empty() ? std::vector<int64_t>{N} : bias_sizes,
          bytes(b.empty() ? Ramp(static_cast<size_t>(N), -1, 0.4f, 5) : b)},
         {"constant/r", dt, r_sizes,
          bytes(r.empty() ? Ramp(static_cast<size_t>(r_numel), 0.3f, -0.21f, 7) : r)},
         {"constant/nw", dt, {N}, bytes(Ramp(static_cast<size_t>(N), 0.5f, 0.25f, 4))},
         {"constant/nb", dt, {N}, bytes(Ramp(static_cast<size_t>(N), -0.2f, 0.1f, 3))},
         {"input/x", dt, {M, K}, bytes(Ramp(static_cast<size_t>(M * K), -1.5f, 0.37f, 11))}});
  }
};

std::string Gelu(const std::string& in, const std::string& approximate) {
  return Node("gelu", kGelu, T(in) + R"(,{"str":")" + approximate + "\"}", Q("g"));
}
std::string Add(const std::string& self, const std::string& other) {
  return Node("add.Tensor", kAddSchema, T(self) + "," + T(other) + R"(,{"int":1})", Q("s"));
}

// The layer norm of `in` over its last dim (n elements), weight nw and bias nb (or None), into
// values n0 (the normalized), n1 (mean), n2 (rstd).
std::string Norm(const std::string& in, int64_t n, bool affine = true) {
  const std::string w = affine ? T("nw") : "{\"none\":null}";
  const std::string b = affine ? T("nb") : "{\"none\":null}";
  return Node(
      "native_layer_norm", kNormSchema,
      T(in) + R"(,{"ints":[)" + std::to_string(n) + "]}," + w + "," + b + R"(,{"float":1e-05})",
      R"("n0","n1","n2")");
}

class LinearEpilogues : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(Consume(tsr_plugin_load_default()), ""); }
};

// t stays a node (a view, a composite of the runtime's); addmm, view and the epilogue are one.
const std::vector<int> kRun = {kComposite, kClaimed, kClaimed, kClaimed};

TEST_F(LinearEpilogues, GeluAsOne) {
  const Layer l;
  const Compiled c =
      CheckAgainstNodes(l.File(l.Linear() + "," + Gelu("y3", "none"), {"g"}), kRun, 1e-6);
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0].size(), static_cast<size_t>(l.M * l.N));
}

TEST_F(LinearEpilogues, GeluTanhAsOne) {
  const Layer l;
  CheckAgainstNodes(l.File(l.Linear() + "," + Gelu("y3", "tanh"), {"g"}), kRun, 1e-6);
}

// Each product path: 2 rows of 32 by a 16 x 32 weight on the prepacked matmul (it adds the bias
// itself); 1 row (a matrix-vector product, 512 multiply-adds) on sgemm, the row pass adding the
// bias.
TEST_F(LinearEpilogues, EachProductPathFused) {
  Layer l;
  l.K = 32, l.N = 16;
  for (int64_t rows : {2, 1}) {
    l.M = rows;
    const std::string gelu = l.File(l.Linear("1", false) + "," + Gelu("y3", "none"), {"g"});
    const std::string add = l.File(l.Linear("1", false) + "," + Add("y3", "r"), {"s"}, {rows, 16});
    for (const std::string& file : {gelu, add}) {
      CheckAgainstNodes(file, {kComposite, kClaimed, kClaimed}, 1e-6);
    }
    // And the add's layer norm, its input's last bits (on sgemm) scaled by the row's 1 / std.
    CheckAgainstNodes(l.File(l.Linear("1", false) + "," + Add("y3", "r") + "," + Norm("s", l.N),
                             {"n0"}, {rows, 16}),
                      {kComposite, kClaimed, kClaimed, kClaimed}, 1e-5);
  }
}

TEST_F(LinearEpilogues, AResidualAddAsOneEitherWay) {
  const Layer l;
  CheckAgainstNodes(l.File(l.Linear() + "," + Add("y3", "r"), {"s"}), kRun, 1e-6);
  CheckAgainstNodes(l.File(l.Linear() + "," + Add("r", "y3"), {"s"}), kRun, 1e-6);
}

// The fused add sums in the nodes' order, (product + bias) + other: with a bias of 2^25 and the
// other operand -2^25, the product (under 1) is lost in the first sum (float32's ulp at 2^25 is
// 4), both ways, and the result is 0 exactly as node by node (summing bias and other first
// would give the product). 2 rows: the prepacked matmul adds the bias, the row pass the other
// operand; 1 row: the small products' loop, the row pass adding both.
TEST_F(LinearEpilogues, TheAddSumsInTheNodesOrder) {
  Layer l;
  l.K = 1, l.N = 1;
  const float big = 33554432.f;  // 2^25
  // x = [-1.5, -1.13], w = [-0.5]: products 0.75 and 0.565.
  for (int64_t rows : {2, 1}) {
    l.M = rows;
    const std::string file = l.File(l.Linear("1", false) + "," + Add("y3", "r"), {"s"}, {rows, 1},
                                    {big}, std::vector<float>(static_cast<size_t>(rows), -big));
    const Compiled fused = tessera_test::CompileAndRun(file, 0);
    const Compiled nodes = tessera_test::CompileAndRun(file, TSR_COMPILE_NO_CLAIMS);
    EXPECT_EQ(fused.routes, (std::vector<int>{kComposite, kClaimed, kClaimed}));
    ASSERT_EQ(fused.outputs.size(), 1u);
    ASSERT_EQ(nodes.outputs.size(), 1u);
    const std::vector<double> zeros(static_cast<size_t>(rows), 0.0);
    EXPECT_EQ(fused.outputs[0], zeros) << rows << " rows";
    EXPECT_EQ(nodes.outputs[0], zeros) << rows << " rows";
  }
}

TEST_F(LinearEpilogues, ABiasOfOneRow) {
  Layer l;
  l.bias_sizes = {1, l.N};
  const std::string file = l.File(l.Linear() + "," + Gelu("y3", "none"), {"g"});
  CheckAgainstNodes(file, kRun, 1e-6);
}

// The residual add's layer norm (BERT's "add & norm") joins the run: the norm of each row in
// the same pass, by the kernel's own row function; with and without weight and bias.
TEST_F(LinearEpilogues, TheAddsLayerNormAsOne) {
  const Layer l;
  std::vector<int> routes = kRun;
  routes.push_back(kClaimed);
  for (bool affine : {true, false}) {
    const Compiled c = CheckAgainstNodes(
        l.File(l.Linear() + "," + Add("y3", "r") + "," + Norm("s", l.N, affine), {"n0"}), routes,
        1e-6);
    ASSERT_EQ(c.outputs.size(), 1u);
    // Each row is normalized: mean 0 (without weight and bias).
    if (!affine) {
      for (int64_t row = 0; row < l.M; ++row) {
        double sum = 0;
        for (int64_t j = 0; j < l.N; ++j) sum += c.outputs[0][static_cast<size_t>(row * l.N + j)];
        EXPECT_NEAR(sum / static_cast<double>(l.N), 0, 1e-5) << "row " << row;
      }
    }
  }
}

// What a norm must be to join: a norm whose mean the model returns, whose rstd a later node
// reads, over two dims, or after gelu stays a node of its own; so does one whose weight is the
// add's own result (a value the run would make).
TEST_F(LinearEpilogues, ANormStaysANodeWhereItsStatisticsAreRead) {
  const Layer l;
  const std::vector<int> apart = {kComposite, kClaimed, kClaimed, kClaimed, kNative};
  const std::string add = l.Linear() + "," + Add("y3", "r") + ",";
  CheckAgainstNodes(l.File(add + Norm("s", l.N), {"n0", "n1"}), apart, 1e-6);
  std::vector<int> rstd_read = apart;
  rstd_read.push_back(kNative);
  CheckAgainstNodes(
      l.File(add + Norm("s", l.N) + "," +
                 Node("add.Tensor", kAddSchema, T("n0") + "," + T("n2") + R"(,{"int":1})", Q("u")),
             {"u"}),
      rstd_read, 1e-6);
  const std::string two_dims =
      Node("native_layer_norm", kNormSchema,
           T("s") + R"(,{"ints":[3,7]},{"none":null},{"none":null},{"float":1e-05})",
           R"("n0","n1","n2")");
  CheckAgainstNodes(l.File(add + two_dims, {"n0"}), apart, 1e-6);
  const std::string gelu_norm = l.Linear() + "," + Gelu("y3", "none") + "," + Norm("g", l.N);
  CheckAgainstNodes(l.File(gelu_norm, {"n0"}), apart, 1e-6);
  const std::string weight_is_result =
      Node("native_layer_norm", kNormSchema,
           T("s") + R"(,{"ints":[7]},)" + T("s") + R"(,{"none":null},{"float":1e-05})",
           R"("n0","n1","n2")");
  tsr_model* model = nullptr;
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(tessera_test::LoadAndCompile(l.File(add + weight_is_result, {"n0"}),
                                         {TSR_DEVICE_CPU, 0}, 0, &model, &compiled),
            "");
  for (size_t n = 0; n < apart.size(); ++n) {
    EXPECT_EQ(tsr_compiled_model_node_route(compiled, n), apart[n]) << "node " << n;
  }
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

// A norm over the last dim the reshape made (14, not the product's 7) fails as node by node, with
// the norm's own message: the run does not take it.
TEST_F(LinearEpilogues, ANormOverAnotherDimFailsAsItsNode) {
  const Layer l;  // the product [6, 7], viewed as [3, 14]
  const std::string nodes =
      Node("t", kT, T("w"), Q("wt")) + "," +
      Node("addmm", kAddmm, T("b") + "," + T("x") + "," + T("wt") + R"(,{"int":1},{"int":1})",
           Q("y")) +
      "," + Node("view", kViewSchema, T("y") + R"(,{"ints":[3,14]})", Q("y3")) + "," +
      Add("y3", "r") + "," + Norm("s", l.N);
  const std::string file = l.File(nodes, {"n0"}, {3, 14});
  std::vector<int> routes;
  const std::string errors[2] = {RunError(file, TSR_COMPILE_NO_CLAIMS), RunError(file, 0, &routes)};
  ASSERT_EQ(routes.size(), 5u);
  EXPECT_EQ(routes[4], kClaimed);
  ASSERT_FALSE(errors[0].empty());
  const std::string message = errors[0].substr(errors[0].find("): ") + 3);
  EXPECT_NE(errors[0].find("node 4 (native_layer_norm)"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find(message), std::string::npos) << errors[1] << " / " << message;
}

// An other operand that broadcasts ([N]) or is not contiguous (a transposed view) is left to
// the nodes' own calls.
TEST_F(LinearEpilogues, ABroadcastOrStridedOtherRunsNodeByNode) {
  const Layer l;
  const std::string broadcast = l.File(l.Linear() + "," + Add("y3", "r"), {"s"}, {l.N});
  CheckAgainstNodes(broadcast, kRun);
  const std::string strided =
      l.File(Node("t", kT, T("r"), Q("rt")) + "," + l.Linear("1", false) + "," + Add("rt", "y3"),
             {"s"}, {l.N, l.M});
  CheckAgainstNodes(strided, {kComposite, kComposite, kClaimed, kClaimed});
}

// A view whose sizes do not take the product's elements fails as node by node, with the view's
// own message.
TEST_F(LinearEpilogues, AWrongViewFailsAsItsNode) {
  const Layer l;
  const std::string file = l.File(l.Linear("1", true, l.N + 1) + "," + Gelu("y3", "none"), {"g"});
  const std::string errors[2] = {RunError(file, TSR_COMPILE_NO_CLAIMS), RunError(file, 0)};
  // The same message; the compiled model names where it arose: the claimed run, or the node.
  const std::string message = "shape '[2, 3, 8]' is invalid for input of size 42";
  EXPECT_NE(errors[0].find("node 2 (view): " + message), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("nodes 1 (addmm) to 3 (gelu), claimed by plugin 'cpu': " + message),
            std::string::npos)
      << errors[1];
}

TEST_F(LinearEpilogues, Float64RunsNodeByNode) {
  Layer l;
  l.dtype = "float64";
  CheckAgainstNodes(l.File(l.Linear() + "," + Add("y3", "r") + "," + Norm("s", l.N), {"n0"}),
                    {kComposite, kClaimed, kClaimed, kClaimed, kClaimed});
  CheckAgainstNodes(l.File(l.Linear() + "," + Gelu("y3", "none"), {"g"}), kRun);
  CheckAgainstNodes(l.File(l.Linear() + "," + Add("r", "y3"), {"s"}), kRun);
}

// What is not claimed: an addmm with beta 2; a product the model also returns; an add with
// alpha 2; a gelu with an approximate it does not know (its own call names the error).
TEST_F(LinearEpilogues, WhatStaysNodeByNode) {
  const Layer l;
  CheckAgainstNodes(
      l.File(l.Linear() + "," +
                 Node("add.Tensor", kAddSchema, T("y3") + "," + T("r") + R"(,{"int":2})", Q("s")),
             {"s"}),
      {kComposite, kNative, kComposite, kNative}, 1e-6);
  CheckAgainstNodes(l.File(l.Linear("2") + "," + Gelu("y3", "none"), {"g"}),
                    {kComposite, kNative, kComposite, kNative}, 1e-6);
  CheckAgainstNodes(l.File(l.Linear() + "," + Gelu("y3", "none"), {"g", "y"}),
                    {kComposite, kNative, kComposite, kNative}, 1e-6);
  std::vector<int> routes;
  const std::string error =
      RunError(l.File(l.Linear() + "," + Gelu("y3", "exact"), {"g"}), 0, &routes);
  EXPECT_EQ(routes, (std::vector<int>{kComposite, kNative, kComposite, kNative}));
  EXPECT_NE(error.find("exact"), std::string::npos) << error;
}

}  // namespace
