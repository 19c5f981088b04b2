// Pointwise ops of the CPU plugin on hand-checked values and edge cases, through the public
// embedding API (functional, out= and in-place forms).
#include <cmath>
#include <limits>

#include "cpu_test_util.hpp"
#include "gmock/gmock.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(CpuPlugin, LoadsByDefaultDiscovery) {
  ensure_runtime();
  Tensor a = f32({1, 2}, {2});
  EXPECT_THAT(values<float>(a + a), ElementsAre(2, 4));
}

TEST(CpuPointwise, AddBroadcastsAndScalesByAlpha) {
  Tensor a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = f32({10, 20, 30}, {3});
  Tensor c = op("add.Tensor", a, b, Scalar(2));
  EXPECT_THAT(shape(c), ElementsAre(2, 3));
  EXPECT_THAT(values<float>(c), ElementsAre(21, 42, 63, 24, 45, 66));
  EXPECT_THAT(values<float>(op("sub.Scalar", a, Scalar(1.5), Scalar(2))),
              ElementsAre(-2, -1, 0, 1, 2, 3));
}

TEST(CpuPointwise, PromotesTypesLikePyTorch) {
  Tensor ints = i32({1, 2, 3}, {3});
  // A 0-dim tensor of a higher category takes part with its own dtype...
  Tensor c = op("add.Tensor", ints, f64({0.5}, {}));
  EXPECT_EQ(c.dtype(), TSR_DTYPE_FLOAT64);
  EXPECT_THAT(values<double>(c), ElementsAre(1.5, 2.5, 3.5));
  // ...of the same category it does not: int32 stays.
  EXPECT_EQ(op("add.Tensor", ints, i64({1}, {})).dtype(), TSR_DTYPE_INT32);
  // A float Scalar counts as float32.
  EXPECT_EQ(op("add.Scalar", ints, Scalar(0.5)).dtype(), TSR_DTYPE_FLOAT32);
  Tensor d = op("mul.Scalar", ints, Scalar(2));
  EXPECT_EQ(d.dtype(), TSR_DTYPE_INT32);
  EXPECT_THAT(values<int32_t>(d), ElementsAre(2, 4, 6));
  EXPECT_THAT(error_of("add.Tensor", ints, ints, Scalar(0.5)),
              HasSubstr("alpha must not be a floating point number"));
  EXPECT_THAT(error_of("add.Tensor", ints, ints, Scalar(true)),
              HasSubstr("boolean alpha only supported for boolean results"));
  EXPECT_THAT(error_of("pow.Tensor_Scalar", ints, Scalar(-1)),
              HasSubstr("integers to negative integer powers are not allowed"));
  EXPECT_THAT(values<float>(op("pow.Tensor_Scalar", f32({2}, {1}), Scalar(-1))), ElementsAre(0.5));
}

TEST(CpuPointwise, DivisionModesAndIntegerDivisionByZero) {
  Tensor a = i64({7, -7, 7, -7}, {4});
  Tensor b = i64({2, 2, -2, -2}, {4});
  Tensor t = op("div.Tensor", a, b);
  EXPECT_EQ(t.dtype(), TSR_DTYPE_FLOAT32);
  EXPECT_THAT(values<float>(t), ElementsAre(3.5, -3.5, -3.5, 3.5));
  EXPECT_THAT(values<int64_t>(op("div.Tensor_mode", a, b, std::string_view("trunc"))),
              ElementsAre(3, -3, -3, 3));
  EXPECT_THAT(values<int64_t>(op("div.Tensor_mode", a, b, std::string_view("floor"))),
              ElementsAre(3, -4, -4, 3));
  EXPECT_THAT(values<int64_t>(op("remainder.Tensor", a, b)), ElementsAre(1, 1, -1, -1));
  EXPECT_THAT(values<int64_t>(op("fmod.Tensor", a, b)), ElementsAre(1, -1, 1, -1));
  Tensor zero = i64({1, 0, 1, 1}, {4});
  EXPECT_THAT(error_of("div.Tensor_mode", a, zero, std::string_view("floor")),
              HasSubstr("ZeroDivisionError"));
  EXPECT_THAT(error_of("remainder.Tensor", a, zero), HasSubstr("ZeroDivisionError"));
  // INT64_MIN / -1 wraps as in PyTorch instead of trapping.
  Tensor min = i64({std::numeric_limits<int64_t>::min()}, {1});
  EXPECT_THAT(
      values<int64_t>(op("div.Tensor_mode", min, i64({-1}, {1}), std::string_view("trunc"))),
      ElementsAre(std::numeric_limits<int64_t>::min()));
  // Float division by zero is IEEE.
  EXPECT_THAT(values<float>(op("div.Tensor", f32({1, -1}, {2}), f32({0, 0}, {2}))),
              ElementsAre(kInf, -kInf));
}

TEST(CpuPointwise, MaximumAndMinimumPropagateNaN) {
  Tensor a = f32({1, kNan, 3}, {3});
  Tensor b = f32({2, 0, kNan}, {3});
  std::vector<float> mx = values<float>(op("maximum", a, b));
  EXPECT_EQ(mx[0], 2);
  EXPECT_TRUE(std::isnan(mx[1]) && std::isnan(mx[2]));
  std::vector<float> mn = values<float>(op("minimum", a, b));
  EXPECT_EQ(mn[0], 1);
  EXPECT_TRUE(std::isnan(mn[1]) && std::isnan(mn[2]));
}

TEST(CpuPointwise, StridedAndBroadcastInputsWithoutCopies) {
  Tensor a = f32({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor at = op("t", a);  // [3, 2] transposed view
  Tensor c = op("add.Tensor", at, f32({100, 200}, {2}));
  EXPECT_THAT(shape(c), ElementsAre(3, 2));
  EXPECT_THAT(values<float>(c), ElementsAre(100, 203, 101, 204, 102, 205));
  // Writing through a non-contiguous view updates the base.
  op("add_.Scalar", at, Scalar(10));
  EXPECT_THAT(values<float>(a), ElementsAre(10, 11, 12, 13, 14, 15));
  // Expanded (stride 0) input.
  Tensor e = op("expand", f32({1, 2}, {2, 1}), std::vector<int64_t>{2, 3});
  EXPECT_THAT(values<float>(op("mul.Tensor", e, e)), ElementsAre(1, 1, 1, 4, 4, 4));
}

TEST(CpuPointwise, EmptyAndZeroDimTensors) {
  Tensor empty = f32({}, {0, 3});
  Tensor r = op("add.Tensor", empty, f32({1, 2, 3}, {3}));
  EXPECT_THAT(shape(r), ElementsAre(0, 3));
  Tensor s = op("mul.Tensor", f32({3}, {}), f32({4}, {}));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_THAT(values<float>(s), ElementsAre(12));
}

// Size-1 and empty dims may carry any stride (as_strided allows it, as in PyTorch); the
// iterator multiplied them by the item size into byte strides, a signed overflow.
TEST(CpuPointwise, HugeStridesOnSizeOneAndEmptyDimsAreNeverScaled) {
  using Dims = std::vector<int64_t>;
  Tensor one = op("as_strided", f32({-2}, {1}), Dims{1, 1}, Dims{INT64_MAX, INT64_MAX / 2});
  EXPECT_THAT(values<float>(op("abs", one)), ElementsAre(2));
  Tensor empty = op("as_strided", f32({-2}, {1}), Dims{0, 2}, Dims{1, INT64_MAX});
  EXPECT_THAT(shape(op("abs", empty)), ElementsAre(0, 2));
  EXPECT_THAT(shape(op("add.Tensor", empty, one)), ElementsAre(0, 2));
}

TEST(CpuPointwise, OutFormsResizeAndInplaceFormsCheckPromotion) {
  Tensor out = f32({0}, {1});
  op("add.out", f32({1, 2}, {2}), f32({3, 4}, {2}), Scalar(1), out);
  EXPECT_THAT(shape(out), ElementsAre(2));
  EXPECT_THAT(values<float>(out), ElementsAre(4, 6));
  // An int result written into a float64 output is cast.
  Tensor wide = f64({0, 0}, {2});
  op("add.out", i32({1, 2}, {2}), i32({3, 4}, {2}), Scalar(1), wide);
  EXPECT_THAT(values<double>(wide), ElementsAre(4, 6));
  EXPECT_THAT(error_of("add_.Tensor", i32({1}, {1}), f32({1.5}, {1})),
              HasSubstr("result type float32 can't be cast to the desired output type int32"));
  Tensor self = f32({1, 2, 3}, {3});
  op("eq_.Tensor", self, f32({1, 0, 3}, {3}));  // a bool result cast into float self
  EXPECT_THAT(values<float>(self), ElementsAre(1, 0, 1));
}

// Through the C ABI: overlapping writes are refused by the runtime before the plugin runs
// (Note [Memory overlap]); what overlaps only by its byte range computes right.
TEST(CpuPointwise, OverlappingWritesAreRefusedAndDisjointColumnsWork) {
  Tensor base = f32({1, 2, 3, 4, 5}, {5});
  Tensor lo = op("slice.Tensor", base, int64_t{0}, int64_t{0}, int64_t{4});
  Tensor hi = op("slice.Tensor", base, int64_t{0}, int64_t{1}, int64_t{5});
  EXPECT_THAT(error_of("add_.Tensor", hi, lo),
              HasSubstr("add_.Tensor: unsupported operation: some elements of the input tensor "
                        "'other' and the written-to tensor 'self' refer to a single memory "
                        "location (they partially overlap)"));
  EXPECT_THAT(values<float>(base), ElementsAre(1, 2, 3, 4, 5));  // untouched
  Tensor row = op("expand", f32({0, 0}, {1, 2}), std::vector<int64_t>{3, 2});
  EXPECT_THAT(error_of("add_.Scalar", row, Scalar(1)),
              HasSubstr("more than one element of the written-to tensor 'self' refers to a "
                        "single memory location"));
  Tensor sq = f32({1, 2, 3, 4}, {2, 2});
  EXPECT_THAT(error_of("mm.out", sq, sq, sq), HasSubstr("the op is not elementwise"));
  // Column 1 of m from column 0: interleaved byte ranges, disjoint elements.
  Tensor m = f32({1, 10, 2, 20, 3, 30}, {3, 2});
  Tensor col0 = op("select.int", m, int64_t{1}, int64_t{0});
  op("add.out", col0, col0, Scalar(6), op("select.int", m, int64_t{1}, int64_t{1}));
  EXPECT_THAT(values<float>(m), ElementsAre(1, 7, 2, 14, 3, 21));
}

TEST(CpuPointwise, Float16ComputesInFloatAndRoundsOnce) {
  // 2048 + 1 is not a half: round to even gives 2048; 2048 + 3 gives 2052.
  Tensor a = f16({2048, 2048}, {2});
  Tensor b = f16({1, 3}, {2});
  EXPECT_THAT(half_values(op("add.Tensor", a, b)), ElementsAre(2048, 2052));
  // A Scalar operand is not rounded to half first: 0.1 * 10 in float is 1.
  EXPECT_THAT(half_values(op("mul.Scalar", f16({10}, {1}), Scalar(0.1))), ElementsAre(1));
}

TEST(CpuPointwise, ComparisonsLogicalAndBitwise) {
  Tensor a = i32({1, 2, 3}, {3});
  Tensor lt = op("lt.Scalar", a, Scalar(2));
  EXPECT_EQ(lt.dtype(), TSR_DTYPE_BOOL);
  EXPECT_THAT(values<uint8_t>(lt), ElementsAre(1, 0, 0));
  EXPECT_THAT(values<uint8_t>(op("logical_xor", a, i32({0, 2, 0}, {3}))), ElementsAre(1, 0, 1));
  EXPECT_THAT(values<int32_t>(op("bitwise_and.Tensor", a, i32({3, 3, 3}, {3}))),
              ElementsAre(1, 2, 3));
  EXPECT_THAT(error_of("bitwise_and.Tensor", f32({1}, {1}), f32({1}, {1})),
              HasSubstr("expected integral or bool operands"));
}

TEST(CpuPointwise, UnaryOps) {
  Tensor ints = i32({4, 9}, {2});
  Tensor r = op("sqrt", ints);
  EXPECT_EQ(r.dtype(), TSR_DTYPE_FLOAT32);
  EXPECT_THAT(values<float>(r), ElementsAre(2, 3));
  EXPECT_THAT(values<float>(op("round", f32({0.5, 1.5, 2.5, -0.5}, {4}))),
              ElementsAre(0, 2, 2, -0.0f));
  EXPECT_THAT(values<int8_t>(op("abs", make<int8_t>({-128, -3}, {2}, TSR_DTYPE_INT8))),
              ElementsAre(-128, 3));
  EXPECT_THAT(values<uint8_t>(op("bitwise_not", b8({1, 0}, {2}))), ElementsAre(0, 1));
  EXPECT_THAT(values<uint8_t>(op("isnan", f32({1, kNan, kInf}, {3}))), ElementsAre(0, 1, 0));
  EXPECT_THAT(values<uint8_t>(op("isfinite", f32({1, kNan, kInf}, {3}))), ElementsAre(1, 0, 0));
  EXPECT_THAT(values<float>(op("sign", f32({-2, 0, 3}, {3}))), ElementsAre(-1, 0, 1));
  EXPECT_NEAR(values<float>(op("gelu", f32({1}, {1}), std::string_view("none")))[0], 0.8413447f,
              1e-6);
  EXPECT_NEAR(values<float>(op("gelu", f32({1}, {1}), std::string_view("tanh")))[0], 0.8411920f,
              1e-6);
  EXPECT_THAT(error_of("gelu", f32({1}, {1}), std::string_view("exact")),
              HasSubstr("expected approximate to be 'none' or 'tanh', got 'exact'"));
  EXPECT_THAT(error_of("silu", i32({1}, {1})),
              HasSubstr("silu.out: not implemented for dtype int32"));
  Tensor x = f32({-1, 4}, {2});
  op("relu_", x);
  EXPECT_THAT(values<float>(x), ElementsAre(0, 4));
}

TEST(CpuPointwise, TernaryOps) {
  Tensor cond = b8({1, 0, 1}, {3});
  EXPECT_THAT(values<float>(op("where.self", cond, f32({1, 2, 3}, {3}), f32({9}, {1}))),
              ElementsAre(1, 9, 3));
  std::vector<float> c =
      values<float>(op("clamp", f32({-5, 0.5, 5, kNan}, {4}), Scalar(0), Scalar(1)));
  EXPECT_THAT(std::vector<float>(c.begin(), c.begin() + 3), ElementsAre(0, 0.5, 1));
  EXPECT_TRUE(std::isnan(c[3]));
  EXPECT_THAT(error_of("clamp", f32({1}, {1}), std::nullopt, std::nullopt),
              HasSubstr("at least one of 'min' or 'max' must not be None"));
  EXPECT_THAT(
      values<float>(op("addcmul", f32({1}, {1}), f32({2}, {1}), f32({3}, {1}), Scalar(0.5))),
      ElementsAre(4));
  EXPECT_THAT(error_of("addcdiv", i32({1}, {1}), i32({2}, {1}), i32({3}, {1})),
              HasSubstr("integer division with addcdiv is not supported"));
  EXPECT_THAT(values<float>(op("lerp.Scalar", f32({0, 10}, {2}), f32({10, 20}, {2}), Scalar(1))),
              ElementsAre(10, 20));
  EXPECT_THAT(
      values<int32_t>(op("masked_fill.Scalar", i32({1, 2, 3}, {3}), b8({0, 1, 0}, {3}), Scalar(7))),
      ElementsAre(1, 7, 3));
}

// pow of 16-bit integers wraps, as PyTorch's does: (-12447)^2 multiplied 53089 * 53089 in the
// int that uint16 promotes to, a signed overflow (found by fuzz/op_call_fuzzer.cc).
TEST(CpuPointwise, SixteenBitIntegerPowWraps) {
  Tensor p = op("pow.Scalar", Scalar(int64_t{-12447}), make<int16_t>({2, 3}, {2}, TSR_DTYPE_INT16));
  EXPECT_EQ(p.dtype(), TSR_DTYPE_INT16);
  EXPECT_THAT(values<int16_t>(p), ElementsAre(705, 6689));
}

// The Scalar-base pow, and clamp and lerp with tensor bounds and weights (PyTorch's other
// overloads of op set v1's pow, clamp and lerp).
TEST(CpuPointwise, ScalarBasePowTensorClampAndTensorLerp) {
  Tensor ints = i64({0, 1, 2, 3}, {4});
  Tensor p = op("pow.Scalar", Scalar(int64_t{2}), ints);
  EXPECT_EQ(p.dtype(), TSR_DTYPE_INT64);
  EXPECT_THAT(values<int64_t>(p), ElementsAre(1, 2, 4, 8));
  Tensor pf = op("pow.Scalar", Scalar(2.5), ints);  // a float base: the default float
  EXPECT_EQ(pf.dtype(), TSR_DTYPE_FLOAT32);
  EXPECT_THAT(values<float>(pf), ElementsAre(1, 2.5, 6.25, 15.625));
  EXPECT_THAT(values<float>(op("pow.Scalar", Scalar(int64_t{1}), f32({kNan, 2}, {2}))),
              ElementsAre(1, 1));

  Tensor x = f32({-1, 0.5, 2, kNan}, {4});
  Tensor lo = f32({0, 0, 0, 0}, {4}), hi = f32({1}, {1});
  EXPECT_THAT(
      values<float>(op("clamp.Tensor", x, lo, hi)),
      testing::Pointwise(testing::NanSensitiveFloatEq(), std::vector<float>{0.f, 0.5f, 1.f, kNan}));
  Tensor only_max = op("clamp.Tensor", x, std::nullopt, hi);
  EXPECT_EQ(values<float>(only_max)[0], -1);
  EXPECT_EQ(values<float>(only_max)[2], 1);
  EXPECT_TRUE(std::isnan(values<float>(op("clamp.Tensor", f32({1}, {1}), f32({kNan}, {1})))[0]))
      << "a NaN bound gives NaN";
  Tensor promoted = op("clamp.Tensor", ints, f32({0.5}, {1}));  // int64 with a float bound
  EXPECT_EQ(promoted.dtype(), TSR_DTYPE_FLOAT32);
  EXPECT_THAT(values<float>(promoted), ElementsAre(0.5, 1, 2, 3));
  EXPECT_THAT(error_of("clamp.Tensor", x),
              HasSubstr("clamp.Tensor: at least one of 'min' or 'max' must not be None"));
  Tensor self = i64({-5, 5}, {2});
  op("clamp_.Tensor", self, i64({-1}, {1}), i64({1}, {1}));
  EXPECT_THAT(values<int64_t>(self), ElementsAre(-1, 1));

  Tensor start = f32({0, 0, 0, 0}, {4}), end = f32({10, 10, 10, 10}, {4});
  EXPECT_THAT(values<float>(op("lerp.Tensor", start, end, f32({0, 0.25, 0.75, 1}, {4}))),
              ElementsAre(0, 2.5, 7.5, 10));
  EXPECT_THAT(values<float>(op("lerp.Tensor", f32({1, 2}, {2, 1}), f32({3}, {1}),
                               f32({0.5, 1}, {2}))),  // weight broadcasts
              ElementsAre(2, 3, 2.5, 3));
  EXPECT_THAT(error_of("lerp.Tensor", i64({1}, {1}), i64({2}, {1}), i64({0}, {1})),
              HasSubstr("lerp.Tensor_out: not implemented for dtype int64"));
  // As in PyTorch, lerp does not promote: end and weight must have self's dtype.
  EXPECT_THAT(error_of("lerp.Tensor", start, end, f64({0.5}, {1})),
              HasSubstr("lerp.Tensor: expected dtype float32 for `weight` but got dtype float64"));
  EXPECT_THAT(error_of("lerp.Scalar", start, f64({1}, {1}), Scalar(0.5)),
              HasSubstr("lerp.Scalar: expected dtype float32 for `end` but got dtype float64"));
}

TEST(CpuPointwise, LargeTensorsSplitAcrossThreadsGiveTheSameResult) {
  const int64_t n = 1 << 20;
  std::vector<float> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 1000);
    b[i] = static_cast<float>(i % 7);
  }
  std::vector<float> sum = values<float>(op("add.Tensor", f32(a, {n}), f32(b, {n})));
  for (int64_t i = 0; i < n; i += 4099) ASSERT_EQ(sum[i], a[i] + b[i]) << i;
  EXPECT_EQ(sum[n - 1], a[n - 1] + b[n - 1]);
}

TEST(CpuCopy, CopyCastsAndCloneKeepsLayout) {
  Tensor dst = i32({0, 0, 0}, {3});
  op("copy_", dst, f32({1.9f, -1.9f, 3}, {3}));
  EXPECT_THAT(values<int32_t>(dst), ElementsAre(1, -1, 3));
  Tensor t = op("t", f32({1, 2, 3, 4, 5, 6}, {2, 3}));
  Tensor c = op("clone", t);
  EXPECT_THAT(c.strides().vec(), ElementsAre(1, 3));
  EXPECT_THAT(values<float>(c), ElementsAre(1, 4, 2, 5, 3, 6));
}

// A small dense copy of one dtype moves bytes (copy_cast's first branch); the iterator keeps
// broadcasts, strided views and conversions. Both write exactly the destination.
TEST(CpuCopy, DenseCopiesOfOneDtypeAndTheIterator) {
  Tensor buffer = f32({9, 9, 9, 9, 9}, {5});
  Tensor middle = op("slice.Tensor", buffer, int64_t{0}, int64_t{1}, int64_t{4});
  op("copy_", middle, f32({1, 2, 3}, {3}));  // contiguous view at an offset
  EXPECT_THAT(values<float>(buffer), ElementsAre(9, 1, 2, 3, 9));
  op("copy_", middle, f32({7}, {1}));  // broadcast: the iterator
  EXPECT_THAT(values<float>(buffer), ElementsAre(9, 7, 7, 7, 9));
  Tensor every_other = op("slice.Tensor", buffer, int64_t{0}, int64_t{0}, int64_t{5}, int64_t{2});
  op("copy_", every_other, f32({4, 5, 6}, {3}));  // strided destination: the iterator
  EXPECT_THAT(values<float>(buffer), ElementsAre(4, 7, 5, 7, 6));
  Tensor grid = f32({0, 0, 0, 0}, {2, 2});
  op("copy_", grid, f32({1, 2}, {1, 2}));  // fewer elements: a broadcast, the iterator
  EXPECT_THAT(values<float>(grid), ElementsAre(1, 2, 1, 2));
  op("copy_", grid, f32({1, 2, 3, 4}, {2, 2}));
  EXPECT_THAT(values<float>(grid), ElementsAre(1, 2, 3, 4));
  op("copy_", grid, op("t", f32({5, 6, 7, 8}, {2, 2})));  // as many elements, transposed
  EXPECT_THAT(values<float>(grid), ElementsAre(5, 7, 6, 8));
  Tensor wide = f32({0, 0, 0}, {1, 3});
  op("copy_", wide, f32({1, 2, 3}, {3}));  // dense, of another rank
  EXPECT_THAT(values<float>(wide), ElementsAre(1, 2, 3));
  Tensor halves = op("_to_copy", f32({0, 0}, {2}), TSR_DTYPE_FLOAT16);
  op("copy_", halves, op("_to_copy", f32({0.5f, -2}, {2}), TSR_DTYPE_FLOAT16));
  EXPECT_THAT(values<float>(op("_to_copy", halves, TSR_DTYPE_FLOAT32)), ElementsAre(0.5f, -2));
  Tensor flags = b8({0, 0, 0}, {3});
  op("copy_", flags, b8({1, 0, 1}, {3}));
  EXPECT_THAT(values<uint8_t>(flags), ElementsAre(1, 0, 1));
}

// round.decimals with |decimals| past any power of ten: 10^|d| is inf and every element NaN,
// as PyTorch's; decimals = INT64_MIN was negated in int64 (found by the op_call fuzzer).
TEST(CpuPointwise, RoundWithDecimalsBeyondEveryPowerOfTenIsNaN) {
  for (int64_t d : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
    for (double v : values<double>(op("round.decimals", f64({0.0, 1.5, -2.0}, {3}), d))) {
      EXPECT_TRUE(std::isnan(v)) << d;
    }
  }
}

// An empty shape may have other sizes whose product passes int64 (ones([2^63 / 3, 3, 0]) has 0
// elements): the CPU iterator multiplied them before seeing the 0 (found by the op_meta fuzzer).
TEST(CpuPointwise, EmptyShapesWhoseOtherSizesOverflowAreEmpty) {
  const int64_t third = std::numeric_limits<int64_t>::max() / 3 + 1;
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{third, 3, 0}, {2147483647, third, 0}, {third, 0, 3}}) {
    const Tensor ones = op("ones", shape, TSR_DTYPE_FLOAT32);
    EXPECT_EQ(ones.numel(), 0);
    EXPECT_EQ(std::vector<int64_t>(ones.sizes().begin(), ones.sizes().end()), shape);
    EXPECT_EQ(op("add.Tensor", ones, ones).numel(), 0);
  }
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera
