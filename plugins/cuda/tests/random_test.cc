// The GPU random kernels (random.h) run on the host: every (block, thread) of every launch of a
// plan, as a GPU would, against the CPU backend's definition written out here from the SDK's
// functions (plugins/cpu/random.cc, docs/random.md): element i of the output in row-major order
// takes draw.block(i); float64 uniform_double, the others uniform_float with from and to
// rounded to float; normal in double, rounded to float; float16 and bfloat16 round that float
// with the SDK's to_half / to_bfloat16. Bits are compared, not values.
//
// This proves the kernel body's indexing, chunking and rounding; it cannot prove that a device's
// log, sqrt and cos give the host's bits (docs/random.md: a float64 normal_ may differ in its
// last bit where they do not).
#include "random.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tessera/sdk/half.hpp"
#include "tessera/sdk/random.hpp"

namespace tessera {
namespace gpu {
namespace {

// RunRandomOnHost runs every launch of `plan` as the GPU would: each thread of each block.
template <typename T, RandomKind kKind>
void RunRandomOnHost(const RandomPlan& plan) {
  const std::string error =
      ForEachRandomLaunch(plan, [&](const RandomArgs& a, uint32_t blocks) -> std::string {
        for (uint32_t b = 0; b < blocks; ++b) {
          for (uint32_t t = 0; t < kThreadsPerBlock; ++t) {
            switch (plan.indexing) {
              case RandomIndexing::kContiguous:
                RandomThreadBody<T, kKind, RandomIndexing::kContiguous>(a, b, t);
                break;
              case RandomIndexing::kNarrow:
                RandomThreadBody<T, kKind, RandomIndexing::kNarrow>(a, b, t);
                break;
              case RandomIndexing::kWide:
                RandomThreadBody<T, kKind, RandomIndexing::kWide>(a, b, t);
                break;
            }
          }
        }
        return "";
      });
  EXPECT_EQ(error, "");
}

// CpuBits: the bits of the CPU backend's value of T (as uint64) for element i.
template <typename T, RandomKind kKind>
uint64_t CpuBits(const sdk::RandomDraw& draw, uint64_t i, double p0, double p1) {
  const sdk::PhiloxBlock b = draw.block(i);
  double d = 0;
  float f = 0;
  if constexpr (kKind == RandomKind::kUniform) {
    if constexpr (std::is_same_v<T, double>) {
      d = sdk::uniform_double(b, p0, p1);
    } else {
      f = sdk::uniform_float(b, static_cast<float>(p0), static_cast<float>(p1));
    }
  } else {
    d = sdk::normal(b, p0, p1);
    f = static_cast<float>(d);
  }
  uint64_t bits = 0;
  if constexpr (std::is_same_v<T, double>) {
    std::memcpy(&bits, &d, sizeof d);
  } else if constexpr (std::is_same_v<T, float>) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof f);
    bits = u;
  } else if constexpr (std::is_same_v<T, Half>) {
    bits = sdk::to_half(f).bits;
  } else {
    bits = sdk::to_bfloat16(f).bits;
  }
  return bits;
}

template <typename T>
uint64_t BitsAt(const std::vector<T>& buf, size_t k) {
  uint64_t bits = 0;
  std::memcpy(&bits, &buf[k], sizeof(T));
  return bits;
}

// Layout: an output's sizes and strides (elements) over a storage of `storage` elements.
struct Layout {
  const char* name;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t storage;
};

const Layout kLayouts[] = {
    {"contiguous", {3, 5, 7}, {35, 7, 1}, 105},
    {"zero_dim", {}, {}, 1},
    {"contiguous_blocks", {5000}, {1}, 5000},  // several blocks, the last one partial
    {"transposed", {5, 7}, {1, 5}, 35},
    {"transposed_blocks", {1000, 3}, {1, 1000}, 3000},
    {"sliced", {4, 3, 6}, {40, 12, 2}, 160},
    {"size_one_dims", {2, 1, 3, 1, 4}, {24, 99, 8, 7, 2}, 48},
    {"merged_outer", {2, 3, 4, 5}, {120, 40, 1, 4}, 240},  // 2x3 merge, 4x5 transposed
};

struct Params {
  double p0, p1;
};
const Params kUniformParams[] = {{0, 1}, {-3.5, 1e4}, {0.1, 0.3}};
const Params kNormalParams[] = {{0, 1}, {2.5, 3}, {-1e3, 1e-3}};

// How the plan is made: the defaults, or small launches with either indexing.
struct Mode {
  const char* name;
  uint64_t max_chunk;
  uint64_t max_narrow;
};
const Mode kModes[] = {
    {"default", kRandomMaxChunk, INT32_MAX},
    {"chunks_of_100_narrow", 100, INT32_MAX},
    {"chunks_of_1031_wide", 1031, 0},
};

// Check: the kernel body writes exactly the CPU definition's bits at every element of
// `layout`, and nothing else of the storage.
template <typename T, RandomKind kKind>
void Check(const Layout& layout, const Mode& mode, const Params& p, const sdk::RandomDraw& draw) {
  SCOPED_TRACE(std::string(layout.name) + ", " + mode.name + ", p0 " + std::to_string(p.p0) +
               ", p1 " + std::to_string(p.p1) + ", itemsize " + std::to_string(sizeof(T)));
  std::vector<T> buf(static_cast<size_t>(layout.storage));
  std::memset(buf.data(), 0xab, buf.size() * sizeof(T));
  const uint64_t sentinel = BitsAt(buf, 0);

  RandomPlan plan;
  std::string error;
  ASSERT_TRUE(MakeRandomPlan(reinterpret_cast<char*>(buf.data()), layout.sizes, layout.strides,
                             &plan, &error, mode.max_chunk, mode.max_narrow))
      << error;
  plan.args.draw = draw;
  plan.args.p0 = p.p0;
  plan.args.p1 = p.p1;
  plan.args.f0 = static_cast<float>(p.p0);
  plan.args.f1 = static_cast<float>(p.p1);
  RunRandomOnHost<T, kKind>(plan);

  // The reference: positions in row-major order by an odometer over the sizes (outermost first).
  std::vector<bool> written(buf.size(), false);
  std::vector<int64_t> index(layout.sizes.size(), 0);
  uint64_t numel = 1;
  for (const int64_t s : layout.sizes) numel *= static_cast<uint64_t>(s);
  ASSERT_EQ(plan.numel, numel);
  for (uint64_t i = 0; i < numel; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += index[d] * layout.strides[d];
    ASSERT_EQ(BitsAt(buf, static_cast<size_t>(offset)), (CpuBits<T, kKind>(draw, i, p.p0, p.p1)))
        << "element " << i << " at offset " << offset;
    written[static_cast<size_t>(offset)] = true;
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < layout.sizes[d]) break;
      index[d] = 0;
    }
  }
  for (size_t k = 0; k < buf.size(); ++k) {
    if (!written[k]) {
      ASSERT_EQ(BitsAt(buf, k), sentinel) << "storage element " << k;
    }
  }
}

template <typename T>
void CheckAllLayouts(const sdk::RandomDraw& draw) {
  for (const Layout& layout : kLayouts) {
    for (const Mode& mode : kModes) {
      for (const Params& p : kUniformParams) Check<T, RandomKind::kUniform>(layout, mode, p, draw);
      for (const Params& p : kNormalParams) Check<T, RandomKind::kNormal>(layout, mode, p, draw);
    }
  }
}

// Two draws: PyTorch's default seed at offset 0, and words above 2^32 in both seed and offset.
const sdk::RandomDraw kDraws[] = {{67280421310721u, 0}, {0x0123456789abcdefu, 0xfedcba9876543210u}};

TEST(GpuRandomKernel, Float32GivesTheCpuBackendsBits) {
  for (const sdk::RandomDraw& draw : kDraws) CheckAllLayouts<float>(draw);
}
TEST(GpuRandomKernel, Float64GivesTheCpuBackendsBits) {
  for (const sdk::RandomDraw& draw : kDraws) CheckAllLayouts<double>(draw);
}
TEST(GpuRandomKernel, Float16GivesTheCpuBackendsBits) {
  for (const sdk::RandomDraw& draw : kDraws) CheckAllLayouts<Half>(draw);
}
TEST(GpuRandomKernel, BFloat16GivesTheCpuBackendsBits) {
  for (const sdk::RandomDraw& draw : kDraws) CheckAllLayouts<BFloat16>(draw);
}

TEST(GpuRandomPlan, DenseOutputsAreContiguousOthersIndexed) {
  RandomPlan plan;
  std::string error;
  ASSERT_TRUE(MakeRandomPlan(nullptr, {2, 1, 3}, {3, 3, 1}, &plan, &error));
  EXPECT_EQ(plan.indexing, RandomIndexing::kContiguous);
  ASSERT_TRUE(MakeRandomPlan(nullptr, {}, {}, &plan, &error));
  EXPECT_EQ(plan.indexing, RandomIndexing::kContiguous);
  EXPECT_EQ(plan.numel, 1u);
  ASSERT_TRUE(MakeRandomPlan(nullptr, {3, 2}, {1, 3}, &plan, &error));
  EXPECT_EQ(plan.indexing, RandomIndexing::kNarrow);
  EXPECT_EQ(plan.args.ndim, 2);
  ASSERT_TRUE(MakeRandomPlan(nullptr, {4, 6}, {12, 2}, &plan, &error));  // every other element
  EXPECT_EQ(plan.indexing, RandomIndexing::kNarrow);
  EXPECT_EQ(plan.args.ndim, 1);
  EXPECT_EQ(plan.args.strides[0], 2);
}

TEST(GpuRandomPlan, EmptyOutputsLaunchNothing) {
  RandomPlan plan;
  std::string error;
  ASSERT_TRUE(MakeRandomPlan(nullptr, {3, 0, 5}, {0, 5, 1}, &plan, &error));
  EXPECT_EQ(plan.numel, 0u);
  int launches = 0;
  ForEachRandomLaunch(plan, [&](const RandomArgs&, uint32_t) -> std::string {
    ++launches;
    return "";
  });
  EXPECT_EQ(launches, 0);
}

TEST(GpuRandomPlan, RefusesMoreDimensionsThanTheKernelsTake) {
  std::vector<int64_t> sizes, strides;
  int64_t stride = 1;
  for (int d = 0; d <= kMaxDims; ++d) {  // strides 3^k over sizes 2: nothing merges
    sizes.insert(sizes.begin(), 2);
    strides.insert(strides.begin(), stride);
    stride *= 3;
  }
  RandomPlan plan;
  std::string error;
  EXPECT_FALSE(MakeRandomPlan(nullptr, sizes, strides, &plan, &error));
  EXPECT_NE(error.find("13 dimensions"), std::string::npos) << error;
}

// More than 2^32 elements: launches of kRandomMaxChunk elements in order with 64-bit positions,
// and an element past 2^32 takes the block of its whole position (the counter's high word).
TEST(GpuRandomPlan, HugeOutputsUseWidePositions) {
  std::vector<float> buf(16);
  RandomPlan plan;
  std::string error;
  // 2^36 elements over 16 floats: the two outer dimensions (stride 0) merge into 2^32.
  ASSERT_TRUE(MakeRandomPlan(reinterpret_cast<char*>(buf.data()), {4, int64_t{1} << 30, 16},
                             {0, 0, 1}, &plan, &error))
      << error;
  EXPECT_EQ(plan.numel, uint64_t{1} << 36);
  EXPECT_EQ(plan.indexing, RandomIndexing::kWide);
  ASSERT_EQ(plan.args.ndim, 2);
  EXPECT_EQ(plan.args.sizes[1], int64_t{1} << 32);

  uint64_t expected_first = 0;
  int launches = 0;
  ForEachRandomLaunch(plan, [&](const RandomArgs& a, uint32_t blocks) -> std::string {
    EXPECT_EQ(a.first, expected_first);
    EXPECT_EQ(a.numel, kRandomMaxChunk);
    EXPECT_EQ(blocks, kRandomMaxChunk / (kThreadsPerBlock * kElementsPerThread));
    expected_first += a.numel;
    ++launches;
    return "";
  });
  EXPECT_EQ(launches, 64);

  // One window of a launch past 2^32: positions first..first+9 land at offsets 3..12.
  const sdk::RandomDraw draw{42, 7};
  RandomArgs a = plan.args;
  a.draw = draw;
  a.p0 = a.f0 = -2;
  a.p1 = a.f1 = 5;
  a.first = (uint64_t{1} << 32) + (uint64_t{1} << 31) + 3;
  a.numel = 10;
  for (uint32_t t = 0; t < kThreadsPerBlock; ++t) {
    RandomThreadBody<float, RandomKind::kUniform, RandomIndexing::kWide>(a, 0, t);
  }
  for (uint64_t k = 0; k < 10; ++k) {
    const uint64_t i = a.first + k;
    EXPECT_EQ(BitsAt(buf, 3 + k), (CpuBits<float, RandomKind::kUniform>(draw, i, -2, 5)))
        << "position " << i;
  }
}

}  // namespace
}  // namespace gpu
}  // namespace tessera
