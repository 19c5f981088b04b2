// Regression tests for what the fuzz targets (fuzz/) found, one test per minimised input, in
// the ordinary GoogleTest build (tessera_fuzz_regression_test), so that they run in every
// build, not only with clang.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/tensor.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/schema.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

// schema_parser, input `g(int[92233720368547758083] x=1, ...`, minimised: a fixed list size
// beyond int64 saturates to INT64_MAX, and the default `1` is then broadcast into a list of
// that many elements: std::bad_array_new_length escapes ParseSchema (std::terminate) from
// NormalizeArgumentValue (dispatcher/schema.cc) called by Parser::ParseDefault.
TEST(SchemaFuzzRegression, OversizedFixedListSizeIsAnError) {
  for (const char* text :
       {"f(int[92233720368547758083] x=1) -> ()", "f(int[9223372036854775807] x=1) -> ()"}) {
    absl::StatusOr<FunctionSchema> schema = ParseSchema(text);
    EXPECT_FALSE(schema.ok()) << text;
  }
}

// schema_parser (the print/parse identity oracle), the seed `f(Device d="cpu", ...)`: the
// canonical form prints the default bare (`Device d=cpu`), which does not parse ("unknown
// default value, found identifier 'cpu'").
TEST(SchemaFuzzRegression, DeviceDefaultPrintsTextThatParses) {
  absl::StatusOr<FunctionSchema> first = ParseSchema(R"(f(Device d="cpu") -> Tensor)");
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<FunctionSchema> again = ParseSchema(first->ToString());
  ASSERT_TRUE(again.ok()) << first->ToString() << ": " << again.status();
  EXPECT_EQ(again->ToString(), first->ToString());
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// CallGlobal: `name` on the global registry (core ops only: no plugin is loaded here).
absl::Status CallGlobal(std::string_view name, Stack stack) {
  absl::StatusOr<OperatorHandle> op = OpRegistry::Global().Find(name);
  if (!op.ok()) return op.status();
  return OpRegistry::Global().Call(*op, &stack);
}

// op_call (ints beyond int32), minimised: full.out(size=[0, 2, INT64_MAX - 1], 0,
// out=float32[1]): the element count is 0, so the numel overflow check passes, but the
// strides multiply the sizes unchecked in ContiguousStrides (core/shape.cc:37, "9223372036854775806
// * 2 cannot be represented"), called by TensorImpl::ResizeOutput (core/tensor.cc:98) from
// ConstantOutK (dispatcher/ops/factory_ops.cc). UBSan aborts (build-asan); other builds go
// on with a wrapped size.
TEST(OpCallFuzzRegression, FullOutWithEmptyShapeOfHugeStridesIsAnError) {
  absl::StatusOr<Tensor> out = Empty({1}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(
      CallGlobal("full.out", {Value(IntList{0, 2, kMax - 1}), Value(Scalar(int64_t{0})), *out})
          .ok());
}

// op_call (ints beyond int32): slice.Tensor with a step near INT64_MAX overflows in
// Slice (core/views.cc:238-240: `e - s + step - 1` and `strides[d] *= step`, "2 *
// 9179743415464624127 cannot be represented"). PyTorch gives one element.
TEST(OpCallFuzzRegression, SliceWithHugeStepKeepsOneElement) {
  absl::StatusOr<Tensor> self = Empty({3, 2}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  ASSERT_TRUE(self.ok()) << self.status();
  absl::StatusOr<OperatorHandle> op = OpRegistry::Global().Find("slice.Tensor");
  ASSERT_TRUE(op.ok()) << op.status();
  Stack stack{*self, Value(0), Value(std::nullopt), Value(std::nullopt), Value(kMax)};
  ASSERT_TRUE(OpRegistry::Global().Call(*op, &stack).ok());
  EXPECT_EQ(stack[0].tensor().sizes()[0], 1);
}

// op_call, minimised: linear.out(input=float32[] (0-dim), weight=float32[2, 2], None,
// out=float32[2]) crashed the CPU plugin (SEGV in linear, plugins/cpu/nn.cc: shape.back() of
// an empty shape). The plugin implements only the functional linear; the dispatcher derives
// linear.out from it (OutFromFunctional, dispatcher/variants.cc) and validated only calls of a
// backend's own kernel, so the functional kernel saw inputs linear's Meta refuses. The same
// for in-place forms derived from a functional kernel. Here with a kernel that counts calls.
absl::Status CountingLinear(void* calls, const OperatorHandle&, Stack* stack) {
  ++*static_cast<int*>(calls);
  stack->clear();
  stack->push_back(*Empty({2}, ScalarType::kFloat32, Device(DeviceType::kCPU)));
  return absl::OkStatus();
}

absl::Status CountingSameShape(void* calls, const OperatorHandle&, Stack* stack) {
  ++*static_cast<int*>(calls);
  const Tensor self = (*stack)[0].tensor();
  stack->clear();
  stack->push_back(*Empty(self.sizes(), self.dtype(), self.device()));
  return absl::OkStatus();
}

TEST(OpCallFuzzRegression, DerivedFormsRunTheMetaChecksBeforeTheFunctionalKernel) {
  OpRegistry registry;
  ASSERT_TRUE(DefineCoreOps(registry).ok());
  int calls = 0;
  std::vector<RegistrationHandle> handles;
  KernelFunction linear;
  linear.fn = &CountingLinear;
  linear.context = &calls;
  linear.name = "test::linear";
  handles.push_back(*registry.Impl("linear", DispatchKey::kCPU, std::move(linear)));
  const Device cpu(DeviceType::kCPU);
  Stack out_call{*Empty({}, ScalarType::kFloat32, cpu), *Empty({2, 2}, ScalarType::kFloat32, cpu),
                 Value(std::nullopt), *Empty({2}, ScalarType::kFloat32, cpu)};
  absl::Status status = registry.Call(*registry.Find("linear.out"), &out_call);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot be multiplied"), std::string_view::npos) << status;
  EXPECT_EQ(calls, 0);

  // An in-place form derived from a functional kernel: tril_ of a 1-D tensor, which tril's
  // Meta refuses (tril needs at least 2 dimensions).
  KernelFunction tril;
  tril.fn = &CountingSameShape;
  tril.context = &calls;
  tril.name = "test::tril";
  handles.push_back(*registry.Impl("tril", DispatchKey::kCPU, std::move(tril)));
  Stack inplace_call{*Empty({2}, ScalarType::kFloat32, cpu)};
  absl::StatusOr<OperatorHandle> tril_ = registry.Find("tril_");
  ASSERT_TRUE(tril_.ok()) << tril_.status();
  EXPECT_FALSE(registry.Call(*tril_, &inplace_call).ok());
  EXPECT_EQ(calls, 0);
}

// CallMeta: `name` on meta tensors of the global registry; the stack holds its results.
absl::Status CallMeta(std::string_view name, Stack* stack) {
  absl::StatusOr<OperatorHandle> op = OpRegistry::Global().Find(name);
  if (!op.ok()) return op.status();
  return OpRegistry::Global().Call(*op, stack);
}

Tensor MetaTensor(std::initializer_list<int64_t> sizes) {
  return *Empty(sizes, ScalarType::kFloat32, Device(DeviceType::kMeta));
}

// op_call (ints beyond int32): max_pool2d_with_indices in ceil_mode with a stride
// of INT64_MAX: PooledSize (dispatcher/ops/nn_ops.cc) added stride - 1 to the span in int64
// ("9223372036854775807 + 9223372036854775807 cannot be represented"). In 128 bits there is
// one window per dim, as PyTorch's formula gives where it does not overflow.
TEST(OpCallFuzzRegression, PoolingInCeilModeWithAHugeStrideHasOneWindow) {
  Stack stack{MetaTensor({1, 2, 4, 5}), Value(IntList{2}), Value(IntList{kMax}),
              Value(IntList{0}),        Value(IntList{1}), Value(true)};
  ASSERT_TRUE(CallMeta("max_pool2d_with_indices", &stack).ok());
  EXPECT_EQ(stack[0].tensor().sizes(), (DimVector{1, 2, 1, 1}));
}

// Windows whose arithmetic passes int64 (Note [Window arithmetic in 128 bits]): refused with
// the sizes named, never computed with a wrapped size.
TEST(OpCallFuzzRegression, WindowsBeyondInt64AreRefused) {
  auto message_of = [](std::string_view name, Stack stack,
                       absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
    const absl::Status status = CallMeta(name, &stack);
    EXPECT_EQ(status.code(), code) << name << ": " << status;
    return std::string(status.message());
  };
  // A padded input of 4 + 2 * (2^62 - 1).
  EXPECT_THAT(message_of("max_pool2d_with_indices",
                         {MetaTensor({1, 1, 4, 4}), Value(IntList{kMax}), Value(IntList{1}),
                          Value(IntList{(int64_t{1} << 62) - 1}), Value(IntList{1}), Value(false)}),
              testing::HasSubstr("input size 4 + 2 * padding 4611686018427387903"));
  // A kernel's extent of 2^62 * (3 - 1) + 1.
  EXPECT_THAT(message_of("max_pool2d_with_indices",
                         {MetaTensor({1, 1, 4, 4}), Value(IntList{3}), Value(IntList{1}),
                          Value(IntList{0}), Value(IntList{int64_t{1} << 62}), Value(false)}),
              testing::HasSubstr("overflows int64"));
  // Convolution: padding 2^62 on a 5-wide input, and a transposed one spanning 2 * INT64_MAX.
  const Stack conv{MetaTensor({1, 1, 5}),
                   MetaTensor({1, 1, 3}),
                   Value(std::nullopt),
                   Value(IntList{1}),
                   Value(IntList{int64_t{1} << 62}),
                   Value(IntList{1}),
                   Value(false),
                   Value(IntList{0}),
                   Value(int64_t{1})};
  EXPECT_THAT(message_of("convolution", conv),
              testing::HasSubstr("input size 5 + 2 * padding 4611686018427387904"));
  Stack transposed = conv;
  transposed[3] = Value(IntList{kMax});
  transposed[4] = Value(IntList{0});
  transposed[6] = Value(true);
  EXPECT_THAT(message_of("convolution", transposed),
              testing::HasSubstr("(input size 5 - 1) * stride 9223372036854775807"));
  // A transposed convolution with an empty weight takes any groups: its output channels,
  // weight.size(1) * groups, pass int64.
  Stack groups{MetaTensor({1, 0, 5}), MetaTensor({0, 4, 3}), Value(std::nullopt),
               Value(IntList{1}),     Value(IntList{0}),     Value(IntList{1}),
               Value(true),           Value(IntList{0}),     Value(kMax / 2)};
  EXPECT_THAT(message_of("convolution", groups, absl::StatusCode::kOutOfRange),
              testing::HasSubstr("output channels (4 * 4611686018427387903) overflows int64"));
}

// The op_meta fuzz target (Meta tensors of any shape) found shape arithmetic that overflowed
// int64 where a tensor's sizes or strides are large: each case now gives an error or a view it
// can compute, never a wrapped size. On Meta tensors: no kernel runs.
TEST(OpMetaFuzzRegression, ShapeArithmeticOfHugeTensorsIsChecked) {
  auto status_of = [](std::string_view name, Stack stack) { return CallMeta(name, &stack); };
  constexpr int64_t kHalf = int64_t{1} << 62;
  // A view of strides near INT64_MAX: a chunk's row (3 * 2^62) is no stride (flatten copies);
  // a new dim of one element takes any stride, so [3] of stride 2^62 views as [3, 1].
  EXPECT_FALSE(ComputeViewStrides({2, 3}, {1, kHalf}, {6}).has_value());
  const std::optional<DimVector> column = ComputeViewStrides({3}, {kHalf}, {3, 1});
  ASSERT_TRUE(column.has_value());
  EXPECT_EQ((*column)[0], kHalf);
  // matmul: a batch of 2^62 * 2 matrices (empty ones).
  const Tensor a = *Empty({kHalf, 1, 0, 2}, ScalarType::kFloat32, Device(DeviceType::kMeta));
  EXPECT_EQ(status_of("matmul", {a, MetaTensor({2, 2, 3})}).code(), absl::StatusCode::kOutOfRange);
  // cat: dims of empty tensors that sum past int64.
  const Tensor wide = *Empty({kMax, 0}, ScalarType::kFloat32, Device(DeviceType::kMeta));
  EXPECT_EQ(
      status_of("cat", {Value(std::vector<Tensor>{wide, MetaTensor({1, 0})}), Value(0)}).code(),
      absl::StatusCode::kOutOfRange);
  // flatten: 2^62 * 4 in an empty tensor.
  const Tensor empty =
      *EmptyStrided({0, kHalf, 4}, {1, 4, 1}, ScalarType::kFloat32, Device(DeviceType::kMeta));
  EXPECT_EQ(status_of("flatten.using_ints", {empty, Value(1), Value(2)}).code(),
            absl::StatusCode::kOutOfRange);
  // convolution with a kernel of size 0: the output (INT64_MAX + 1) / 1 + 1 passes int64
  // (uint8: a float32 tensor of INT64_MAX elements has more bytes than int64 counts).
  const Device meta(DeviceType::kMeta);
  EXPECT_THAT(
      status_of("convolution", {*Empty({1, 1, kMax}, ScalarType::kUInt8, meta),
                                *Empty({1, 1, 0}, ScalarType::kUInt8, meta), Value(std::nullopt),
                                Value(IntList{1}), Value(IntList{0}), Value(IntList{2}),
                                Value(false), Value(IntList{0}), Value(int64_t{1})})
          .message(),
      testing::HasSubstr("overflows int64"));
  // Convolution groups: an empty weight [2^32, 2^32, 0] takes groups 2^32, whose input
  // channels 2^32 * 2^32 pass int64.
  const int64_t k32 = int64_t{1} << 32;
  EXPECT_EQ(status_of("convolution",
                      {MetaTensor({1, 4, 5}), *Empty({k32, k32, 0}, ScalarType::kFloat32, meta),
                       Value(std::nullopt), Value(IntList{1}), Value(IntList{0}), Value(IntList{1}),
                       Value(false), Value(IntList{0}), Value(k32)})
                .code(),
            absl::StatusCode::kOutOfRange);
  // A transposed convolution whose output fits is taken whatever (input - 1) * stride is:
  // input 2, stride 2^62, kernel 2^62 + 1, padding 2^61 gives 2^62 + 1 (as PyTorch).
  Stack wide_transposed{*Empty({1, 1, 2}, ScalarType::kUInt8, meta),
                        *Empty({1, 1, kHalf + 1}, ScalarType::kUInt8, meta),
                        Value(std::nullopt),
                        Value(IntList{kHalf}),
                        Value(IntList{kHalf / 2}),
                        Value(IntList{1}),
                        Value(true),
                        Value(IntList{0}),
                        Value(int64_t{1})};
  ASSERT_TRUE(CallMeta("convolution", &wide_transposed).ok());
  EXPECT_EQ(wide_transposed[0].tensor().sizes(), (DimVector{1, 1, kHalf + 1}));
  // scatter: a 0-dim src counts as [1]; it was read past its sizes beside a 1-D index.
  const Tensor index = *Empty({2}, ScalarType::kInt64, Device(DeviceType::kMeta));
  EXPECT_EQ(status_of("scatter.src", {MetaTensor({}), Value(0), index, MetaTensor({})}).code(),
            absl::StatusCode::kInvalidArgument);
  const Tensor one = *Empty({1}, ScalarType::kInt64, Device(DeviceType::kMeta));
  EXPECT_TRUE(status_of("scatter.src", {MetaTensor({}), Value(0), one, MetaTensor({})}).ok());
}

// op_meta, minimised: eye.m(1, INT64_MAX, dtype=uint8, device=meta) formed its diagonal's
// stride m + 1 in int64 (dispatcher/ops/factory_ops.cc, "9223372036854775807 + 1 cannot be
// represented"); a diagonal of one element takes any stride.
TEST(OpMetaFuzzRegression, EyeOfOneRowAndInt64MaxColumns) {
  for (const auto& [n, m] : {std::pair{int64_t{1}, kMax}, std::pair{kMax, int64_t{1}}}) {
    Stack stack{Value(n),
                Value(m),
                Value(ScalarType::kUInt8),
                Value(std::nullopt),
                Value(Device(DeviceType::kMeta)),
                Value(std::nullopt)};
    const absl::Status status = CallMeta("eye.m", &stack);
    ASSERT_TRUE(status.ok()) << n << " x " << m << ": " << status;
    EXPECT_EQ(stack[0].tensor().sizes(), (DimVector{n, m}));
  }
}

// op_meta, seed 1 (scripts/test.sh): _adaptive_avg_pool2d of a meta [1, 1, 2, 2] to [1, 2^31]
// built its host windows as long as the output's dims (dispatcher/ops/pooling_composites.cc):
// 16 GiB for a meta output that holds nothing. On the Meta device adaptive pooling and
// upsampling (forward and backward) now give the shape without host tables.
TEST(OpMetaFuzzRegression, HugeMetaOutputsBuildNoHostTables) {
  const int64_t wide = int64_t{1} << 31;
  Stack avg{MetaTensor({1, 1, 2, 2}), Value(IntList{1, wide})};
  ASSERT_TRUE(CallMeta("_adaptive_avg_pool2d", &avg).ok());
  EXPECT_EQ(avg[0].tensor().sizes(), (DimVector{1, 1, 1, wide}));
  Stack max{MetaTensor({1, 1, 2, 2}), Value(IntList{wide, 1})};
  ASSERT_TRUE(CallMeta("adaptive_max_pool2d", &max).ok());
  EXPECT_EQ(max[1].tensor().sizes(), (DimVector{1, 1, wide, 1}));
  EXPECT_EQ(max[1].tensor().dtype(), ScalarType::kInt64);
  Stack up{MetaTensor({1, 1, 2, 2}), Value(IntList{2, wide}), Value(std::nullopt),
           Value(std::nullopt)};
  ASSERT_TRUE(CallMeta("upsample_nearest2d", &up).ok());
  EXPECT_EQ(up[0].tensor().sizes(), (DimVector{1, 1, 2, wide}));
  Stack back{*Empty({1, 1, 2, wide}, ScalarType::kFloat32, Device(DeviceType::kMeta)),
             Value(IntList{2, wide}), Value(IntList{1, 1, 2, 2}), Value(std::nullopt),
             Value(std::nullopt)};
  ASSERT_TRUE(CallMeta("upsample_nearest2d_backward", &back).ok());
  EXPECT_EQ(back[0].tensor().sizes(), (DimVector{1, 1, 2, 2}));
}

// op_meta, seed 1 (scripts/test.sh): isin.Tensor_Tensor_out of a huge Meta tensor and a few
// test elements ran past libFuzzer's 10 s: the pairwise way compares in blocks of 2^24 pairs
// (dispatcher/ops/isin_ops.cc), 2^21 blocks of calls here, and the sorting way adds n + m,
// which may not fit in int64. On the Meta device isin now gives the shape without either.
TEST(OpMetaFuzzRegression, IsinOfHugeMetaTensorsComparesNothing) {
  const int64_t big = int64_t{1} << 40;
  const Tensor out = *Empty({0}, ScalarType::kBool, Device(DeviceType::kMeta));
  Stack few{MetaTensor({big, 32}), MetaTensor({3}), Value(false), Value(false), Value(out)};
  ASSERT_TRUE(CallMeta("isin.Tensor_Tensor_out", &few).ok());
  EXPECT_EQ(few[0].tensor().sizes(), (DimVector{big, 32}));
  EXPECT_EQ(few[0].tensor().dtype(), ScalarType::kBool);
  EXPECT_EQ(few[0].tensor().device(), Device(DeviceType::kMeta));
  // uint8, so that their bytes fit as their element counts add past int64.
  const Device meta(DeviceType::kMeta);
  Stack many{*Empty({kMax / 2}, ScalarType::kUInt8, meta),
             *Empty({kMax / 2 + 2}, ScalarType::kUInt8, meta), Value(false), Value(true)};
  ASSERT_TRUE(CallMeta("isin.Tensor_Tensor", &many).ok());
  EXPECT_EQ(many[0].tensor().sizes(), (DimVector{kMax / 2}));
  // One device for both, a 0-dim CPU tensor included (the dispatcher lets those through; ATen's
  // isin refuses them), either way round, empty or not.
  const Tensor cpu_scalar = *Empty({}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  for (const Tensor& meta : {MetaTensor({big}), MetaTensor({0})}) {
    for (bool scalar_first : {false, true}) {
      Stack mixed{scalar_first ? cpu_scalar : meta, scalar_first ? meta : cpu_scalar, Value(false),
                  Value(false)};
      const absl::Status status = CallMeta("isin.Tensor_Tensor", &mixed);
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
      EXPECT_THAT(
          status.message(),
          ::testing::HasSubstr(scalar_first ? "found elements on cpu and test_elements on meta"
                                            : "found elements on meta and test_elements on cpu"));
    }
  }
}

// op_meta, seed 1 (scripts/test.sh, 2026-12-07): index.Tensor with Meta indices whose shapes
// broadcast past int64 ([n, 1] and [1, n]) multiplied the broadcast shape unchecked
// (dispatcher/ops/advanced_index_ops.cc: "2 * 5172384172035014655 cannot be represented").
TEST(OpMetaFuzzRegression, IndicesBroadcastPastInt64AreRefused) {
  const Device meta(DeviceType::kMeta);
  const int64_t n = int64_t{1} << 32;
  const Tensor rows = *Empty({n, 1}, ScalarType::kInt64, meta);
  const Tensor cols = *Empty({1, n}, ScalarType::kInt64, meta);
  Stack stack{MetaTensor({4, 4}), Value(std::vector<Tensor>{rows, cols})};
  const absl::Status status = CallMeta("index.Tensor", &stack);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_THAT(status.message(), ::testing::HasSubstr("the indices broadcast to [4294967296, "
                                                     "4294967296]: the number of elements"));
}

}  // namespace
}  // namespace tessera
