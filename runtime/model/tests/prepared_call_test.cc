// Prepared calls in compiled models (Note [Prepared calls] in dispatcher/prepared_call.cc): a
// node's first run plans its call once; later runs use that plan only while their tensors
// match what it was planned from. Each test runs one compiled model several times, with what
// a stale plan would get wrong (other sizes, other strides, a plan that fails, several threads
// racing to prepare), and checks every run's values or error.
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/model/tests/model_file_writer.h"
#include "runtime/tests/c_test_support.h"
#include "tessera/c/tessera.h"

namespace {

using tessera_test::Consume;
using tessera_test::Floats;
using tessera_test::LoadAndCompile;
using tessera_test::ModelFile;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr tsr_device kCpu = {TSR_DEVICE_CPU, 0};

const char* const kAdd = "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
const char* const kSub = "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
const char* const kMul = "mul.Tensor(Tensor self, Tensor other) -> Tensor";
const char* const kDiv = "div.Tensor(Tensor self, Tensor other) -> Tensor";

// Node: one node of a graph's "nodes" list.
std::string Node(const char* op, const char* schema, const std::string& args, const char* out) {
  return std::string(R"({"op":")") + op + R"(","schema":")" + schema + R"(","args":[)" + args +
         R"(],"outputs":[")" + out + "\"]}";
}

// Graph: a model of float32 input x (its "sizes" as given), constant c, and `nodes`, whose
// last output "e" is the model's.
std::string Graph(const std::string& x_sizes, const std::string& nodes,
                  const std::string& dims = "") {
  return R"({"name":"prepared","producer":"test","op_set":"1.1",)" + dims +
         R"("inputs":[{"name":"x","dtype":"float32","sizes":)" + x_sizes + "}]," + R"("nodes":[)" +
         nodes + R"(],"outputs":[{"name":"e","value":"e"}]})";
}

// The chain of pointwise nodes the tests run: a = x + 2c; b = a * x; d = b - 0.5c; e = d / c.
std::string ChainNodes() {
  return Node("add.Tensor", kAdd, R"({"tensor":"x"},{"tensor":"c"},{"int":2})", "a") + "," +
         Node("mul.Tensor", kMul, R"({"tensor":"a"},{"tensor":"x"})", "b") + "," +
         Node("sub.Tensor", kSub, R"({"tensor":"b"},{"tensor":"c"},{"float":0.5})", "d") + "," +
         Node("div.Tensor", kDiv, R"({"tensor":"d"},{"tensor":"c"})", "e");
}

// Chain: what ChainNodes computes, element by element (c broadcast when it has one element).
std::vector<float> Chain(const std::vector<float>& x, const std::vector<float>& c) {
  std::vector<float> e(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float ci = c.size() == 1 ? c[0] : c[i];
    const float a = x[i] + 2.0f * ci;
    const float b = a * x[i];
    const float d = b - 0.5f * ci;
    e[i] = d / ci;
  }
  return e;
}

class PreparedCalls : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(Consume(tsr_plugin_load_default()), ""); }
  void TearDown() override {
    tsr_compiled_model_release(compiled_);
    tsr_model_release(model_);
  }

  void Compile(const std::string& file) {
    ASSERT_EQ(LoadAndCompile(file, kCpu, 0, &model_, &compiled_), "");
  }

  // Run: the model on `x` (consumed); its output's values in *out, or the error.
  std::string Run(tsr_tensor* x, std::vector<float>* out) {
    tsr_tensor* e = nullptr;
    std::string error = Consume(tsr_compiled_model_run(compiled_, &x, 1, &e, 1));
    tsr_tensor_release(x);
    if (!error.empty()) return error;
    out->assign(static_cast<size_t>(tsr_tensor_numel(e)), 0.0f);
    error = Consume(tsr_tensor_copy_to_host(e, out->data(), out->size() * sizeof(float)));
    tsr_tensor_release(e);
    return error;
  }

  // Tensor: a contiguous float32 CPU tensor of `values` with `sizes`.
  static tsr_tensor* Tensor(const std::vector<float>& values, std::vector<int64_t> sizes) {
    tsr_tensor* t = nullptr;
    EXPECT_EQ(Consume(tsr_tensor_empty(sizes.data(), sizes.size(), TSR_DTYPE_FLOAT32, kCpu, &t)),
              "");
    EXPECT_EQ(Consume(tsr_tensor_copy_from_host(t, values.data(), values.size() * sizeof(float))),
              "");
    return t;
  }

  tsr_model* model_ = nullptr;
  tsr_compiled_model* compiled_ = nullptr;
};

// Every run computes its own inputs: the plans kept from the first run hold no values.
TEST_F(PreparedCalls, EveryRunComputesItsOwnValues) {
  const std::vector<float> c = {1, 2, 4, 8};
  ASSERT_NO_FATAL_FAILURE(
      Compile(ModelFile(Graph("[4]", ChainNodes()), {{"constant/c", "F32", {4}, Floats(c)}})));
  for (float k : {1.0f, -3.0f, 0.5f, 1.0f}) {
    const std::vector<float> x = {k, 2 * k, 3 * k, 4 * k};
    std::vector<float> out;
    ASSERT_EQ(Run(Tensor(x, {4}), &out), "") << "x = " << k << " * [1, 2, 3, 4]";
    EXPECT_THAT(out, ElementsAreArray(Chain(x, c))) << "x = " << k << " * [1, 2, 3, 4]";
  }
}

// A model with a dynamic dim runs its nodes at other sizes on every run: a plan made at one
// size is not used at another (the output would keep the first run's shape).
TEST_F(PreparedCalls, ARunAtOtherSizesIsPlannedForThem) {
  const std::string dims = R"("dims":[{"name":"n","min":1,"max":16}],)";
  ASSERT_NO_FATAL_FAILURE(Compile(ModelFile(
      Graph(R"([{"expr":[[1,"n"]]}])", ChainNodes(), dims),
      {{"constant/c", "F32", {1}, Floats({2})}, {"input/x", "F32", {2}, Floats({1, 2})}}, "2")));
  for (int64_t n : {2, 5, 2, 16, 5}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i - n / 2);
    std::vector<float> out;
    ASSERT_EQ(Run(Tensor(x, {n}), &out), "") << "n = " << n;
    EXPECT_THAT(out, ElementsAreArray(Chain(x, {2}))) << "n = " << n;
  }
}

// An input with the model's sizes but other strides (a transposed view) after contiguous ones,
// and contiguous again: each run reads its elements as its strides say.
TEST_F(PreparedCalls, ARunWithOtherStridesReadsItsOwnLayout) {
  const std::vector<float> c = {1, 2, 4, 8, 16, 32};
  ASSERT_NO_FATAL_FAILURE(
      Compile(ModelFile(Graph("[2,3]", ChainNodes()), {{"constant/c", "F32", {2, 3}, Floats(c)}})));
  const std::vector<float> x = {1, -2, 3, -4, 5, -6};  // row-major [2, 3]
  std::vector<float> out;
  ASSERT_EQ(Run(Tensor(x, {2, 3}), &out), "");
  EXPECT_THAT(out, ElementsAreArray(Chain(x, c)));

  // The same logical x as the transpose of a contiguous [3, 2]: strides [1, 2].
  const std::vector<float> xt = {1, -4, -2, 5, 3, -6};
  tsr_tensor* storage = Tensor(xt, {3, 2});
  const int64_t sizes[] = {2, 3}, strides[] = {1, 2};
  tsr_tensor* transposed = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_as_strided(storage, sizes, strides, 2, 0, &transposed)), "");
  tsr_tensor_release(storage);
  ASSERT_EQ(tsr_tensor_is_contiguous(transposed), 0);
  ASSERT_EQ(Run(transposed, &out), "");
  EXPECT_THAT(out, ElementsAreArray(Chain(x, c)));

  ASSERT_EQ(Run(Tensor(x, {2, 3}), &out), "");
  EXPECT_THAT(out, ElementsAreArray(Chain(x, c)));
}

// A node whose plan fails is not prepared: every run gets the same error, naming the node.
TEST_F(PreparedCalls, APlanThatFailsFailsOnEveryRun) {
  ASSERT_NO_FATAL_FAILURE(Compile(ModelFile(
      Graph("[3]", Node("add.Tensor", kAdd, R"({"tensor":"x"},{"tensor":"c"},{"int":1})", "e")),
      {{"constant/c", "F32", {4}, Floats({1, 2, 3, 4})}})));
  std::string first;
  for (int run = 0; run < 3; ++run) {
    std::vector<float> out;
    const std::string error = Run(Tensor({1, 2, 3}, {3}), &out);
    EXPECT_THAT(error, HasSubstr("node 0 (add.Tensor)")) << "run " << run;
    EXPECT_THAT(error, HasSubstr("does not broadcast")) << "run " << run;
    if (run == 0) first = error;
    EXPECT_EQ(error, first) << "run " << run;
  }
}

// Runs in several threads at once from the first: they race to prepare each node (one plan is
// kept) and every run computes its own values. (ThreadSanitizer runs this binary.)
TEST_F(PreparedCalls, ConcurrentFirstRunsShareOnePlan) {
  const std::vector<float> c = {1, 2, 4, 8};
  ASSERT_NO_FATAL_FAILURE(
      Compile(ModelFile(Graph("[4]", ChainNodes()), {{"constant/c", "F32", {4}, Floats(c)}})));
  constexpr int kThreads = 4, kRuns = 25;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns && failures[t].empty(); ++r) {
        const float k = static_cast<float>(t * kRuns + r);
        const std::vector<float> x = {k, k + 1, k - 2, 0.25f * k};
        std::vector<float> out;
        const std::string error = Run(Tensor(x, {4}), &out);
        if (!error.empty()) {
          failures[t] = error;
        } else if (out != Chain(x, c)) {
          failures[t] = "wrong values at x = " + std::to_string(k);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

// Note [Spare outputs]: a node's output that the model is done with is kept for a later call
// to write only where nothing else holds its memory. Here the model's output e = t(a) views the
// intermediate a: an application keeps each run's output while later runs go on, and every
// kept output still holds its own run's values.
TEST_F(PreparedCalls, AnOutputViewingAnIntermediateKeepsItsValuesAcrossRuns) {
  const std::string graph =
      R"({"name":"view_of_intermediate","producer":"test","op_set":"1.1",)"
      R"("inputs":[{"name":"x","dtype":"float32","sizes":[2,2]}],"nodes":[)" +
      Node("add.Tensor", kAdd, R"({"tensor":"x"},{"tensor":"c"},{"int":1})", "a") + "," +
      Node("t", "t(Tensor(a) self) -> Tensor(a)", R"({"tensor":"a"})", "e") +
      R"(],"outputs":[{"name":"e","value":"e"}]})";
  ASSERT_NO_FATAL_FAILURE(
      Compile(ModelFile(graph, {{"constant/c", "F32", {2, 2}, Floats({10, 20, 30, 40})}})));
  std::vector<tsr_tensor*> kept;
  for (int run = 0; run < 4; ++run) {
    tsr_tensor* x = Tensor({1.0f * run, 2.0f * run, 3.0f * run, 4.0f * run}, {2, 2});
    tsr_tensor* e = nullptr;
    ASSERT_EQ(Consume(tsr_compiled_model_run(compiled_, &x, 1, &e, 1)), "") << "run " << run;
    tsr_tensor_release(x);
    kept.push_back(e);
  }
  for (int run = 0; run < 4; ++run) {
    std::vector<float> got(4);  // in e's logical order: a transposed
    ASSERT_EQ(Consume(tsr_tensor_copy_to_host(kept[run], got.data(), 4 * sizeof(float))), "");
    tsr_tensor_release(kept[run]);
    const float r = static_cast<float>(run);
    EXPECT_THAT(got, ElementsAreArray({10 + r, 30 + 3 * r, 20 + 2 * r, 40 + 4 * r}))
        << "the output of run " << run;
  }
}

// Note [Run states]: a run's table of values goes back to the compiled model for the next run,
// emptied. An input is the application's again when the run returns, whether the run
// finished, read nothing of it, or failed: its memory's deleter runs when the application
// lets its own reference go, not at some later run.
TEST_F(PreparedCalls, ARunKeepsNoInputOnceItReturns) {
  struct Case {
    const char* what;
    std::string nodes;
    bool fails;
  };
  const std::vector<Case> cases = {
      {"a run that finished", ChainNodes(), false},
      {"a run that reads nothing of x",
       Node("add.Tensor", kAdd, R"({"tensor":"c"},{"tensor":"c"},{"int":1})", "e"), false},
      {"a run that failed at its second node, which reads x",
       Node("add.Tensor", kAdd, R"({"tensor":"x"},{"tensor":"c"},{"int":1})", "a") + "," +
           Node("add.Tensor", kAdd, R"({"tensor":"x"},{"tensor":"w"},{"int":1})", "e"),
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    tsr_compiled_model_release(compiled_);
    tsr_model_release(model_);
    compiled_ = nullptr;
    model_ = nullptr;
    ASSERT_NO_FATAL_FAILURE(
        Compile(ModelFile(Graph("[4]", c.nodes), {{"constant/c", "F32", {4}, Floats({1, 2, 4, 8})},
                                                  {"constant/w", "F32", {3}, Floats({1, 2, 3})}})));
    for (int run = 0; run < 2; ++run) {
      float data[4] = {1, 2, 3, 4};
      bool deleted = false;
      const int64_t sizes[] = {4};
      tsr_tensor* x = nullptr;
      ASSERT_EQ(Consume(tsr_tensor_from_host_memory(
                    data, sizeof data, sizes, nullptr, 1, TSR_DTYPE_FLOAT32,
                    [](void*, void* flag) { *static_cast<bool*>(flag) = true; }, &deleted, &x)),
                "");
      tsr_tensor* e = nullptr;
      const std::string error = Consume(tsr_compiled_model_run(compiled_, &x, 1, &e, 1));
      EXPECT_EQ(error.empty(), !c.fails) << error;
      tsr_tensor_release(e);
      tsr_tensor_release(x);
      EXPECT_TRUE(deleted) << "run " << run << ": the compiled model still holds x";
    }
  }
}

// Note [Run states]: a node writes a spare only of its output's dtype, sizes and strides. Here
// a's [2, 2] tensor, released after e's node, has the bytes but not the shape of b's [4]: each
// output keeps its own shape and values on every run.
TEST_F(PreparedCalls, ASpareIsWrittenOnlyByAnOutputOfItsLayout) {
  const std::string graph =
      R"({"name":"layouts","producer":"test","op_set":"1.1","inputs":[)"
      R"({"name":"x","dtype":"float32","sizes":[2,2]},{"name":"z","dtype":"float32","sizes":[4]}],)"
      R"("nodes":[)" +
      Node("mul.Tensor", kMul, R"({"tensor":"x"},{"tensor":"x"})", "a") + "," +
      Node("add.Tensor", kAdd, R"({"tensor":"a"},{"tensor":"a"},{"int":1})", "e") + "," +
      Node("mul.Tensor", kMul, R"({"tensor":"z"},{"tensor":"z"})", "b") + "," +
      Node("add.Tensor", kAdd, R"({"tensor":"b"},{"tensor":"b"},{"int":1})", "f") +
      R"(],"outputs":[{"name":"e","value":"e"},{"name":"f","value":"f"}]})";
  ASSERT_NO_FATAL_FAILURE(Compile(ModelFile(graph, {})));
  for (int run = 0; run < 3; ++run) {
    const float r = static_cast<float>(run);
    tsr_tensor* in[2] = {Tensor({r, 1, 2, 3}, {2, 2}), Tensor({4, 5, 6, r}, {4})};
    tsr_tensor* out[2] = {nullptr, nullptr};
    ASSERT_EQ(Consume(tsr_compiled_model_run(compiled_, in, 2, out, 2)), "") << "run " << run;
    tsr_tensor_release(in[0]);
    tsr_tensor_release(in[1]);
    EXPECT_EQ(tsr_tensor_dim(out[0]), 2) << "run " << run;
    EXPECT_EQ(tsr_tensor_dim(out[1]), 1) << "run " << run;
    std::vector<float> e(4), f(4);
    ASSERT_EQ(Consume(tsr_tensor_copy_to_host(out[0], e.data(), 4 * sizeof(float))), "");
    ASSERT_EQ(Consume(tsr_tensor_copy_to_host(out[1], f.data(), 4 * sizeof(float))), "");
    tsr_tensor_release(out[0]);
    tsr_tensor_release(out[1]);
    EXPECT_THAT(e, ElementsAreArray({2 * r * r, 2.0f, 8.0f, 18.0f})) << "run " << run;
    EXPECT_THAT(f, ElementsAreArray({32.0f, 50.0f, 72.0f, 2 * r * r})) << "run " << run;
  }
}

}  // namespace
