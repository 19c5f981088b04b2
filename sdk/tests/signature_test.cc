// The SDK's check of a typed kernel's parameters against its op's schema (signature.hpp): at
// compile time against the op set, and at registration against the runtime's op listing.
#include "tessera/sdk/signature.hpp"

#include <cstddef>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/c/loader.h"
#include "tessera/c/op.h"
#include "tessera/opset/opset.h"
#include "tessera/opset/v1_0.h"
#include "tessera/sdk/runtime.hpp"

namespace tessera {
namespace sdk {
namespace {

using signature::ArgKind;
using signature::KindOfType;
using signature::Mismatch;

Tensor AddGood(const Tensor&, const Tensor&, Scalar) { return Tensor(); }
Tensor AddNoAlpha(const Tensor&, const Tensor&) { return Tensor(); }
Tensor AddIntAlpha(const Tensor&, const Tensor&, int64_t) { return Tensor(); }
void AddNoReturn(const Tensor&, const Tensor&, Scalar) {}
Tensor SumGood(const Tensor&, std::optional<tsr_dtype>) { return Tensor(); }
Tensor SumDimGood(const Tensor&, std::optional<IntSpan>, bool, std::optional<tsr_dtype>) {
  return Tensor();
}
Tensor SumDimNotOptional(const Tensor&, IntSpan, bool, std::optional<tsr_dtype>) {
  return Tensor();
}
std::tuple<Tensor, Tensor> MaxDimGood(const Tensor&, int64_t, bool) { return {}; }
Tensor MaxDimOneReturn(const Tensor&, int64_t, bool) { return Tensor(); }

// A leading KernelContext is not a schema parameter; TensorView stands for a Tensor, also as a
// return (of an out= op) and inside std::optional.
TensorView AddOutViews(const KernelContext&, TensorView, TensorView, Scalar, TensorView) {
  return TensorView();
}
TensorView AddOutNoContext(TensorView, TensorView, Scalar, TensorView) { return TensorView(); }
TensorView AddOutContextLast(TensorView, TensorView, Scalar, TensorView, const KernelContext&) {
  return TensorView();
}
Tensor ClampTensorOut(const KernelContext&, TensorView, std::optional<TensorView>,
                      std::optional<TensorView>, TensorView) {
  return Tensor();
}
std::tuple<TensorView, Tensor> MaxDimMax(const KernelContext&, TensorView, int64_t, bool,
                                         TensorView, TensorView) {
  return {};
}

constexpr std::string_view kAdd = opset::v1_0::FindSchema("add.Tensor");
constexpr std::string_view kAddOut = opset::v1_0::FindSchema("add.out");
static_assert(Mismatch<&AddOutViews>(kAddOut) == -1);
static_assert(Mismatch<&AddOutNoContext>(kAddOut) == -1);
static_assert(Mismatch<&AddOutContextLast>(kAddOut) == 5);  // only a first one is skipped
static_assert(Mismatch<&ClampTensorOut>(opset::v1_0::FindSchema("clamp.Tensor_out")) == -1);
static_assert(Mismatch<&ClampTensorOut>(opset::v1_0::FindSchema("clamp.out")) == 1);
static_assert(Mismatch<&MaxDimMax>(opset::v1_0::FindSchema("max.dim_max")) == -1);
static_assert(Mismatch<&MaxDimMax>(opset::v1_0::FindSchema("max.dim")) == 5);
constexpr std::string_view kSum = opset::v1_0::FindSchema("sum");
constexpr std::string_view kSumDim = opset::v1_0::FindSchema("sum.dim_IntList");
constexpr std::string_view kMaxDim = opset::v1_0::FindSchema("max.dim");

// Everything below is evaluated by the compiler.
static_assert(Mismatch<&AddGood>(kAdd) == -1);
static_assert(Mismatch<&AddNoAlpha>(kAdd) == 2);   // too few parameters: the count
static_assert(Mismatch<&AddIntAlpha>(kAdd) == 2);  // alpha is a Scalar, not an int
static_assert(Mismatch<&AddNoReturn>(kAdd) == -2);
static_assert(Mismatch<&SumGood>(kSum) == -1);
static_assert(Mismatch<&SumDimGood>(kSumDim) == -1);
static_assert(Mismatch<&SumDimNotOptional>(kSumDim) == 1);
static_assert(Mismatch<&MaxDimGood>(kMaxDim) == -1);
static_assert(Mismatch<&MaxDimOneReturn>(kMaxDim) == -2);
static_assert(Mismatch<&AddGood>(kSum) == 1);  // the wrong op
static_assert(KindOfType("Tensor(a!)") == ArgKind{TSR_VALUE_TENSOR, false});
static_assert(KindOfType("int[2]") == ArgKind{TSR_VALUE_INT_LIST, false});
static_assert(KindOfType("int[1]?") == ArgKind{TSR_VALUE_INT_LIST, true});
static_assert(KindOfType("Tensor?") == ArgKind{TSR_VALUE_TENSOR, true});
static_assert(KindOfType("Tensor[]").kind == -1);  // needs a boxed kernel
static_assert(KindOfType("ScalarType?") == ArgKind{TSR_VALUE_DTYPE, true});
static_assert(KindOfType("bool[]") == ArgKind{TSR_VALUE_BOOL_LIST, false});
static_assert(KindOfType("bool[3]?") == ArgKind{TSR_VALUE_BOOL_LIST, true});
static_assert(KindOfType("float[]").kind == -1);  // needs a boxed kernel

// The constant-expression reading of every op-set schema agrees with the runtime's own parser
// (its op listing): the same argument count, return count and kind of every argument.
TEST(SdkSignature, TheCompileTimeReadingOfEverySchemaAgreesWithTheRuntime) {
  for (const opset::OpSchema& op : opset::v1_0::kOps) {
    SCOPED_TRACE(std::string(op.name));
    const tsr_op* handle = nullptr;
    tsr_error* error = tsr_op_find(tsr_string{op.name.data(), op.name.size()}, &handle);
    ASSERT_EQ(error, nullptr);
    tsr_op_info info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(tsr_op_describe(handle, &info), nullptr);
    const signature::SchemaText text(op.schema);
    ASSERT_EQ(text.ArgumentCount(), info.num_arguments);
    EXPECT_EQ(text.ReturnCount(), info.num_returns);
    for (size_t i = 0; i < text.ArgumentCount(); ++i) {
      tsr_arg_info arg{};
      arg.struct_size = sizeof arg;
      ASSERT_EQ(tsr_op_argument(handle, i, &arg), nullptr);
      const ArgKind expected = KindOfType(std::string_view(arg.type.data, arg.type.size));
      EXPECT_TRUE(text.ArgumentKind(i) == expected) << "argument " << i;
      if (expected.kind >= 0) {
        EXPECT_EQ(expected.kind, arg.kind) << "argument " << i;
        EXPECT_EQ(expected.optional, arg.optional != 0) << "argument " << i;
      }
    }
  }
}

// A plugin whose kernel does not follow its own op's schema is refused at registration, with
// the parameter named, instead of crashing at the first call.
TEST(SdkSignature, AKernelWithTheWrongSignatureRefusesThePluginLoad) {
  const std::string path = TESSERA_BAD_SIGNATURE_PLUGIN;
  const tsr_load_report* report = nullptr;
  tsr_error* error = tsr_plugin_load(tsr_string{path.data(), path.size()}, &report);
  ASSERT_NE(error, nullptr);
  tsr_error_release(error);
  ASSERT_NE(report, nullptr);
  EXPECT_FALSE(report->loaded);
  EXPECT_THAT(std::string(report->reason.data, report->reason.size),
              ::testing::HasSubstr(
                  "impl<kernel>(\"badsig::scale\"): parameter 2 (a KernelContext not counted) "
                  "is int64_t, but argument 'factor' of type float needs double "
                  "(tessera/sdk/signature.hpp maps each schema type); the op's schema is "
                  "badsig::scale(Tensor self, float factor) -> Tensor"));
}

// bool[] for typed kernels (ABI 1.1): sdk::BoolSpan, optional too.
struct MaskSeen {
  std::vector<bool> mask;
  bool has_extra = false;
  std::vector<bool> extra;
};
MaskSeen g_mask_seen;

Tensor MaskKernel(const Tensor& self, BoolSpan mask, std::optional<BoolSpan> extra) {
  g_mask_seen.mask = mask.vec();
  g_mask_seen.has_extra = extra.has_value();
  g_mask_seen.extra = extra ? extra->vec() : std::vector<bool>{};
  return self;
}
Tensor MaskKernelIntList(const Tensor& self, IntSpan, std::optional<BoolSpan>) { return self; }
constexpr std::string_view kMask =
    "sdkbool::mask(Tensor(a) self, bool[] mask, bool[]? extra=None) -> Tensor(a)";
static_assert(Mismatch<&MaskKernel>(kMask) == -1);
static_assert(Mismatch<&MaskKernelIntList>(kMask) == 1);

TEST(SdkBoolList, TypedKernelsReadBoolListsThatEmbeddersPassByPositionOrName) {
  api_slot() = tsr_runtime_api_get();
  tsr_registration* def = nullptr;
  check(tsr_op_define(to_c(kMask), &def));
  tsr_kernel_desc desc = {};
  desc.struct_size = sizeof desc;
  desc.op_name = to_c("sdkbool::mask");
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = &Boxed<&MaskKernel>;
  desc.kernel_name = to_c("sdkbool::mask_kernel");
  tsr_registration* reg = nullptr;
  check(tsr_kernel_register(&desc, &reg));
  const tsr_op* op = tessera::find_op("sdkbool::mask");
  const Tensor t = Tensor::empty({2}, TSR_DTYPE_FLOAT32);

  Tensor out = tessera::call1(op, t, std::vector<bool>{true, false, true});
  EXPECT_EQ(out.get(), t.get());
  EXPECT_EQ(g_mask_seen.mask, std::vector<bool>({true, false, true}));
  EXPECT_FALSE(g_mask_seen.has_extra);
  tessera::call1(op, t, std::vector<bool>{}, tessera::kw("extra", std::vector<bool>{false, true}));
  EXPECT_TRUE(g_mask_seen.mask.empty());
  EXPECT_TRUE(g_mask_seen.has_extra);
  EXPECT_EQ(g_mask_seen.extra, std::vector<bool>({false, true}));
  tessera::call1(op, t, tessera::kw("mask", std::vector<bool>{true}),
                 tessera::kw("extra", std::nullopt));
  EXPECT_EQ(g_mask_seen.mask, std::vector<bool>({true}));
  EXPECT_FALSE(g_mask_seen.has_extra);
  tessera::call1(op, t, std::vector<bool>{false}, tessera::default_arg);
  EXPECT_FALSE(g_mask_seen.has_extra);
  try {
    tessera::call1(op, t, tessera::kw("mask", std::vector<bool>{true}), std::vector<bool>{});
    ADD_FAILURE() << "a positional value after a named one was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("sdkbool::mask: expected only named arguments "
                                               "after the named argument 'mask'"));
  }
  tsr_registration_release(reg);
  tsr_registration_release(def);
}

// A runtime of ABI 1.0 has no bool[] slot: reading one is a clear error, not a NULL call.
TEST(SdkBoolList, ReadingOneFromARuntimeWithoutTheSlotThrowsUnimplemented) {
  tsr_runtime_api old = *tsr_runtime_api_get();
  old.struct_size = offsetof(tsr_runtime_api, stack_push_bool_list);
  old.abi_minor = 0;
  api_slot() = &old;
  try {
    internal::ArgReader<BoolSpan>::read(nullptr, 0);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), TSR_UNIMPLEMENTED);
    EXPECT_STREQ(e.what(),
                 "reading a bool[] argument needs a runtime of ABI 1.1 or newer (this one is 1.0)");
  }
  api_slot() = tsr_runtime_api_get();
}

}  // namespace
}  // namespace sdk
}  // namespace tessera
