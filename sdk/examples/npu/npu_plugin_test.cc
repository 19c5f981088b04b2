// The sample NPU plugin, driven as an application would: through the C++ embedding API.
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/sdk/runtime.hpp"

namespace {

using tessera::Tensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class NpuTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    runtime_ = new tessera::Runtime();
    report_ = &runtime_->load_plugin(NPU_PLUGIN_PATH);
  }
  static void TearDownTestSuite() { delete runtime_; }
  static Tensor OnNpu(const std::vector<float>& values, const std::vector<int64_t>& sizes) {
    return Tensor::from_host(values, sizes, TSR_DTYPE_FLOAT32, tessera::parse_device("npu:0"));
  }
  static tessera::Runtime* runtime_;
  static const tsr_load_report* report_;
};
tessera::Runtime* NpuTest::runtime_ = nullptr;
const tsr_load_report* NpuTest::report_ = nullptr;

std::string ErrorOf(const std::function<void()>& f, tsr_code* code = nullptr) {
  try {
    f();
  } catch (const tessera::sdk::Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "";
}

TEST_F(NpuTest, LoadsWithItsDeviceAndKernels) {
  EXPECT_TRUE(report_->loaded);
  EXPECT_EQ(std::string(report_->device_name.data, report_->device_name.size), "npu");
  EXPECT_EQ(report_->ops_registered, 18);  // 16 of op set v1, uniform_ (1.5) and npu::throws
  EXPECT_EQ(std::string(report_->kernel_notes.data, report_->kernel_notes.size), "")
      << "the npu has its own copy_: no note about derived forms copying elsewhere";
  char text[16];
  tsr_device_format(tessera::parse_device("npu:0"), text, sizeof text);
  EXPECT_STREQ(text, "npu:0");
}

TEST_F(NpuTest, ComputesOnItsOwnDeviceAndTheRuntimeNeverReadsItsMemory) {
  Tensor a = OnNpu({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = OnNpu({10, 20, 30}, {3});
  EXPECT_EQ(a.device().type, TSR_DEVICE_PRIVATEUSE1);
  // The arena holds scrambled bytes: a direct read would not see the values.
  float raw;
  std::memcpy(&raw, a.data_ptr(), sizeof raw);
  EXPECT_NE(raw, 1.0f);
  Tensor c = a + b;  // broadcast
  EXPECT_EQ(c.device().type, TSR_DEVICE_PRIVATEUSE1);
  EXPECT_THAT(c.to_vector<float>(), ElementsAre(11, 22, 33, 14, 25, 36));
  EXPECT_THAT((a * a).to_vector<float>(), ElementsAre(1, 4, 9, 16, 25, 36));
  EXPECT_THAT(tessera::sub(a, b, 2).to_vector<float>(), ElementsAre(-19, -38, -57, -16, -35, -54));
  EXPECT_THAT((-a).to_vector<float>(), ElementsAre(-1, -2, -3, -4, -5, -6));
  Tensor m = OnNpu({1, 0, 0, 1, 2, 3}, {3, 2});
  const tsr_op* mm = tessera::find_op("mm");
  EXPECT_THAT(tessera::call(mm, a, m)[0].to_vector<float>(), ElementsAre(7, 11, 16, 23));
  const tsr_op* sum = tessera::find_op("sum");
  Tensor total = tessera::call(sum, a)[0];
  EXPECT_EQ(total.dim(), 0);
  EXPECT_THAT(total.to_vector<float>(), ElementsAre(21));
  Tensor back = tessera::to(c, "cpu");
  EXPECT_EQ(back.device().type, TSR_DEVICE_CPU);
  EXPECT_THAT(back.to_vector<float>(), ElementsAre(11, 22, 33, 14, 25, 36));
}

TEST_F(NpuTest, UnsupportedDtypesAndThrowingKernelsAreErrors) {
  Tensor i = Tensor::from_host<int32_t>({1, 2}, {2}, TSR_DTYPE_INT32, tessera::parse_device("npu"));
  tsr_code code{};
  EXPECT_THAT(ErrorOf([&] { Tensor r = i + i; }, &code),
              HasSubstr("npu add.Tensor: not implemented for dtype int32"));
  EXPECT_EQ(code, TSR_UNIMPLEMENTED);
  const tsr_op* throws = tessera::find_op("npu::throws");
  Tensor a = OnNpu({1}, {1});
  EXPECT_THAT(ErrorOf([&] { tessera::call(throws, a); }, &code),
              HasSubstr("npu::throws: kernel threw an exception: the sample NPU threw on purpose"));
  EXPECT_EQ(code, TSR_INTERNAL);
  Tensor cpu = Tensor::from_host<float>({1}, {1}, TSR_DTYPE_FLOAT32);
  EXPECT_THAT(ErrorOf([&] { Tensor r = a + cpu; }),
              HasSubstr("expected all tensors to be on the same device"));
}

// clamp.out is a typed C kernel (npu_c_kernels.c); clamp and clamp_ are derived from it.
TEST_F(NpuTest, TypedCKernelRunsWithItsOptionalScalarsAndDerivedForms) {
  const float nan = std::nanf("");
  Tensor a = OnNpu({-3, -1, 0.5f, 2, 7, nan}, {2, 3});
  const tsr_op* clamp = tessera::find_op("clamp");
  Tensor r = tessera::call1(clamp, a, tessera::Scalar(-1.5), tessera::Scalar(int64_t{3}));
  EXPECT_EQ(r.device().type, TSR_DEVICE_PRIVATEUSE1);
  std::vector<float> v = r.to_vector<float>();
  EXPECT_THAT(std::vector<float>(v.begin(), v.end() - 1), ElementsAre(-1.5f, -1, 0.5f, 2, 3));
  EXPECT_TRUE(std::isnan(v.back())) << "NaN stays NaN";
  // max only: min is None, the kernel's `const tsr_scalar* min` is NULL.
  r = tessera::call1(clamp, a, std::nullopt, tessera::Scalar(0.0));
  v = r.to_vector<float>();
  EXPECT_THAT(std::vector<float>(v.begin(), v.end() - 1), ElementsAre(-3, -1, 0, 0, 0));
  // clamp.out into a transposed npu view, and clamp_ in place (out = self).
  Tensor base = OnNpu({0, 0, 0, 0, 0, 0}, {3, 2});
  Tensor view = tessera::call1(tessera::find_op("t"), base);
  tessera::call1(tessera::find_op("clamp.out"), a, tessera::Scalar(0.0), std::nullopt, view);
  v = base.to_vector<float>();
  EXPECT_THAT(std::vector<float>(v.begin(), v.end() - 1), ElementsAre(0, 2, 0, 7, 0.5f));
  Tensor self = OnNpu({-5, 5}, {2});
  Tensor same =
      tessera::call1(tessera::find_op("clamp_"), self, tessera::Scalar(-1.0), tessera::Scalar(1.0));
  EXPECT_EQ(same.get(), self.get());
  EXPECT_THAT(self.to_vector<float>(), ElementsAre(-1, 1));
  Tensor i = Tensor::from_host<int32_t>({1, 2}, {2}, TSR_DTYPE_INT32, tessera::parse_device("npu"));
  tsr_code code{};
  EXPECT_THAT(ErrorOf([&] { tessera::call1(clamp, i, tessera::Scalar(0.0)); }, &code),
              HasSubstr("npu clamp.out: not implemented for dtypes other than float32"));
  EXPECT_EQ(code, TSR_UNIMPLEMENTED);
}

// PyTorch's rule: a 0-dim CPU tensor joins tensors of any device, so the npu's kernels receive
// it as it is (on the CPU); they read it through the runtime's copies, which handle both.
TEST_F(NpuTest, ZeroDimCpuTensorsReachNpuKernels) {
  Tensor a = OnNpu({1, 2, 3}, {3});
  Tensor two = Tensor::from_host<float>({2}, {}, TSR_DTYPE_FLOAT32);
  Tensor r = a * two;
  EXPECT_EQ(r.device().type, TSR_DEVICE_PRIVATEUSE1);
  EXPECT_THAT(r.to_vector<float>(), ElementsAre(2, 4, 6));
  r = two - a;  // the CPU tensor first: the call still runs on the npu
  EXPECT_EQ(r.device().type, TSR_DEVICE_PRIVATEUSE1);
  EXPECT_THAT(r.to_vector<float>(), ElementsAre(1, 0, -1));
}

TEST_F(NpuTest, OpsWithoutAnNpuKernelGoThroughTheCpuFallback) {
  Tensor a = OnNpu({0.5f}, {1});
  const tsr_op* tanh = tessera::find_op("tanh");
  // The npu has no tanh: the fallback copies to the CPU, runs the CPU plugin's kernel, copies
  // the result back to the npu, and counts the call.
  const int64_t before = tsr_fallback_count(tsr_string{"tanh", 4});
  Tensor r = tessera::call1(tanh, a);
  EXPECT_EQ(r.device().type, TSR_DEVICE_PRIVATEUSE1);
  EXPECT_FLOAT_EQ(r.to_vector<float>()[0], std::tanh(0.5f));
  EXPECT_EQ(tsr_fallback_count(tsr_string{"tanh", 4}), before + 1);
}

TEST_F(NpuTest, ToCopyMovesBetweenDevicesAndConvertsThere) {
  // A transposed float32 CPU view to the npu as float64 (converted on the CPU, moved through
  // host memory and the npu's copy functions), back to the CPU as int32 (moved, then
  // converted on the CPU), and converted on the npu itself (its copy_ takes every dtype,
  // though its other kernels compute float32 only).
  Tensor cpu = Tensor::from_host<float>({1, 2, 3, 4, 5, 6}, {2, 3}, TSR_DTYPE_FLOAT32);
  Tensor t = tessera::call1(tessera::find_op("t"), cpu);
  const tsr_op* to_copy = tessera::find_op("_to_copy");
  Tensor on_npu =
      tessera::call1(to_copy, t, TSR_DTYPE_FLOAT64, std::nullopt, tessera::parse_device("npu"));
  EXPECT_EQ(on_npu.device().type, TSR_DEVICE_PRIVATEUSE1);
  EXPECT_EQ(on_npu.dtype(), TSR_DTYPE_FLOAT64);
  EXPECT_EQ(on_npu.sizes().vec(), (std::vector<int64_t>{3, 2}));
  Tensor back =
      tessera::call1(to_copy, on_npu, TSR_DTYPE_INT32, std::nullopt, tessera::parse_device("cpu"));
  EXPECT_EQ(back.device().type, TSR_DEVICE_CPU);
  EXPECT_EQ(back.to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  Tensor narrowed = tessera::call1(to_copy, on_npu, TSR_DTYPE_INT8);
  EXPECT_EQ(narrowed.device().type, TSR_DEVICE_PRIVATEUSE1);
  auto to_cpu_int32 = [&](const Tensor& x) {
    return tessera::call1(to_copy, x, TSR_DTYPE_INT32, std::nullopt, tessera::parse_device("cpu"))
        .to_vector<int32_t>();
  };
  EXPECT_EQ(to_cpu_int32(narrowed), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  const Tensor halves =
      tessera::call1(tessera::find_op("mul.Scalar"), on_npu, 0.5);  // the CPU fallback
  const Tensor flags = tessera::call1(to_copy, tessera::call1(to_copy, halves, TSR_DTYPE_INT64),
                                      TSR_DTYPE_BOOL);  // 0.5 -> 0 -> false, 1.5 -> 1 -> true
  EXPECT_EQ(flags.device().type, TSR_DEVICE_PRIVATEUSE1);
  EXPECT_EQ(to_cpu_int32(flags), (std::vector<int32_t>{0, 1, 1, 1, 1, 1}));
  EXPECT_THAT(ErrorOf([&] { tessera::call1(tessera::find_op("neg"), on_npu); }),
              HasSubstr("not implemented for dtype float64"));
}

TEST_F(NpuTest, CopyBetweenDevicesInBothDirections) {
  // copy_ with self and src on different devices is the runtime's own: through host memory,
  // bytes straight across for equal sizes and dtypes, broadcasting and dtype conversion by the
  // CPU's copy_ otherwise. The npu's kernels never see a CPU tensor.
  const tsr_op* copy = tessera::find_op("copy_");
  const tsr_op* t = tessera::find_op("t");
  Tensor cpu = Tensor::from_host<float>({1, 2, 3, 4, 5, 6}, {2, 3}, TSR_DTYPE_FLOAT32);
  Tensor npu = OnNpu({0, 0, 0, 0, 0, 0}, {2, 3});
  Tensor returned = tessera::call1(copy, npu, cpu);
  EXPECT_EQ(returned.get(), npu.get());
  EXPECT_EQ(npu.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  Tensor wide = Tensor::from_host<int64_t>({0, 0, 0, 0, 0, 0}, {2, 3}, TSR_DTYPE_INT64);
  tessera::call1(copy, wide, OnNpu({1.5f, -2.5f, 3, 4, 5, 6}, {2, 3}));  // npu -> CPU, cast
  EXPECT_EQ(wide.to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3, 4, 5, 6}));

  Tensor row = Tensor::from_host<double>({7, 8, 9}, {3}, TSR_DTYPE_FLOAT64);
  tessera::call1(copy, npu, row);  // broadcast [3] -> [2, 3] and float64 -> float32
  EXPECT_EQ(npu.to_vector<float>(), (std::vector<float>{7, 8, 9, 7, 8, 9}));

  // A transposed npu destination: the strided write lands in the right places.
  Tensor base = OnNpu({0, 0, 0, 0, 0, 0}, {3, 2});
  tessera::call1(copy, tessera::call1(t, base), cpu);
  EXPECT_EQ(base.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));

  EXPECT_THAT(
      ErrorOf([&] {
        tessera::call1(copy,
                       tessera::call1(tessera::find_op("expand"), OnNpu({0, 0, 0}, {1, 3}),
                                      std::vector<int64_t>{2, 3}),
                       cpu);
      }),
      HasSubstr("copy_: unsupported operation: more than one element of the written-to tensor "
                "'self' refers to a single memory location"));
  tsr_code code{};
  const std::string mismatch = ErrorOf(
      [&] {
        tessera::call1(copy, npu, Tensor::from_host<float>({1, 2, 3, 4}, {4}, TSR_DTYPE_FLOAT32));
      },
      &code);
  EXPECT_THAT(mismatch, HasSubstr("copy_"));
  EXPECT_THAT(mismatch, HasSubstr("[4]"));
  EXPECT_EQ(code, TSR_INVALID_ARGUMENT);
  EXPECT_EQ(npu.to_vector<float>(), (std::vector<float>{7, 8, 9, 7, 8, 9}));  // untouched
}

}  // namespace
