// The GPU reductions on the host (Note [GPU reductions] in reduce.h): the plans, and each
// kernel's per-thread work run for every thread of every block, phase by phase between the
// barriers, as kernels_reduce.cu runs it on a GPU.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
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
using ::testing::HasSubstr;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// RunSoftmaxOnHost: SoftmaxKernel, phase by phase, with the plan's 32-bit or 64-bit arguments.
template <typename S, typename A>
void RunSoftmaxOnHost(const A& a, uint32_t blocks, bool log) {
  const SoftmaxStatsReducer<S> stats;
  const uint32_t T = a.threads_per_output;
  std::vector<typename SoftmaxStatsReducer<S>::Acc> shared(kReduceThreads);
  for (uint32_t b = 0; b < blocks; ++b) {
    for (uint32_t t = 0; t < kReduceThreads; ++t) {
      shared[t] = ThreadPartial(a, stats, OutputOf(a, b, t), t % T);
    }
    for (uint32_t half = T / 2; half > 0; half /= 2) {
      for (uint32_t t = 0; t < kReduceThreads; ++t) {
        CombineStep(stats, shared.data(), t, t % T, half);
      }
    }
    for (uint32_t t = 0; t < kReduceThreads; ++t) {
      const auto& row = shared[t - t % T];
      SoftmaxWrite<S>(a, OutputOf(a, b, t), t % T, row.max, row.sum, log);
    }
  }
}
template <typename S>
void RunSoftmaxOnHost(const ReducePlan& plan, bool log) {
  if (plan.wide) {
    RunSoftmaxOnHost<S>(plan.wide_args, plan.blocks, log);
  } else {
    RunSoftmaxOnHost<S>(plan.args, plan.blocks, log);
  }
}

TEST(GpuReducePlan, ThreadsPerOutputIsThePowerOfTwoAboveTheRowUpToABlock) {
  EXPECT_EQ(ThreadsPerOutput(0), 1u);
  EXPECT_EQ(ThreadsPerOutput(1), 1u);
  EXPECT_EQ(ThreadsPerOutput(3), 4u);
  EXPECT_EQ(ThreadsPerOutput(256), 256u);
  EXPECT_EQ(ThreadsPerOutput(1 << 20), 256u);
}

TEST(GpuReducePlan, MergesDimensionsOfEachKindAndRefusesWhatItCannotIndex) {
  std::vector<float> in(2 * 3 * 4 * 5), out(3 * 5);
  // Reduce dims 0 and 2 of [2, 3, 4, 5]: they are not neighbours in memory, so they stay two.
  const ReducePlan plan = MustPlan(in, TSR_DTYPE_FLOAT32, {2, 3, 4, 5}, out, TSR_DTYPE_FLOAT32,
                                   {true, false, true, false});
  EXPECT_EQ(plan.args.outputs, 15u);
  EXPECT_EQ(plan.args.reduced, 8u);
  EXPECT_EQ(plan.args.kept_ndim, 2);
  EXPECT_EQ(plan.args.reduced_ndim, 2);
  EXPECT_EQ(plan.args.threads_per_output, 8u);
  EXPECT_EQ(plan.blocks, 1u);
  // The last two dims of a contiguous tensor merge into one reduced dimension.
  const ReducePlan rows = MustPlan(in, TSR_DTYPE_FLOAT32, {2, 3, 4, 5}, out, TSR_DTYPE_FLOAT32,
                                   {false, false, true, true});
  EXPECT_EQ(rows.args.reduced_ndim, 1);
  EXPECT_EQ(rows.args.kept_ndim, 1);
  ReduceSpec spec;
  spec.in = reinterpret_cast<const char*>(in.data());
  spec.sizes = {4};
  spec.in_strides = {-1};
  spec.out_strides = {0};
  spec.reduced = {true};
  spec.out = reinterpret_cast<char*>(out.data());
  ReducePlan p;
  std::string error;
  EXPECT_FALSE(MakeReducePlan(spec, &p, &error));
  EXPECT_THAT(error, HasSubstr("negative stride"));
  // 2^31 elements: a launch in 64-bit indices (the plan never reads memory).
  spec.sizes = {int64_t{1} << 31};
  spec.in_strides = {1};
  ASSERT_TRUE(MakeReducePlan(spec, &p, &error)) << error;
  EXPECT_TRUE(p.wide);
  EXPECT_EQ(p.wide_args.reduced, uint64_t{1} << 31);
  EXPECT_EQ(p.reduced(), uint64_t{1} << 31);
  EXPECT_EQ(p.splits, 1024u);  // one output, a long row: split (Note [Split reductions])
  EXPECT_EQ(p.blocks, 1024u);
  // 2^29 - 1 float32 elements (bytes below 2^31) stay in 32 bits.
  spec.sizes = {(int64_t{1} << 29) - 1};
  ASSERT_TRUE(MakeReducePlan(spec, &p, &error)) << error;
  EXPECT_FALSE(p.wide);
  // More outputs than a launch's blocks can take (2^40 outputs, 256 per block).
  spec.sizes = {int64_t{1} << 40};
  spec.out_strides = {1};
  spec.reduced = {false};
  EXPECT_FALSE(MakeReducePlan(spec, &p, &error));
  EXPECT_THAT(error, HasSubstr("1099511627776 outputs need 4294967296 blocks, more than a "
                               "launch's 2^31 - 1"));
  // No output element: nothing to launch.
  spec.sizes = {0, 4};
  spec.in_strides = {4, 1};
  spec.out_strides = {1, 0};
  spec.reduced = {false, true};
  ASSERT_TRUE(MakeReducePlan(spec, &p, &error)) << error;
  EXPECT_EQ(p.blocks, 0u);
}

TEST(GpuReducePlan, ExtentsPast32BitIndexingPlanA64BitLaunch) {
  // Few elements, but a byte extent past INT32_MAX: the launch's offsets are 64-bit, and reach
  // (the plan never reads memory, so the pointers need not span it).
  float in[8] = {}, out[8] = {};
  int64_t indices[8] = {};
  ReduceSpec spec;
  spec.in = reinterpret_cast<const char*>(in);
  spec.out = reinterpret_cast<char*>(out);
  spec.sizes = {4, 2};
  spec.reduced = {false, true};
  ReducePlan p;
  std::string error;
  uint64_t in_offset = 0, out_offset = 0;
  // The input: 3 * 2^30 elements * 4 bytes past its start.
  spec.in_strides = {int64_t{1} << 30, 1};
  spec.out_strides = {1, 0};
  ASSERT_TRUE(MakeReducePlan(spec, &p, &error)) << error;
  EXPECT_TRUE(p.wide);
  KeptOffsets(p.wide_args, uint64_t{3}, &in_offset, &out_offset);
  EXPECT_EQ(in_offset, uint64_t{3} << 32);
  EXPECT_EQ(out_offset, 12u);
  // The output.
  spec.in_strides = {2, 1};
  spec.out_strides = {int64_t{1} << 30, 0};
  ASSERT_TRUE(MakeReducePlan(spec, &p, &error)) << error;
  EXPECT_TRUE(p.wide);
  KeptOffsets(p.wide_args, uint64_t{3}, &in_offset, &out_offset);
  EXPECT_EQ(out_offset, uint64_t{3} << 32);
  // max.dim's indices (int64): 3 * 2^29 * 8 bytes.
  spec.out_strides = {1, 0};
  spec.indices = reinterpret_cast<char*>(indices);
  spec.indices_strides = {int64_t{1} << 29, 0};
  ASSERT_TRUE(MakeReducePlan(spec, &p, &error)) << error;
  EXPECT_TRUE(p.wide);
  EXPECT_EQ(KeptIndexOffset(p.wide_args, uint64_t{3}), uint64_t{3} << 32);
  // Within bounds, the same shapes plan in 32 bits.
  spec.indices_strides = {1, 0};
  ASSERT_TRUE(MakeReducePlan(spec, &p, &error)) << error;
  EXPECT_FALSE(p.wide);
}

// Few outputs with long rows are split across blocks (Note [Split reductions]); many outputs,
// short rows, softmax and the scans are not.
TEST(GpuReducePlan, FewLongRowsAreSplitAcrossBlocks) {
  float in = 0, out[4096] = {};
  auto plan = [&](std::vector<int64_t> sizes, std::vector<bool> reduced, bool write_reduced = false,
                  uint32_t splits = 0) {
    ReduceSpec spec;
    spec.in = reinterpret_cast<const char*>(&in);
    spec.out = reinterpret_cast<char*>(out);
    spec.sizes = sizes;
    spec.in_strides.assign(sizes.size(), 0);  // an expanded scalar: the plan reads nothing
    spec.out_strides.assign(sizes.size(), 0);
    spec.reduced = reduced;
    spec.write_reduced = write_reduced;
    spec.splits = splits;
    ReducePlan p;
    std::string error;
    EXPECT_TRUE(MakeReducePlan(spec, &p, &error)) << error;
    return p;
  };
  ReducePlan p = plan({16 << 20}, {true});  // a full sum of 16M elements
  EXPECT_EQ(p.splits, 1024u);
  EXPECT_EQ(p.blocks, 1024u);
  EXPECT_EQ(p.args.threads_per_output, 256u);
  EXPECT_EQ(p.finish_threads, 256u);
  EXPECT_EQ(p.finish_blocks, 1u);
  EXPECT_EQ(p.workspace_bytes(), 1024u * kSplitAccBytes);
  p = plan({4, 1 << 24}, {false, true});  // 4 rows of 16M: 256 blocks each
  EXPECT_EQ(p.splits, 256u);
  EXPECT_EQ(p.blocks, 1024u);
  p = plan({4, 1 << 20}, {false, true});  // 4 rows of 1M: 64 blocks of 16,384 elements each
  EXPECT_EQ(p.splits, 64u);
  EXPECT_EQ(p.blocks, 256u);
  p = plan({3, 200000}, {false, true});  // each split folds at least kSplitMinElements
  EXPECT_EQ(p.splits, 200000u / kSplitMinElements);
  EXPECT_EQ(p.finish_threads, 16u);
  EXPECT_EQ(plan({1, 2 * kSplitMinElements - 1}, {false, true}).splits, 1u);  // too short
  EXPECT_EQ(plan({1, 2 * kSplitMinElements}, {false, true}).splits, 2u);
  EXPECT_EQ(plan({1100, 100000}, {false, true}).splits, 1u);  // enough blocks unsplit
  EXPECT_EQ(plan({16 << 20}, {true}, false, 1).splits, 1u);   // asked not to
  EXPECT_EQ(plan({16 << 20}, {true}, false, 1).workspace_bytes(), 0u);
  EXPECT_EQ(plan({2, 16 << 20}, {false, true}, true).splits, 1u);  // softmax, a scan
  ReduceSpec spec;
  spec.in = reinterpret_cast<const char*>(&in);
  spec.out = reinterpret_cast<char*>(out);
  spec.sizes = {1000};
  spec.in_strides = {1};
  spec.out_strides = {1};
  spec.reduced = {true};
  spec.write_reduced = true;
  spec.splits = 4;
  ReducePlan refused;
  std::string error;
  EXPECT_FALSE(MakeReducePlan(spec, &refused, &error));
  EXPECT_THAT(error, HasSubstr("cannot be split"));
  // A split launch's thread steps kReduceThreads * splits elements in 32 bits: bounded.
  spec.write_reduced = false;
  spec.out_strides = {0};
  spec.splits = kMaxSplits + 1;
  EXPECT_FALSE(MakeReducePlan(spec, &refused, &error));
  EXPECT_THAT(error, HasSubstr("65537 splits asked for; at most 65536"));
  spec.splits = kMaxSplits;
  EXPECT_TRUE(MakeReducePlan(spec, &refused, &error)) << error;
  // Outputs times splits past a launch's grid, without overflowing on the way.
  spec.sizes = {int64_t{1} << 48, 4};
  spec.in_strides = {4, 1};
  spec.out_strides = {1, 0};
  spec.reduced = {false, true};
  EXPECT_FALSE(MakeReducePlan(spec, &refused, &error));
  EXPECT_THAT(error, HasSubstr("more than a launch's 2^31 - 1"));
}

// Split launches give the unsplit ones' results: exactly where the fold's order cannot matter
// (integers, extrema and their first index, any / all, sums of small integers in double),
// closely where it can (var, logsumexp, float sums); over strided and several reduced
// dimensions, splits that do not divide the row, a last finishing block partly past the
// outputs, and in 64-bit indices.
TEST(GpuReduce, SplitLaunchesAgreeWithUnsplitOnes) {
  const std::vector<int64_t> sizes = {7, 3, 2100};
  std::vector<double> in(7 * 3 * 2100);
  std::mt19937 rng(11);
  for (double& x : in) x = static_cast<int>(rng() % 201) - 100;
  in[5000] = 1000;  // a maximum in the middle of a split, and a tie
  in[9000] = 1000;
  for (const std::vector<bool>& reduced :
       {std::vector<bool>{false, false, true}, std::vector<bool>{true, false, true},
        std::vector<bool>{true, true, true}, std::vector<bool>{true, true, false}}) {
    for (bool wide : {false, true}) {
      std::vector<double> unsplit(in.size()), split(in.size());
      std::vector<int64_t> unsplit_index(in.size()), split_index(in.size());
      auto both = [&](auto&& run, double tolerance) {
        std::fill(unsplit.begin(), unsplit.end(), 0.0);
        std::fill(split.begin(), split.end(), 0.0);
        run(MustPlan(in, TSR_DTYPE_FLOAT64, sizes, unsplit, TSR_DTYPE_FLOAT64, reduced, {}, {},
                     false, &unsplit_index, wide, /*splits=*/1));
        const ReducePlan p = MustPlan(in, TSR_DTYPE_FLOAT64, sizes, split, TSR_DTYPE_FLOAT64,
                                      reduced, {}, {}, false, &split_index, wide, /*splits=*/13);
        ASSERT_EQ(p.splits, 13u);
        run(p);
        for (size_t i = 0; i < in.size(); ++i) {
          ASSERT_NEAR(split[i], unsplit[i], tolerance * (1 + std::fabs(unsplit[i]))) << i;
        }
      };
      both([](const ReducePlan& p) { RunReduceOnHost(p, SumReducer<double>{0}); }, 0);
      both([](const ReducePlan& p) { RunReduceOnHost(p, SumReducer<double>{1}); }, 1e-15);
      both([](const ReducePlan& p) { RunReduceOnHost(p, ExtremumReducer<double>{true}); }, 0);
      both([](const ReducePlan& p) { RunReduceOnHost(p, ExtremumReducer<double>{false}); }, 0);
      both([](const ReducePlan& p) { RunReduceOnHost(p, ValueIndexReducer<double>{{true}}); }, 0);
      EXPECT_EQ(split_index, unsplit_index);
      both([](const ReducePlan& p) { RunReduceOnHost(p, VarReducer<double>{1, true}); }, 1e-12);
      both([](const ReducePlan& p) { RunReduceOnHost(p, LogSumExpReducer<double>{}); }, 1e-12);
      both([](const ReducePlan& p) { RunReduceOnHost(p, NormReducer<double>{2}); }, 1e-12);
      both([](const ReducePlan& p) { RunReduceOnHost(p, AnyAllReducer<double>{false}); }, 0);
    }
  }
  // NaN wins max and argmax at its first index, across splits; prod and any over float32.
  std::vector<float> f(3 * 40000);
  for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0f + ((i * 37) % 11 == 0 ? 1e-6f : 0.0f);
  f[50000] = NAN;
  f[90000] = NAN;
  for (bool wide : {false, true}) {
    std::vector<float> unsplit(3), split(3);
    std::vector<int64_t> unsplit_index(3), split_index(3);
    auto both = [&](auto&& run, uint32_t splits) {
      run(MustPlan(f, TSR_DTYPE_FLOAT32, {3, 40000}, unsplit, TSR_DTYPE_FLOAT32, {false, true}, {},
                   {}, false, &unsplit_index, wide, 1));
      run(MustPlan(f, TSR_DTYPE_FLOAT32, {3, 40000}, split, TSR_DTYPE_FLOAT32, {false, true}, {},
                   {}, false, &split_index, wide, splits));
    };
    both([](const ReducePlan& p) { RunReduceOnHost(p, ValueIndexReducer<float>{{true}}); }, 7);
    EXPECT_TRUE(std::isnan(split[1]) && std::isnan(split[2]));
    EXPECT_EQ(split[0], unsplit[0]);
    EXPECT_EQ(split_index, unsplit_index);
    EXPECT_EQ(split_index[1], 50000 - 40000);
    both([](const ReducePlan& p) { RunReduceOnHost(p, SumReducer<float>{2}); }, 5);  // prod
    EXPECT_NEAR(split[0], unsplit[0], 1e-5 * unsplit[0]);
    both([](const ReducePlan& p) { RunReduceOnHost(p, AnyAllReducer<float>{true}); }, 3);
    EXPECT_EQ(split, unsplit);
  }
  // argmax to an int64 output: the first index of the maximum over everything.
  std::vector<int64_t> first(1);
  RunReduceOnHost(MustPlan(in, TSR_DTYPE_FLOAT64, sizes, first, TSR_DTYPE_INT64, {true, true, true},
                           {}, {}, false, nullptr, false, /*splits=*/9),
                  ArgReducer<double>{{true}});
  EXPECT_EQ(first[0], 5000);
}

// A full float32 sum of 2^20 ones in a split launch (chosen by the plan): every partial stays
// short, so the result is exact.
TEST(GpuReduce, AFullSumIsSplitAndExact) {
  std::vector<float> in(1 << 20, 1.0f), out(1);
  const ReducePlan p = MustPlan(in, TSR_DTYPE_FLOAT32, {1 << 20}, out, TSR_DTYPE_FLOAT32, {true});
  EXPECT_GT(p.splits, 1u);
  RunReduceOnHost(p, SumReducer<float>{0});
  EXPECT_EQ(out[0], static_cast<float>(1 << 20));
}

// The 64-bit launches (force_wide) give the 32-bit ones' results, bit for bit, on shapes with
// several kept and reduced dimensions, strides, rows longer than a block and a partial block.
TEST(GpuReducePlan, WideLaunchesAgreeWithNarrowOnes) {
  const std::vector<int64_t> sizes = {3, 5, 300};
  std::vector<float> in(3 * 5 * 300);
  for (size_t i = 0; i < in.size(); ++i) in[i] = std::sin(0.37f * static_cast<float>(i)) * 5;
  for (const std::vector<bool>& reduced :
       {std::vector<bool>{false, false, true}, std::vector<bool>{true, false, true},
        std::vector<bool>{false, true, false}, std::vector<bool>{true, true, true}}) {
    std::vector<float> narrow(in.size()), wide(in.size());
    std::vector<int64_t> narrow_index(in.size()), wide_index(in.size());
    auto both = [&](auto&& run) {
      std::fill(narrow.begin(), narrow.end(), 0.f);
      std::fill(wide.begin(), wide.end(), 0.f);
      run(MustPlan(in, TSR_DTYPE_FLOAT32, sizes, narrow, TSR_DTYPE_FLOAT32, reduced, {}, {}, false,
                   &narrow_index));
      const ReducePlan w = MustPlan(in, TSR_DTYPE_FLOAT32, sizes, wide, TSR_DTYPE_FLOAT32, reduced,
                                    {}, {}, false, &wide_index, /*force_wide=*/true);
      EXPECT_TRUE(w.wide);
      run(w);
      EXPECT_EQ(narrow, wide);
    };
    both([](const ReducePlan& p) { RunReduceOnHost(p, SumReducer<float>{1}); });
    both([](const ReducePlan& p) { RunReduceOnHost(p, VarReducer<float>{1, true}); });
    both([](const ReducePlan& p) { RunReduceOnHost(p, ValueIndexReducer<float>{{true}}); });
    EXPECT_EQ(narrow_index, wide_index);
    both([](const ReducePlan& p) { RunReduceOnHost(p, LogSumExpReducer<float>{}); });
  }
  // Softmax and the scans: the output has the input's shape.
  for (int dim = 0; dim < 3; ++dim) {
    std::vector<bool> reduced(3, false);
    reduced[static_cast<size_t>(dim)] = true;
    const std::vector<int64_t> strides = {1500, 300, 1};
    for (bool log : {false, true}) {
      std::vector<float> narrow(in.size()), wide(in.size());
      RunSoftmaxOnHost<float>(MustPlan(in, TSR_DTYPE_FLOAT32, sizes, narrow, TSR_DTYPE_FLOAT32,
                                       reduced, {}, strides, true),
                              log);
      RunSoftmaxOnHost<float>(MustPlan(in, TSR_DTYPE_FLOAT32, sizes, wide, TSR_DTYPE_FLOAT32,
                                       reduced, {}, strides, true, nullptr, true),
                              log);
      EXPECT_EQ(narrow, wide) << dim << log;
    }
    std::vector<float> narrow(in.size()), wide(in.size());
    RunScanOnHost(MustPlan(in, TSR_DTYPE_FLOAT32, sizes, narrow, TSR_DTYPE_FLOAT32, reduced, {},
                           strides, true),
                  ScanOp<float>{false});
    RunScanOnHost(MustPlan(in, TSR_DTYPE_FLOAT32, sizes, wide, TSR_DTYPE_FLOAT32, reduced, {},
                           strides, true, nullptr, true),
                  ScanOp<float>{false});
    EXPECT_EQ(narrow, wide) << dim;
  }
}

// A wide launch's thread may fold more than 2^24 elements (rows past 2^32 with 256 threads):
// its float partials are folded in chunks (kWideChunk), and var's count is an integer, so
// neither stops growing at 2^24. One thread (T = 1) over 2^25 + 2^21 elements of a stride-0
// (expanded) input shows it on the host.
TEST(GpuReducePlan, AWideThreadFoldsMoreThan2To24ElementsExactly) {
  const int64_t n = (int64_t{1} << 25) + (int64_t{1} << 21);
  float one = 1, out = 0;
  ReduceSpec spec;
  spec.in = reinterpret_cast<const char*>(&one);
  spec.out = reinterpret_cast<char*>(&out);
  spec.sizes = {n};
  spec.in_strides = {0};
  spec.out_strides = {0};
  spec.reduced = {true};
  spec.force_wide = true;
  ReducePlan plan;
  std::string error;
  ASSERT_TRUE(MakeReducePlan(spec, &plan, &error)) << error;
  WideReduceArgs a = plan.wide_args;
  a.threads_per_output = 1;
  const float sum = ThreadPartial(a, SumReducer<float>{0}, uint64_t{0}, 0);
  EXPECT_EQ(sum, static_cast<float>(n));  // not 2^24
  // var of 0, 2, 0, 2, ...: 1.
  const float pattern[2] = {0, 2};
  spec.in = reinterpret_cast<const char*>(pattern);
  spec.sizes = {n / 2, 2};
  spec.in_strides = {0, 1};
  spec.out_strides = {0, 0};
  spec.reduced = {true, true};
  ASSERT_TRUE(MakeReducePlan(spec, &plan, &error)) << error;
  a = plan.wide_args;
  a.threads_per_output = 1;
  const auto acc = ThreadPartial(a, VarReducer<float>{0, false}, uint64_t{0}, 0);
  EXPECT_EQ(acc.n, static_cast<uint64_t>(n));
  const VarReducer<float> var{0, false};
  EXPECT_NEAR(var.Finish(acc, 0), 1.0, 1e-3);
  // Nothing reduced (an empty input): NaN whatever the correction, as ATen fills it; a
  // correction of -1 would otherwise give 0 / 1.
  const VarReducer<float> negative{-1, false};
  EXPECT_TRUE(std::isnan(negative.Finish(decltype(acc){}, 0)));
}

TEST(GpuReduce, SumMeanProdOverDimListsAndManyBlocks) {
  // [300, 7] summed over dim 1 (300 outputs, 8 threads each: 10 blocks) and over dim 0.
  std::vector<float> in(300 * 7);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 13) - 6;
  std::vector<float> rows(300), columns(7);
  const ReducePlan by_row =
      MustPlan(in, TSR_DTYPE_FLOAT32, {300, 7}, rows, TSR_DTYPE_FLOAT32, {false, true});
  EXPECT_EQ(by_row.blocks, 10u);
  RunReduceOnHost(by_row, SumReducer<float>{0});
  for (int r = 0; r < 300; ++r) {
    float want = 0;
    for (int c = 0; c < 7; ++c) want += in[r * 7 + c];
    ASSERT_EQ(rows[r], want) << r;
  }
  RunReduceOnHost(
      MustPlan(in, TSR_DTYPE_FLOAT32, {300, 7}, columns, TSR_DTYPE_FLOAT32, {true, false}),
      SumReducer<float>{1});
  for (int c = 0; c < 7; ++c) {
    double want = 0;
    for (int r = 0; r < 300; ++r) want += in[r * 7 + c];
    EXPECT_FLOAT_EQ(columns[c], static_cast<float>(want / 300)) << c;
  }
  // int32 input summed into int64 (the input read in the output's dtype), every dim.
  std::vector<int32_t> ints = {INT32_MAX, INT32_MAX, -5, 7};
  std::vector<int64_t> total(1);
  RunReduceOnHost(MustPlan(ints, TSR_DTYPE_INT32, {2, 2}, total, TSR_DTYPE_INT64, {true, true}),
                  SumReducer<int64_t>{0});
  EXPECT_EQ(total[0], int64_t{2} * INT32_MAX + 2);
  // prod of uint8 wraps in its dtype, computed in int64.
  std::vector<uint8_t> bytes = {16, 17, 3}, product(1);
  RunReduceOnHost(MustPlan(bytes, TSR_DTYPE_UINT8, {3}, product, TSR_DTYPE_UINT8, {true}),
                  SumReducer<uint8_t>{2});
  EXPECT_EQ(product[0], static_cast<uint8_t>(16 * 17 * 3));
  // float16 sums accumulate in float and round once: 2048 + 1 + 1 = 2050, not 2048.
  std::vector<double> h = {2048, 1, 1};
  std::vector<uint16_t> half_out(1);
  RunReduceOnHost(MustPlan(h, TSR_DTYPE_FLOAT64, {3}, half_out, TSR_DTYPE_FLOAT16, {true}),
                  SumReducer<Half>{0});
  EXPECT_EQ(ToFloat(Half{half_out[0]}), 2050.0f);
  // An empty reduction: sum 0, prod 1, mean NaN.
  std::vector<float> none, zero_out(2, -1);
  RunReduceOnHost(
      MustPlan(none, TSR_DTYPE_FLOAT32, {2, 0}, zero_out, TSR_DTYPE_FLOAT32, {false, true}),
      SumReducer<float>{2});
  EXPECT_THAT(zero_out, ElementsAre(1, 1));
  RunReduceOnHost(
      MustPlan(none, TSR_DTYPE_FLOAT32, {2, 0}, zero_out, TSR_DTYPE_FLOAT32, {false, true}),
      SumReducer<float>{1});
  EXPECT_TRUE(std::isnan(zero_out[0]));
}

TEST(GpuReduce, LongRowsUseAWholeBlockAndAStridedInput) {
  // 5 rows of 1000 taken with a stride (every other column of [5, 2000]).
  std::vector<double> in(5 * 2000);
  std::mt19937 rng(3);
  for (double& x : in) x = static_cast<int>(rng() % 2001) - 1000;
  std::vector<double> out(5);
  const ReducePlan plan = MustPlan(in, TSR_DTYPE_FLOAT64, {5, 1000}, out, TSR_DTYPE_FLOAT64,
                                   {false, true}, {2000, 2}, {1, 0});
  EXPECT_EQ(plan.args.threads_per_output, 256u);
  EXPECT_EQ(plan.blocks, 5u);
  RunReduceOnHost(plan, SumReducer<double>{0});
  for (int r = 0; r < 5; ++r) {
    double want = 0;
    for (int c = 0; c < 1000; ++c) want += in[r * 2000 + 2 * c];
    EXPECT_EQ(out[r], want);
  }
}

TEST(GpuReduce, AmaxAminPropagateNanAndArgmaxTakesTheFirstIndex) {
  std::vector<double> in = {1,     5,     5,     -2,    //
                            3,     kNan,  9,     kNan,  //
                            -kInf, -kInf, -kInf, -kInf};
  std::vector<double> max(3), min(3);
  const auto plan = [&](std::vector<double>& out) {
    return MustPlan(in, TSR_DTYPE_FLOAT64, {3, 4}, out, TSR_DTYPE_FLOAT64, {false, true});
  };
  RunReduceOnHost(plan(max), ExtremumReducer<double>{true});
  RunReduceOnHost(plan(min), ExtremumReducer<double>{false});
  EXPECT_EQ(max[0], 5);
  EXPECT_TRUE(std::isnan(max[1]));
  EXPECT_EQ(max[2], -kInf);
  EXPECT_EQ(min[0], -2);
  EXPECT_TRUE(std::isnan(min[1]));
  std::vector<int64_t> argmax(3), argmin(3);
  RunReduceOnHost(MustPlan(in, TSR_DTYPE_FLOAT64, {3, 4}, argmax, TSR_DTYPE_INT64, {false, true}),
                  ArgReducer<double>{{true}});
  RunReduceOnHost(MustPlan(in, TSR_DTYPE_FLOAT64, {3, 4}, argmin, TSR_DTYPE_INT64, {false, true}),
                  ArgReducer<double>{{false}});
  EXPECT_THAT(argmax, ElementsAre(1, 1, 0));
  EXPECT_THAT(argmin, ElementsAre(3, 1, 0));
  // Over every dimension: the index in the flattened input; ties across lanes go to the first.
  std::vector<int32_t> ints(1000, 7);
  ints[600] = 9;
  ints[900] = 9;
  std::vector<int64_t> flat(1);
  RunReduceOnHost(MustPlan(ints, TSR_DTYPE_INT32, {10, 100}, flat, TSR_DTYPE_INT64, {true, true}),
                  ArgReducer<int32_t>{{true}});
  EXPECT_EQ(flat[0], 600);
  RunReduceOnHost(MustPlan(ints, TSR_DTYPE_INT32, {10, 100}, flat, TSR_DTYPE_INT64, {true, true}),
                  ArgReducer<int32_t>{{false}});
  EXPECT_EQ(flat[0], 0);
  std::vector<uint8_t> flags = {0, 1, 1, 0}, any(1);
  RunReduceOnHost(MustPlan(flags, TSR_DTYPE_BOOL, {4}, any, TSR_DTYPE_BOOL, {true}),
                  ExtremumReducer<bool>{true});
  EXPECT_EQ(any[0], 1);
}

TEST(GpuReduce, VarAndStdWithCorrection) {
  std::vector<float> in(3 * 500);
  std::mt19937 rng(5);
  for (float& x : in) x = 1000 + static_cast<float>(rng() % 1000) / 100;
  std::vector<float> var(3), std_out(3);
  const auto plan = [&](std::vector<float>& out) {
    return MustPlan(in, TSR_DTYPE_FLOAT32, {3, 500}, out, TSR_DTYPE_FLOAT32, {false, true});
  };
  RunReduceOnHost(plan(var), VarReducer<float>{1.0f, false});
  RunReduceOnHost(plan(std_out), VarReducer<float>{0.0f, true});
  for (int r = 0; r < 3; ++r) {
    double mean = 0, m2 = 0;
    for (int i = 0; i < 500; ++i) mean += in[r * 500 + i];
    mean /= 500;
    for (int i = 0; i < 500; ++i) m2 += (in[r * 500 + i] - mean) * (in[r * 500 + i] - mean);
    EXPECT_NEAR(var[r], m2 / 499, 1e-4 * m2 / 499) << r;
    EXPECT_NEAR(std_out[r], std::sqrt(m2 / 500), 1e-4 * std::sqrt(m2 / 500)) << r;
  }
  // One element with correction 1: 0 / 0.
  std::vector<double> one = {4}, v(1);
  RunReduceOnHost(MustPlan(one, TSR_DTYPE_FLOAT64, {1}, v, TSR_DTYPE_FLOAT64, {true}),
                  VarReducer<double>{1.0, false});
  EXPECT_TRUE(std::isnan(v[0]));
}

TEST(GpuReduce, SoftmaxOverTheLastAndAnInnerDimension) {
  // [4, 3, 5]: softmax over dim 2 (rows of 5, contiguous) and over dim 1 (rows of 3, stride 5).
  std::vector<float> in(4 * 3 * 5);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>((i * 7) % 11) - 5;
  in[3] = 1000;  // large: max subtraction keeps it finite
  for (int dim : {2, 1}) {
    SCOPED_TRACE(dim);
    for (bool log : {false, true}) {
      std::vector<float> out(in.size());
      std::vector<bool> reduced = {false, false, false};
      reduced[dim] = true;
      const std::vector<int64_t> strides = Contiguous({4, 3, 5});
      RunSoftmaxOnHost<float>(MustPlan(in, TSR_DTYPE_FLOAT32, {4, 3, 5}, out, TSR_DTYPE_FLOAT32,
                                       reduced, strides, strides, /*write_reduced=*/true),
                              log);
      const int64_t n = dim == 2 ? 5 : 3, step = dim == 2 ? 1 : 5;
      for (int64_t i = 0; i < 60; ++i) {
        const int64_t pos = (i / step) % n;
        const int64_t first = i - pos * step;
        double max = -kInf, sum = 0;
        for (int64_t k = 0; k < n; ++k) max = std::max(max, double{in[first + k * step]});
        for (int64_t k = 0; k < n; ++k) sum += std::exp(in[first + k * step] - max);
        const double want = log ? in[i] - max - std::log(sum) : std::exp(in[i] - max) / sum;
        ASSERT_NEAR(out[i], want, 1e-5 * (1 + std::fabs(want))) << i;
      }
    }
  }
  // float16 in, float out (half_to_float), a NaN row stays NaN.
  std::vector<double> h = {1, 2, kNan, 3};
  std::vector<float> f(4);
  RunSoftmaxOnHost<Half>(MustPlan(h, TSR_DTYPE_FLOAT64, {2, 2}, f, TSR_DTYPE_FLOAT32, {false, true},
                                  {2, 1}, {2, 1}, true),
                         false);
  EXPECT_NEAR(f[0], 1 / (1 + std::exp(1.0)), 1e-6);
  EXPECT_TRUE(std::isnan(f[2]) && std::isnan(f[3]));
}

// The one-pass statistics give the two-pass definition's special values (PyTorch's): rows with
// -inf among finite values, only -inf, a +inf, a NaN, long rows whose maximum comes late and
// lanes that see only -inf; each value against softmax computed here in double from its
// definition (max first, then the sum).
TEST(GpuReduce, SoftmaxStatisticsInOnePassKeepTheSpecialValues) {
  const std::vector<std::vector<double>> rows = {
      {-kInf, 1, 2, -kInf},   {-kInf, -kInf, -kInf, -kInf}, {1, kInf, 2, 3},
      {kInf, kInf, -kInf, 0}, {1, kNan, -kInf, 2},          {-3, -2, -1, 0},
  };
  for (bool log : {false, true}) {
    for (const std::vector<double>& row : rows) {
      std::vector<double> in = row, out(4);
      RunSoftmaxOnHost<double>(
          MustPlan(in, TSR_DTYPE_FLOAT64, {4}, out, TSR_DTYPE_FLOAT64, {true}, {1}, {1}, true),
          log);
      double max = -kInf, sum = 0;
      bool nan = false;
      for (double x : row) nan = nan || std::isnan(x), max = std::max(max, x);
      if (nan) max = kNan;
      for (double x : row) sum += std::exp(x - max);
      for (size_t i = 0; i < row.size(); ++i) {
        const double want = log ? row[i] - max - std::log(sum) : std::exp(row[i] - max) / sum;
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(out[i]))
              << log << " row " << &row - rows.data() << " [" << i << "]";
        } else if (std::isinf(want)) {  // log_softmax of -inf
          EXPECT_EQ(out[i], want) << log << " row " << &row - rows.data() << " [" << i << "]";
        } else {
          EXPECT_NEAR(out[i], want, 1e-12 * (1 + std::fabs(want)))
              << log << " row " << &row - rows.data() << " [" << i << "]";
        }
      }
    }
  }
  // Rows of 600 (lanes of 256 fold two or three elements each): a +inf or a NaN after finite
  // values in the same lane, and finite values after them.
  for (double special : {kInf, kNan}) {
    std::vector<double> in(600), out(600);
    for (size_t i = 0; i < in.size(); ++i) in[i] = std::sin(0.1 * static_cast<double>(i));
    in[256 + 3] = special;  // lane 3's second element
    RunSoftmaxOnHost<double>(
        MustPlan(in, TSR_DTYPE_FLOAT64, {600}, out, TSR_DTYPE_FLOAT64, {true}, {1}, {1}, true),
        false);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_TRUE(std::isnan(out[i])) << special << " " << i;
  }
  // 3000 elements rising to a late maximum (rescaled many times), with -inf in some lanes.
  std::vector<float> in(3000), out(3000);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = i % 7 == 0 ? -INFINITY : 0.01f * static_cast<float>(i);
  RunSoftmaxOnHost<float>(
      MustPlan(in, TSR_DTYPE_FLOAT32, {3000}, out, TSR_DTYPE_FLOAT32, {true}, {1}, {1}, true),
      false);
  double max = -kInf, sum = 0, total = 0;
  for (float x : in) max = std::max(max, double{x});
  for (float x : in) sum += std::exp(x - max);
  for (size_t i = 0; i < in.size(); ++i) {
    const double want = std::exp(in[i] - max) / sum;
    ASSERT_NEAR(out[i], want, 2e-6 * want + 1e-12) << i;
    total += out[i];
  }
  EXPECT_NEAR(total, 1.0, 1e-5);
}

}  // namespace
}  // namespace gpu
}  // namespace tessera
