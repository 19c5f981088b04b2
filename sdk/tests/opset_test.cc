// The generated op-set headers in C++: the schema of an op is found at compile time, and the
// constexpr table is the C table.
#include "tessera/opset/opset.h"

#include <iterator>
#include <string_view>
#include <type_traits>

#include "gtest/gtest.h"
#include "tessera/opset/calls.h"
#include "tessera/opset/v1_0.h"

namespace {

using namespace std::string_view_literals;
namespace v1_0 = tessera::opset::v1_0;

static_assert(v1_0::kMajor == 1 && v1_0::kMinor == 0);
static_assert(v1_0::FindSchema("add.Tensor") ==
              "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"sv);
static_assert(v1_0::FindSchema("abs") == TSR_OP_V1_0_abs);
static_assert(v1_0::FindSchema("no_such_op").empty());
static_assert(std::size(v1_0::kOps) == TSR_OP_SET_V1_0_SIZE);

// The typed calls compile as C++ too (tessera_typed_calls_test runs them from C), with the
// mapping's parameter types.
static_assert(std::is_same_v<decltype(&tsr_aten_add_Tensor),
                             tsr_error* (*)(tsr_tensor*, tsr_tensor*, tsr_scalar, tsr_tensor**)>);
static_assert(std::is_same_v<decltype(&tsr_aten_sum_dim_IntList),
                             tsr_error* (*)(tsr_tensor*, const int64_t*, size_t, int32_t,
                                            const tsr_dtype*, tsr_tensor**)>);

TEST(OpSetHeaders, ConstexprTableIsTheCTable) {
  for (size_t i = 0; i < TSR_OP_SET_V1_0_SIZE; ++i) {
    EXPECT_EQ(v1_0::kOps[i].name, tsr_op_set_v1_0[i].name);
    EXPECT_EQ(v1_0::kOps[i].schema, tsr_op_set_v1_0[i].schema);
    EXPECT_EQ(v1_0::FindSchema(tsr_op_set_v1_0[i].name), tsr_op_set_v1_0[i].schema);
  }
}

}  // namespace
