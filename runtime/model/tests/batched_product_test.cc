// The CPU backend's batched products read in place (Note [Batched products in place] in
// plugins/cpu/batched_product.hpp): which runs its graph compiler claims in an attention block as
// PyTorch's matmul decomposition writes it, and that each gives what its nodes give one by one
// (compiled with TSR_COMPILE_NO_CLAIMS), in place or not.
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

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
using tessera_test::kClaimed;
using tessera_test::kComposite;
using tessera_test::kNative;
using tessera_test::kPermuteSchema;
using tessera_test::kSoftmaxSchema;
using tessera_test::kViewSchema;
using tessera_test::ModelFile;
using tessera_test::Node;
using tessera_test::Q;
using tessera_test::T;

constexpr char kSelect[] = "select.int(Tensor(a) self, int dim, int index) -> Tensor(a)";
constexpr char kTranspose[] = "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)";
constexpr char kExpand[] =
    "expand(Tensor(a) self, int[] size, *, bool implicit=False) -> Tensor(a)";
constexpr char kClone[] = "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor";
constexpr char kReshape[] = "reshape(Tensor(a) self, int[] shape) -> Tensor(a)";
constexpr char kBmm[] = "bmm(Tensor self, Tensor mat2) -> Tensor";
constexpr char kDiv[] = "div.Scalar(Tensor self, Scalar other) -> Tensor";
constexpr char kMul[] = "mul.Scalar(Tensor self, Scalar other) -> Tensor";

std::string Ints(const std::vector<int64_t>& v) {
  std::string s = "{\"ints\":[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]}";
}
std::string Int(int64_t v) { return "{\"int\":" + std::to_string(v) + "}"; }

std::string Expand(const std::string& in, const std::vector<int64_t>& sizes,
                   const std::string& out) {
  return Node("expand", kExpand, T(in) + "," + Ints(sizes) + R"(,{"bool":false})", Q(out));
}
std::string Clone(const std::string& in, const std::string& out) {
  return Node("clone", kClone, T(in) + R"(,{"memory_format":"contiguous_format"})", Q(out));
}
std::string Reshape(const std::string& in, const std::vector<int64_t>& sizes,
                    const std::string& out, const char* schema = kReshape) {
  return Node(schema == kViewSchema ? "view" : "reshape", schema, T(in) + "," + Ints(sizes),
              Q(out));
}

// B = 2, S = 5 tokens, H = 2 heads of D = 4: the input x is a [B, S, 3, H, D] projection, q, k
// and v its slices as attention's heads ([B, H, S, D] views).
constexpr int64_t B = 2, S = 5, H = 2, D = 4;

std::string Heads() {
  return Node("permute", kPermuteSchema, T("x") + "," + Ints({2, 0, 3, 1, 4}), Q("p")) + "," +
         Node("select.int", kSelect, T("p") + "," + Int(0) + "," + Int(0), Q("q")) + "," +
         Node("select.int", kSelect, T("p") + "," + Int(0) + "," + Int(1), Q("k")) + "," +
         Node("select.int", kSelect, T("p") + "," + Int(0) + "," + Int(2), Q("v")) + "," +
         Node("transpose.int", kTranspose, T("k") + "," + Int(-1) + "," + Int(-2), Q("kt"));
}
constexpr int kHeadsNodes = 5;

// scores = (q @ k^T) / 2 as make_fx writes it: 9 nodes (8 without `split`, the 3-D product
// scaled).
std::string Scores(const std::string& scale_op = "div.Scalar", bool split = true) {
  return Expand("q", {B, H, S, D}, "e1") + "," + Clone("e1", "c1") + "," +
         Reshape("c1", {B * H, S, D}, "r1") + "," + Expand("kt", {B, H, D, S}, "e2") + "," +
         Clone("e2", "c2") + "," + Reshape("c2", {B * H, D, S}, "r2") + "," +
         Node("bmm", kBmm, T("r1") + "," + T("r2"), Q(split ? "s" : "s4")) + "," +
         (split ? Reshape("s", {B, H, S, S}, "s4", kViewSchema) + "," : "") +
         Node(scale_op, scale_op == "div.Scalar" ? kDiv : kMul, T("s4") + R"(,{"float":2.0})",
              Q("sd"));
}

// out = softmax(scores) @ v, heads joined to [B, S, H*D]: softmax then 10 nodes.
// `d0`, `d1`: the transposition's dims (1, 2 or another spelling of them).
std::string Weighted(int d0 = 1, int d1 = 2) {
  return Node("_softmax", kSoftmaxSchema, T("sd") + "," + Int(-1) + R"(,{"bool":false})", Q("w")) +
         "," + Expand("w", {B, H, S, S}, "e3") + "," +
         Reshape("e3", {B * H, S, S}, "r3", kViewSchema) + "," + Expand("v", {B, H, S, D}, "e4") +
         "," + Clone("e4", "c4") + "," + Reshape("c4", {B * H, S, D}, "r4") + "," +
         Node("bmm", kBmm, T("r3") + "," + T("r4"), Q("o")) + "," +
         Reshape("o", {B, H, S, D}, "o4") + "," +
         Node("transpose.int", kTranspose, T("o4") + "," + Int(d0) + "," + Int(d1), Q("ot")) + "," +
         Clone("ot", "oc") + "," + Reshape("oc", {B, S, H * D}, "out");
}

std::string File(const std::string& nodes, const std::vector<std::string>& outputs,
                 const std::string& dtype = "float32",
                 std::vector<int64_t> x_sizes = {B, S, 3, H, D}) {
  std::string outs, sizes;
  for (const std::string& o : outputs) {
    outs +=
        (outs.empty() ? "" : ",") + std::string("{\"name\":\"") + o + "\",\"value\":\"" + o + "\"}";
  }
  int64_t n = 1;
  for (size_t i = 0; i < x_sizes.size(); ++i) {
    sizes += (i ? "," : "") + std::to_string(x_sizes[i]);
    n *= x_sizes[i];
  }
  const std::string graph = R"({"name":"attention","producer":"test","op_set":"1.1",)"
                            R"("inputs":[{"name":"x","dtype":")" +
                            dtype + R"(","sizes":[)" + sizes + R"(]}],"nodes":[)" + nodes +
                            "],\"outputs\":[" + outs + "]}";
  std::vector<float> x(static_cast<size_t>(n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = -1.5f + 0.37f * static_cast<float>(i % 11);
  std::string bytes = Floats(x);
  if (dtype == "float64") {
    std::vector<double> d(x.begin(), x.end());
    bytes = std::string(reinterpret_cast<const char*>(d.data()), d.size() * sizeof(double));
  }
  return ModelFile(graph, {{"input/x", dtype == "float64" ? "F64" : "F32", x_sizes, bytes}});
}

// Routes: the heads' views (composites of the runtime's), then `claimed` claimed nodes, then
// `rest` as given.
std::vector<int> Routes(int claimed, std::vector<int> rest = {}) {
  std::vector<int> r(kHeadsNodes, kComposite);
  r.insert(r.end(), claimed, kClaimed);
  r.insert(r.end(), rest.begin(), rest.end());
  return r;
}

class BatchedProducts : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(Consume(tsr_plugin_load_default()), ""); }
};

TEST_F(BatchedProducts, AttentionAsTwoRuns) {
  // The softmax between the runs is the CPU's own kernel.
  const Compiled c = CheckAgainstNodes(File(Heads() + "," + Scores() + "," + Weighted(), {"out"}),
                                       Routes(9,
                                              [] {
                                                std::vector<int> r{kNative};
                                                r.insert(r.end(), 10, kClaimed);
                                                return r;
                                              }()),
                                       1e-6);
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0].size(), static_cast<size_t>(B * S * H * D));
}

// Products in oneDNN's log (ONEDNN_VERBOSE, set by main) whose operand dims are `dims`.
int Products(const std::string& log, const std::string& dims) {
  int n = 0;
  for (size_t at = 0; (at = log.find("exec,cpu,matmul,", at)) != std::string::npos;) {
    const size_t end = log.find('\n', at);
    if (log.substr(at, end - at).find("," + dims + ",") != std::string::npos) ++n;
    at = end;
  }
  return n;
}

// The claimed runs are one matmul each over the 4-D sources ([B, H, S, D] @ [B, H, D, S], then
// [B, H, S, S] @ [B, H, S, D]); node by node they are bmm's 3-D products of the clones.
TEST_F(BatchedProducts, EachRunIsOneMatmulOverTheSources) {
  const std::string file = File(Heads() + "," + Scores() + "," + Weighted(), {"out"});
  ::testing::internal::CaptureStdout();
  CompileAndRun(file, 0);
  const std::string claimed = ::testing::internal::GetCapturedStdout();
  ::testing::internal::CaptureStdout();
  CompileAndRun(file, TSR_COMPILE_NO_CLAIMS);
  const std::string nodes = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(Products(claimed, "2x2x5x4:2x2x4x5:2x2x5x5"), 1) << claimed;
  EXPECT_EQ(Products(claimed, "2x2x5x5:2x2x5x4:2x2x5x4"), 1) << claimed;
  EXPECT_EQ(Products(claimed, "4x5x4:4x4x5:4x5x5"), 0) << claimed;
  EXPECT_EQ(Products(nodes, "4x5x4:4x4x5:4x5x5"), 1) << nodes;
  EXPECT_EQ(Products(nodes, "4x5x5:4x5x4:4x5x4"), 1) << nodes;
}

// One compiled model run from several threads at once (graph.h allows it; each thread has its
// own oneDNN primitives): every run gives the single run's values.
TEST_F(BatchedProducts, ConcurrentRunsGiveTheSameValues) {
  const std::string file = File(Heads() + "," + Scores() + "," + Weighted(), {"out"});
  const Compiled once = CompileAndRun(file, 0);
  ASSERT_EQ(once.outputs.size(), 1u);
  tsr_model* model = nullptr;
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(tessera_test::LoadAndCompile(file, {TSR_DEVICE_CPU, 0}, 0, &model, &compiled), "");
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
  constexpr int kThreads = 4, kRuns = 20;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns && failures[t].empty(); ++r) {
        tsr_tensor* y = nullptr;
        failures[t] = Consume(tsr_compiled_model_run(compiled, &x, 1, &y, 1));
        if (!failures[t].empty()) break;
        std::vector<float> got(static_cast<size_t>(tsr_tensor_numel(y)));
        failures[t] = Consume(tsr_tensor_copy_to_host(y, got.data(), got.size() * sizeof(float)));
        tsr_tensor_release(y);
        if (failures[t].empty() && std::vector<double>(got.begin(), got.end()) != once.outputs[0]) {
          failures[t] = "run " + std::to_string(r) + ": other values";
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
  tsr_tensor_release(x);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

// The scores alone, against a product computed here: scores[b, h, i, j] = sum_d q k / 2.
TEST_F(BatchedProducts, ScoresAreTheScaledProducts) {
  const Compiled c = CheckAgainstNodes(File(Heads() + "," + Scores(), {"sd"}), Routes(9), 1e-6);
  ASSERT_EQ(c.outputs.size(), 1u);
  ASSERT_EQ(c.outputs[0].size(), static_cast<size_t>(B * H * S * S));
  auto x = [](int64_t b, int64_t s, int64_t part, int64_t h, int64_t d) {
    const int64_t i = (((b * S + s) * 3 + part) * H + h) * D + d;
    return -1.5f + 0.37f * static_cast<float>(i % 11);
  };
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t i = 0; i < S; ++i) {
        for (int64_t j = 0; j < S; ++j) {
          double sum = 0;
          for (int64_t d = 0; d < D; ++d) sum += double{x(b, i, 0, h, d)} * x(b, j, 1, h, d);
          const double got = c.outputs[0][static_cast<size_t>(((b * H + h) * S + i) * S + j)];
          EXPECT_NEAR(got, sum / 2, 1e-5 * (1 + std::fabs(sum))) << b << h << i << j;
        }
      }
    }
  }
}

TEST_F(BatchedProducts, AMulScaleAsOne) {
  CheckAgainstNodes(File(Heads() + "," + Scores("mul.Scalar"), {"sd"}), Routes(9), 1e-6);
}

// A value inside the run that the model also returns ends the run before the node that reads
// it: the products' reshape is an output, so the division stays a node of its own.
TEST_F(BatchedProducts, AnIntermediateReadLaterEndsTheRun) {
  CheckAgainstNodes(File(Heads() + "," + Scores(), {"sd", "s4"}), Routes(8, {kNative}), 1e-6);
}

// float64 inputs: claimed (the claim sees no dtypes), run by the nodes' own calls.
TEST_F(BatchedProducts, Float64RunsNodeByNode) {
  const Compiled c = CheckAgainstNodes(
      File(Heads() + "," + Scores() + "," + Weighted(), {"out"}, "float64"), Routes(9, [] {
        std::vector<int> r{kNative};
        r.insert(r.end(), 10, kClaimed);
        return r;
      }()));
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0].size(), static_cast<size_t>(B * S * H * D));
}

// An expand that broadcasts (one batch of q for two) is left to the nodes' own calls.
TEST_F(BatchedProducts, ABroadcastRunsNodeByNode) {
  const std::string nodes = Heads() + "," + Expand("q", {2, H, S, D}, "e1") + "," +
                            Clone("e1", "c1") + "," + Reshape("c1", {2 * H, S, D}, "r1") + "," +
                            Expand("kt", {2, H, D, S}, "e2") + "," + Clone("e2", "c2") + "," +
                            Reshape("c2", {2 * H, D, S}, "r2") + "," +
                            Node("bmm", kBmm, T("r1") + "," + T("r2"), Q("s"));
  std::vector<int> routes(kHeadsNodes, kComposite);
  routes.insert(routes.end(), 7, kClaimed);
  const Compiled c = CheckAgainstNodes(File(nodes, {"s"}, "float32", {1, S, 3, H, D}), routes);
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0].size(), static_cast<size_t>(2 * H * S * S));
}

// A source that is itself expanded (stride 0 over its batch) is read in place as well.
TEST_F(BatchedProducts, AnExpandedSourceIsReadInPlace) {
  const std::string nodes =
      Heads() + "," + Expand("q", {2, H, S, D}, "q2") + "," + Expand("kt", {2, H, D, S}, "k2") +
      "," + Expand("q2", {2, H, S, D}, "e1") + "," + Clone("e1", "c1") + "," +
      Reshape("c1", {2 * H, S, D}, "r1") + "," + Expand("k2", {2, H, D, S}, "e2") + "," +
      Clone("e2", "c2") + "," + Reshape("c2", {2 * H, D, S}, "r2") + "," +
      Node("bmm", kBmm, T("r1") + "," + T("r2"), Q("s"));
  std::vector<int> routes(kHeadsNodes + 2, kComposite);
  routes.insert(routes.end(), 7, kClaimed);
  const std::string file = File(nodes, {"s"}, "float32", {1, S, 3, H, D});
  ::testing::internal::CaptureStdout();
  const Compiled c = CheckAgainstNodes(file, routes, 1e-6);
  const std::string log = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0].size(), static_cast<size_t>(2 * H * S * S));
  EXPECT_EQ(Products(log, "2x2x5x4:2x2x4x5:2x2x5x5"), 1) << log;  // the claimed run's
}

// Nothing to save (no clone, no scale, no transposition): q's chain is expand and view of a
// contiguous clone, k^T a 3-D view of another; no run.
TEST_F(BatchedProducts, APlainProductIsNotClaimed) {
  const std::string nodes = Heads() + "," + Clone("q", "qc") + "," + Clone("kt", "kc") + "," +
                            Reshape("kc", {B * H, D, S}, "r2", kViewSchema) + "," +
                            Expand("qc", {B, H, S, D}, "e1") + "," +
                            Reshape("e1", {B * H, S, D}, "r1", kViewSchema) + "," +
                            Node("bmm", kBmm, T("r1") + "," + T("r2"), Q("s"));
  CheckAgainstNodes(File(nodes, {"s"}),
                    Routes(0, {kNative, kNative, kComposite, kComposite, kComposite, kNative}));
}

// bmm's other operand a 3-D value of its own (a view of a clone of k^T): its batch is split as
// the chained operand's, and the run reads it in place too.
TEST_F(BatchedProducts, APlainOperandBesideAChain) {
  const std::string nodes =
      Heads() + "," + Clone("kt", "kc") + "," + Reshape("kc", {B * H, D, S}, "r2", kViewSchema) +
      "," + Expand("q", {B, H, S, D}, "e1") + "," + Clone("e1", "c1") + "," +
      Reshape("c1", {B * H, S, D}, "r1") + "," + Node("bmm", kBmm, T("r1") + "," + T("r2"), Q("s"));
  ::testing::internal::CaptureStdout();
  CheckAgainstNodes(File(nodes, {"s"}),
                    Routes(0, {kNative, kComposite, kClaimed, kClaimed, kClaimed, kClaimed}), 1e-6);
  const std::string log = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(Products(log, "2x2x5x4:2x2x4x5:2x2x5x5"), 1) << log;
}

// The transposition's dims spelled from the end (-3, -2), and a scale of the 3-D product with
// no reshape before it: both taken.
TEST_F(BatchedProducts, OtherSpellingsOfTheSameRun) {
  CheckAgainstNodes(File(Heads() + "," + Scores() + "," + Weighted(-3, -2), {"out"}),
                    Routes(9,
                           [] {
                             std::vector<int> r{kNative};
                             r.insert(r.end(), 10, kClaimed);
                             return r;
                           }()),
                    1e-6);
  CheckAgainstNodes(File(Heads() + "," + Scores("div.Scalar", false), {"sd"}), Routes(8), 1e-6);
}

// A second chain whose source is the first chain's result, both operands of the bmm: the first
// chain is not a run of its own (the bmm does not follow it), and the second is claimed with the
// first's result as its input, which it does not take (3-D, not a 4-D source): its nodes run.
TEST_F(BatchedProducts, AChainOfAChainsResult) {
  const std::string nodes = Heads() + "," + Expand("q", {B, H, S, D}, "e1") + "," +
                            Clone("e1", "c1") + "," + Reshape("c1", {B * H, S, D}, "r1") + "," +
                            Expand("r1", {1, B * H, S, D}, "e2") + "," + Clone("e2", "c2") + "," +
                            Reshape("c2", {B * H * S * D / 4, 2, 2}, "r2") + "," +
                            Node("bmm", kBmm, T("r2") + "," + T("r2"), Q("s"));
  CheckAgainstNodes(File(nodes, {"s"}), Routes(0, {kComposite, kNative, kComposite, kClaimed,
                                                   kClaimed, kClaimed, kClaimed}));
}

}  // namespace

// oneDNN reads ONEDNN_VERBOSE once, at its first use: set before any test runs.
int main(int argc, char** argv) {
  setenv("ONEDNN_VERBOSE", "1", 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
