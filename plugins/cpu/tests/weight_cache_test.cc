// The CPU plugin's cache of reordered immutable tensors (plugins/cpu/weight_cache.hpp): a copy
// is made once per (immutable id, view layout, target layout) and found again; another id or
// target layout makes another; past the bound (TESSERA_CPU_WEIGHT_CACHE_MB) the least recently
// used go, and a copy larger than the bound is not kept. Compiled in (the plugin is a module
// that exports one symbol).
#include "weight_cache.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace cpu {
namespace {

// A float32 view of `sizes` (contiguous), with no data: the cache reads only its layout.
struct FakeView {
  std::vector<int64_t> sizes, strides;
  tsr_tensor_view c{};
  explicit FakeView(std::vector<int64_t> s) : sizes(std::move(s)), strides(sizes.size(), 1) {
    for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * sizes[d];
    c.struct_size = sizeof c;
    c.sizes = sizes.data();
    c.strides = strides.data();
    c.ndim = static_cast<int32_t>(sizes.size());
    c.dtype = TSR_DTYPE_FLOAT32;
    c.flags = TSR_VIEW_CONTIGUOUS | TSR_VIEW_IMMUTABLE;
  }
  sdk::TensorView view() const { return sdk::TensorView(c); }
};

dnnl::memory::desc Blocked(int64_t o, int64_t i) {
  return dnnl::memory::desc({o, i, 3, 3}, dnnl::memory::data_type::f32,
                            dnnl::memory::format_tag::OIhw16i16o);
}

// Get: the copy for (view, id, md), counting the reorders the cache asked for.
weight_cache::Copy Get(const FakeView& v, uint64_t id, const dnnl::memory::desc& md,
                       int* reorders) {
  return weight_cache::get(v.view(), id, md, [&](void* dst) {
    ++*reorders;
    std::memset(dst, 0x5a, md.get_size());
  });
}

size_t BoundMb() {
  const char* env = std::getenv("TESSERA_CPU_WEIGHT_CACHE_MB");
  return env ? std::strtoull(env, nullptr, 10) : 512;
}

TEST(WeightCache, ACopyIsMadeOncePerIdAndLayout) {
  if (BoundMb() < 16) GTEST_SKIP() << "needs the default bound";
  const FakeView w({32, 16, 3, 3});
  int reorders = 0;
  const weight_cache::Copy a = Get(w, 101, Blocked(32, 16), &reorders);
  ASSERT_NE(a.data, nullptr);
  EXPECT_EQ(static_cast<const unsigned char*>(a.data.get())[0], 0x5a);
  const weight_cache::Copy b = Get(w, 101, Blocked(32, 16), &reorders);
  EXPECT_EQ(reorders, 1) << "the second call finds the first's copy";
  EXPECT_EQ(a.data.get(), b.data.get());
  Get(w, 102, Blocked(32, 16), &reorders);
  EXPECT_EQ(reorders, 2) << "another immutable id";
  const dnnl::memory::desc other({32, 16, 3, 3}, dnnl::memory::data_type::f32,
                                 dnnl::memory::format_tag::Ohwi16o);
  Get(w, 101, other, &reorders);
  EXPECT_EQ(reorders, 3) << "another target layout";
  FakeView strided({32, 16, 3, 3});
  strided.strides = {1, 32, 32 * 16, 32 * 16 * 3};
  strided.c.strides = strided.strides.data();
  Get(strided, 101, Blocked(32, 16), &reorders);
  EXPECT_EQ(reorders, 4) << "another view of the same id";
  const weight_cache::Stats s = weight_cache::stats();
  EXPECT_GE(s.hits, 1);
  EXPECT_GE(s.copies, 4);
  EXPECT_EQ(b.memory.get_data_handle(), b.data.get()) << "the copy's own memory object";
  // The plugin's unload lets every copy go; one handed out lives on.
  weight_cache::clear();
  EXPECT_EQ(weight_cache::stats().bytes, 0);
  Get(w, 101, Blocked(32, 16), &reorders);
  EXPECT_EQ(reorders, 5) << "made again after clear()";
  EXPECT_EQ(static_cast<const unsigned char*>(a.data.get())[0], 0x5a);
}

// Run with TESSERA_CPU_WEIGHT_CACHE_MB=1 (its own ctest): 576 KiB copies, two do not fit.
TEST(WeightCache, TheBoundEvictsTheLeastRecentlyUsed) {
  if (BoundMb() != 1) GTEST_SKIP() << "runs under TESSERA_CPU_WEIGHT_CACHE_MB=1";
  const FakeView w({128, 128, 3, 3});  // 576 KiB in float32
  int reorders = 0;
  const weight_cache::Copy first = Get(w, 201, Blocked(128, 128), &reorders);
  Get(w, 202, Blocked(128, 128), &reorders);  // evicts 201
  EXPECT_EQ(reorders, 2);
  Get(w, 202, Blocked(128, 128), &reorders);
  EXPECT_EQ(reorders, 2) << "202 stayed";
  Get(w, 201, Blocked(128, 128), &reorders);
  EXPECT_EQ(reorders, 3) << "201 was evicted and is made again";
  EXPECT_EQ(static_cast<const unsigned char*>(first.data.get())[0], 0x5a)
      << "a copy handed out outlives its eviction";
  const FakeView big({256, 256, 3, 3});  // 2.25 MiB: over the bound
  const weight_cache::Copy none = Get(big, 203, Blocked(256, 256), &reorders);
  EXPECT_EQ(none.data, nullptr) << "not kept: the caller reorders into its scratch";
  EXPECT_EQ(reorders, 3) << "and the cache asks for no reorder";
  EXPECT_LE(weight_cache::stats().bytes, 1 << 20);
}

// Admit::kIntoRoom (a matrix product's weight, which has sgemm to fall back on) takes only room
// left under the bound: it evicts nothing and asks for no reorder when there is none. Under
// TESSERA_CPU_WEIGHT_CACHE_MB=1, as above.
TEST(WeightCache, IntoRoomEvictsNothing) {
  if (BoundMb() != 1) GTEST_SKIP() << "runs under TESSERA_CPU_WEIGHT_CACHE_MB=1";
  weight_cache::clear();
  const FakeView w({128, 128, 3, 3});  // 576 KiB in float32: one fits in 1 MiB, two do not
  int reorders = 0;
  Get(w, 301, Blocked(128, 128), &reorders);
  const weight_cache::Copy refused = weight_cache::get(
      w.view(), 302, Blocked(128, 128), [&](void*) { ++reorders; }, weight_cache::Admit::kIntoRoom);
  EXPECT_EQ(refused.data, nullptr) << "no room without evicting 301";
  EXPECT_EQ(reorders, 1) << "and no reorder asked for";
  Get(w, 301, Blocked(128, 128), &reorders);
  EXPECT_EQ(reorders, 1) << "301 stayed";
  weight_cache::clear();
  const weight_cache::Copy kept = weight_cache::get(
      w.view(), 302, Blocked(128, 128), [&](void*) { ++reorders; }, weight_cache::Admit::kIntoRoom);
  EXPECT_NE(kept.data, nullptr) << "room once the cache is empty";
  EXPECT_EQ(reorders, 2);
}

}  // namespace
}  // namespace cpu
}  // namespace tessera
