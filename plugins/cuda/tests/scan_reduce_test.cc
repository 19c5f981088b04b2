// The GPU scans (cumsum, cumprod; Note [GPU scans]) and the reductions max / min (all and
// .dim), any, all, logsumexp and norm on the host: each kernel's per-thread work run for every
// thread of every block, phase by phase between the barriers (reduce_host.h), against
// references computed here in double, for every dtype the plugin registers them for.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reduce_host.h"

namespace tessera {
namespace gpu {
namespace {

using ::testing::ElementsAre;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr int32_t kEveryDtype[] = {
    TSR_DTYPE_BOOL,  TSR_DTYPE_UINT8,   TSR_DTYPE_INT8,     TSR_DTYPE_INT16,   TSR_DTYPE_INT32,
    TSR_DTYPE_INT64, TSR_DTYPE_FLOAT16, TSR_DTYPE_BFLOAT16, TSR_DTYPE_FLOAT32, TSR_DTYPE_FLOAT64};
constexpr int32_t kFloatingDtype[] = {TSR_DTYPE_FLOAT16, TSR_DTYPE_BFLOAT16, TSR_DTYPE_FLOAT32,
                                      TSR_DTYPE_FLOAT64};

// WithType calls f(S{}) for the storage type of `dtype` (the host's Dispatch).
template <typename F>
void WithType(int32_t dtype, F&& f) {
  switch (dtype) {
    case TSR_DTYPE_BOOL:
      return f(bool{});
    case TSR_DTYPE_UINT8:
      return f(uint8_t{});
    case TSR_DTYPE_INT8:
      return f(int8_t{});
    case TSR_DTYPE_INT16:
      return f(int16_t{});
    case TSR_DTYPE_INT32:
      return f(int32_t{});
    case TSR_DTYPE_INT64:
      return f(int64_t{});
    case TSR_DTYPE_FLOAT16:
      return f(Half{});
    case TSR_DTYPE_BFLOAT16:
      return f(BFloat16{});
    case TSR_DTYPE_FLOAT32:
      return f(float{});
    default:
      return f(double{});
  }
}

// Buffer: n elements of `dtype` (8 bytes each at most), written and read as double.
struct Buffer {
  int32_t dtype;
  std::vector<int64_t> bytes;  // 8-byte aligned storage
  Buffer(int32_t d, size_t n, double fill = 0) : dtype(d), bytes(n == 0 ? 1 : n) {
    for (size_t i = 0; i < n; ++i) Set(i, fill);
  }
  size_t Item() const { return ElementwiseSizeOf(dtype); }
  char* At(size_t i) { return reinterpret_cast<char*>(bytes.data()) + i * Item(); }
  void Set(size_t i, double v) { StoreAs(At(i), dtype, v); }
  double Get(size_t i) { return LoadAs<double>(At(i), dtype); }
};

// The value `v` as `dtype` stores it (rounded, wrapped, or != 0 for bool).
double AsDtype(double v, int32_t dtype) {
  Buffer b(dtype, 1);
  b.Set(0, v);
  return b.Get(0);
}

// A plan of `in` ([sizes], strides in elements, contiguous when empty) into `out`.
ReducePlan PlanOf(Buffer& in, const std::vector<int64_t>& sizes, Buffer& out,
                  const std::vector<bool>& reduced, bool write_reduced,
                  std::vector<int64_t> in_strides = {}, std::vector<int64_t> out_strides = {},
                  std::vector<int64_t>* indices = nullptr) {
  // A scan's output has the input's shape: contiguous strides unless told (MustPlan's default
  // is a reduction's, with the reduced dimensions of size 1).
  if (write_reduced && out_strides.empty()) out_strides = Contiguous(sizes);
  return MustPlan(in.bytes, in.dtype, sizes, out.bytes, out.dtype, reduced, in_strides, out_strides,
                  write_reduced, indices);
}

// Tolerance of a result stored in `dtype` (PyTorch's assert_close defaults), scaled by the
// magnitude of what was accumulated.
double Tolerance(int32_t dtype, double scale) {
  switch (dtype) {
    case TSR_DTYPE_FLOAT16:
      return 1e-3 * scale + 1e-5;
    case TSR_DTYPE_BFLOAT16:
      return 1.6e-2 * scale + 1e-5;
    case TSR_DTYPE_FLOAT32:
      return 1.3e-6 * scale * 4 + 1e-5;
    case TSR_DTYPE_FLOAT64:
      return 1e-7 * scale + 1e-7;
    default:
      return 0;
  }
}

// --- scans ----------------------------------------------------------------------------------

// ScanReference: cumsum / cumprod of `in` (already in the output's dtype) along `dim` of a
// contiguous [sizes], in double (int64 arithmetic, wrapping, for integers and bool).
std::vector<double> ScanReference(const std::vector<double>& in, const std::vector<int64_t>& sizes,
                                  int dim, bool prod, int32_t out_dtype) {
  const std::vector<int64_t> strides = Contiguous(sizes);
  std::vector<double> out(in.size());
  const bool integral = (kFloatingDtypes & DtypeBit(out_dtype)) == 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t pos = (static_cast<int64_t>(i) / strides[dim]) % sizes[dim];
    const int64_t first = static_cast<int64_t>(i) - pos * strides[dim];
    double acc = prod ? 1 : 0;
    uint64_t iacc = prod ? 1 : 0;
    for (int64_t k = 0; k <= pos; ++k) {
      const double x = in[first + k * strides[dim]];
      acc = prod ? acc * x : acc + x;
      const uint64_t xi = static_cast<uint64_t>(static_cast<int64_t>(x));
      iacc = prod ? iacc * xi : iacc + xi;
    }
    out[i] = integral ? AsDtype(static_cast<double>(static_cast<int64_t>(iacc)), out_dtype) : acc;
  }
  return out;
}

// RunScan: cumsum / cumprod of `in` along `dim` into a new buffer of `out_dtype`.
Buffer RunScan(Buffer& in, const std::vector<int64_t>& sizes, int dim, bool prod,
               int32_t out_dtype) {
  size_t n = 1;
  for (int64_t s : sizes) n *= static_cast<size_t>(s);
  Buffer out(out_dtype, n, -7);
  std::vector<bool> reduced(sizes.size(), false);
  if (!sizes.empty()) reduced[dim] = true;
  const ReducePlan plan = PlanOf(in, sizes, out, reduced, /*write_reduced=*/true);
  WithType(out_dtype, [&](auto tag) {
    using S = decltype(tag);
    RunScanOnHost(plan, ScanOp<S>{prod});
  });
  return out;
}

TEST(GpuScan, CumsumAndCumprodOfEveryDtypeAlongEachDimension) {
  // [3, 70, 5]: rows of 3 (stride 350), 70 (stride 5, T = 128), 5 (contiguous, T = 8).
  const std::vector<int64_t> sizes = {3, 70, 5};
  for (int32_t dtype : kEveryDtype) {
    for (bool prod : {false, true}) {
      for (int dim = 0; dim < 3; ++dim) {
        SCOPED_TRACE(std::to_string(dtype) + (prod ? " cumprod" : " cumsum") + " dim " +
                     std::to_string(dim));
        Buffer in(dtype, 3 * 70 * 5);
        std::vector<double> values(in.bytes.size());
        std::mt19937 rng(dtype * 10 + dim);
        for (size_t i = 0; i < 3 * 70 * 5; ++i) {
          // Products stay small: factors near 1 for floats, 1 or 2 (or -1) for integers.
          const double v = prod ? (dtype >= TSR_DTYPE_FLOAT16 ? 0.9 + (rng() % 21) / 100.0
                                                              : static_cast<double>(rng() % 3) - 1)
                                : static_cast<double>(rng() % 7) - 3;
          in.Set(i, v);
          values[i] = in.Get(i);
        }
        values.resize(3 * 70 * 5);
        // Integers and bool without dtype= scan into int64 (the meta function's rule).
        const int32_t out_dtype = dtype >= TSR_DTYPE_FLOAT16 ? dtype : TSR_DTYPE_INT64;
        Buffer out = RunScan(in, sizes, dim, prod, out_dtype);
        const std::vector<double> want = ScanReference(values, sizes, dim, prod, out_dtype);
        for (size_t i = 0; i < want.size(); ++i) {
          ASSERT_NEAR(out.Get(i), want[i], Tolerance(out_dtype, 1 + std::fabs(want[i]) * 8)) << i;
        }
      }
    }
  }
}

TEST(GpuScan, LongRowsCarryThePrefixAcrossChunks) {
  // Rows of 255, 256, 257 and 1000 (one block per row, 1 to 4 chunks of 256), int64 and double
  // (exact: small integers).
  for (int64_t n : {255, 256, 257, 1000}) {
    SCOPED_TRACE(n);
    Buffer in(TSR_DTYPE_FLOAT64, 2 * n);
    std::vector<double> values(2 * n);
    for (int64_t i = 0; i < 2 * n; ++i) {
      in.Set(i, static_cast<double>(i % 11) - 5);
      values[i] = in.Get(i);
    }
    const ReducePlan plan = [&] {
      Buffer probe(TSR_DTYPE_FLOAT64, 2 * n);
      return PlanOf(in, {2, n}, probe, {false, true}, true);
    }();
    EXPECT_EQ(plan.args.threads_per_output, 256u);
    EXPECT_EQ(plan.blocks, 2u);
    for (int32_t out_dtype : {TSR_DTYPE_FLOAT64, TSR_DTYPE_INT64}) {
      Buffer out = RunScan(in, {2, n}, 1, false, out_dtype);
      const std::vector<double> want = ScanReference(values, {2, n}, 1, false, out_dtype);
      for (int64_t i = 0; i < 2 * n; ++i) ASSERT_EQ(out.Get(i), want[i]) << i;
    }
  }
}

TEST(GpuScan, ManyShortRowsShareABlockAndTheLastBlockIsPartial) {
  // 3001 rows of 3: 4 threads per row, 64 rows per block, 47 blocks, the last one 57 rows short.
  Buffer in(TSR_DTYPE_INT32, 3001 * 3);
  std::vector<double> values(3001 * 3);
  for (size_t i = 0; i < values.size(); ++i) {
    in.Set(i, static_cast<double>(i % 9));
    values[i] = in.Get(i);
  }
  Buffer probe(TSR_DTYPE_INT64, 3001 * 3);
  const ReducePlan plan = PlanOf(in, {3001, 3}, probe, {false, true}, true);
  EXPECT_EQ(plan.args.threads_per_output, 4u);
  EXPECT_EQ(plan.blocks, 47u);
  Buffer out = RunScan(in, {3001, 3}, 1, false, TSR_DTYPE_INT64);
  const std::vector<double> want = ScanReference(values, {3001, 3}, 1, false, TSR_DTYPE_INT64);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(out.Get(i), want[i]) << i;
}

TEST(GpuScan, HalfAccumulatesInFloatAndRoundsEachOutput) {
  // 2048 + 1 = 2049 rounds to 2048 in float16, but the running sum stays 2049 in float, so the
  // third output is 2050 (a float16 accumulator would give 2048 again).
  Buffer in(TSR_DTYPE_FLOAT16, 3);
  in.Set(0, 2048);
  in.Set(1, 1);
  in.Set(2, 1);
  Buffer out = RunScan(in, {3}, 0, false, TSR_DTYPE_FLOAT16);
  EXPECT_EQ(out.Get(0), 2048);
  EXPECT_EQ(out.Get(1), 2048);
  EXPECT_EQ(out.Get(2), 2050);
}

TEST(GpuScan, IntegersWrapInTheOutputDtypeAndBoolScansAsCounts) {
  // int32 in, int8 out (dtype=int8): the input is converted first, the sum wraps.
  Buffer in(TSR_DTYPE_INT32, 3);
  in.Set(0, 100);
  in.Set(1, 100);
  in.Set(2, 300);  // 300 as int8 is 44
  Buffer wrapped = RunScan(in, {3}, 0, false, TSR_DTYPE_INT8);
  EXPECT_EQ(wrapped.Get(0), 100);
  EXPECT_EQ(wrapped.Get(1), static_cast<int8_t>(200));
  EXPECT_EQ(wrapped.Get(2), static_cast<int8_t>(244));
  // int64 products wrap modulo 2^64: 2^62 * 4 = 0.
  Buffer big(TSR_DTYPE_INT64, 2);
  *reinterpret_cast<int64_t*>(big.At(0)) = int64_t{1} << 62;
  *reinterpret_cast<int64_t*>(big.At(1)) = 4;
  Buffer product = RunScan(big, {2}, 0, true, TSR_DTYPE_INT64);
  EXPECT_EQ(*reinterpret_cast<int64_t*>(product.At(0)), int64_t{1} << 62);
  EXPECT_EQ(*reinterpret_cast<int64_t*>(product.At(1)), 0);
  // bool: counts in int64; with dtype=bool, "any so far" (cumsum) and "all so far" (cumprod).
  Buffer flags(TSR_DTYPE_BOOL, 5);
  for (int i = 0; i < 5; ++i) flags.Set(i, i == 1 || i == 3 ? 1 : 0);
  Buffer counts = RunScan(flags, {5}, 0, false, TSR_DTYPE_INT64);
  EXPECT_THAT(std::vector<double>(
                  {counts.Get(0), counts.Get(1), counts.Get(2), counts.Get(3), counts.Get(4)}),
              ElementsAre(0, 1, 1, 2, 2));
  Buffer seen = RunScan(flags, {5}, 0, false, TSR_DTYPE_BOOL);
  EXPECT_THAT(std::vector<double>({seen.Get(0), seen.Get(1), seen.Get(4)}), ElementsAre(0, 1, 1));
}

TEST(GpuScan, NanAndInfinityFollowTheArithmetic) {
  Buffer in(TSR_DTYPE_FLOAT32, 4);
  in.Set(0, 2);
  in.Set(1, kInf);
  in.Set(2, 0);
  in.Set(3, 3);
  Buffer prod = RunScan(in, {4}, 0, true, TSR_DTYPE_FLOAT32);
  EXPECT_EQ(prod.Get(0), 2);
  EXPECT_EQ(prod.Get(1), kInf);
  EXPECT_TRUE(std::isnan(prod.Get(2)));  // inf * 0
  EXPECT_TRUE(std::isnan(prod.Get(3)));
  in.Set(1, kNan);
  Buffer sum = RunScan(in, {4}, 0, false, TSR_DTYPE_FLOAT32);
  EXPECT_EQ(sum.Get(0), 2);
  EXPECT_TRUE(std::isnan(sum.Get(1)) && std::isnan(sum.Get(3)));
}

TEST(GpuScan, ZeroDimEmptyAndStridedTensors) {
  // 0-dim: the output is the input (converted).
  Buffer scalar(TSR_DTYPE_INT16, 1);
  scalar.Set(0, -9);
  Buffer copied = RunScan(scalar, {}, 0, true, TSR_DTYPE_INT64);
  EXPECT_EQ(copied.Get(0), -9);
  // Empty: along a dimension of size 0 (rows with nothing to scan) or with no rows; nothing
  // is written and the launcher is not called (blocks or the row length are 0).
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{4, 0}, {0, 4}}) {
    Buffer none(TSR_DTYPE_FLOAT32, 0), out(TSR_DTYPE_FLOAT32, 0, 5);
    const ReducePlan plan = PlanOf(none, sizes, out, {false, true}, true);
    EXPECT_TRUE(plan.blocks == 0 || plan.args.reduced == 0);
    RunScanOnHost(plan, ScanOp<float>{false});
    EXPECT_EQ(out.Get(0), 0);  // the one placeholder element, untouched
  }
  // A transposed input ([5, 3] viewed from a [3, 5] buffer) scanned along dim 1 (stride 5)
  // into a strided output (every other element of a [5, 6] buffer).
  Buffer in(TSR_DTYPE_FLOAT64, 15);
  for (int i = 0; i < 15; ++i) in.Set(i, i + 1);
  Buffer out(TSR_DTYPE_FLOAT64, 30, -1);
  const ReducePlan plan = PlanOf(in, {5, 3}, out, {false, true}, true, {1, 5}, {6, 2});
  RunScanOnHost(plan, ScanOp<double>{false});
  for (int r = 0; r < 5; ++r) {
    double acc = 0;
    for (int c = 0; c < 3; ++c) {
      acc += r + c * 5 + 1;
      ASSERT_EQ(out.Get(r * 6 + c * 2), acc) << r << " " << c;
      ASSERT_EQ(out.Get(r * 6 + c * 2 + 1), -1);  // the gaps are untouched
    }
  }
}

TEST(GpuScan, InPlaceScansReadEveryElementBeforeItIsWritten) {
  // cumsum_ passes self as out: rows of 600 (3 chunks of 256) and of 3 (many rows per block),
  // the output the input's own memory.
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{4, 600}, {500, 3}}) {
    const size_t n = static_cast<size_t>(sizes[0] * sizes[1]);
    Buffer data(TSR_DTYPE_FLOAT64, n);
    std::vector<double> values(n);
    for (size_t i = 0; i < n; ++i) {
      data.Set(i, static_cast<double>(i % 13) - 6);
      values[i] = data.Get(i);
    }
    RunScanOnHost(PlanOf(data, sizes, data, {false, true}, true), ScanOp<double>{false});
    const std::vector<double> want = ScanReference(values, sizes, 1, false, TSR_DTYPE_FLOAT64);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(data.Get(i), want[i]) << i;
  }
}

// --- max.dim / min.dim ----------------------------------------------------------------------

TEST(GpuMaxDim, ValuesAndFirstIndicesOfEveryDtypeWithNanWinning) {
  // [4, 300] along dim 1 (one block per row) and along dim 0 (T = 4, 64 columns per block).
  for (int32_t dtype : kEveryDtype) {
    for (bool max : {true, false}) {
      for (int dim : {0, 1}) {
        SCOPED_TRACE(std::to_string(dtype) + (max ? " max" : " min") + " dim " +
                     std::to_string(dim));
        Buffer in(dtype, 4 * 300);
        std::mt19937 rng(dtype + dim);
        for (int i = 0; i < 1200; ++i) in.Set(i, static_cast<double>(rng() % 5));  // many ties
        const bool floating = dtype >= TSR_DTYPE_FLOAT16;
        if (floating) {
          in.Set(1 * 300 + 7, kNan);  // row 1, column 7
          in.Set(1 * 300 + 9, kNan);
          in.Set(3 * 300 + 7, -kInf);
        }
        const int64_t outputs = dim == 1 ? 4 : 300, n = dim == 1 ? 300 : 4;
        Buffer values(dtype, outputs);
        std::vector<int64_t> indices(outputs, -5);
        std::vector<bool> reduced = {dim == 0, dim == 1};
        const ReducePlan plan = PlanOf(in, {4, 300}, values, reduced, false, {}, {}, &indices);
        WithType(dtype, [&](auto tag) {
          using S = decltype(tag);
          RunReduceOnHost(plan, ValueIndexReducer<S>{{max}});
        });
        for (int64_t o = 0; o < outputs; ++o) {
          double best = 0;
          int64_t at = -1;
          for (int64_t k = 0; k < n; ++k) {
            const double x = in.Get(dim == 1 ? o * 300 + k : k * 300 + o);
            const bool better = at < 0 || (std::isnan(x) && !std::isnan(best)) ||
                                (!std::isnan(best) && (max ? x > best : x < best));
            if (better) {
              best = x;
              at = k;
            }
          }
          if (std::isnan(best)) {
            ASSERT_TRUE(std::isnan(values.Get(o))) << o;
          } else {
            ASSERT_EQ(values.Get(o), best) << o;
          }
          ASSERT_EQ(indices[o], at) << o;
        }
        if (floating && dim == 1) {
          EXPECT_TRUE(std::isnan(values.Get(1)));
          EXPECT_EQ(indices[1], 7);  // the first NaN
        }
      }
    }
  }
}

TEST(GpuMaxDim, KeepdimStridedIndicesZeroDimAndTheUnaryForm) {
  // [2, 3, 4] over dim 1 into values [2, 1, 4] and indices written through strides of a
  // [2, 1, 8] buffer (every other element): the plan keeps the two layouts apart.
  Buffer in(TSR_DTYPE_INT32, 24);
  for (int i = 0; i < 24; ++i) in.Set(i, (i * 7) % 5);
  Buffer values(TSR_DTYPE_INT32, 8);
  std::vector<int64_t> indices(16, -1);
  ReduceSpec spec;
  spec.in = in.At(0);
  spec.in_dtype = TSR_DTYPE_INT32;
  spec.sizes = {2, 3, 4};
  spec.in_strides = {12, 4, 1};
  spec.out = values.At(0);
  spec.out_dtype = TSR_DTYPE_INT32;
  spec.out_strides = {4, 4, 1};
  spec.reduced = {false, true, false};
  spec.indices = reinterpret_cast<char*>(indices.data());
  spec.indices_strides = {8, 8, 2};
  ReducePlan plan;
  std::string error;
  ASSERT_TRUE(MakeReducePlan(spec, &plan, &error)) << error;
  RunReduceOnHost(plan, ValueIndexReducer<int32_t>{{true}});
  for (int b = 0; b < 2; ++b) {
    for (int c = 0; c < 4; ++c) {
      int best = -1, at = -1;
      for (int k = 0; k < 3; ++k) {
        const int x = (((b * 12 + k * 4 + c) * 7) % 5);
        if (x > best) best = x, at = k;
      }
      EXPECT_EQ(values.Get(b * 4 + c), best);
      EXPECT_EQ(indices[b * 8 + c * 2], at);
      EXPECT_EQ(indices[b * 8 + c * 2 + 1], -1);
    }
  }
  // A negative index stride is refused like the others.
  spec.indices_strides = {8, 8, -2};
  EXPECT_FALSE(MakeReducePlan(spec, &plan, &error));
  // 0-dim: the value itself at index 0.
  Buffer scalar(TSR_DTYPE_BFLOAT16, 1), value(TSR_DTYPE_BFLOAT16, 1);
  scalar.Set(0, -2.5);
  std::vector<int64_t> index(1, -1);
  RunReduceOnHost(PlanOf(scalar, {}, value, {}, false, {}, {}, &index),
                  ValueIndexReducer<BFloat16>{{false}});
  EXPECT_EQ(value.Get(0), -2.5);
  EXPECT_EQ(index[0], 0);
  // max.unary_out / min.unary_out: ExtremumReducer over every dimension, every dtype.
  for (int32_t dtype : kEveryDtype) {
    Buffer many(dtype, 1000), result(dtype, 1);
    for (int i = 0; i < 1000; ++i) many.Set(i, (i * 37) % 101 % 2 == 0 ? 1 : 0);
    many.Set(613, dtype == TSR_DTYPE_BOOL ? 1 : 5);
    many.Set(17, dtype == TSR_DTYPE_BOOL || dtype == TSR_DTYPE_UINT8 ? 0 : -3);
    for (bool max : {true, false}) {
      WithType(dtype, [&](auto tag) {
        using S = decltype(tag);
        RunReduceOnHost(PlanOf(many, {10, 100}, result, {true, true}, false),
                        ExtremumReducer<S>{max});
      });
      const double want = max ? (dtype == TSR_DTYPE_BOOL ? 1 : 5)
                              : (dtype == TSR_DTYPE_BOOL || dtype == TSR_DTYPE_UINT8 ? 0 : -3);
      EXPECT_EQ(result.Get(0), want) << dtype << (max ? " max" : " min");
    }
  }
}

// --- any / all ------------------------------------------------------------------------------

TEST(GpuAnyAll, EveryDtypeIntoBoolOrUint8WithNanNegativeZeroAndEmptyRows) {
  // [3, 400]: row 0 all zero, row 1 one nonzero at 399, row 2 all nonzero.
  for (int32_t dtype : kEveryDtype) {
    Buffer in(dtype, 3 * 400);
    for (int i = 0; i < 400; ++i) {
      in.Set(i, dtype >= TSR_DTYPE_FLOAT16 && i % 2 ? -0.0 : 0);
      in.Set(400 + i, i == 399 ? 1 : 0);
      in.Set(800 + i, 1 + i % 3);
    }
    const int32_t out_dtype = dtype == TSR_DTYPE_UINT8 ? TSR_DTYPE_UINT8 : TSR_DTYPE_BOOL;
    for (bool any : {true, false}) {
      Buffer out(out_dtype, 3, 7);
      WithType(dtype, [&](auto tag) {
        using S = decltype(tag);
        RunReduceOnHost(PlanOf(in, {3, 400}, out, {false, true}, false), AnyAllReducer<S>{any});
      });
      SCOPED_TRACE(std::to_string(dtype) + (any ? " any" : " all"));
      EXPECT_EQ(out.Get(0), 0);
      EXPECT_EQ(out.Get(1), any ? 1 : 0);
      EXPECT_EQ(out.Get(2), 1);
      EXPECT_EQ(out_dtype == TSR_DTYPE_UINT8 ? *reinterpret_cast<uint8_t*>(out.At(1)) : 0,
                out_dtype == TSR_DTYPE_UINT8 && any ? 1 : 0);  // exactly 1, not "nonzero"
    }
  }
  // A NaN is nonzero; over no element any is false and all is true.
  Buffer nan(TSR_DTYPE_FLOAT32, 2);
  nan.Set(0, 0);
  nan.Set(1, kNan);
  Buffer flag(TSR_DTYPE_BOOL, 1);
  RunReduceOnHost(PlanOf(nan, {2}, flag, {true}, false), AnyAllReducer<float>{true});
  EXPECT_EQ(flag.Get(0), 1);
  Buffer none(TSR_DTYPE_INT32, 0), empty_rows(TSR_DTYPE_BOOL, 2, 1);
  RunReduceOnHost(PlanOf(none, {2, 0}, empty_rows, {false, true}, false),
                  AnyAllReducer<int32_t>{true});
  EXPECT_EQ(empty_rows.Get(0), 0);
  EXPECT_EQ(empty_rows.Get(1), 0);
  RunReduceOnHost(PlanOf(none, {2, 0}, empty_rows, {false, true}, false),
                  AnyAllReducer<int32_t>{false});
  EXPECT_EQ(empty_rows.Get(0), 1);
}

// --- logsumexp ------------------------------------------------------------------------------

double LogSumExpReference(const std::vector<double>& x) {
  double m = -kInf;
  for (double v : x) {
    if (std::isnan(v)) return kNan;
    m = std::max(m, v);
  }
  if (m == -kInf || m == kInf) return m;
  double s = 0;
  for (double v : x) s += std::exp(v - m);
  return m + std::log(s);
}

TEST(GpuLogSumExp, EveryFloatingDtypeStableWithInfinitiesNanAndEmptyRows) {
  // Rows of 500 random values, one shifted by 1000 (exp overflows without the max), one all
  // -inf, one with +inf, one with -inf among finite ones, one with a NaN.
  constexpr int kRows = 6, kN = 500;
  for (int32_t dtype : kFloatingDtype) {
    SCOPED_TRACE(dtype);
    Buffer in(dtype, kRows * kN);
    std::mt19937 rng(dtype);
    std::vector<std::vector<double>> rows(kRows, std::vector<double>(kN));
    for (int r = 0; r < kRows; ++r) {
      for (int i = 0; i < kN; ++i) {
        double v = static_cast<double>(rng() % 2001) / 100 - 10;
        if (r == 1) v += 1000;
        if (r == 2) v = -kInf;
        if (r == 3 && i == 250) v = kInf;
        if (r == 4 && i % 3 == 0) v = -kInf;
        if (r == 5 && i == 499) v = kNan;
        in.Set(r * kN + i, v);
        rows[r][i] = in.Get(r * kN + i);
      }
    }
    Buffer out(dtype, kRows);
    WithType(dtype, [&](auto tag) {
      using S = decltype(tag);
      if constexpr (kIsFloat<S>) {
        RunReduceOnHost(PlanOf(in, {kRows, kN}, out, {false, true}, false), LogSumExpReducer<S>{});
      }
    });
    for (int r = 0; r < kRows; ++r) {
      const double want = LogSumExpReference(rows[r]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out.Get(r))) << r;
      } else if (std::isinf(want)) {
        EXPECT_EQ(out.Get(r), want) << r;
      } else {
        EXPECT_NEAR(out.Get(r), want, Tolerance(dtype, std::fabs(want))) << r;
      }
    }
  }
  // Over no element: -inf. An int32 input read as float32 (the output's dtype).
  Buffer none(TSR_DTYPE_FLOAT32, 0), empty(TSR_DTYPE_FLOAT32, 3, 1);
  RunReduceOnHost(PlanOf(none, {3, 0}, empty, {false, true}, false), LogSumExpReducer<float>{});
  EXPECT_EQ(empty.Get(0), -kInf);
  Buffer ints(TSR_DTYPE_INT32, 2), lse(TSR_DTYPE_FLOAT32, 1);
  ints.Set(0, 1);
  ints.Set(1, 1);
  RunReduceOnHost(PlanOf(ints, {2}, lse, {true}, false), LogSumExpReducer<float>{});
  EXPECT_NEAR(lse.Get(0), 1 + std::log(2.0), 1e-6);
}

// --- norm -----------------------------------------------------------------------------------

double NormReference(const std::vector<double>& x, double p) {
  if (p == kInf || p == -kInf) {
    double r = p > 0 ? 0 : kInf;
    for (double v : x) {
      if (std::isnan(v)) return kNan;
      r = p > 0 ? std::max(r, std::fabs(v)) : std::min(r, std::fabs(v));
    }
    return r;
  }
  double s = 0;
  for (double v : x) s += p == 0 ? (v != 0) : std::pow(std::fabs(v), p);
  return p == 0 ? s : std::pow(s, 1 / p);
}

TEST(GpuNorm, EveryPOfEveryFloatingDtype) {
  constexpr int kRows = 3, kN = 300;
  for (int32_t dtype : kFloatingDtype) {
    Buffer in(dtype, kRows * kN);
    std::vector<std::vector<double>> rows(kRows, std::vector<double>(kN));
    std::mt19937 rng(dtype);
    for (int r = 0; r < kRows; ++r) {
      for (int i = 0; i < kN; ++i) {
        double v = static_cast<double>(rng() % 401) / 100 - 2;
        if (r == 1 && i % 4 == 0) v = 0;
        if (r == 1 && i == 5) v = -0.0;
        in.Set(r * kN + i, v);
        rows[r][i] = in.Get(r * kN + i);
      }
    }
    for (double p : {2.0, 1.0, kInf, -kInf, 0.0, 3.0, 0.5, -1.0}) {
      SCOPED_TRACE(std::to_string(dtype) + " p " + std::to_string(p));
      Buffer out(dtype, kRows);
      WithType(dtype, [&](auto tag) {
        using S = decltype(tag);
        if constexpr (kIsFloat<S>) {
          RunReduceOnHost(PlanOf(in, {kRows, kN}, out, {false, true}, false),
                          NormReducer<S>{static_cast<OpMath<S>>(p)});
        }
      });
      for (int r = 0; r < kRows; ++r) {
        const double want = AsDtype(NormReference(rows[r], p), dtype);  // inf past float16's max
        if (std::isinf(want)) {
          EXPECT_EQ(out.Get(r), want) << r;
        } else {
          EXPECT_NEAR(out.Get(r), want, Tolerance(dtype, std::fabs(want) * 4)) << r;
        }
      }
    }
  }
  // NaN propagates through the inf norms; over no element: 0, and +inf for p = -inf.
  Buffer nan(TSR_DTYPE_FLOAT64, 3);
  nan.Set(0, 5);
  nan.Set(1, kNan);
  nan.Set(2, -7);
  Buffer one(TSR_DTYPE_FLOAT64, 1);
  for (double p : {kInf, -kInf, 2.0}) {
    RunReduceOnHost(PlanOf(nan, {3}, one, {true}, false), NormReducer<double>{p});
    EXPECT_TRUE(std::isnan(one.Get(0))) << p;
  }
  RunReduceOnHost(PlanOf(nan, {3}, one, {true}, false), NormReducer<double>{0});
  EXPECT_EQ(one.Get(0), 3);  // p = 0 counts a NaN as nonzero
  Buffer none(TSR_DTYPE_FLOAT32, 0), empty(TSR_DTYPE_FLOAT32, 1, 9);
  for (double p : {2.0, kInf, 0.0, -kInf}) {
    RunReduceOnHost(PlanOf(none, {0}, empty, {true}, false),
                    NormReducer<float>{static_cast<float>(p)});
    EXPECT_EQ(empty.Get(0), p == -kInf ? kInf : 0) << p;
  }
}

}  // namespace
}  // namespace gpu
}  // namespace tessera
