// A vendor's Meta function for its own op (vendor_plugin.cc), registered through the public ABI
// as a kernel for TSR_DEVICE_META: a call on meta tensors gets the shape and dtype without any
// data; a call on the device has its arguments checked by it before the kernel runs and the
// kernel's result checked against it after; without one, a meta call is "not implemented"; and
// a plugin may register one only for an op it defines (docs/plugin_guide.md, "Meta functions").
#include <string>
#include <vector>

#include "conformance/host_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace conformance {
namespace {

using ::testing::HasSubstr;

const tsr_device kMeta{TSR_DEVICE_META, 0};

std::string PluginPath(const std::string& variant) {
  return std::string(VENDOR_PLUGIN_DIR) + "/libtsr_vendor_" + variant + ".so";
}

// LoadedPlugin loads one variant of the vendor plugin for a test and unloads it after, so that
// the next test may load another (they share the device type and define the same op).
class LoadedPlugin {
 public:
  explicit LoadedPlugin(const std::string& variant) {
    sdk::api_slot() = tsr_runtime_api_get();
    const tsr_load_report* report = nullptr;
    tsr_error* e = tsr_plugin_load(sdk::to_c(PluginPath(variant)), &report);
    if (report != nullptr) {
      char buf[4096];
      tsr_load_report_format(report, buf, sizeof buf);
      report_ = buf;
      if (report->loaded) name_ = std::string(sdk::from_c(report->plugin_name));
    }
    if (e != nullptr) {
      code_ = sdk::api().error_code(e);
      error_ = std::string(sdk::from_c(sdk::api().error_message(e)));
      sdk::api().error_release(e);
    }
  }
  ~LoadedPlugin() {
    if (!name_.empty()) sdk::check(tsr_plugin_unload(sdk::to_c(name_)));
  }
  bool loaded() const { return !name_.empty(); }
  tsr_code code() const { return code_; }
  const std::string& error() const { return error_; }
  const std::string& report() const { return report_; }

 private:
  std::string name_, error_, report_;
  tsr_code code_ = TSR_OK;
};

struct Outcome {
  tsr_code code = TSR_OK;
  std::string message;
  std::vector<Tensor> returns;
};

// ScaleBias calls vnd::scale_bias(self, bias, scale) and keeps its error or its returns.
Outcome ScaleBias(const Tensor& self, const Tensor& bias, double scale) {
  Outcome o;
  try {
    o.returns = call(find_op("vnd::scale_bias"), self, bias, scale);
  } catch (const sdk::Error& e) {
    o.code = e.code();
    o.message = e.what();
  }
  return o;
}

HostTensor Host(std::vector<int64_t> shape, tsr_dtype dtype, std::vector<double> values) {
  HostTensor h;
  h.shape = std::move(shape);
  h.dtype = dtype;
  h.values = std::move(values);
  return h;
}

TEST(VendorMeta, AMetaCallGivesTheShapeAndDtypeWithoutData) {
  LoadedPlugin plugin("correct");
  ASSERT_TRUE(plugin.loaded()) << plugin.report();
  struct Row {
    std::vector<int64_t> self, bias, out;
    tsr_dtype dtype;
  };
  const Row rows[] = {{{4, 1, 3}, {5, 1}, {4, 5, 3}, TSR_DTYPE_FLOAT32},
                      {{2, 3}, {}, {2, 3}, TSR_DTYPE_FLOAT64},
                      {{}, {}, {}, TSR_DTYPE_FLOAT32},
                      {{0, 7}, {7}, {0, 7}, TSR_DTYPE_FLOAT32},
                      // The Meta function is dtype-agnostic: the kernel decides what it computes.
                      {{3}, {1}, {3}, TSR_DTYPE_INT32}};
  for (const Row& r : rows) {
    // Meta tensors have no storage: a Meta function that read data would crash here.
    const Outcome o =
        ScaleBias(EmptyOn(r.self, r.dtype, kMeta), EmptyOn(r.bias, r.dtype, kMeta), 2);
    ASSERT_EQ(o.code, TSR_OK) << o.message;
    ASSERT_EQ(o.returns.size(), 1u);
    const Tensor& out = o.returns[0];
    EXPECT_EQ(out.device().type, TSR_DEVICE_META);
    EXPECT_EQ(out.sizes().vec(), r.out) << ShapeString(r.self) << " with " << ShapeString(r.bias);
    EXPECT_EQ(out.dtype(), r.dtype);
    EXPECT_EQ(out.data_ptr(), nullptr);
  }
  // Its errors are the op's, on the Meta device as on the device.
  const Outcome mixed =
      ScaleBias(EmptyOn({3}, TSR_DTYPE_FLOAT32, kMeta), EmptyOn({3}, TSR_DTYPE_FLOAT64, kMeta), 1);
  EXPECT_EQ(mixed.code, TSR_INVALID_ARGUMENT);
  EXPECT_THAT(mixed.message, HasSubstr("vnd::scale_bias (meta): expected bias of self's dtype "
                                       "float32, got float64"));
}

// On the device the runtime runs the Meta function first: arguments it refuses never reach the
// kernel (the error is the Meta function's), and what it computes is what the kernel's result is
// checked against.
TEST(VendorMeta, TheMetaFunctionChecksADeviceCallBeforeAndAfterTheKernel) {
  LoadedPlugin plugin("correct");
  ASSERT_TRUE(plugin.loaded()) << plugin.report();
  const tsr_device vnd = parse_device("vnd");
  const Outcome bad = ScaleBias(ToDevice(Host({2, 3}, TSR_DTYPE_FLOAT32, {1, 2, 3, 4, 5, 6}), vnd),
                                ToDevice(Host({2}, TSR_DTYPE_FLOAT32, {1, 1}), vnd), 1);
  EXPECT_EQ(bad.code, TSR_INVALID_ARGUMENT);
  EXPECT_THAT(bad.message, HasSubstr("vnd::scale_bias (meta): bias of size 2 does not broadcast "
                                     "with self's 3 at dim -1"));

  const Outcome good = ScaleBias(ToDevice(Host({2, 3}, TSR_DTYPE_FLOAT32, {1, 2, 3, 4, 5, 6}), vnd),
                                 ToDevice(Host({3}, TSR_DTYPE_FLOAT32, {10, 20, 30}), vnd), 2);
  ASSERT_EQ(good.code, TSR_OK) << good.message;
  const HostTensor out = FromDevice(good.returns[0]);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out.values, (std::vector<double>{12, 24, 36, 18, 30, 42}));
  // A 0-dim CPU tensor joins the device's call, and the Meta function sees it as it is.
  const Outcome scalar_bias =
      ScaleBias(ToDevice(Host({2}, TSR_DTYPE_FLOAT64, {1, 2}), vnd),
                ToDevice(Host({}, TSR_DTYPE_FLOAT64, {5}), tsr_device{TSR_DEVICE_CPU, 0}), 1);
  ASSERT_EQ(scalar_bias.code, TSR_OK) << scalar_bias.message;
  EXPECT_EQ(FromDevice(scalar_bias.returns[0]).values, (std::vector<double>{6, 7}));
}

TEST(VendorMeta, AKernelResultThatDisagreesWithTheMetaFunctionIsAnError) {
  LoadedPlugin plugin("bad_shape");  // its kernel ignores broadcasting
  ASSERT_TRUE(plugin.loaded()) << plugin.report();
  const tsr_device vnd = parse_device("vnd");
  const Outcome o = ScaleBias(ToDevice(Host({3}, TSR_DTYPE_FLOAT32, {1, 2, 3}), vnd),
                              ToDevice(Host({2, 1}, TSR_DTYPE_FLOAT32, {1, 2}), vnd), 1);
  EXPECT_EQ(o.code, TSR_INTERNAL) << o.message;
  EXPECT_THAT(o.message, HasSubstr("vnd::scale_bias_kernel"));
  EXPECT_THAT(o.message, HasSubstr("[2, 3]"));  // the shape the Meta function computed
}

TEST(VendorMeta, WithoutAMetaFunctionAMetaCallIsNotImplemented) {
  LoadedPlugin plugin("no_meta");
  ASSERT_TRUE(plugin.loaded()) << plugin.report();
  const Outcome meta =
      ScaleBias(EmptyOn({3}, TSR_DTYPE_FLOAT32, kMeta), EmptyOn({3}, TSR_DTYPE_FLOAT32, kMeta), 1);
  EXPECT_EQ(meta.code, TSR_UNIMPLEMENTED);
  EXPECT_THAT(meta.message, HasSubstr("not implemented for vnd::scale_bias on meta"));
  // The device's own calls still run (unchecked before the kernel: the kernel checks).
  const tsr_device vnd = parse_device("vnd");
  const Outcome real = ScaleBias(ToDevice(Host({2}, TSR_DTYPE_FLOAT32, {1, 2}), vnd),
                                 ToDevice(Host({2}, TSR_DTYPE_FLOAT32, {3, 4}), vnd), 1);
  ASSERT_EQ(real.code, TSR_OK) << real.message;
  EXPECT_EQ(FromDevice(real.returns[0]).values, (std::vector<double>{4, 6}));
}

TEST(VendorMeta, APluginMayRegisterMetaFunctionsOnlyForItsOwnOps) {
  LoadedPlugin plugin("meta_for_core_op");  // also a Meta function for `neg`
  EXPECT_FALSE(plugin.loaded());
  EXPECT_EQ(plugin.code(), TSR_PERMISSION_DENIED) << plugin.error();
  EXPECT_THAT(plugin.report(), HasSubstr("may not register a kernel for neg on meta"));
  // Rolled back: the core op's own Meta function is still the one that runs.
  const Outcome o = [] {
    Outcome r;
    r.returns = call(find_op("neg"), EmptyOn({4}, TSR_DTYPE_INT64, kMeta));
    return r;
  }();
  EXPECT_EQ(o.returns[0].sizes().vec(), (std::vector<int64_t>{4}));
}

}  // namespace
}  // namespace conformance
}  // namespace tessera
