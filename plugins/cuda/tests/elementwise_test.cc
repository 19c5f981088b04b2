// The GPU elementwise iterator on the host: the plans (broadcasting, merging dimensions, the
// fast path, 32-bit chunks; Note [GPU elementwise iterator]) and the per-thread work the kernels
// run (elementwise.h), executed here for every (block, thread) of each launch, so that what a
// GPU would compute is checked element by element without a GPU.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "elementwise_plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host_launch.h"
#include "tessera/sdk/half.hpp"

namespace tessera {
namespace gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

ConstantValue Int(int64_t i) {
  ConstantValue v;
  v.kind = ConstantValue::kInt;
  v.i = i;
  return v;
}

TEST(GpuHalf, ConversionsAreTheSdksBitForBit) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float a = ToFloat(Half{static_cast<uint16_t>(bits)});
    const float b = sdk::to_float(sdk::Half{static_cast<uint16_t>(bits)});
    ASSERT_EQ(BitsOf(a), BitsOf(b)) << bits;
    const float c = ToFloat(BFloat16{static_cast<uint16_t>(bits)});
    const float d = sdk::to_float(sdk::BFloat16{static_cast<uint16_t>(bits)});
    ASSERT_EQ(BitsOf(c), BitsOf(d)) << bits;
  }
  std::mt19937 rng(7);
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               65504.0f,
                               65520.0f,
                               1e-8f,
                               5.96e-8f,
                               6.1e-5f,
                               std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               3.4e38f};
  for (int i = 0; i < 200000; ++i) values.push_back(FloatOf(static_cast<uint32_t>(rng())));
  for (float f : values) {
    ASSERT_EQ(ToHalf(f).bits, sdk::to_half(f).bits) << f;
    ASSERT_EQ(ToBFloat16(f).bits, sdk::to_bfloat16(f).bits) << f;
  }
}

TEST(GpuFastDivmod, DividesEveryIndexExactly) {
  std::vector<uint32_t> divisors = {
      1,           2,       3,    5,     7,     10,    12,       255,
      256,         257,     1000, 65535, 65536, 65537, 1u << 20, (1u << 20) + 1,
      2147483647u, 1u << 30};
  std::vector<uint32_t> numerators = {0,     1,     2,       3,           255,        256,
                                      65535, 65536, 1000000, 2147483646u, 2147483647u};
  std::mt19937 rng(3);
  for (int i = 0; i < 300; ++i) divisors.push_back(1 + rng() % 100000);
  for (int i = 0; i < 2000; ++i) numerators.push_back(rng() & 0x7fffffffu);
  for (uint32_t d : divisors) {
    const FastDivmod div(d);
    for (uint32_t n : numerators) ASSERT_EQ(div.Div(n), n / d) << n << " / " << d;
  }
}

TEST(GpuElementwisePlan, MergesAContiguousTensorIntoOneFastDimension) {
  std::vector<float> out(24), a(24), b(24);
  const ElementwisePlan plan = MustPlan({2, 3, 4}, {Operand(out, TSR_DTYPE_FLOAT32, {2, 3, 4}),
                                                    Operand(a, TSR_DTYPE_FLOAT32, {2, 3, 4}),
                                                    Operand(b, TSR_DTYPE_FLOAT32, {2, 3, 4})});
  EXPECT_TRUE(plan.contiguous);
  ASSERT_EQ(plan.chunks.size(), 1u);
  EXPECT_EQ(plan.chunks[0].ndim, 1);
  EXPECT_EQ(plan.chunks[0].numel, 24);
  EXPECT_EQ(plan.chunks[0].strides[0][2], 4);  // bytes
  EXPECT_EQ(LaunchBlocks(24), 1u);
  EXPECT_EQ(LaunchBlocks(1024), 1u);
  EXPECT_EQ(LaunchBlocks(1025), 2u);
}

TEST(GpuElementwisePlan, BroadcastsWithZeroStridesAndLeavesTheFastPath) {
  std::vector<float> out(12), col(3), row(4);
  const ElementwisePlan plan = MustPlan(
      {3, 4}, {Operand(out, TSR_DTYPE_FLOAT32, {3, 4}), Operand(col, TSR_DTYPE_FLOAT32, {3, 1}),
               Operand(row, TSR_DTYPE_FLOAT32, {4})});
  EXPECT_FALSE(plan.contiguous);
  const ElementwiseChunk& c = plan.chunks.at(0);
  ASSERT_EQ(c.ndim, 2);
  EXPECT_EQ(c.sizes[0], 4);  // innermost first
  EXPECT_EQ(c.strides[0][0], 4);
  EXPECT_EQ(c.strides[0][1], 0);  // col broadcasts along the row
  EXPECT_EQ(c.strides[0][2], 4);
  EXPECT_EQ(c.strides[1][1], 4);
  EXPECT_EQ(c.strides[1][2], 0);
}

TEST(GpuElementwisePlan, OtherDtypesAndConstantsAndTransposesAreNotTheFastPath) {
  std::vector<float> out(6), a(6);
  std::vector<int32_t> i(6);
  EXPECT_FALSE(
      MustPlan({6}, {Operand(out, TSR_DTYPE_FLOAT32, {6}), Operand(i, TSR_DTYPE_INT32, {6})})
          .contiguous);
  EXPECT_TRUE(MustPlan({6}, {Operand(out, TSR_DTYPE_FLOAT32, {6}), Constant(2)}).contiguous);
  const ElementwisePlan t = MustPlan({2, 3}, {Operand(out, TSR_DTYPE_FLOAT32, {2, 3}),
                                              Operand(a, TSR_DTYPE_FLOAT32, {2, 3}, {1, 2})});
  EXPECT_FALSE(t.contiguous);
  EXPECT_EQ(t.chunks.at(0).ndim, 2);
}

TEST(GpuElementwisePlan, ZeroDimAndEmptyShapes) {
  std::vector<float> out(1), a(1);
  const ElementwisePlan scalar =
      MustPlan({}, {Operand(out, TSR_DTYPE_FLOAT32, {}), Operand(a, TSR_DTYPE_FLOAT32, {})});
  ASSERT_EQ(scalar.chunks.size(), 1u);
  EXPECT_EQ(scalar.chunks[0].numel, 1);
  EXPECT_EQ(scalar.chunks[0].ndim, 0);
  const ElementwisePlan empty = MustPlan(
      {3, 0}, {Operand(out, TSR_DTYPE_FLOAT32, {3, 0}), Operand(a, TSR_DTYPE_FLOAT32, {0})});
  EXPECT_EQ(empty.numel, 0);
  EXPECT_TRUE(empty.chunks.empty());
}

TEST(GpuElementwisePlan, RefusesWhatItCannotIterate) {
  std::vector<float> out(64), a(64);
  ElementwisePlan plan;
  std::string error;
  EXPECT_FALSE(MakeElementwisePlan(
      {2, 3}, {Operand(out, TSR_DTYPE_FLOAT32, {2, 3}), Operand(a, TSR_DTYPE_FLOAT32, {2})}, &plan,
      &error));
  EXPECT_EQ(error, "operand 1 of shape [2] does not broadcast to [2, 3]");
  EXPECT_FALSE(MakeElementwisePlan(
      {4}, {Operand(out, TSR_DTYPE_FLOAT32, {4}), Operand(a, TSR_DTYPE_FLOAT32, {4}, {-1})}, &plan,
      &error));
  EXPECT_THAT(error, HasSubstr("negative stride"));
  EXPECT_FALSE(MakeElementwisePlan({4}, {Operand(out, 99, {4})}, &plan, &error));
  EXPECT_THAT(error, HasSubstr("invalid dtype 99"));
  // 13 dimensions of size 2 whose strides do not line up (each padded by one element).
  std::vector<int64_t> shape(13, 2), in_strides(13);
  std::vector<float> big(1 << 14), dense(1 << 13);
  for (int d = 0; d < 13; ++d) in_strides[d] = (int64_t{1} << (13 - d)) - 1;
  EXPECT_FALSE(MakeElementwisePlan(shape,
                                   {Operand(dense, TSR_DTYPE_FLOAT32, shape),
                                    Operand(big, TSR_DTYPE_FLOAT32, shape, in_strides)},
                                   &plan, &error));
  EXPECT_THAT(error, HasSubstr("13 dimensions after merging, more than the GPU iterator's 12"));
}

TEST(GpuElementwisePlan, SplitsIntoChunksWhoseOffsetsFitTheIndexType) {
  // A small stand-in for 2^31: with max_index 100, a [7, 30] float copy needs 120-byte rows.
  std::vector<float> in(7 * 30), out(7 * 30, -1.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  const ElementwisePlan plan = MustPlan(
      {7, 30}, {Operand(out, TSR_DTYPE_FLOAT32, {7, 30}), Operand(in, TSR_DTYPE_FLOAT32, {7, 30})},
      /*max_index=*/100);
  EXPECT_GT(plan.chunks.size(), 7u);
  for (const ElementwiseChunk& c : plan.chunks) {
    EXPECT_LE(c.numel, 100);
    int64_t max_offset = 0;
    for (int d = 0; d < c.ndim; ++d) max_offset += (c.sizes[d] - 1) * c.strides[d][1];
    EXPECT_LE(max_offset, 100);
  }
  RunOnHost<float, 2>(plan, IdentityOp<float>{});
  EXPECT_EQ(out, in);  // every element exactly once
  // A transposed input splits too.
  std::vector<float> t_out(7 * 30, -1.0f);
  const ElementwisePlan t = MustPlan({30, 7},
                                     {Operand(t_out, TSR_DTYPE_FLOAT32, {30, 7}),
                                      Operand(in, TSR_DTYPE_FLOAT32, {30, 7}, {1, 30})},
                                     /*max_index=*/64);
  RunOnHost<float, 2>(t, IdentityOp<float>{});
  for (int r = 0; r < 30; ++r) {
    for (int c = 0; c < 7; ++c) ASSERT_EQ(t_out[r * 7 + c], in[c * 30 + r]);
  }
}

TEST(GpuElementwiseKernel, AddsWithAlphaBroadcastingOverManyBlocks) {
  const int64_t rows = 37, cols = 113;  // 4181 elements: five blocks, a ragged last one
  std::vector<float> a(rows * cols), b(cols), out(rows * cols);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.5f;
  for (size_t j = 0; j < b.size(); ++j) b[j] = static_cast<float>(j);
  const ElementwisePlan plan =
      MustPlan({rows, cols}, {Operand(out, TSR_DTYPE_FLOAT32, {rows, cols}),
                              Operand(a, TSR_DTYPE_FLOAT32, {rows, cols}),
                              Operand(b, TSR_DTYPE_FLOAT32, {cols})});
  RunOnHost<float, 3>(plan, AddOp<float, false>{2.0f});
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      ASSERT_EQ(out[i * cols + j], a[i * cols + j] + 2.0f * b[j]) << i << "," << j;
    }
  }
  // The fast path, with the output one of the inputs (add(a, b, out=a)).
  std::vector<float> x = {1, 2, 3, 4, 5}, y = {10, 20, 30, 40, 50};
  const ElementwisePlan same =
      MustPlan({5}, {Operand(x, TSR_DTYPE_FLOAT32, {5}), Operand(x, TSR_DTYPE_FLOAT32, {5}),
                     Operand(y, TSR_DTYPE_FLOAT32, {5})});
  ASSERT_TRUE(same.contiguous);
  RunOnHost<float, 3>(same, AddOp<float, true>{1.0f});
  EXPECT_THAT(x, ElementsAre(-9, -18, -27, -36, -45));
}

// The fast path moves a thread's four elements as one aligned vector where every operand is
// aligned for it; a view starting mid-vector, or a dtype the launch converts, takes the scalar
// path. Both give every element, the last partial vector's included, and nothing past the end.
TEST(GpuElementwiseKernel, AlignedFastPathsMoveVectorsAndOthersElements) {
  for (int64_t n : {1, 3, 4, 1021, 1024, 4099}) {
    for (int64_t offset : {0, 1}) {  // 1: every operand starts one element into its buffer
      alignas(16) static float a[4200], b[4200], out[4200];
      for (int64_t i = 0; i < 4200; ++i) {
        a[i] = static_cast<float>(i);
        b[i] = static_cast<float>(3 * i);
        out[i] = -1;
      }
      auto view = [&](float* p) {
        OperandSpec o;
        o.data = reinterpret_cast<char*>(p + offset);
        o.dtype = TSR_DTYPE_FLOAT32;
        o.sizes = {n};
        o.strides = {1};
        return o;
      };
      const ElementwisePlan plan = MustPlan({n}, {view(out), view(a), view(b)});
      ASSERT_TRUE(plan.contiguous);
      const Args<float, 3> args = MakeArgs<float, 3>(plan, plan.chunks[0]);
      EXPECT_EQ(args.vectorized, offset == 0) << n;
      RunOnHost<float, 3>(plan, AddOp<float, false>{2.0f});
      for (int64_t i = 0; i < offset; ++i) ASSERT_EQ(out[i], -1);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[offset + i], a[offset + i] + 2 * b[offset + i])
            << n << " " << offset << " " << i;
      }
      ASSERT_EQ(out[offset + n], -1) << n;  // nothing written past the end
    }
  }
  // A constant operand has no memory to align; float64 vectors are 32 bytes.
  alignas(32) static double x[10], y[10];
  for (int i = 0; i < 10; ++i) x[i] = i;
  OperandSpec out_spec, in_spec;
  out_spec.data = reinterpret_cast<char*>(y);
  out_spec.dtype = TSR_DTYPE_FLOAT64;
  out_spec.sizes = {10};
  out_spec.strides = {1};
  in_spec = out_spec;
  in_spec.data = reinterpret_cast<char*>(x);
  const ElementwisePlan with_constant =
      MustPlan({10}, {out_spec, in_spec, Constant(0.5, TSR_DTYPE_FLOAT64)});
  EXPECT_TRUE((MakeArgs<double, 3>(with_constant, with_constant.chunks[0]).vectorized));
  RunOnHost<double, 3>(with_constant, MulOp<double>{});
  for (int i = 0; i < 10; ++i) ASSERT_EQ(y[i], i * 0.5);
  // Computing float32 over float64 memory converts: never vectorized.
  EXPECT_FALSE((MakeArgs<float, 3>(with_constant, with_constant.chunks[0]).vectorized));
  // In place (the output one of the inputs), 8-byte vectors of int16: each thread loads its
  // vector before it stores it.
  alignas(8) static int16_t h[1030];
  for (int i = 0; i < 1030; ++i) h[i] = static_cast<int16_t>(i);
  OperandSpec hs;
  hs.data = reinterpret_cast<char*>(h);
  hs.dtype = TSR_DTYPE_INT16;
  hs.sizes = {1030};
  hs.strides = {1};
  const ElementwisePlan in_place = MustPlan({1030}, {hs, hs, hs});
  EXPECT_TRUE((MakeArgs<int16_t, 3>(in_place, in_place.chunks[0]).vectorized));
  RunOnHost<int16_t, 3>(in_place, AddOp<int16_t, false>{1});
  for (int i = 0; i < 1030; ++i) ASSERT_EQ(h[i], static_cast<int16_t>(2 * i)) << i;
}

TEST(GpuElementwiseKernel, MixedDtypesConvertToTheComputeDtypeAndTheOutputs) {
  // int32 + float32 computed in float32, written to float64.
  std::vector<int32_t> a = {1, -2, 3};
  std::vector<float> b = {0.5f, 0.25f, 0.125f};
  std::vector<double> out(3);
  const ElementwisePlan plan =
      MustPlan({3}, {Operand(out, TSR_DTYPE_FLOAT64, {3}), Operand(a, TSR_DTYPE_INT32, {3}),
                     Operand(b, TSR_DTYPE_FLOAT32, {3})});
  EXPECT_FALSE(plan.contiguous);
  RunOnHost<float, 3>(plan, MulOp<float>{});
  EXPECT_THAT(out, ElementsAre(0.5, -0.5, 0.375));
  // int32 wraps on overflow; bool adds as "or"; true division of integers in float32.
  std::vector<int32_t> big = {INT32_MAX, INT32_MIN}, one = {1, 1}, wrapped(2);
  RunOnHost<int32_t, 3>(
      MustPlan({2}, {Operand(wrapped, TSR_DTYPE_INT32, {2}), Operand(big, TSR_DTYPE_INT32, {2}),
                     Operand(one, TSR_DTYPE_INT32, {2})}),
      AddOp<int32_t, false>{1});
  EXPECT_THAT(wrapped, ElementsAre(INT32_MIN, INT32_MIN + 1));
  std::vector<uint8_t> p = {0, 0, 1, 1}, q = {0, 1, 0, 1}, r(4);
  RunOnHost<bool, 3>(
      MustPlan({4}, {Operand(r, TSR_DTYPE_BOOL, {4}), Operand(p, TSR_DTYPE_BOOL, {4}),
                     Operand(q, TSR_DTYPE_BOOL, {4})}),
      AddOp<bool, false>{true});
  EXPECT_THAT(r, ElementsAre(0, 1, 1, 1));
  std::vector<int64_t> num = {7, -7, 1}, den = {2, 2, 0};
  std::vector<float> quotient(3);
  RunOnHost<float, 3>(
      MustPlan({3}, {Operand(quotient, TSR_DTYPE_FLOAT32, {3}), Operand(num, TSR_DTYPE_INT64, {3}),
                     Operand(den, TSR_DTYPE_INT64, {3})}),
      DivOp<float>{});
  EXPECT_EQ(quotient[0], 3.5f);
  EXPECT_EQ(quotient[1], -3.5f);
  EXPECT_TRUE(std::isinf(quotient[2]));
}

TEST(GpuElementwiseKernel, HalfComputesInFloatAndRoundsOnce) {
  auto h = [](float f) { return ToHalf(f); };
  std::vector<Half> a = {h(1.0f), h(2048.0f), h(0.1f)}, b = {h(1e-4f), h(1.0f), h(0.2f)}, out(3);
  RunOnHost<Half, 3>(
      MustPlan({3}, {Operand(out, TSR_DTYPE_FLOAT16, {3}), Operand(a, TSR_DTYPE_FLOAT16, {3}),
                     Operand(b, TSR_DTYPE_FLOAT16, {3})}),
      AddOp<float, false>{1.0f});
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(out[i].bits, ToHalf(ToFloat(a[i]) + ToFloat(b[i])).bits) << i;
  }
  // A Scalar operand stays in float (OpMath), as PyTorch's CUDA kernels keep it.
  std::vector<BFloat16> x = {ToBFloat16(1.0f)}, y(1);
  RunOnHost<BFloat16, 3>(MustPlan({1}, {Operand(y, TSR_DTYPE_BFLOAT16, {1}),
                                        Operand(x, TSR_DTYPE_BFLOAT16, {1}), Constant(0.00390625)}),
                         MulOp<float>{});
  EXPECT_EQ(ToFloat(y[0]), 0.00390625f);
}

TEST(GpuElementwiseKernel, CopyConvertsLikeTheCpuPlugin) {
  std::vector<float> in = {1.9f, -1.9f, 300.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f};
  std::vector<int8_t> as_int8(5);
  RunOnHost<int8_t, 2>(
      MustPlan({5}, {Operand(as_int8, TSR_DTYPE_INT8, {5}), Operand(in, TSR_DTYPE_FLOAT32, {5})}),
      IdentityOp<int8_t>{});
  EXPECT_THAT(as_int8, ElementsAre(1, -1, 44, 0, 0));  // truncates; 300 wraps; NaN: INT64_MIN
  std::vector<int64_t> as_int64(5);
  RunOnHost<int64_t, 2>(
      MustPlan({5}, {Operand(as_int64, TSR_DTYPE_INT64, {5}), Operand(in, TSR_DTYPE_FLOAT32, {5})}),
      IdentityOp<int64_t>{});
  EXPECT_EQ(as_int64[3], INT64_MIN);
  std::vector<uint8_t> as_bool(5);
  RunOnHost<bool, 2>(
      MustPlan({5}, {Operand(as_bool, TSR_DTYPE_BOOL, {5}), Operand(in, TSR_DTYPE_FLOAT32, {5})}),
      IdentityOp<bool>{});
  EXPECT_THAT(as_bool, ElementsAre(1, 1, 1, 1, 0));
  // fill_: a constant into a strided view (every other element of 8).
  std::vector<int16_t> buffer(8, 7);
  OperandSpec view = Operand(buffer, TSR_DTYPE_INT16, {4}, {2});
  ConstantValue value = Int(-3);
  OperandSpec c;
  c.dtype = TSR_DTYPE_INT16;
  c.constant = true;
  c.value = value;
  RunOnHost<int16_t, 2>(MustPlan({4}, {view, c}), IdentityOp<int16_t>{});
  EXPECT_THAT(buffer, ElementsAre(-3, 7, -3, 7, -3, 7, -3, 7));
}

TEST(GpuElementwiseKernel, UnaryOpsMatchTheirDefinitions) {
  std::vector<float> in = {-2.5f, -0.0f, 0.5f, 4.0f, std::numeric_limits<float>::quiet_NaN()};
  auto run = [&](auto op) {
    std::vector<float> out(in.size());
    RunOnHost<float, 2>(
        MustPlan({5}, {Operand(out, TSR_DTYPE_FLOAT32, {5}), Operand(in, TSR_DTYPE_FLOAT32, {5})}),
        op);
    return out;
  };
  const std::vector<float> relu = run(ReluOp<float>{});
  EXPECT_THAT(std::vector<float>(relu.begin(), relu.end() - 1), ElementsAre(0, 0, 0.5f, 4));
  EXPECT_TRUE(std::isnan(relu[4]));
  const std::vector<float> exp = run(ExpOp<float>{});
  const std::vector<float> sig = run(SigmoidOp<float>{});
  const std::vector<float> rsq = run(RsqrtOp<float>{});
  for (int i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(exp[i], std::exp(in[i]));
    EXPECT_FLOAT_EQ(sig[i], 1.0f / (1.0f + std::exp(-in[i])));
  }
  EXPECT_FLOAT_EQ(rsq[3], 0.5f);
  EXPECT_THAT(run(AbsOp<float>{}), testing::Contains(2.5f));
  std::vector<int64_t> ints = {INT64_MIN, -5, 0, 9}, negs(4);
  RunOnHost<int64_t, 2>(
      MustPlan({4}, {Operand(negs, TSR_DTYPE_INT64, {4}), Operand(ints, TSR_DTYPE_INT64, {4})}),
      NegOp<int64_t>{});
  EXPECT_THAT(negs, ElementsAre(INT64_MIN, 5, 0, -9));  // wraps
  std::vector<int32_t> small = {-3, 3}, from_int(2);
  std::vector<float> exp_int(2);
  RunOnHost<float, 2>(MustPlan({2}, {Operand(exp_int, TSR_DTYPE_FLOAT32, {2}),
                                     Operand(small, TSR_DTYPE_INT32, {2})}),
                      ExpOp<float>{});
  EXPECT_FLOAT_EQ(exp_int[1], std::exp(3.0f));
  (void)from_int;
}

TEST(GpuElementwiseKernel, DenseOperandsOfAnotherDtypeThanTheComputeDtypeAreConverted) {
  // Every operand dense float64, computed in float32 (eq.out into a float64 out, say): the plan
  // is contiguous, but the fast path (which reads every operand as the compute dtype) is not
  // for it.
  std::vector<double> a = {1.5, 2.5, 1e300}, b = {2, 4, 1}, out(3);
  const ElementwisePlan plan =
      MustPlan({3}, {Operand(out, TSR_DTYPE_FLOAT64, {3}), Operand(a, TSR_DTYPE_FLOAT64, {3}),
                     Operand(b, TSR_DTYPE_FLOAT64, {3})});
  EXPECT_TRUE(plan.contiguous);
  EXPECT_EQ(plan.dense_dtype, TSR_DTYPE_FLOAT64);
  EXPECT_FALSE(UsesFastPath<float>(plan));
  EXPECT_TRUE(UsesFastPath<double>(plan));
  RunOnHost<float, 3>(plan, MulOp<float>{});
  EXPECT_THAT(out, ElementsAre(3, 10, std::numeric_limits<double>::infinity()));
}

TEST(GpuElementwiseKernel, EveryDtypeRoundTripsThroughCopy) {
  // Each of the ten dtypes into every other and back, through float64, over a strided source.
  const std::vector<double> values = {0, 1, 2, 3, 100, 7};
  for (int32_t dtype = TSR_DTYPE_BOOL; dtype <= TSR_DTYPE_FLOAT64; ++dtype) {
    SCOPED_TRACE(dtype);
    std::vector<char> storage(6 * 2 * 8);
    std::vector<double> source(values);
    std::vector<double> back(6);
    OperandSpec narrow;
    narrow.data = storage.data();
    narrow.dtype = dtype;
    narrow.sizes = {6};
    narrow.strides = {2};  // every other element
    RunOnHost<double, 2>(MustPlan({6}, {narrow, Operand(source, TSR_DTYPE_FLOAT64, {6})}),
                         IdentityOp<double>{});
    RunOnHost<double, 2>(MustPlan({6}, {Operand(back, TSR_DTYPE_FLOAT64, {6}), narrow}),
                         IdentityOp<double>{});
    for (size_t i = 0; i < values.size(); ++i) {
      const double expected = dtype == TSR_DTYPE_BOOL ? (values[i] != 0) : values[i];
      ASSERT_EQ(back[i], expected) << i;
    }
  }
}

}  // namespace
}  // namespace gpu
}  // namespace tessera
