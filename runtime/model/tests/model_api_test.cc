// Models through the C ABI (tessera/c/model.h): a file built here byte by byte loads, compiles
// and runs; every malformed, truncated, lying or newer file is refused with an error naming
// what was expected and where; compile names every node that cannot run; a run checks its
// inputs. (The model zoo, exported from PyTorch, is tests/models/.)
#include <cmath>
#include <cstring>
#include <map>
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
using tessera_test::S;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The graph of y = x + 2 * w: one input x (float32 [3]), a constant w, add.Tensor with alpha 2.
const char* kAddGraph =
    R"({"name":"axpy","producer":"test","op_set":"1.1",)"
    R"("inputs":[{"name":"x","dtype":"float32","sizes":[3]}],)"
    R"("nodes":[{"op":"add.Tensor","schema":"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",)"
    R"("args":[{"tensor":"x"},{"tensor":"w"},{"int":2}],"outputs":["y"]}],)"
    R"("outputs":[{"name":"out","value":"y"}]})";

std::string AxpyFile(const std::string& graph = kAddGraph, const std::string& version = "1",
                     std::vector<FileTensor> extra = {}) {
  std::vector<FileTensor> tensors = {
      {"constant/w", "F32", {3}, Floats({1, 2, 3})},
      {"input/x", "F32", {3}, Floats({10, 20, 30})},
      {"expected/out", "F32", {3}, Floats({12, 24, 36})},
  };
  for (FileTensor& t : extra) tensors.push_back(std::move(t));
  return ModelFile(graph, tensors, version);
}

// LoadError: the error loading `bytes` gives ("" when it loads).
std::string LoadError(const std::string& bytes) {
  tsr_model* model = nullptr;
  std::string error = Consume(tsr_model_load_from_memory(bytes.data(), bytes.size(), &model));
  tsr_model_release(model);
  return error;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

class ModelApi : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(Consume(tsr_plugin_load_default()), ""); }
  // LoadAndCompile: the model of `file` and its form compiled for the CPU.
  void LoadAndCompile(const std::string& file, tsr_model** model, tsr_compiled_model** compiled) {
    ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), model)), "");
    ASSERT_EQ(Consume(tsr_model_compile(*model, cpu_, compiled)), "");
  }
  tsr_device cpu_{TSR_DEVICE_CPU, 0};
};

std::vector<float> Values(tsr_tensor* t) {
  std::vector<float> v(static_cast<size_t>(tsr_tensor_numel(t)));
  EXPECT_EQ(Consume(tsr_tensor_copy_to_host(t, v.data(), v.size() * sizeof(float))), "");
  return v;
}

TEST_F(ModelApi, LoadsCompilesAndRunsAFile) {
  const std::string file = AxpyFile();
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  EXPECT_EQ(std::string(tsr_model_name(model).data, tsr_model_name(model).size), "axpy");
  EXPECT_EQ(tsr_model_num_inputs(model), 1u);
  EXPECT_EQ(tsr_model_num_outputs(model), 1u);
  EXPECT_EQ(tsr_model_num_nodes(model), 1u);
  EXPECT_EQ(std::string(tsr_model_input_name(model, 0).data, 1), "x");
  EXPECT_EQ(tsr_model_input_name(model, 1).size, 0u);

  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(Consume(tsr_model_compile(model, cpu_, &compiled)), "");
  tsr_model_release(model);  // the compiled model holds it
  EXPECT_EQ(tsr_compiled_model_node_route(compiled, 0), TSR_NODE_NATIVE);
  EXPECT_EQ(std::string(tsr_compiled_model_node_op(compiled, 0).data), "add.Tensor");

  tsr_tensor* y = nullptr;
  ASSERT_EQ(Consume(tsr_compiled_model_run(compiled, &x, 1, &y, 1)), "");
  EXPECT_EQ(Values(y), (std::vector<float>{12, 24, 36}));
  tsr_tensor_release(y);
  // Runs are independent: the second gives the same.
  ASSERT_EQ(Consume(tsr_compiled_model_run(compiled, &x, 1, &y, 1)), "");
  EXPECT_EQ(Values(y), (std::vector<float>{12, 24, 36}));
  tsr_tensor_release(y);
  tsr_tensor_release(x);
  tsr_compiled_model_release(compiled);
}

// A file of the format's first release (format_version 1: tests/models/zoo.py's mlp, exported
// by this release's exporter from PyTorch 1.13) keeps loading and running to PyTorch's values
// in every later runtime (docs/model_format.md, "Versions"). Never regenerate it.
TEST_F(ModelApi, AFirstReleaseFileKeepsLoading) {
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load(S(TESSERA_MODEL_TEST_DATA "/format1_mlp.tsrm"), &model)), "");
  EXPECT_EQ(std::string(tsr_model_name(model).data, tsr_model_name(model).size), "mlp");
  ASSERT_EQ(tsr_model_num_inputs(model), 1u);
  ASSERT_EQ(tsr_model_num_outputs(model), 1u);
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(Consume(tsr_model_compile(model, cpu_, &compiled)), "");
  tsr_tensor *x = nullptr, *want = nullptr, *y = nullptr;
  ASSERT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
  ASSERT_EQ(Consume(tsr_model_expected_output(model, 0, &want)), "");
  ASSERT_EQ(Consume(tsr_compiled_model_run(compiled, &x, 1, &y, 1)), "");
  const std::vector<float> got = Values(y), expected = Values(want);
  ASSERT_EQ(got.size(), 32u);  // [8, 4]
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], 1e-5 + 1.3e-6 * std::fabs(expected[i])) << i;
  }
  for (tsr_tensor* t : {x, want, y}) tsr_tensor_release(t);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

// A file of format version 2, the first with dynamic dims (an MLP behind a flatten, Flatten ->
// Linear(16, 32) -> ReLU -> Linear(32, 4) on [batch, 4, 4], exported with
// dynamic_dims={"batch": (1, 1024)} from PyTorch 1.13: the batch is in the input's sizes and in
// the flatten's view), keeps loading and running in every later runtime, at every batch: the MLP
// treats rows alone, so the first rows of the example input give the first rows of PyTorch's
// output. Never regenerate it.
TEST_F(ModelApi, AFormat2FileWithADynamicBatchKeepsLoading) {
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load(S(TESSERA_MODEL_TEST_DATA "/format2_mlp_dynamic.tsrm"), &model)),
            "");
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(Consume(tsr_model_compile(model, cpu_, &compiled)), "");
  tsr_tensor *x = nullptr, *want = nullptr;
  ASSERT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
  ASSERT_EQ(Consume(tsr_model_expected_output(model, 0, &want)), "");
  std::vector<float> rows = Values(x);
  const std::vector<float> expected = Values(want);
  ASSERT_EQ(rows.size(), 8u * 16);  // [8, 4, 4] -> [8, 4]
  for (int64_t batch : {8, 1, 3}) {
    int64_t sizes[] = {batch, 4, 4};
    tsr_tensor *in = nullptr, *y = nullptr;
    ASSERT_EQ(Consume(tsr_tensor_from_host_memory(rows.data(), batch * 16 * sizeof(float), sizes,
                                                  nullptr, 3, TSR_DTYPE_FLOAT32, nullptr, nullptr,
                                                  &in)),
              "");
    ASSERT_EQ(Consume(tsr_compiled_model_run(compiled, &in, 1, &y, 1)), "") << batch;
    const std::vector<float> got = Values(y);
    ASSERT_EQ(got.size(), static_cast<size_t>(batch * 4));
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], expected[i], 1e-5 + 1.3e-6 * std::fabs(expected[i])) << batch << " " << i;
    }
    tsr_tensor_release(in);
    tsr_tensor_release(y);
  }
  for (tsr_tensor* t : {x, want}) tsr_tensor_release(t);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

TEST_F(ModelApi, AProfiledRunMeasuresMemoryAndNodes) {
  const std::string file = AxpyFile();
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(Consume(tsr_model_compile(model, cpu_, &compiled)), "");
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
  tsr_tensor* y = nullptr;
  tsr_model_run_stats stats{};
  EXPECT_THAT(Consume(tsr_compiled_model_run_profiled(compiled, &x, 1, &y, 1, &stats)),
              HasSubstr("expected stats->struct_size >= 40"));
  stats.struct_size = sizeof stats;
  stats.node_ns_capacity = 2;
  EXPECT_THAT(Consume(tsr_compiled_model_run_profiled(compiled, &x, 1, &y, 1, &stats)),
              HasSubstr("expected stats->node_ns for 2 entries, got NULL"));
  uint64_t ns[2] = {0, 777};
  stats.node_ns = ns;
  ASSERT_EQ(Consume(tsr_compiled_model_run_profiled(compiled, &x, 1, &y, 1, &stats)), "");
  EXPECT_EQ(Values(y), (std::vector<float>{12, 24, 36}));
  // One intermediate, the output: 3 floats, alive at the end.
  EXPECT_EQ(stats.peak_intermediate_bytes, 12u);
  EXPECT_EQ(stats.total_intermediate_bytes, 12u);
  EXPECT_EQ(ns[1], 777u) << "one node: the second entry is left alone";
  tsr_tensor_release(y);
  tsr_tensor_release(x);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

// A node that writes a constant in place (an optimizer's update) writes the compiled model's
// own copy: each run sees the last one's write, as the PyTorch program would, and another
// compiled form of the same model starts from the file's value.
TEST_F(ModelApi, WritesToConstantsStayInTheirCompiledModel) {
  const std::string graph =
      R"({"name":"accumulate","producer":"test","op_set":"1.1",)"
      R"("inputs":[{"name":"x","dtype":"float32","sizes":[3]}],)"
      R"j("nodes":[{"op":"add_.Tensor","schema":"add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",)j"
      R"("args":[{"tensor":"w"},{"tensor":"x"},{"int":1}],"outputs":["y"]}],)"
      R"("outputs":[{"name":"out","value":"y"}]})";
  const std::string file = ModelFile(graph, {{"constant/w", "F32", {3}, Floats({1, 2, 3})},
                                             {"input/x", "F32", {3}, Floats({10, 20, 30})}});
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
  auto run = [&](tsr_compiled_model* c) {
    tsr_tensor* y = nullptr;
    EXPECT_EQ(Consume(tsr_compiled_model_run(c, &x, 1, &y, 1)), "");
    std::vector<float> v = y ? Values(y) : std::vector<float>{};
    tsr_tensor_release(y);
    return v;
  };
  tsr_compiled_model* first = nullptr;
  ASSERT_EQ(Consume(tsr_model_compile(model, cpu_, &first)), "");
  EXPECT_EQ(run(first), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(run(first), (std::vector<float>{21, 42, 63})) << "the second run sees the first's";
  tsr_compiled_model* second = nullptr;
  ASSERT_EQ(Consume(tsr_model_compile(model, cpu_, &second)), "");
  EXPECT_EQ(run(second), (std::vector<float>{11, 22, 33})) << "a fresh copy of the constant";
  tsr_tensor_release(x);
  tsr_compiled_model_release(first);
  tsr_compiled_model_release(second);
  tsr_model_release(model);
}

// ImmutableSpy: a CPU kernel of spy::immutable(Tensor a, Tensor b, Tensor c, Tensor d, Tensor e) ->
// Tensor that records what its tensors' views say of immutability, and returns a copy of `a`
// (float32, contiguous).
struct ImmutableSpy {
  std::vector<uint32_t> immutable_bits;  // TSR_VIEW_IMMUTABLE of a ... e
  std::vector<uint64_t> ids;             // tsr_tensor_immutable_id of a ... e
};

tsr_error* ImmutableSpyKernel(void* context, const tsr_op*, tsr_stack* stack) {
  auto* spy = static_cast<ImmutableSpy*>(context);
  tsr_tensor_view views[5];
  for (tsr_tensor_view& v : views) v.struct_size = sizeof v;
  if (tsr_error* e = tsr_stack_get_tensor_views(stack, 0, 5, views)) return e;
  spy->immutable_bits.clear();
  spy->ids.clear();
  for (const tsr_tensor_view& v : views) {
    spy->immutable_bits.push_back(v.flags & TSR_VIEW_IMMUTABLE);
    spy->ids.push_back(tsr_tensor_immutable_id(v.tensor));
  }
  tsr_tensor* out = nullptr;
  const tsr_tensor_view& a = views[0];
  if (tsr_error* e = tsr_tensor_empty(a.sizes, a.ndim, TSR_DTYPE_FLOAT32, a.device, &out)) {
    return e;
  }
  std::memcpy(tsr_tensor_data_ptr(out), a.data, static_cast<size_t>(a.numel) * sizeof(float));
  tsr_stack_clear(stack);
  tsr_error* e = tsr_stack_push_tensor(stack, out);
  tsr_tensor_release(out);
  return e;
}

// A compiled model makes immutable the constants no node writes and no output shows
// (TSR_VIEW_IMMUTABLE, tsr_tensor_immutable_id: Note [Immutable tensors]); a constant written in
// place, or returned to the application, is not immutable; each compiled model's immutable
// constants have ids of their own.
TEST_F(ModelApi, ConstantsNothingWritesOrShowsAreImmutable) {
  tsr_registration* def = nullptr;
  ASSERT_EQ(
      Consume(tsr_op_define(
          S("spy::immutable(Tensor a, Tensor b, Tensor c, Tensor d, Tensor e) -> Tensor"), &def)),
      "");
  ImmutableSpy spy;
  tsr_kernel_desc desc = {};
  desc.struct_size = sizeof desc;
  desc.op_name = S("spy::immutable");
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = &ImmutableSpyKernel;
  desc.context = &spy;
  desc.kernel_name = S("immutable_spy");
  tsr_registration* reg = nullptr;
  ASSERT_EQ(Consume(tsr_kernel_register(&desc, &reg)), "");

  // w: read only (immutable); v: written by add_; u: an output; p: shown through a view (t);
  // q: written through a view. Only w is immutable.
  const std::string graph =
      R"({"name":"immutable","producer":"test","op_set":"1.1",)"
      R"("inputs":[{"name":"x","dtype":"float32","sizes":[3]}],"nodes":[)"
      R"j({"op":"add_.Tensor","schema":"add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",)j"
      R"("args":[{"tensor":"v"},{"tensor":"x"},{"int":1}],"outputs":["v2"]},)"
      R"j({"op":"t","schema":"t(Tensor(a) self) -> Tensor(a)","args":[{"tensor":"p"}],"outputs":["pv"]},)j"
      R"j({"op":"t","schema":"t(Tensor(a) self) -> Tensor(a)","args":[{"tensor":"q"}],"outputs":["qv"]},)j"
      R"j({"op":"add_.Tensor","schema":"add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",)j"
      R"("args":[{"tensor":"qv"},{"tensor":"x"},{"int":1}],"outputs":["qv2"]},)"
      R"({"op":"spy::immutable","schema":"spy::immutable(Tensor a, Tensor b, Tensor c, Tensor d, Tensor e) -> Tensor",)"
      R"("args":[{"tensor":"w"},{"tensor":"v2"},{"tensor":"u"},{"tensor":"p"},{"tensor":"q"}],)"
      R"("outputs":["s"]}],)"
      R"("outputs":[{"name":"s","value":"s"},{"name":"u","value":"u"},{"name":"pv","value":"pv"}]})";
  const std::string file = ModelFile(graph, {{"constant/w", "F32", {3}, Floats({1, 2, 3})},
                                             {"constant/v", "F32", {3}, Floats({4, 5, 6})},
                                             {"constant/u", "F32", {3}, Floats({7, 8, 9})},
                                             {"constant/p", "F32", {3}, Floats({1, 1, 1})},
                                             {"constant/q", "F32", {3}, Floats({2, 2, 2})},
                                             {"input/x", "F32", {3}, Floats({10, 20, 30})}});
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
  std::vector<uint64_t> first_ids;
  for (int compile = 0; compile < 2; ++compile) {
    tsr_compiled_model* compiled = nullptr;
    ASSERT_EQ(Consume(tsr_model_compile(model, cpu_, &compiled)), "");
    tsr_tensor* outs[3] = {nullptr, nullptr, nullptr};
    ASSERT_EQ(Consume(tsr_compiled_model_run(compiled, &x, 1, outs, 3)), "");
    EXPECT_EQ(Values(outs[0]), (std::vector<float>{1, 2, 3}));
    EXPECT_EQ(spy.immutable_bits, (std::vector<uint32_t>{TSR_VIEW_IMMUTABLE, 0, 0, 0, 0}))
        << "w is immutable; v (written), u (shown), p (shown through a view) and q (written "
           "through a view) are not";
    ASSERT_EQ(spy.ids.size(), 5u);
    EXPECT_NE(spy.ids[0], 0u);
    for (size_t i = 1; i < 5; ++i) EXPECT_EQ(spy.ids[i], 0u) << i;
    EXPECT_EQ(tsr_tensor_immutable_id(outs[1]), 0u) << "an output is never immutable";
    if (compile == 0) {
      first_ids = spy.ids;
      // A second run sees the same immutable tensor.
      tsr_tensor* again[3] = {nullptr, nullptr, nullptr};
      ASSERT_EQ(Consume(tsr_compiled_model_run(compiled, &x, 1, again, 3)), "");
      EXPECT_EQ(spy.ids, first_ids);
      for (tsr_tensor* t : again) tsr_tensor_release(t);
    } else {
      EXPECT_NE(spy.ids[0], first_ids[0]) << "another compiled model, another immutable id";
    }
    for (tsr_tensor* t : outs) tsr_tensor_release(t);
    tsr_compiled_model_release(compiled);
  }
  EXPECT_EQ(tsr_tensor_immutable_id(x), 0u);
  EXPECT_EQ(tsr_tensor_immutable_id(nullptr), 0u);
  tsr_tensor_release(x);
  tsr_model_release(model);
  tsr_registration_release(reg);
  tsr_registration_release(def);
}

// A file whose argument does not fit its schema is refused at compile, naming the argument.
TEST_F(ModelApi, AnArgumentOfTheWrongKindIsRefusedAtCompile) {
  const std::string file = AxpyFile(Replace(kAddGraph, "{\"tensor\":\"w\"}", "{\"float\":0.5}"));
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_compiled_model* compiled = nullptr;
  EXPECT_THAT(Consume(tsr_model_compile(model, cpu_, &compiled)),
              HasSubstr("node 0 (add.Tensor): argument 'other' is a Tensor, but the file gives "
                        "a 'float' value"));
  tsr_model_release(model);
}

// A model with a dynamic dim b (format version 2, Note [Dynamic dims] in runtime/model/dims.h):
// x float32 [b, 3]; y = view(x, [3*b]); z = slice(y, 0, 1, 3*b - 1); out = z + z: every element
// of x but the first and the last, doubled.
const char* kDynamicGraph =
    R"j({"name":"dyn","producer":"test","op_set":"1.1",)j"
    R"j("dims":[{"name":"b","min":1,"max":8}],)j"
    R"j("inputs":[{"name":"x","dtype":"float32","sizes":[{"expr":[[1,"b"]]},3]}],)j"
    R"j("nodes":[{"op":"view","schema":"view(Tensor(a) self, int[] size) -> Tensor(a)",)j"
    R"j("args":[{"tensor":"x"},{"ints":[{"expr":[[3,"b"]]}]}],"outputs":["y"]},)j"
    R"j({"op":"slice.Tensor","schema":"slice.Tensor(Tensor(a) self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)",)j"
    R"j("args":[{"tensor":"y"},{"int":0},{"int":1},{"int":{"expr":[[3,"b"],[-1]]}},{"int":1}],"outputs":["z"]},)j"
    R"j({"op":"add.Tensor","schema":"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",)j"
    R"j("args":[{"tensor":"z"},{"tensor":"z"},{"int":1}],"outputs":["out"]}],)j"
    R"j("outputs":[{"name":"out","value":"out"}]})j";

std::string DynamicFile(const std::string& graph = kDynamicGraph, const std::string& version = "2",
                        std::vector<int64_t> example = {2, 3}) {
  std::vector<float> x(static_cast<size_t>(example[0] * example[1]));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
  return ModelFile(graph, {{"input/x", "F32", example, Floats(x)}}, version);
}

class DynamicModel : public ModelApi {
 protected:
  void SetUp() override {
    ModelApi::SetUp();
    const std::string file = DynamicFile();
    ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model_)), "");
    ASSERT_EQ(Consume(tsr_model_compile(model_, cpu_, &compiled_)), "");
  }
  void TearDown() override {
    tsr_compiled_model_release(compiled_);
    tsr_model_release(model_);
  }
  // Run: the model on x = 1, 2, ... of `sizes`; the output's values, or the error.
  std::string Run(std::vector<int64_t> sizes, std::vector<float>* out) {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    std::vector<float> data(static_cast<size_t>(n));
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i + 1);
    tsr_tensor* x = nullptr;
    std::string error = Consume(tsr_tensor_from_host_memory(
        data.data(), data.size() * sizeof(float), sizes.data(), nullptr, sizes.size(),
        TSR_DTYPE_FLOAT32, nullptr, nullptr, &x));
    tsr_tensor* y = nullptr;
    if (error.empty()) error = Consume(tsr_compiled_model_run(compiled_, &x, 1, &y, 1));
    if (error.empty()) *out = Values(y);
    tsr_tensor_release(y);
    tsr_tensor_release(x);
    return error;
  }
  tsr_model* model_ = nullptr;
  tsr_compiled_model* compiled_ = nullptr;
};

TEST_F(DynamicModel, TheDimsAndTheirRangesAreReadable) {
  ASSERT_EQ(tsr_model_num_dims(model_), 1u);
  EXPECT_EQ(std::string(tsr_model_dim_name(model_, 0).data, tsr_model_dim_name(model_, 0).size),
            "b");
  EXPECT_EQ(tsr_model_dim_name(model_, 1).size, 0u);
  int64_t min = -1, max = -1;
  ASSERT_EQ(Consume(tsr_model_dim_range(model_, 0, &min, &max)), "");
  EXPECT_EQ(min, 1);
  EXPECT_EQ(max, 8);
  EXPECT_THAT(Consume(tsr_model_dim_range(model_, 1, &min, &max)),
              HasSubstr("tsr_model_dim_range: expected a dim index below the model's 1 dims, "
                        "got 1"));
  EXPECT_THAT(Consume(tsr_model_dim_range(model_, 0, nullptr, &max)),
              HasSubstr("expected pointers for the range, got NULL"));
  EXPECT_EQ(tsr_model_num_dims(nullptr), 0u);
  // A model of fixed sizes has none; a dim without "max" is unbounded.
  tsr_model* fixed = nullptr;
  const std::string file = AxpyFile();
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &fixed)), "");
  EXPECT_EQ(tsr_model_num_dims(fixed), 0u);
  tsr_model_release(fixed);
  tsr_model* open = nullptr;
  const std::string unbounded = DynamicFile(Replace(kDynamicGraph, R"(,"max":8)", ""));
  ASSERT_EQ(Consume(tsr_model_load_from_memory(unbounded.data(), unbounded.size(), &open)), "");
  ASSERT_EQ(Consume(tsr_model_dim_range(open, 0, &min, &max)), "");
  EXPECT_EQ(max, INT64_MAX);
  tsr_model_release(open);
}

// One compiled model serves every b in its range; each run's arguments follow its inputs.
TEST_F(DynamicModel, OneFileRunsEverySizeInItsRange) {
  for (int64_t b : {1, 2, 5, 8, 3}) {
    std::vector<float> out, want;
    ASSERT_EQ(Run({b, 3}, &out), "") << b;
    for (int64_t i = 2; i < 3 * b; ++i) want.push_back(2.0f * static_cast<float>(i));
    EXPECT_EQ(out, want) << b;
  }
}

TEST_F(DynamicModel, InputsOutsideTheRangeOrTheFixedSizesAreRefused) {
  std::vector<float> out;
  EXPECT_THAT(Run({9, 3}, &out),
              HasSubstr("model 'dyn': input 0 ('x') axis 0 gives b = 9, outside the range the "
                        "model was exported for, [1, 8]"));
  EXPECT_THAT(Run({0, 3}, &out), HasSubstr("gives b = 0, outside the range"));
  EXPECT_THAT(Run({2, 4}, &out),
              HasSubstr("input 0 ('x'): expected float32 [b, 3] on cpu, got float32 [2, 4]"));
  EXPECT_THAT(Run({6}, &out), HasSubstr("expected float32 [b, 3] on cpu, got float32 [6]"));
}

// Two inputs sharing a dim must agree on it; the error names the dim and where it came from.
TEST_F(ModelApi, InputsThatDisagreeOnADimAreRefused) {
  const std::string graph =
      R"({"name":"two","producer":"test","op_set":"1.1","dims":[{"name":"t","min":1}],)"
      R"("inputs":[{"name":"a","dtype":"float32","sizes":[{"expr":[[1,"t"]]}]},)"
      R"({"name":"b","dtype":"float32","sizes":[{"expr":[[2,"t"],[1]]}]}],)"
      R"("nodes":[],"outputs":[{"name":"out","value":"a"}]})";
  tsr_model* model = nullptr;
  tsr_compiled_model* compiled = nullptr;
  ASSERT_NO_FATAL_FAILURE(LoadAndCompile(ModelFile(graph, {}, "2"), &model, &compiled));
  int64_t three[] = {3}, six[] = {6}, seven[] = {7};
  tsr_tensor *a = nullptr, *b6 = nullptr, *b7 = nullptr, *y = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(three, 1, TSR_DTYPE_FLOAT32, cpu_, &a)), "");
  ASSERT_EQ(Consume(tsr_tensor_empty(six, 1, TSR_DTYPE_FLOAT32, cpu_, &b6)), "");
  ASSERT_EQ(Consume(tsr_tensor_empty(seven, 1, TSR_DTYPE_FLOAT32, cpu_, &b7)), "");
  tsr_tensor* wrong[] = {a, b6};
  EXPECT_THAT(Consume(tsr_compiled_model_run(compiled, wrong, 2, &y, 1)),
              HasSubstr("model 'two': input 1 ('b'): expected sizes [2*t + 1], whose axis 0 is 7, "
                        "got [6] (t = 3 from input 0 ('a') axis 0)"));
  tsr_tensor* right[] = {a, b7};
  EXPECT_EQ(Consume(tsr_compiled_model_run(compiled, right, 2, &y, 1)), "");
  tsr_tensor_release(y);
  for (tsr_tensor* t : {a, b6, b7}) tsr_tensor_release(t);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

// An input whose size expression overflows int64 at the dims is refused, naming it.
TEST_F(ModelApi, AnInputSizeThatOverflowsIsRefused) {
  const std::string graph =
      R"({"name":"big","producer":"test","op_set":"1.1","dims":[{"name":"t","min":1}],)"
      R"("inputs":[{"name":"a","dtype":"float32","sizes":[{"expr":[[1,"t"]]}]},)"
      R"({"name":"b","dtype":"float32","sizes":[{"expr":[[4,"t","t","t"]]}]}],)"
      R"("nodes":[],"outputs":[{"name":"out","value":"a"}]})";
  tsr_model* model = nullptr;
  tsr_compiled_model* compiled = nullptr;
  ASSERT_NO_FATAL_FAILURE(LoadAndCompile(ModelFile(graph, {}, "2"), &model, &compiled));
  float one = 1;
  int64_t a_sizes[] = {3000000000}, b_sizes[] = {5}, zero[] = {0};
  tsr_tensor *a = nullptr, *b = nullptr, *y = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_from_host_memory(&one, sizeof one, a_sizes, zero, 1,
                                                TSR_DTYPE_FLOAT32, nullptr, nullptr, &a)),
            "");
  ASSERT_EQ(Consume(tsr_tensor_empty(b_sizes, 1, TSR_DTYPE_FLOAT32, cpu_, &b)), "");
  tsr_tensor* inputs[] = {a, b};
  EXPECT_THAT(Consume(tsr_compiled_model_run(compiled, inputs, 2, &y, 1)),
              HasSubstr("input 1 ('b'): expected sizes [4*t*t*t], whose axis 0 is a size "
                        "expression overflows int64 at these dims, got [5] (t = 3000000000"));
  EXPECT_EQ(y, nullptr);
  for (tsr_tensor* t : {a, b}) tsr_tensor_release(t);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

// A size expression that overflows int64 at a run's dims is an error naming the node.
TEST_F(ModelApi, ASizeExpressionThatOverflowsIsAnError) {
  const std::string graph = Replace(Replace(kDynamicGraph, R"("max":8)", R"("max":4000000000)"),
                                    R"({"expr":[[3,"b"]]})",
                                    R"({"expr":[[1000000000,"b","b","b"]]})");
  const std::string file = DynamicFile(graph);
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(Consume(tsr_model_compile(model, cpu_, &compiled)), "");
  // b = 3000000000, as a [b, 3] view of one float (strides 0): 10^9 * b^3 overflows.
  float one = 1;
  int64_t sizes[] = {3000000000, 3}, strides[] = {0, 0};
  tsr_tensor *x = nullptr, *y = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_from_host_memory(&one, sizeof one, sizes, strides, 2,
                                                TSR_DTYPE_FLOAT32, nullptr, nullptr, &x)),
            "");
  EXPECT_THAT(Consume(tsr_compiled_model_run(compiled, &x, 1, &y, 1)),
              HasSubstr("model 'dyn': node 0 (view): argument 'size' (1000000000*b*b*b): "
                        "a size expression overflows int64"));
  tsr_tensor_release(x);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

TEST_F(ModelApi, MalformedDimsAreRefusedWithWhatWasExpected) {
  auto error = [&](const std::string& from, const std::string& to) {
    return LoadError(DynamicFile(Replace(kDynamicGraph, from, to)));
  };
  // Dims came with format version 2: a version-1 file has neither dims nor expressions.
  EXPECT_THAT(LoadError(DynamicFile(kDynamicGraph, "1")),
              HasSubstr("the graph: unknown field \"dims\""));
  EXPECT_THAT(error(R"("dims":[{"name":"b","min":1,"max":8}],)", ""),
              HasSubstr("inputs[0].sizes: expected an integer, found an object"));
  EXPECT_THAT(error(R"("min":1)", R"("min":-1)"),
              HasSubstr("dims[0]: expected 0 <= min <= max, found min -1, max 8"));
  EXPECT_THAT(error(R"("max":8)", R"("max":0)"), HasSubstr("found min 1, max 0"));
  EXPECT_THAT(error(R"({"name":"b","min":1,"max":8})",
                    R"({"name":"b","min":1},{"name":"b","min":1})"),
              HasSubstr("dim \"b\" is declared twice"));
  EXPECT_THAT(error(R"("min":1,)", R"("min":1,"step":2,)"), HasSubstr("unknown field \"step\""));
  EXPECT_THAT(error(R"({"expr":[[3,"b"]]})", R"({"expr":[[3,"c"]]})"),
              HasSubstr("uses dim \"c\", which the graph's dims do not declare"));
  EXPECT_THAT(error(R"({"expr":[[3,"b"]]})", R"({"expr":[["b",3]]})"),
              HasSubstr("expected a term [coefficient, dim...] (an integer first)"));
  EXPECT_THAT(error(R"({"expr":[[3,"b"]]})", R"({"expr":[[3,"b"]],"scale":2})"),
              HasSubstr("unknown field \"scale\""));
  EXPECT_THAT(error(R"({"expr":[[3,"b"]]})", R"({"expr":[[3,"b","b","b","b","b","b","b","b","b"]]})"),
              HasSubstr("expected at most 8 dims in a term, found 9"));
  // Every dim must be some input axis exactly, so that a run can read it.
  EXPECT_THAT(error(R"("sizes":[{"expr":[[1,"b"]]},3])", R"("sizes":[{"expr":[[2,"b"]]},3])"),
              HasSubstr("dim \"b\" is not the size of any input axis"));
  // The example inputs follow the sizes' expressions too.
  EXPECT_THAT(LoadError(DynamicFile(kDynamicGraph, "2", {2, 4})),
              HasSubstr("tensor \"input/x\": expected the input's float32 [b, 3], found "
                        "float32 [2, 4]"));
  EXPECT_THAT(LoadError(DynamicFile(kDynamicGraph, "2", {9, 3})),
              HasSubstr("the example inputs (input/...): input 0 ('x') axis 0 gives b = 9"));
}

TEST_F(ModelApi, ARunChecksItsInputs) {
  const std::string file = AxpyFile();
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(Consume(tsr_model_compile(model, cpu_, &compiled)), "");
  tsr_tensor* y = nullptr;
  int64_t four[] = {4};
  tsr_tensor* wrong = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(four, 1, TSR_DTYPE_FLOAT32, cpu_, &wrong)), "");
  EXPECT_THAT(Consume(tsr_compiled_model_run(compiled, &wrong, 1, &y, 1)),
              HasSubstr("input 0 ('x'): expected float32 [3] on cpu, got float32 [4] on cpu"));
  EXPECT_THAT(Consume(tsr_compiled_model_run(compiled, &wrong, 0, &y, 1)),
              HasSubstr("expected 1 inputs, got 0"));
  EXPECT_THAT(Consume(tsr_compiled_model_run(compiled, &wrong, 1, &y, 2)),
              HasSubstr("expected room for the model's 1 outputs"));
  EXPECT_EQ(y, nullptr);
  tsr_tensor_release(wrong);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

TEST_F(ModelApi, MalformedFilesAreRefusedWithWhatWasExpected) {
  const std::string good = AxpyFile();
  EXPECT_THAT(LoadError(""), HasSubstr("expected at least 8 bytes"));
  std::string huge = good;
  huge[7] = 0x7f;  // a header size near 2^63
  EXPECT_THAT(LoadError(huge), HasSubstr("the first 8 bytes give a header of"));
  std::string not_object = good;
  not_object[8] = '[';
  EXPECT_THAT(LoadError(not_object), HasSubstr("expected the header (at byte 8) to start with"));
  EXPECT_THAT(LoadError(Replace(good, "\"F32\"", "\"F31\"")),
              HasSubstr("dtype \"F31\" is not one Tessera has"));
  EXPECT_THAT(
      LoadError(Replace(good, "\"shape\":[3]", "\"shape\":[4]")),
      HasSubstr("a F32 tensor of shape [4] has 16 bytes, but data_offsets [0, 12] hold 12"));
  EXPECT_THAT(LoadError(Replace(good, "\"data_offsets\":[0,12]", "\"data_offsets\":[4,16]")),
              HasSubstr("must tile the data"));
  EXPECT_THAT(LoadError(good.substr(0, good.size() - 1)), HasSubstr("end past the data"));
  EXPECT_THAT(LoadError(Replace(good, "\"tessera.model\"", "\"tessera.modex\"")),
              HasSubstr("expected a Tessera model (__metadata__ \"format\": \"tessera.model\"), "
                        "found format \"tessera.modex\""));
  EXPECT_THAT(LoadError(AxpyFile(kAddGraph, "3")),
              AllOf(StartsWith("9: "),  // FAILED_PRECONDITION
                    HasSubstr("format version 3, newer than this runtime reads (up to 2)")));
  EXPECT_THAT(LoadError(AxpyFile(kAddGraph, "one")),
              HasSubstr("expected __metadata__ \"format_version\" to be a positive integer"));
  // The graph: JSON errors name the byte, graph errors the field.
  EXPECT_THAT(LoadError(AxpyFile("{\"name\":}")),
              HasSubstr("graph: byte 8: expected a value, found '}'"));
  EXPECT_THAT(LoadError(AxpyFile(std::string(100, '[') + std::string(100, ']'))),
              HasSubstr("expected at most 64 levels of nesting"));
  EXPECT_THAT(LoadError(AxpyFile(Replace(kAddGraph, "\"op_set\"", "\"opset\""))),
              HasSubstr("expected a field \"op_set\""));
  EXPECT_THAT(LoadError(AxpyFile(Replace(kAddGraph, "\"producer\"", "\"name\":\"a\",\"x\""))),
              HasSubstr("\"name\" is repeated"));
  EXPECT_THAT(LoadError(AxpyFile(Replace(kAddGraph, "{\"tensor\":\"w\"}", "{\"tensor\":\"y\"}"))),
              HasSubstr("nodes[0] (add.Tensor).args[1].tensor: uses \"y\", which no input, "
                        "constant or earlier node defines"));
  EXPECT_THAT(LoadError(AxpyFile(Replace(kAddGraph, "\"outputs\":[\"y\"]", "\"outputs\":[\"x\"]"))),
              HasSubstr("value \"x\" is defined twice"));
  EXPECT_THAT(LoadError(AxpyFile(Replace(kAddGraph, "{\"int\":2}", "{\"complex\":2}"))),
              HasSubstr("unknown argument kind \"complex\""));
  EXPECT_THAT(
      LoadError(AxpyFile(Replace(kAddGraph, "{\"int\":2}", "{\"int\":99999999999999999999}"))),
      HasSubstr("expected an integer that fits in 64 bits"));
  // A value budget bounds what reading a header or graph may allocate.
  std::string many = "{\"name\":[";
  for (int i = 0; i < 1000001; ++i) many += i ? ",0" : "0";
  EXPECT_THAT(LoadError(AxpyFile(many + "]}")), HasSubstr("expected at most 1000000 values"));
  EXPECT_THAT(LoadError(AxpyFile(kAddGraph, "1", {{"other/z", "F32", {0}, ""}})),
              HasSubstr("tensor \"other/z\": expected a name in constant/, input/ or expected/"));
}

TEST_F(ModelApi, EveryTruncationIsAnErrorNotACrash) {
  const std::string good = AxpyFile();
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_NE(LoadError(good.substr(0, n)), "") << n;
  }
}

TEST_F(ModelApi, CompileNamesEveryNodeThatCannotRun) {
  const std::string graph =
      Replace(Replace(kAddGraph, "\"outputs\":[{\"name\"", "\"outputs\":[{\"name\""),
              R"("outputs":["y"]}])",
              R"("outputs":["y"]},{"op":"frobnicate","schema":"frobnicate(Tensor self) -> Tensor",)"
              R"("args":[{"tensor":"y"}],"outputs":["z"]},)"
              R"({"op":"abs","schema":"abs(Tensor self, int extra) -> Tensor",)"
              R"("args":[{"tensor":"y"},{"int":1}],"outputs":["u"]},)"
              R"({"op":"sym_size.int","schema":"sym_size.int(Tensor self, int dim) -> int",)"
              R"("args":[{"tensor":"y"},{"int":0}],"outputs":["n"]}])");
  const std::string file = AxpyFile(graph);
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_compiled_model* compiled = nullptr;
  const std::string error = Consume(tsr_model_compile(model, cpu_, &compiled));
  EXPECT_THAT(error, HasSubstr("3 of its 4 nodes have no way to run"));
  EXPECT_THAT(error, HasSubstr("node 1 (frobnicate): unknown op 'frobnicate'"));
  EXPECT_THAT(error, HasSubstr("node 2 (abs): the op's schema changed incompatibly"));
  EXPECT_THAT(error, HasSubstr("node 3 (sym_size.int): returns a host value (int)"));
  EXPECT_EQ(compiled, nullptr);
  tsr_model_release(model);
}

// A compiled model holds its constants on its device, and through them the plugin's code
// (docs/embedding_guide.md); it holds no kernel of its own: each run calls through the
// registry. So once the plugin is unloaded (its kernels deregistered at once), a run is refused
// naming the unloaded plugin, never a call into code that was unregistered; and releasing the
// model afterwards frees its constants through the plugin that allocated them.
TEST_F(ModelApi, ARunAfterItsPluginWasUnloadedIsRefused) {
  ASSERT_EQ(Consume(tsr_plugin_load(S(TESSERA_NPU_PLUGIN), nullptr)), "");
  const tsr_device npu{TSR_DEVICE_PRIVATEUSE1, 0};
  const std::string file = AxpyFile();
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(Consume(tsr_model_compile(model, npu, &compiled)), "");
  int64_t three[] = {3};
  const float x_values[] = {10, 20, 30};
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(three, 1, TSR_DTYPE_FLOAT32, npu, &x)), "");
  ASSERT_EQ(Consume(tsr_tensor_copy_from_host(x, x_values, sizeof(x_values))), "");
  tsr_tensor* y = nullptr;
  ASSERT_EQ(Consume(tsr_compiled_model_run(compiled, &x, 1, &y, 1)), "");
  tsr_tensor_release(y);
  y = nullptr;

  ASSERT_EQ(Consume(tsr_plugin_unload(S("npu"))), "");
  const std::string error = Consume(tsr_compiled_model_run(compiled, &x, 1, &y, 1));
  EXPECT_THAT(error, StartsWith(std::to_string(TSR_UNIMPLEMENTED) + ": "));
  EXPECT_THAT(error, HasSubstr("no kernel, composite or fallback is registered for that device "
                               "type (the plugin 'npu' that provided npu is no longer loaded)"));
  EXPECT_EQ(y, nullptr);

  // Loaded again, the plugin provides npu anew: no hint, and the old instance's tensors are
  // refused as tensors of an unloaded plugin (docs/plugin_guide.md), not run on the new one.
  ASSERT_EQ(Consume(tsr_plugin_load(S(TESSERA_NPU_PLUGIN), nullptr)), "");
  const std::string again = Consume(tsr_compiled_model_run(compiled, &x, 1, &y, 1));
  EXPECT_THAT(again, HasSubstr("which was unloaded"));
  EXPECT_THAT(again, Not(HasSubstr("no longer loaded")));
  EXPECT_EQ(y, nullptr);
  tsr_tensor_release(x);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
  EXPECT_EQ(Consume(tsr_plugin_unload(S("npu"))), "");
}

TEST_F(ModelApi, CompileCountsNodesInWords) {
  // One node of one, and one of two: the count agrees with its noun and verb.
  const std::string alone =
      Replace(Replace(kAddGraph, R"("op":"add.Tensor")", R"("op":"frobnicate")"),
              R"("schema":"add.Tensor()", R"("schema":"frobnicate()");
  const std::string one_of_two =
      Replace(kAddGraph, R"("outputs":["y"]}])",
              R"("outputs":["y"]},{"op":"frobnicate","schema":"frobnicate(Tensor self) -> Tensor",)"
              R"("args":[{"tensor":"y"}],"outputs":["z"]}])");
  for (const auto& [graph, words] : {std::pair{alone, "its one node has no way to run"},
                                     std::pair{one_of_two, "1 of its 2 nodes has no way to run"}}) {
    const std::string file = AxpyFile(graph);
    tsr_model* model = nullptr;
    ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "") << words;
    tsr_compiled_model* compiled = nullptr;
    EXPECT_THAT(Consume(tsr_model_compile(model, cpu_, &compiled)), HasSubstr(words));
    EXPECT_EQ(compiled, nullptr);
    tsr_model_release(model);
  }
}

TEST_F(ModelApi, AnOlderSchemaWithoutADefaultedArgumentIsAdapted) {
  // gelu gained `*, str approximate='none'` after this pretend file was written.
  const std::string graph = Replace(kAddGraph, R"("outputs":[{"name":"out","value":"y"}])",
                                    R"("outputs":[{"name":"out","value":"g"}])");
  const std::string with_gelu =
      Replace(graph, R"("outputs":["y"]}])",
              R"("outputs":["y"]},{"op":"gelu","schema":"gelu(Tensor self) -> Tensor",)"
              R"("args":[{"tensor":"y"}],"outputs":["g"]}])");
  const std::string file = AxpyFile(with_gelu);
  tsr_model* model = nullptr;
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_compiled_model* compiled = nullptr;
  ASSERT_EQ(Consume(tsr_model_compile(model, cpu_, &compiled)), "");
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_model_example_input(model, 0, &x)), "");
  tsr_tensor* y = nullptr;
  ASSERT_EQ(Consume(tsr_compiled_model_run(compiled, &x, 1, &y, 1)), "");
  EXPECT_EQ(Values(y), (std::vector<float>{12, 24, 36}));  // gelu(x) = x for large x
  tsr_tensor_release(y);
  tsr_tensor_release(x);
  tsr_compiled_model_release(compiled);
  tsr_model_release(model);
}

TEST_F(ModelApi, BadArgumentsAreErrors) {
  tsr_model* model = nullptr;
  EXPECT_THAT(Consume(tsr_model_load(S("/nonexistent/model.tsrm"), &model)),
              HasSubstr("model '/nonexistent/model.tsrm': cannot open it"));
  EXPECT_THAT(Consume(tsr_model_load(S("/"), &model)), HasSubstr("expected a regular file"));
  EXPECT_THAT(Consume(tsr_model_load_from_memory(nullptr, 5, &model)),
              HasSubstr("expected 5 bytes, got NULL"));
  EXPECT_THAT(Consume(tsr_model_compile(nullptr, cpu_, nullptr)),
              HasSubstr("expected an output pointer"));
  tsr_compiled_model* compiled = nullptr;
  EXPECT_THAT(Consume(tsr_model_compile(nullptr, cpu_, &compiled)), HasSubstr("expected a model"));
  const std::string file = AxpyFile();
  ASSERT_EQ(Consume(tsr_model_load_from_memory(file.data(), file.size(), &model)), "");
  tsr_tensor* t = nullptr;
  EXPECT_THAT(Consume(tsr_model_expected_output(model, 3, &t)),
              HasSubstr("index 3 is past the model's 1 outputs"));
  EXPECT_THAT(Consume(tsr_model_compile(model, tsr_device{99, 0}, &compiled)),
              HasSubstr("tsr_model_compile: expected a device"));
  tsr_model_release(model);
}

}  // namespace
