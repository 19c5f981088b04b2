// sdk::Library as a vendor uses it (plugin.hpp), through the SDK's test plugin
// (library_plugin.cc): the registration hook runs once, in the registration pass; the unload
// function runs when the plugin is unloaded (or at once when its registration fails); typed C
// kernels get their arguments as their C types; device() fills in the device type; and sdk::item
// reads a 0-dim tensor wherever it lives, including a 0-dim CPU tensor that a device kernel
// receives (PyTorch's rule).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/c/loader.h"
#include "tessera/opset/opset.h"
#include "tessera/opset/v1_0.h"
#include "tessera/sdk/item.hpp"
#include "tessera/sdk/runtime.hpp"
#include "tessera/sdk/typed_c.hpp"

namespace tessera {
namespace sdk {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using typed_c::CheckParams;
using typed_c::CParamsOf;
using typed_c::CType;
using typed_c::ParamTypes;

// The typed C mapping, evaluated by the compiler (the plugin's own kernels are checked the same
// way when it is built).
constexpr std::string_view kAddOut = opset::v1_0::FindSchema("add.out");
constexpr std::string_view kClampOut = opset::v1_0::FindSchema("clamp.out");
constexpr std::string_view kSumDim = opset::v1_0::FindSchema("sum.dim_IntList");
static_assert(
    CheckParams(kAddOut,
                ParamTypes<tsr_tensor*, tsr_tensor*, tsr_scalar, tsr_tensor*, tsr_tensor**>())
        .ok());
static_assert(CheckParams(kAddOut, ParamTypes<const tsr_tensor*, const tsr_tensor*, tsr_scalar,
                                              tsr_tensor*, tsr_tensor**>())
                  .ok());
// alpha as a double: parameter 2 (0-based) differs.
static_assert(CheckParams(kAddOut,
                          ParamTypes<tsr_tensor*, tsr_tensor*, double, tsr_tensor*, tsr_tensor**>())
                  .mismatch == 2);
// no return pointer: the count differs at 4.
static_assert(CheckParams(kAddOut, ParamTypes<tsr_tensor*, tsr_tensor*, tsr_scalar, tsr_tensor*>())
                  .mismatch == 4);
static_assert(CheckParams(kClampOut, ParamTypes<tsr_tensor*, const tsr_scalar*, const tsr_scalar*,
                                                tsr_tensor*, tsr_tensor**>())
                  .ok());
// Scalar? by value instead of a pointer.
static_assert(
    CheckParams(kClampOut,
                ParamTypes<tsr_tensor*, tsr_scalar, const tsr_scalar*, tsr_tensor*, tsr_tensor**>())
        .mismatch == 1);
// sum.dim_IntList(Tensor self, int[1]? dim, ...): an optional list has no C mapping.
static_assert(CheckParams(kSumDim, ParamTypes<tsr_tensor*>()).unmapped_argument == 1);
static_assert(CParamsOf("int[2]").count == 2 && CParamsOf("int[2]").types[1] == CType::kSize);
static_assert(CParamsOf("Tensor(a!)").types[0] == CType::kTensor);
static_assert(CParamsOf("Tensor?").types[0] == CType::kTensor);
static_assert(CParamsOf("bool?").types[0] == CType::kInt32Ptr);
static_assert(CParamsOf("MemoryFormat?").count == 0);
static_assert(CParamsOf("Tensor[]").count == 0);

std::string PluginPath(const char* variant) {
  return std::string(TESSERA_SDK_TEST_PLUGIN_DIR) + "/libtsr_sdk_library_plugin_" + variant + ".so";
}

std::string Str(tsr_string s) { return std::string(s.data ? s.data : "", s.size); }

// Load loads a variant of the test plugin and returns the error text ("" when it loaded).
std::string Load(const char* variant, const tsr_load_report** report = nullptr) {
  const std::string path = PluginPath(variant);
  tsr_error* error = tsr_plugin_load(to_c(path), report);
  if (error == nullptr) return "";
  std::string message(from_c(tsr_error_message(error)));
  tsr_error_release(error);
  return message;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class LibraryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    api_slot() = tsr_runtime_api_get();
    ASSERT_EQ(Load("good", &report_), "");
    sdkdev_ = parse_device("sdkdev:0");
  }
  static Tensor OnDevice(const std::vector<float>& values, const std::vector<int64_t>& sizes) {
    return Tensor::from_host(values, sizes, TSR_DTYPE_FLOAT32, sdkdev_);
  }
  static const tsr_load_report* report_;
  static tsr_device sdkdev_;
};
const tsr_load_report* LibraryTest::report_ = nullptr;
tsr_device LibraryTest::sdkdev_{};

// Host elements must be the dtype's C++ type: a float32 tensor read as int32_t gave the floats'
// bits as integers (only the sizes were compared), and written from int32_t, integers' bits as
// floats.
TEST_F(LibraryTest, HostElementsMustBeTheDtypesType) {
  const Tensor f = Tensor::from_host(std::vector<float>{1.0f, 2.5f}, {2}, TSR_DTYPE_FLOAT32);
  EXPECT_EQ(ErrorOf([&] { f.to_vector<int32_t>(); }),
            "to_vector: host elements of type int (4 bytes) for a tensor of dtype float32, "
            "expected float");
  EXPECT_EQ(ErrorOf([&] { f.to_vector<uint32_t>(); }),
            "to_vector: host elements of type unsigned int (4 bytes) for a tensor of dtype "
            "float32, expected float");
  EXPECT_EQ(ErrorOf([] {
              Tensor::from_host(std::vector<int32_t>{1, 2}, {2}, TSR_DTYPE_FLOAT32);
            }),
            "from_host: host elements of type int (4 bytes) for a tensor of dtype float32, "
            "expected float");
  EXPECT_THAT(f.to_vector<float>(), ElementsAre(1.0f, 2.5f));
  // Integers of the dtype's size and signedness: long long for int64 too, not unsigned.
  const Tensor i = Tensor::from_host(std::vector<int64_t>{-3}, {1}, TSR_DTYPE_INT64);
  EXPECT_THAT(i.to_vector<long long>(), ElementsAre(-3));
  EXPECT_THAT(ErrorOf([&] { i.to_vector<uint64_t>(); }), HasSubstr("expected int64_t"));
  EXPECT_THAT(ErrorOf([&] { i.to_vector<double>(); }), HasSubstr("expected int64_t"));
  // bool reads as uint8_t (std::vector<bool> has no data()); a float16's bits as uint16_t.
  const Tensor b = Tensor::from_host(std::vector<uint8_t>{1, 0}, {2}, TSR_DTYPE_BOOL);
  EXPECT_THAT(b.to_vector<uint8_t>(), ElementsAre(1, 0));
  EXPECT_THAT(ErrorOf([&] { b.to_vector<int8_t>(); }), HasSubstr("expected uint8_t"));
  const Tensor h = Tensor::from_host(std::vector<uint16_t>{0x3C00}, {1}, TSR_DTYPE_FLOAT16);
  EXPECT_THAT(h.to_vector<uint16_t>(), ElementsAre(0x3C00));
  EXPECT_EQ(h.to_vector<Half>()[0].bits, 0x3C00);
  EXPECT_THAT(ErrorOf([&] { h.to_vector<int16_t>(); }),
              HasSubstr("expected sdk::Half (or uint16_t for its bits)"));
  EXPECT_THAT(ErrorOf([&] { h.to_vector<BFloat16>(); }), HasSubstr("dtype float16"));
}

// An undefined Tensor is refused in C++ terms (the C ABI's own message says TSR_VALUE_NONE).
TEST_F(LibraryTest, AnUndefinedTensorArgumentSaysPassNullopt) {
  const Tensor a = Tensor::from_host(std::vector<float>{1.0f}, {1}, TSR_DTYPE_FLOAT32);
  EXPECT_EQ(ErrorOf([&] { call1(find_op("add.Tensor"), a, Tensor()); }),
            "call1: add.Tensor: argument 2 is an undefined Tensor (pass std::nullopt for None)");
  // call() pushes on a stack.
  EXPECT_EQ(ErrorOf([&] { call(find_op("add.Tensor"), Tensor(), a); }),
            "an argument is an undefined Tensor (pass std::nullopt for None)");
}

TEST_F(LibraryTest, RegistrationHookRunsOnceInTheRegistrationPass) {
  ASSERT_TRUE(report_->loaded);
  // The block ran twice (describe, then register); the hook once, in the second run.
  Tensor stats = call1(find_op("sdktest::stats"), OnDevice({0}, {1}));
  EXPECT_THAT(stats.to_vector<double>(), ElementsAre(2, 1, 2));
  // Loading the same file again registers nothing more.
  ASSERT_EQ(Load("good"), "");
  EXPECT_THAT(call1(find_op("sdktest::stats"), OnDevice({0}, {1})).to_vector<double>(),
              ElementsAre(2, 1, 2));
}

TEST_F(LibraryTest, DeviceGetsTheDescribedDeviceType) {
  // The plugin's interface left device_type (and struct_size) 0; its tensors live on sdkdev
  // (PrivateUse2), whose memory is scrambled: only its copy functions read it back.
  EXPECT_EQ(report_->device_type, TSR_DEVICE_PRIVATEUSE2);
  Tensor t = OnDevice({1.5f, -2}, {2});
  EXPECT_EQ(t.device().type, TSR_DEVICE_PRIVATEUSE2);
  float raw;
  std::memcpy(&raw, t.data_ptr(), sizeof raw);
  EXPECT_NE(raw, 1.5f);
  EXPECT_THAT(t.to_vector<float>(), ElementsAre(1.5f, -2));

  // An interface for another device type than described refuses the plugin, naming both.
  const tsr_load_report* bad = nullptr;
  EXPECT_THAT(Load("bad_device", &bad),
              HasSubstr("Library::device: the interface's device_type is privateuse1, but plugin "
                        "'sdktest_bad_device' provides privateuse3 (describe()); leave "
                        "device_type 0 and the SDK sets it"));
  EXPECT_FALSE(bad->loaded);
}

TEST_F(LibraryTest, KernelNamesAreThePluginsOnce) {
  size_t count = 0;
  ASSERT_EQ(tsr_plugin_kernels(to_c("sdktest"), nullptr, 0, &count), nullptr);
  std::vector<tsr_kernel_info> infos(count);
  for (tsr_kernel_info& info : infos) info.struct_size = sizeof info;
  ASSERT_EQ(tsr_plugin_kernels(to_c("sdktest"), infos.data(), infos.size(), &count), nullptr);
  std::vector<std::string> names;
  for (const tsr_kernel_info& info : infos) names.push_back(Str(info.kernel_name));
  EXPECT_THAT(names, ElementsAre("sdktest::probe", "sdktest::add.out", "sdktest::mul.Tensor",
                                 "sdktest::stats", "sdktest::views.out"));
  std::vector<std::string> reasons;
  for (const tsr_kernel_info& info : infos) {
    EXPECT_EQ(info.device_type, TSR_DEVICE_PRIVATEUSE2);
    EXPECT_EQ(info.status, TSR_KERNEL_REGISTERED) << Str(info.note);
    reasons.push_back(Str(info.nondeterministic));
  }
  // sdk::nondeterministic reaches the listing from impl and impl_typed; the rest say nothing.
  EXPECT_THAT(reasons,
              ElementsAre("", "a reason given to impl_typed", "", "a reason given to impl", ""));
}

// The C++ embedding API's switch is the C ABI's (determinism.h).
TEST_F(LibraryTest, DeterministicAlgorithmsSwitchFromCpp) {
  const tsr_deterministic_mode before = tessera::deterministic_algorithms();
  tessera::set_deterministic_algorithms(TSR_DETERMINISTIC_WARN);
  EXPECT_EQ(tsr_deterministic_algorithms(), TSR_DETERMINISTIC_WARN);
  EXPECT_EQ(tessera::deterministic_algorithms(), TSR_DETERMINISTIC_WARN);
  try {
    tessera::set_deterministic_algorithms(static_cast<tsr_deterministic_mode>(5));
    ADD_FAILURE() << "mode 5 was accepted";
  } catch (const tessera::sdk::Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
  }
  tessera::set_deterministic_algorithms(before);
}

// sdktest::probe is a typed C kernel registered by plain name: each argument arrives as the C
// type kernel.h gives it, the context as registered. (Its result goes to the Device argument,
// the call's device for an op that has one.)
TEST_F(LibraryTest, TypedCKernelGetsEveryArgumentAsItsCType) {
  const tsr_op* probe = find_op("sdktest::probe");
  Tensor self = OnDevice({1, 2, 3}, {3});
  Tensor t = OnDevice({1, 2, 3, 4, 5}, {5});
  const std::vector<int64_t> sizes = {2, 3, 4};
  Tensor r = call1(probe, self, int64_t{-7}, 2.5, true, TSR_DTYPE_BFLOAT16, Scalar(int64_t{9}),
                   sdkdev_, std::string_view("hi"), sizes, int64_t{11}, Scalar(0.25), t);
  EXPECT_EQ(r.device().type, TSR_DEVICE_PRIVATEUSE2);
  EXPECT_EQ(r.to_vector<double>(),
            (std::vector<double>{1, -7, 2.5, 1, TSR_DTYPE_BFLOAT16, TSR_SCALAR_INT, 9,
                                 TSR_DEVICE_PRIVATEUSE2, 0, 2, 'h', 3, 9, 11, 0.25, 5, 3}));
  // None for the optional ones: NULL pointers. An empty string and list.
  r = call1(probe, self, int64_t{0}, -1.0, false, TSR_DTYPE_FLOAT32, Scalar(1.5),
            tsr_device{TSR_DEVICE_CPU, 0}, std::string_view(""), std::vector<int64_t>{},
            std::nullopt, std::nullopt, std::nullopt);
  EXPECT_EQ(r.device().type, TSR_DEVICE_CPU);
  EXPECT_EQ(r.to_vector<double>(),
            (std::vector<double>{1, 0, -1, 0, TSR_DTYPE_FLOAT32, TSR_SCALAR_DOUBLE, 1.5,
                                 TSR_DEVICE_CPU, 0, 0, -1, 0, 0, -1, -1, -1, 3}));
}

// add.out is a typed C kernel registered with TESSERA_OP (checked at compile time); add.Tensor
// and add_.Tensor derive from it on the device.
TEST_F(LibraryTest, TypedCKernelOfTheOpSetRunsWithItsDerivedForms) {
  Tensor a = OnDevice({1, 2, 3}, {3});
  Tensor b = OnDevice({10, 20, 30}, {3});
  Tensor out = OnDevice({0, 0, 0}, {3});
  Tensor r = call1(find_op("add.out"), a, b, Scalar(2.0), out);
  EXPECT_EQ(r.get(), out.get());
  EXPECT_THAT(out.to_vector<float>(), ElementsAre(21, 42, 63));
  EXPECT_THAT(tessera::add(a, b).to_vector<float>(), ElementsAre(11, 22, 33));
  call1(find_op("add_.Tensor"), a, b, Scalar(int64_t{-1}));
  EXPECT_THAT(a.to_vector<float>(), ElementsAre(-9, -18, -27));
}

// sdktest::views.out is a typed C++ kernel that takes a KernelContext, its tensors as views
// (an optional one too) and returns two of them as views.
TEST_F(LibraryTest, TypedKernelGetsViewsAndItsContextAndReturnsViews) {
  const tsr_op* views = find_op("sdktest::views.out");
  Tensor self = OnDevice({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor maybe = OnDevice({1, 2, 3, 4, 5}, {5});
  Tensor out = Tensor::from_host(std::vector<double>{0, 0, 0, 0}, {4}, TSR_DTYPE_FLOAT64, sdkdev_);
  Tensor named = Tensor::from_host(std::vector<double>{0}, {1}, TSR_DTYPE_FLOAT64, sdkdev_);
  std::vector<Tensor> r = call(views, self, maybe, int64_t{7}, out, named);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].get(), out.get());
  EXPECT_EQ(r[1].get(), named.get());
  EXPECT_THAT(out.to_vector<double>(), ElementsAre(2, 6, 5, 7));
  EXPECT_THAT(named.to_vector<double>(), ElementsAre(1));
  // None for the optional tensor: std::nullopt.
  r = call(views, self, std::nullopt, int64_t{-1}, out, named);
  EXPECT_THAT(out.to_vector<double>(), ElementsAre(2, 6, -1, -1));
}

TEST_F(LibraryTest, KernelContextFailNamesTheOp) {
  Tensor self = OnDevice({1}, {1});
  Tensor out = Tensor::from_host(std::vector<double>{0, 0, 0}, {3}, TSR_DTYPE_FLOAT64, sdkdev_);
  Tensor named = Tensor::from_host(std::vector<double>{0}, {1}, TSR_DTYPE_FLOAT64, sdkdev_);
  const std::string error = ErrorOf(
      [&] { call(find_op("sdktest::views.out"), self, std::nullopt, int64_t{0}, out, named); });
  EXPECT_THAT(error, HasSubstr("sdktest::views.out: argument 'out': expected 4 float64 elements, "
                               "found 3"));
}

// Returned views of tensors the caller kept no reference to: the SDK holds one while it replaces
// the arguments by the returns. (Today's dispatcher also holds the written arguments until the
// call returns, for its check of the kernel's results, so this passes without the SDK's
// reference too; the SDK does not rely on that.)
TEST_F(LibraryTest, ReturnedViewsOutliveTheArgumentsTheyCameFrom) {
  tsr_stack* stack = nullptr;
  ASSERT_EQ(tsr_stack_create(&stack), nullptr);
  Tensor self = OnDevice({1, 2}, {2});
  ASSERT_EQ(tsr_stack_push_tensor(stack, self.get()), nullptr);
  ASSERT_EQ(tsr_stack_push_none(stack), nullptr);
  ASSERT_EQ(tsr_stack_push_int(stack, 3), nullptr);
  {
    // Pushed, then this test's own references go: the stack holds the last ones.
    Tensor out =
        Tensor::from_host(std::vector<double>{0, 0, 0, 0}, {4}, TSR_DTYPE_FLOAT64, sdkdev_);
    Tensor named = Tensor::from_host(std::vector<double>{0}, {1}, TSR_DTYPE_FLOAT64, sdkdev_);
    ASSERT_EQ(tsr_stack_push_tensor(stack, out.get()), nullptr);
    ASSERT_EQ(tsr_stack_push_tensor(stack, named.get()), nullptr);
  }
  ASSERT_EQ(tsr_op_call(find_op("sdktest::views.out"), stack), nullptr);
  ASSERT_EQ(tsr_stack_size(stack), 2u);
  tsr_tensor* first = nullptr;
  ASSERT_EQ(tsr_stack_get_tensor(stack, 0, &first), nullptr);
  EXPECT_THAT(Tensor::borrow(first).to_vector<double>(), ElementsAre(1, 2, -1, 3));
  tsr_stack_release(stack);
}

TEST_F(LibraryTest, BadTypedCSignatureRefusesTheLoadNamingTheParameter) {
  const tsr_load_report* bad = nullptr;
  const std::string error = Load("bad_typed", &bad);
  EXPECT_THAT(error, HasSubstr("impl_typed(\"sdktest::probe\"): parameter 2 after the context is "
                               "double, but argument 'n' of type int needs int64_t; the op's "
                               "schema is sdktest::probe(Tensor self, int n,"));
  EXPECT_FALSE(bad->loaded);
  // The refused plugin's registrations are gone; the good plugin's probe still runs.
  Tensor r =
      call1(find_op("sdktest::probe"), OnDevice({1}, {1}), int64_t{1}, 1.0, true, TSR_DTYPE_FLOAT32,
            Scalar(1.0), tsr_device{TSR_DEVICE_CPU, 0}, std::string_view("x"),
            std::vector<int64_t>{1}, std::nullopt, std::nullopt, std::nullopt);
  EXPECT_EQ(r.to_vector<double>()[0], 1.0);
}

TEST_F(LibraryTest, RegistrationBeforeDescribeRefusesThePlugin) {
  EXPECT_THAT(Load("late_describe"),
              HasSubstr("Library::impl: describe() must come first in the TESSERA_PLUGIN block"));
}

// A registration pass that fails after a hook ran: the runtime refuses the plugin and will not
// call unload_fn, so the SDK runs the unload function itself, once.
TEST_F(LibraryTest, FailedRegistrationRunsTheUnloadFunctionAtOnce) {
  ::testing::internal::CaptureStderr();
  const std::string error = Load("failing_hook");
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(error, HasSubstr("register_fn returned an error: UNAVAILABLE: no sdkbad device is "
                               "attached"));
  EXPECT_THAT(log, HasSubstr("sdktest_failing: unload function ran after 1 hook(s)"));
  EXPECT_EQ(log.find("unload function ran"), log.rfind("unload function ran")) << log;
}

TEST(SdkItem, ReadsEveryDtypeOfAZeroDimCpuTensor) {
  api_slot() = tsr_runtime_api_get();
  auto one = [](auto value, tsr_dtype dtype) {
    return Tensor::from_host(std::vector<decltype(value)>{value}, {}, dtype);
  };
  EXPECT_EQ(item(one(uint8_t{1}, TSR_DTYPE_BOOL)).c.kind, TSR_SCALAR_BOOL);
  EXPECT_TRUE(item<bool>(one(uint8_t{1}, TSR_DTYPE_BOOL)));
  EXPECT_EQ(item<int64_t>(one(uint8_t{250}, TSR_DTYPE_UINT8)), 250);
  EXPECT_EQ(item<int64_t>(one(int8_t{-128}, TSR_DTYPE_INT8)), -128);
  EXPECT_EQ(item<int64_t>(one(int16_t{-30000}, TSR_DTYPE_INT16)), -30000);
  EXPECT_EQ(item<int64_t>(one(int32_t{-2000000000}, TSR_DTYPE_INT32)), -2000000000);
  const int64_t big = (int64_t{1} << 62) + 1;  // not a double: read as an int
  EXPECT_EQ(item(one(big, TSR_DTYPE_INT64)).c.kind, TSR_SCALAR_INT);
  EXPECT_EQ(item<int64_t>(one(big, TSR_DTYPE_INT64)), big);
  EXPECT_EQ(item<double>(one(uint16_t{0x3E00}, TSR_DTYPE_FLOAT16)), 1.5);  // half 1.5
  EXPECT_EQ(item<double>(one(uint16_t{0xC040}, TSR_DTYPE_BFLOAT16)), -3.0);
  EXPECT_EQ(item(one(0.1f, TSR_DTYPE_FLOAT32)).c.kind, TSR_SCALAR_DOUBLE);
  EXPECT_EQ(item<float>(one(0.1f, TSR_DTYPE_FLOAT32)), 0.1f);
  EXPECT_EQ(item<double>(one(-0.1, TSR_DTYPE_FLOAT64)), -0.1);
  EXPECT_TRUE(std::isnan(item<double>(one(std::nanf(""), TSR_DTYPE_FLOAT32))));
  EXPECT_EQ(item<int32_t>(one(-2.75, TSR_DTYPE_FLOAT64)), -2);  // truncates, as a cast
  EXPECT_FALSE(item<bool>(one(0.0, TSR_DTYPE_FLOAT64)));
  // Any one-element tensor, a strided view's element 0 included.
  EXPECT_EQ(item<double>(Tensor::from_host<double>({4}, {1, 1, 1}, TSR_DTYPE_FLOAT64)), 4);
  Tensor row = Tensor::from_host<float>({1, 2, 3, 4}, {4}, TSR_DTYPE_FLOAT32);
  Tensor last = call1(find_op("select.int"), row, int64_t{0}, int64_t{3});
  EXPECT_EQ(last.dim(), 0);
  EXPECT_EQ(item<float>(last), 4.0f);
}

TEST(SdkItem, RefusesWhatHasNoSingleValue) {
  api_slot() = tsr_runtime_api_get();
  EXPECT_THAT(ErrorOf([] { item(Tensor(), "op: argument 'x'"); }),
              HasSubstr("op: argument 'x': expected a tensor with one element, got an undefined "
                        "tensor"));
  EXPECT_THAT(ErrorOf([] {
                item(Tensor::from_host<float>({1, 2, 3, 4, 5, 6}, {2, 3}, TSR_DTYPE_FLOAT32));
              }),
              HasSubstr("sdk::item: expected a tensor with one element (0-dim), got one of shape "
                        "[2, 3] with 6 elements"));
  EXPECT_THAT(ErrorOf([] { item(Tensor::empty({0}, TSR_DTYPE_FLOAT32)); }),
              HasSubstr("got one of shape [0] with 0 elements"));
  EXPECT_THAT(ErrorOf([] {
                item(Tensor::empty({}, TSR_DTYPE_FLOAT32, {TSR_DEVICE_META, 0}));
              }),
              HasSubstr("expected a tensor with a value, got a meta tensor"));
}

// A device tensor's value comes through the device's copy functions (its memory is scrambled:
// a direct read would be garbage).
TEST_F(LibraryTest, ItemReadsADeviceTensorThroughItsCopies) {
  Tensor t = OnDevice({-6.5f}, {});
  float raw;
  std::memcpy(&raw, t.data_ptr(), sizeof raw);
  EXPECT_NE(raw, -6.5f);
  EXPECT_EQ(item<float>(t), -6.5f);
  EXPECT_EQ(item<int64_t>(Tensor::from_host<int64_t>({-3}, {}, TSR_DTYPE_INT64, sdkdev_)), -3);
}

// PyTorch's rule: a 0-dim CPU tensor joins tensors of any device, so the device's mul.Tensor
// receives it as it is, on the CPU; the kernel reads it with sdk::item, as it reads a 0-dim
// device tensor.
TEST_F(LibraryTest, DeviceKernelReceivesAZeroDimCpuTensor) {
  Tensor a = OnDevice({1, 2, 3}, {3});
  for (tsr_device where : {kCpu, sdkdev_}) {
    SCOPED_TRACE(where.type);
    Tensor k = Tensor::from_host<float>({2.5f}, {}, TSR_DTYPE_FLOAT32, where);
    Tensor r = a * k;
    EXPECT_EQ(r.device().type, TSR_DEVICE_PRIVATEUSE2);
    EXPECT_THAT(r.to_vector<float>(), ElementsAre(2.5f, 5, 7.5f));
    r = k * a;  // the 0-dim tensor first: it is self, and the call still runs on the device
    EXPECT_EQ(r.device().type, TSR_DEVICE_PRIVATEUSE2);
    EXPECT_THAT(r.to_vector<float>(), ElementsAre(2.5f, 5, 7.5f));
  }
  // A 1-element CPU tensor that is not 0-dim is refused by the device rule before any kernel.
  EXPECT_THAT(
      ErrorOf([&] { Tensor r = a * Tensor::from_host<float>({2}, {1}, TSR_DTYPE_FLOAT32); }),
      HasSubstr("expected all tensors to be on the same device"));
}

// Last: unloading runs the unload function once the plugin's last tensor is gone.
TEST_F(LibraryTest, UnloadRunsTheUnloadFunctionAfterTheLastTensor) {
  Tensor t = OnDevice({1}, {1});
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(tsr_plugin_unload(to_c("sdktest")), nullptr);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "a tensor of the device is alive";
  ::testing::internal::CaptureStderr();
  t = Tensor();
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("sdktest: unload function ran after 1 hook(s)"));
}

}  // namespace
}  // namespace sdk
}  // namespace tessera
