// The SDK's check of a typed kernel's parameters against its op's schema (signature.hpp): at
// compile time against the op set, and at registration against the runtime's op listing.
#include "tessera/sdk/signature.hpp"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/c/loader.h"
#include "tessera/c/op.h"
#include "tessera/opset/opset.h"

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

constexpr std::string_view kAdd = opset::v1_0::FindSchema("add.Tensor");
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
                  "impl<kernel>(\"badsig::scale\"): parameter 1 does not match argument 'factor' "
                  "of type float (see tessera/sdk/signature.hpp for the C++ type of each schema "
                  "type); the op's schema is badsig::scale(Tensor self, float factor) -> Tensor"));
}

}  // namespace
}  // namespace sdk
}  // namespace tessera
