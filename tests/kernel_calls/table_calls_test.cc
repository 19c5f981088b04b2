// The kernel convention, counted (issue 29, docs/plugin_guide.md): a CPU kernel makes no table
// call on its common path (parallel_for aside: one, for work past one thread's share). The CPU
// plugin runs behind the counting plugin (counting_plugin.cc), which hands it a table whose every
// slot counts its calls; each case calls an op through the public API, as an application does, and
// reads what the plugin's kernels called meanwhile.
//
// The cases cover every kernel family of the CPU plugin (pointwise, copies, reductions, scans,
// products, indexing, nn) on the inputs the convention is for: dense operands of one dtype,
// broadcast and strided operands, Scalars. Only a call that converts an operand to another
// dtype or stages a result in one allocates a temporary through the table (PointwiseFrame,
// Dense), which the last test checks the counting sees.
#include <dlfcn.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tessera/sdk/runtime.hpp"

namespace tessera {
namespace {

struct Counter {
  size_t (*num_slots)() = nullptr;
  int64_t (*slot)(size_t, const char**) = nullptr;
  void (*reset)() = nullptr;
  int64_t (*kernel_calls)() = nullptr;
};

// The runtime with the counting plugin (and through it the CPU plugin) loaded once.
const Counter& counter() {
  static const Counter c = [] {
    static Runtime* runtime = new Runtime();  // TESSERA_NO_DEFAULT_PLUGINS=1 (CMakeLists.txt)
    runtime->load_plugin(TESSERA_COUNTING_PLUGIN_PATH);
    void* h = dlopen(TESSERA_COUNTING_PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD);
    if (h == nullptr) throw sdk::Error(TSR_INTERNAL, "the counting plugin is not loaded");
    Counter k;
    k.num_slots = reinterpret_cast<size_t (*)()>(dlsym(h, "tsr_counting_num_slots"));
    k.slot = reinterpret_cast<int64_t (*)(size_t, const char**)>(dlsym(h, "tsr_counting_slot"));
    k.reset = reinterpret_cast<void (*)()>(dlsym(h, "tsr_counting_reset"));
    k.kernel_calls = reinterpret_cast<int64_t (*)()>(dlsym(h, "tsr_counting_kernel_calls"));
    if (!k.num_slots || !k.slot || !k.reset || !k.kernel_calls) {
      throw sdk::Error(TSR_INTERNAL, "the counting plugin lacks its counting symbols");
    }
    return k;
  }();
  return c;
}

struct Counted {
  int64_t table_calls = 0;   // over kCalls op calls, but for num_threads
  int64_t num_threads = 0;   // num_threads calls (onednn::Threads: one per oneDNN call)
  int64_t kernel_calls = 0;  // of the CPU plugin's kernels, over kCalls op calls
  std::string slots;         // "tensor_dim x2, ..." for messages
};

constexpr int kCalls = 4;

// count runs `call` once to warm up, then kCalls times, and returns what the CPU plugin did.
Counted count(const std::function<void()>& call) {
  const Counter& c = counter();
  call();
  c.reset();
  for (int i = 0; i < kCalls; ++i) call();
  Counted r;
  r.kernel_calls = c.kernel_calls();
  for (size_t i = 0; i < c.num_slots(); ++i) {
    const char* name = nullptr;
    const int64_t n = c.slot(i, &name);
    if (n == 0) continue;
    if (std::string(name) == "num_threads") {
      r.num_threads += n;
    } else {
      r.table_calls += n;
    }
    r.slots += std::string(r.slots.empty() ? "" : ", ") + name + " x" + std::to_string(n);
  }
  return r;
}

Tensor f32(std::vector<float> v, std::vector<int64_t> sizes) {
  counter();
  return Tensor::from_host(v, sizes, TSR_DTYPE_FLOAT32);
}
Tensor b8(std::vector<uint8_t> v, std::vector<int64_t> sizes) {
  counter();
  return Tensor::from_host(v, sizes, TSR_DTYPE_BOOL);
}
Tensor i64(std::vector<int64_t> v, std::vector<int64_t> sizes) {
  counter();
  return Tensor::from_host(v, sizes, TSR_DTYPE_INT64);
}

struct Case {
  std::string name;
  std::function<void()> call;
};

template <typename... Args>
std::function<void()> calling(const std::string& op, Args... args) {
  return [op, args...] { call(find_op(op), args...); };
}

// The convention's cases: each at most one table call per call.
std::vector<Case> Converted() {
  const Tensor a = f32({1.5f}, {1}), b = f32({-2}, {1});
  const Tensor m = f32({1, 2, 3, 4, 5, 6}, {2, 3}), row = f32({1, 2, 3}, {3});
  const Tensor mt = call1(find_op("t"), m);  // strided (3, 2)
  const Tensor c = b8({1}, {1});
  const Tensor out = f32({0}, {1});
  const Tensor n = i64({-3}, {1});
  const Tensor m64 = call1(find_op("to.dtype"), m, TSR_DTYPE_FLOAT64);
  const Tensor m64t = call1(find_op("t"), m64);
  const Tensor one_by_one = f32({2}, {1, 1});
  const Tensor idx = i64({2, 0}, {2});
  const Tensor image = f32(std::vector<float>(2 * 3 * 4 * 4, 0.5f), {2, 3, 4, 4});
  const Tensor filter = f32(std::vector<float>(2 * 3 * 3 * 3, 0.25f), {2, 3, 3, 3});
  const Tensor channel = f32({0, 0, 0}, {3}), channel_var = f32({1, 1, 1}, {3});
  const Tensor idx2 = i64({0, 2, 1, 1, 0, 2}, {2, 3});
  const Tensor batch = f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  const Tensor batch_t = call1(find_op("transpose.int"), batch, int64_t{1}, int64_t{2});
  return {
      {"add 1-element", calling("add.Tensor", a, b)},
      {"add_ 1-element", calling("add_.Tensor", Tensor(f32({1}, {1})), b)},
      {"add.out 1-element", calling("add.out", a, b, Scalar(1), out)},
      {"add broadcast", calling("add.Tensor", m, row)},
      {"add strided", calling("add.Tensor", mt, mt)},
      {"mul.Scalar", calling("mul.Scalar", m, Scalar(2.0))},
      {"abs 1-element", calling("abs", a)},
      {"abs int64", calling("abs", n)},
      {"neg strided", calling("neg", mt)},
      {"exp", calling("exp", m)},
      {"isnan", calling("isnan", m)},
      {"gelu", calling("gelu", m, std::string_view("tanh"))},
      {"where 1-element", calling("where.self", c, a, b)},
      {"where broadcast", calling("where.self", b8({1, 0, 1}, {3}), m, row)},
      {"clamp", calling("clamp", m, Scalar(2), std::nullopt)},
      {"addcmul", calling("addcmul", m, m, row, Scalar(2))},
      {"lerp.Scalar", calling("lerp.Scalar", m, m, Scalar(0.5))},
      {"masked_fill", calling("masked_fill.Scalar", m, b8({1, 0, 1}, {3}), Scalar(0))},
      {"fill_", calling("fill_.Scalar", Tensor(f32({1}, {1})), Scalar(3))},
      {"copy_", calling("copy_", Tensor(f32({1, 2, 3}, {3})), row)},
      {"sum 1-element", calling("sum", a)},
      {"sum.dim_IntList", calling("sum.dim_IntList", m, std::vector<int64_t>{-1})},
      {"mean strided", calling("mean.dim", mt, std::vector<int64_t>{0})},
      {"amax", calling("amax", m, std::vector<int64_t>{1})},
      {"max.dim", calling("max.dim", m, int64_t{1})},
      {"argmax", calling("argmax", m, std::nullopt)},
      {"var", calling("var.correction", m, std::vector<int64_t>{1})},
      {"any", calling("any", b8({1, 0, 1}, {3}))},
      {"norm", calling("norm.ScalarOpt_dim", m, Scalar(2), std::vector<int64_t>{1})},
      {"logsumexp", calling("logsumexp", m, std::vector<int64_t>{1})},
      {"cumsum", calling("cumsum", m, int64_t{1})},
      {"cumprod strided", calling("cumprod", mt, int64_t{0})},
      {"_softmax (oneDNN)", calling("_softmax", m, int64_t{1}, false)},
      {"_log_softmax float64", calling("_log_softmax", m64, int64_t{-1}, false)},
      {"mm 1x1", calling("mm", one_by_one, one_by_one)},
      {"mm strided", calling("mm", mt, m)},
      {"mm float64", calling("mm", m64t, m64)},
      {"bmm", calling("bmm", batch, batch_t)},
      {"addmm", calling("addmm", row, mt, m, Scalar(1), Scalar(2))},
      {"index_select", calling("index_select", m, int64_t{1}, idx)},
      {"gather", calling("gather", m, int64_t{1}, idx2)},
      {"scatter.src", calling("scatter.src", m, int64_t{1}, idx2, m)},
      {"scatter.value", calling("scatter.value", m, int64_t{1}, idx2, Scalar(1.0))},
      {"sort", calling("sort", m, int64_t{-1}, true)},
      {"topk", calling("topk", m, int64_t{2})},
      {"flip", calling("flip", mt, std::vector<int64_t>{0})},
      {"tril", calling("tril", m)},
      {"conv2d (oneDNN)",
       calling("convolution", image, filter, std::nullopt, std::vector<int64_t>{1, 1},
               std::vector<int64_t>{0, 0}, std::vector<int64_t>{1, 1}, false,
               std::vector<int64_t>{0, 0}, int64_t{1})},
      {"max_pool2d", calling("max_pool2d_with_indices", image, std::vector<int64_t>{2, 2})},
      {"avg_pool2d", calling("avg_pool2d", image, std::vector<int64_t>{2, 2})},
      {"layer_norm",
       calling("native_layer_norm", m, std::vector<int64_t>{3}, std::nullopt, std::nullopt, 1e-5)},
      {"batch_norm", calling("native_batch_norm", image, std::nullopt, std::nullopt, channel,
                             channel_var, false, 0.1, 1e-5)},
      {"linear", calling("linear", m, m, std::nullopt)},
  };
}

// A boxed kernel reads its views, its plan and its stack through the table by design.
bool PackedKernels() {
  const char* packed = std::getenv("TESSERA_PACKED_KERNELS");
  return packed == nullptr || std::string(packed) != "0";
}

TEST(KernelTableCalls, KernelsMakeNoTableCallOnTheirCommonPath) {
  if (!PackedKernels()) GTEST_SKIP() << "TESSERA_PACKED_KERNELS=0: boxed kernels read the stack";
  for (const Case& k : Converted()) {
    const Counted c = count(k.call);
    EXPECT_GE(c.kernel_calls, kCalls) << k.name << ": the CPU plugin's kernel did not run";
    EXPECT_EQ(c.table_calls, 0) << k.name << ": " << c.slots << " over " << kCalls << " calls";
    // A kernel on oneDNN asks the runtime's thread count once per call (onednn::Threads in
    // plugins/cpu/onednn.hpp: the count may change at any time, tsr_set_num_threads), and no
    // kernel more than that.
    EXPECT_LE(c.num_threads, kCalls) << k.name << ": " << c.slots;
  }
}

TEST(KernelTableCalls, WorkPastOneThreadsShareIsOneParallelFor) {
  if (!PackedKernels()) GTEST_SKIP() << "TESSERA_PACKED_KERNELS=0: boxed kernels read the stack";
  const Tensor big = f32(std::vector<float>(100000, 1.0f), {100000});  // > kGrain elements
  const Counted c = count(calling("add.Tensor", big, big));
  EXPECT_EQ(c.kernel_calls, kCalls);
  EXPECT_EQ(c.table_calls, kCalls) << c.slots;
  EXPECT_NE(c.slots.find("parallel_for x" + std::to_string(kCalls)), std::string::npos) << c.slots;
}

TEST(KernelTableCalls, TheCountingTableSeesWhatAKernelCalls) {
  // An int64 operand of a float32 add is converted into a temporary, which the kernel
  // allocates and releases through the table: the counts above are not vacuously zero.
  const Counted c = count(calling("add.Tensor", i64({1, 2, 3}, {3}), f32({1, 2, 3}, {3})));
  EXPECT_EQ(c.kernel_calls, kCalls);
  EXPECT_GE(c.table_calls, 2 * kCalls) << c.slots;
}

}  // namespace
}  // namespace tessera
