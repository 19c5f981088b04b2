// The CUDA backend's cuDNN path on the host (dnn.h; Note [cuDNN at first use]): the loader
// against fake libraries (fake_cudnn.c, which convolves on host memory as its descriptors say)
// and the toolkit's own libcudnn where it is installed, the TESSERA_GPU_DNN knob, and the
// mapping of convolutions onto cuDNN's descriptors, checked by the numbers against a reference.
#include "dnn.h"

#include <dlfcn.h>

#include <cstdlib>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fake_cudnn.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/c/common.h"

namespace tessera {
namespace gpu {
namespace {

using ::testing::HasSubstr;

const DnnLibrary& Fake() {
  static const DnnLibrary lib = [] {
    DnnLibrary l;
    std::string error;
    EXPECT_TRUE(LoadDnnLibrary({TESSERA_FAKE_CUDNN}, &l, &error)) << error;
    return l;
  }();
  return lib;
}

FakeCudnnRecord& Record() {
  using Fn = FakeCudnnRecord* (*)();
  return *reinterpret_cast<Fn>(dlsym(Fake().dl, "fake_cudnn_record"))();
}

TEST(GpuDnnLoader, NamesEveryLibraryTriedAndWhatWasMissing) {
  DnnLibrary lib;
  std::string error;
  EXPECT_FALSE(
      LoadDnnLibrary({"libtessera_no_such_cudnn.so.9", TESSERA_FAKE_CUDNN_PARTIAL}, &lib, &error));
  EXPECT_THAT(error, HasSubstr("no usable cuDNN library (searched, in order: "
                               "libtessera_no_such_cudnn.so.9: "));
  EXPECT_THAT(error, HasSubstr(std::string(TESSERA_FAKE_CUDNN_PARTIAL) +
                               ": loaded, but has no symbol cudnnAddTensor"));
  ASSERT_TRUE(LoadDnnLibrary({"libtessera_no_such_cudnn.so.9", TESSERA_FAKE_CUDNN}, &lib, &error))
      << error;
  EXPECT_EQ(lib.path, TESSERA_FAKE_CUDNN);
  EXPECT_EQ(DnnStatusText(lib, 3), "cuDNN status 3 (CUDNN_STATUS_BAD_PARAM)");
  EXPECT_EQ(DefaultCudnnNames(), (std::vector<std::string>{"libcudnn.so.9", "libcudnn.so"}));
}

// The toolkit's cuDNN 9, where this machine has it: every entry point the backend calls is
// there under the name it resolves (loading it needs no GPU).
TEST(GpuDnnLoader, TheToolkitsCudnnHasEveryEntryPoint) {
#ifdef TESSERA_TOOLKIT_CUDNN
  DnnLibrary lib;
  std::string error;
  EXPECT_TRUE(LoadDnnLibrary({TESSERA_TOOLKIT_CUDNN}, &lib, &error)) << error;
  EXPECT_NE(lib.get_error_string, nullptr);
#else
  GTEST_SKIP() << "no libcudnn.so.9 in the CUDA toolkit here";
#endif
}

TEST(GpuDnnKnob, ParsesTesseraGpuDnn) {
  DnnMode mode;
  std::string error;
  for (const char* v : {static_cast<const char*>(nullptr), "", "auto"}) {
    ASSERT_TRUE(ParseDnnMode(v, true, &mode, &error));
    EXPECT_EQ(mode, DnnMode::kAuto);
  }
  ASSERT_TRUE(ParseDnnMode("cudnn", true, &mode, &error));
  EXPECT_EQ(mode, DnnMode::kLibrary);
  ASSERT_TRUE(ParseDnnMode("own", false, &mode, &error));
  EXPECT_EQ(mode, DnnMode::kOwn);
  EXPECT_FALSE(ParseDnnMode("CUDNN", true, &mode, &error));
  EXPECT_EQ(error, "TESSERA_GPU_DNN is 'CUDNN'; expected auto, cudnn or own");
  EXPECT_FALSE(ParseDnnMode("cudnn", false, &mode, &error));
  EXPECT_THAT(error, HasSubstr("expected auto or own (this backend has no cuDNN"));
}

// A host tensor of `sizes` laid out with the dims in `order` (outermost first; identity:
// contiguous), random values; its DnnTensor view.
template <typename T>
struct HostTensor {
  std::vector<T> data;
  DnnTensor view;
  HostTensor(const std::vector<int64_t>& sizes, std::vector<size_t> order, uint32_t seed) {
    if (order.empty()) {
      order.resize(sizes.size());
      std::iota(order.begin(), order.end(), size_t{0});
    }
    view.sizes = sizes;
    view.strides.assign(sizes.size(), 0);
    int64_t stride = 1;
    for (size_t i = order.size(); i-- > 0;) {
      view.strides[order[i]] = stride;
      stride *= sizes[order[i]];
    }
    data.resize(static_cast<size_t>(stride));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (T& v : data) v = static_cast<T>(u(rng));
    view.data = data.data();
  }
  T at(const std::vector<int64_t>& index) const {
    int64_t off = 0;
    for (size_t i = 0; i < index.size(); ++i) off += index[i] * view.strides[i];
    return data[static_cast<size_t>(off)];
  }
};

// Reference: the convolution of p (any rank), in double, as PyTorch defines it.
template <typename T>
std::vector<double> Reference(const HostTensor<T>& x, const HostTensor<T>& w, const T* bias,
                              const DnnConvProblem& p, const std::vector<int64_t>& y_sizes) {
  const size_t s = y_sizes.size() - 2;
  const int64_t cout = y_sizes[1], cin_g = w.view.sizes[1], cout_g = cout / p.groups;
  int64_t total = 1, taps = 1;
  for (int64_t v : y_sizes) total *= v;
  for (size_t i = 0; i < s; ++i) taps *= w.view.sizes[2 + i];
  std::vector<double> out(static_cast<size_t>(total));
  std::vector<int64_t> yi(y_sizes.size()), xi(y_sizes.size()), wi(y_sizes.size());
  for (int64_t e = 0; e < total; ++e) {
    int64_t rest = e;
    for (size_t i = y_sizes.size(); i-- > 0;) {
      yi[i] = rest % y_sizes[i];
      rest /= y_sizes[i];
    }
    const int64_t k = yi[1], g = k / cout_g;
    double acc = bias ? static_cast<double>(bias[k]) : 0;
    for (int64_t c = 0; c < cin_g; ++c) {
      for (int64_t t = 0; t < taps; ++t) {
        int64_t r = t;
        bool inside = true;
        xi[0] = yi[0];
        xi[1] = g * cin_g + c;
        wi[0] = k;
        wi[1] = c;
        for (size_t i = s; i-- > 0;) {
          const int64_t tap = r % w.view.sizes[2 + i];
          r /= w.view.sizes[2 + i];
          const int64_t pos = yi[2 + i] * p.stride[i] - p.padding[i] + tap * p.dilation[i];
          inside = inside && pos >= 0 && pos < x.view.sizes[2 + i];
          xi[2 + i] = pos;
          wi[2 + i] = tap;
        }
        if (inside) acc += static_cast<double>(x.at(xi)) * static_cast<double>(w.at(wi));
      }
    }
    out[static_cast<size_t>(e)] = acc;
  }
  return out;
}

// Runs one convolution through PlanDnnConv and RunDnnConv on the fake and compares with the
// reference.
template <typename T>
void Check(int32_t dtype, const std::vector<int64_t>& x_sizes, std::vector<size_t> x_order,
           const std::vector<int64_t>& w_sizes, std::vector<size_t> y_order,
           const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
           const std::vector<int64_t>& dilation, int64_t groups, bool with_bias,
           const std::string& what) {
  SCOPED_TRACE(what);
  const size_t s = x_sizes.size() - 2;
  std::vector<int64_t> y_sizes = {x_sizes[0], w_sizes[0]};
  for (size_t i = 0; i < s; ++i) {
    y_sizes.push_back(
        (x_sizes[2 + i] + 2 * padding[i] - dilation[i] * (w_sizes[2 + i] - 1) - 1) / stride[i] + 1);
  }
  HostTensor<T> x(x_sizes, x_order, 1), w(w_sizes, {}, 2), y(y_sizes, y_order, 3),
      bias({w_sizes[0]}, {}, 4);
  DnnConvProblem p;
  p.dtype = dtype;
  p.input = x.view;
  p.weight = w.view;
  p.output = y.view;
  p.bias = with_bias ? bias.view.data : nullptr;
  p.stride = stride;
  p.padding = padding;
  p.dilation = dilation;
  p.groups = groups;
  DnnConvCall call;
  std::string why;
  ASSERT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kReady) << why;
  Record() = FakeCudnnRecord{};
  std::vector<char> space;
  const DnnRun run = RunDnnConv(Fake(), nullptr, call, [&](size_t bytes) {
    space.resize(bytes);
    return static_cast<void*>(space.data());
  });
  ASSERT_EQ(run.outcome, DnnRun::kDone) << run.error;
  EXPECT_EQ(Record().live_descriptors, 0);  // every descriptor destroyed
  // The first choice that works under FMA math (algo 5 is ranked under TF32), its workspace.
  EXPECT_EQ(Record().algo, 7);
  EXPECT_EQ(Record().workspace, space.data());
  EXPECT_EQ(Record().groups, groups);
  EXPECT_EQ(Record().mode, kCudnnCrossCorrelation);
  EXPECT_EQ(Record().math_type, kCudnnFmaMath);  // never TF32
  EXPECT_EQ(Record().add_tensor_calls, with_bias ? 1 : 0);
  const std::vector<double> want =
      Reference(x, w, with_bias ? bias.data.data() : nullptr, p, y_sizes);
  std::vector<int64_t> yi(y_sizes.size());
  for (size_t e = 0; e < want.size(); ++e) {
    int64_t rest = static_cast<int64_t>(e);
    for (size_t i = y_sizes.size(); i-- > 0;) {
      yi[i] = rest % y_sizes[i];
      rest /= y_sizes[i];
    }
    ASSERT_NEAR(static_cast<double>(y.at(yi)), want[e], 1e-4) << "output element " << e;
  }
}

TEST(GpuDnnConv, TwoDimsWithGroupsStridePaddingDilationAndStridedOperands) {
  // Input in channels-last memory, output too: cuDNN's tensor descriptors take the strides.
  Check<float>(TSR_DTYPE_FLOAT32, {2, 4, 9, 8}, {0, 2, 3, 1}, {6, 2, 3, 2}, {0, 2, 3, 1}, {2, 1},
               {1, 2}, {2, 1}, 2, true, "conv2d, groups 2, NHWC");
  Check<float>(TSR_DTYPE_FLOAT32, {1, 3, 5, 5}, {}, {4, 3, 3, 3}, {}, {1, 1}, {0, 0}, {1, 1}, 1,
               false, "conv2d, no bias");
}

TEST(GpuDnnConv, OneDimIsTwoDimsOfHeightOneAndThreeDimsAreFive) {
  Check<double>(TSR_DTYPE_FLOAT64, {3, 4, 17}, {}, {8, 2, 5}, {}, {3}, {2}, {2}, 2, true,
                "conv1d, float64");
  Check<float>(TSR_DTYPE_FLOAT32, {2, 4, 10}, {1, 0, 2}, {4, 1, 3}, {}, {1}, {1}, {1}, 4, true,
               "conv1d, depthwise, channels outermost");
  Check<double>(TSR_DTYPE_FLOAT64, {1, 2, 4, 5, 6}, {}, {3, 2, 2, 3, 2}, {}, {1, 2, 1}, {1, 0, 1},
                {1, 1, 2}, 1, true, "conv3d");
}

TEST(GpuDnnConv, OneDimDescriptors) {
  HostTensor<float> x({3, 4, 17}, {}, 1), w({8, 2, 5}, {}, 2), y({3, 8, 5}, {}, 3);
  DnnConvProblem p;
  p.dtype = TSR_DTYPE_FLOAT32;
  p.input = x.view;
  p.weight = w.view;
  p.output = y.view;
  p.stride = {3};
  p.padding = {2};
  p.dilation = {2};
  p.groups = 2;
  DnnConvCall call;
  std::string why;
  ASSERT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kReady) << why;
  EXPECT_EQ(call.nb_dims, 4);
  EXPECT_THAT(std::vector<int>(call.x_dims, call.x_dims + 4), ::testing::ElementsAre(3, 4, 1, 17));
  EXPECT_THAT(std::vector<int>(call.x_strides, call.x_strides + 4),
              ::testing::ElementsAre(68, 17, 17, 1));
  EXPECT_THAT(std::vector<int>(call.w_dims, call.w_dims + 4), ::testing::ElementsAre(8, 2, 1, 5));
  EXPECT_THAT(std::vector<int>(call.pad, call.pad + 2), ::testing::ElementsAre(0, 2));
  EXPECT_THAT(std::vector<int>(call.stride, call.stride + 2), ::testing::ElementsAre(1, 3));
  EXPECT_THAT(std::vector<int>(call.dilation, call.dilation + 2), ::testing::ElementsAre(1, 2));
  EXPECT_THAT(std::vector<int>(call.bias_dims, call.bias_dims + 4),
              ::testing::ElementsAre(1, 8, 1, 1));
}

// A 3x3 float32 convolution of [1, 2, 5, 5] into [1, 2, 3, 3], over the tensors' memory.
struct Small {
  HostTensor<float> x{{1, 2, 5, 5}, {}, 1}, w{{2, 2, 3, 3}, {}, 2}, y{{1, 2, 3, 3}, {}, 3};
  DnnConvProblem Problem() const {
    DnnConvProblem p;
    p.dtype = TSR_DTYPE_FLOAT32;
    p.input = x.view;
    p.weight = w.view;
    p.output = y.view;
    p.stride = {1, 1};
    p.padding = {0, 0};
    p.dilation = {1, 1};
    return p;
  }
};

TEST(GpuDnnConv, WhatStaysOnTheDirectKernel) {
  const Small small;
  DnnConvProblem p = small.Problem();
  DnnConvCall call;
  std::string why;
  ASSERT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kReady) << why;
  EXPECT_EQ(call.data_type, kCudnnFloat);
  p.dtype = TSR_DTYPE_FLOAT16;
  ASSERT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kReady);
  EXPECT_EQ(call.data_type, kCudnnHalf);
  EXPECT_EQ(call.compute_type, kCudnnFloat);
  EXPECT_EQ(call.math_type, kCudnnTensorOpMath);
  p.dtype = TSR_DTYPE_BFLOAT16;
  ASSERT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kReady);
  EXPECT_EQ(call.data_type, kCudnnBfloat16);
  p.dtype = TSR_DTYPE_INT32;
  EXPECT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kUseOwnKernel);
  EXPECT_EQ(why, "cuDNN convolves floating dtypes only");
  p.dtype = TSR_DTYPE_FLOAT32;
  p.transposed = true;
  EXPECT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kUseOwnKernel);
  EXPECT_THAT(why, HasSubstr("transposed"));
  p.transposed = false;
  p.weight.strides = {18, 1, 6, 2};  // not contiguous
  EXPECT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kCopyWeight);
  p.weight = small.w.view;
  p.input.strides[0] = int64_t{1} << 40;  // beyond int
  EXPECT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kUseOwnKernel);
  EXPECT_THAT(why, HasSubstr("beyond int"));
}

TEST(GpuDnnConv, AFailingCallIsNamedAndLeavesNoDescriptor) {
  Small small;
  const DnnConvProblem p = small.Problem();
  DnnConvCall call;
  std::string why;
  ASSERT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kReady) << why;
  std::vector<char> space(64);
  auto workspace = [&](size_t) { return static_cast<void*>(space.data()); };
  // Before anything is queued the convolution is refused (the direct kernel may take it); after,
  // it failed.
  const std::pair<const char*, DnnRun::Outcome> entries[] = {
      {"cudnnCreateTensorDescriptor", DnnRun::kRefused},
      {"cudnnGetConvolutionForwardAlgorithm_v7", DnnRun::kRefused},
      {"cudnnConvolutionForward", DnnRun::kFailed}};
  for (const auto& [entry, outcome] : entries) {
    setenv("FAKE_CUDNN_FAIL", entry, 1);
    Record() = FakeCudnnRecord{};
    const DnnRun run = RunDnnConv(Fake(), nullptr, call, workspace);
    unsetenv("FAKE_CUDNN_FAIL");
    EXPECT_EQ(run.outcome, outcome) << entry;
    EXPECT_THAT(run.error,
                HasSubstr(std::string(entry) + " failed: cuDNN status 3 (CUDNN_STATUS_BAD_PARAM)"));
    EXPECT_EQ(Record().live_descriptors, 0) << entry;
  }
  // An exception from the workspace callback leaves no descriptor either.
  Record() = FakeCudnnRecord{};
  EXPECT_THROW(RunDnnConv(Fake(), nullptr, call,
                          [](size_t) -> void* { throw std::runtime_error("no memory"); }),
               std::runtime_error);
  EXPECT_EQ(Record().live_descriptors, 0);
}

// A workspace the allocator cannot give: the next choice that needs less (algo 1, none) runs.
TEST(GpuDnnConv, NoMemoryForAWorkspaceTakesALeanerAlgorithm) {
  Small small;
  const DnnConvProblem p = small.Problem();
  DnnConvCall call;
  std::string why;
  ASSERT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kReady) << why;
  Record() = FakeCudnnRecord{};
  const DnnRun run = RunDnnConv(Fake(), nullptr, call, [](size_t) -> void* { return nullptr; });
  ASSERT_EQ(run.outcome, DnnRun::kDone) << run.error;
  EXPECT_EQ(Record().algo, 1);
  EXPECT_EQ(Record().workspace_bytes, 0u);
}

// What cuDNN's descriptors cannot take stays on the direct kernel: an expanded input, an
// operand past 2^31 - 1 elements.
TEST(GpuDnnConv, ExpandedAndHugeOperandsStayOnTheDirectKernel) {
  const Small small;
  DnnConvProblem p = small.Problem();
  DnnConvCall call;
  std::string why;
  p.input.strides = {50, 0, 5, 1};  // the channel dim expanded
  EXPECT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kUseOwnKernel);
  EXPECT_EQ(why, "an expanded (stride 0) operand");
  p = small.Problem();
  p.output.sizes = {3, 2, 3, 3};
  p.output.strides = {int64_t{1} << 30, 9, 3, 1};  // its last element past 2^31
  EXPECT_EQ(PlanDnnConv(p, &call, &why), DnnPlan::kUseOwnKernel);
  EXPECT_EQ(why, "an operand past 2^31 - 1 elements");
}

}  // namespace
}  // namespace gpu
}  // namespace tessera
