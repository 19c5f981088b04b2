// The GPU index, shape and sort kernels (index.h, index_plan.h) run on the host: every (block,
// thread) of each launch, and every phase of the sort's network, against references written
// here (PyTorch's semantics, as the CPU backend's plugins/cpu/index.cc implements them).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "host_launch.h"
#include "index_plan.h"

namespace tessera {
namespace gpu {
namespace {

// --- helpers -------------------------------------------------------------------------------

// Buf: a host buffer of T (std::vector<bool> has no data()), padded to whole 8-byte words as
// device allocations are (they are aligned to 256 bytes or more): scatter's compare-and-swap
// on the 32-bit word that holds a 1- or 2-byte element may touch the padding.
template <typename T>
class Buf {
 public:
  Buf() = default;
  explicit Buf(size_t n, T v = T())
      : cells_((n * sizeof(T) + 7) / 8 * 8 / sizeof(T), Cell{v}), n_(n) {}
  T& operator[](size_t i) { return cells_[i].v; }
  const T& operator[](size_t i) const { return cells_[i].v; }
  T* data() { return reinterpret_cast<T*>(cells_.data()); }
  size_t size() const { return n_; }
  T* begin() { return data(); }
  T* end() { return data() + size(); }

 private:
  struct Cell {
    T v;
  };
  static_assert(sizeof(Cell) == sizeof(T));
  std::vector<Cell> cells_;
  size_t n_ = 0;
};

template <typename V>
TensorSpec Spec(V& data, std::vector<int64_t> sizes, std::vector<int64_t> strides = {},
                int64_t offset = 0) {
  using T = std::remove_reference_t<decltype(*data.data())>;
  TensorSpec s;
  s.data = reinterpret_cast<char*>(data.data() + offset);
  s.strides = strides.empty() ? Contiguous(sizes) : strides;
  s.sizes = std::move(sizes);
  if (s.sizes.empty()) {  // a 0-dim tensor, as the plugin passes it
    s.sizes = {1};
    s.strides = {0};
  }
  s.itemsize = sizeof(T);
  return s;
}

template <typename T>
T From(double v) {
  return Convert<T>(v);
}
template <typename T>
double To(T v) {
  return static_cast<double>(Widen(v));
}

template <IndexKind kKind, typename T>
void RunAs(const IndexArgs& a) {
  for (int64_t b = 0; b < IndexBlocks(a.numel); ++b) {
    for (int t = 0; t < kIndexThreads; ++t) {
      IndexThreadBody<kKind, T>(a, static_cast<uint32_t>(b), static_cast<uint32_t>(t));
    }
  }
}

// Run: what LaunchIndex does, on the host; T is the tensors' storage type.
template <typename T>
void RunIndexOnHost(IndexKind kind, const IndexArgs& a) {
  using U = std::conditional_t<
      sizeof(T) == 1, uint8_t,
      std::conditional_t<sizeof(T) == 2, uint16_t,
                         std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  switch (kind) {
    case IndexKind::kCopy:
      return RunAs<IndexKind::kCopy, U>(a);
    case IndexKind::kTril:
      return RunAs<IndexKind::kTril, U>(a);
    case IndexKind::kTriu:
      return RunAs<IndexKind::kTriu, U>(a);
    case IndexKind::kGather:
      return RunAs<IndexKind::kGather, U>(a);
    case IndexKind::kIndexSelect:
      return RunAs<IndexKind::kIndexSelect, U>(a);
    case IndexKind::kScatter:
      return RunAs<IndexKind::kScatter, U>(a);
    case IndexKind::kScatterAdd:
      return RunAs<IndexKind::kScatterAdd, T>(a);
    case IndexKind::kScatterMul:
      return RunAs<IndexKind::kScatterMul, T>(a);
  }
}

#define TSR_FOR_EACH_STORAGE(F) \
  F(bool)                       \
  F(uint8_t) F(int8_t) F(int16_t) F(int32_t) F(int64_t) F(Half) F(BFloat16) F(float) F(double)

// Values 0, 1, 2, ... that every dtype holds exactly (bool: alternating).
template <typename T>
Buf<T> Iota(int64_t n, double scale = 1) {
  Buf<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[i] = std::is_same_v<T, bool> ? From<T>(i % 2) : From<T>(static_cast<double>(i % 100) * scale);
  }
  return v;
}

// --- gather ----------------------------------------------------------------------------------

template <typename T>
void CheckGather() {
  SCOPED_TRACE(kDtypeOf<T>);
  // self 3 x 5, index along dim 1 (3 x 4) and dim 0 (2 x 5).
  Buf<T> self = Iota<T>(15);
  for (int64_t dim : {0, 1}) {
    const std::vector<int64_t> isizes =
        dim == 1 ? std::vector<int64_t>{3, 4} : std::vector<int64_t>{2, 5};
    const int64_t size = dim == 1 ? 5 : 3;
    std::vector<int64_t> index(static_cast<size_t>(isizes[0] * isizes[1]));
    for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<int64_t>((i * 7 + 3) % size);
    Buf<T> out(index.size(), From<T>(0));
    IndexArgs a;
    std::string error;
    ASSERT_TRUE(
        PlanGather(Spec(out, isizes), Spec(self, {3, 5}), Spec(index, isizes), dim, &a, &error))
        << error;
    IndexError err{};
    a.error = &err;
    RunIndexOnHost<T>(IndexKind::kGather, a);
    EXPECT_EQ(err.hit, 0u);
    for (int64_t i = 0; i < isizes[0]; ++i) {
      for (int64_t j = 0; j < isizes[1]; ++j) {
        const int64_t k = index[i * isizes[1] + j];
        const double want = To(dim == 1 ? self[i * 5 + k] : self[k * 5 + j]);
        EXPECT_EQ(To(out[i * isizes[1] + j]), want) << "dim " << dim << " at " << i << "," << j;
      }
    }
  }
}

TEST(GpuIndexGather, MatchesReferenceForEveryDtypeAndDim) {
#define F(T) CheckGather<T>();
  TSR_FOR_EACH_STORAGE(F)
#undef F
}

TEST(GpuIndexGather, ReadsNonContiguousOperands) {
  // self: the transpose of a 4 x 3 matrix (so 3 x 4 with strides {1, 3}); index: every other
  // element of a buffer; out: a column-major 3 x 2.
  std::vector<float> storage(12);
  std::iota(storage.begin(), storage.end(), 0.f);
  std::vector<int64_t> ibuf(12, -99);
  const int64_t want_k[3][2] = {{3, 0}, {1, 1}, {2, 0}};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) ibuf[(i * 2 + j) * 2] = want_k[i][j];
  }
  std::vector<float> out(6, -1.f);
  IndexArgs a;
  std::string error;
  ASSERT_TRUE(PlanGather(Spec(out, {3, 2}, {1, 3}), Spec(storage, {3, 4}, {1, 3}),
                         Spec(ibuf, {3, 2}, {4, 2}), 1, &a, &error))
      << error;
  IndexError err{};
  a.error = &err;
  RunIndexOnHost<float>(IndexKind::kGather, a);
  EXPECT_EQ(err.hit, 0u);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) {
      // self[i][k] = storage[i + 3k]
      EXPECT_EQ(out[i + 3 * j], storage[i + 3 * want_k[i][j]]) << i << "," << j;
    }
  }
}

TEST(GpuIndexGather, ReportsOutOfRangeIndicesWithoutTouchingMemory) {
  std::vector<int32_t> self = {10, 11, 12};
  std::vector<int64_t> index = {0, 3, 2, -1};
  std::vector<int32_t> out(4, -7);
  IndexArgs a;
  std::string error;
  ASSERT_TRUE(PlanGather(Spec(out, {4}), Spec(self, {3}), Spec(index, {4}), 0, &a, &error));
  IndexError err{};
  a.error = &err;
  RunIndexOnHost<int32_t>(IndexKind::kGather, a);
  EXPECT_EQ(err.hit, 1u);
  EXPECT_TRUE(err.value == 3 || err.value == -1) << err.value;
  EXPECT_EQ(out, (std::vector<int32_t>{10, -7, 12, -7}));  // bad elements skipped
}

TEST(GpuIndexGather, TakesZeroDimTensors) {
  std::vector<double> self = {2.5};
  std::vector<int64_t> index = {0};
  std::vector<double> out = {0};
  IndexArgs a;
  std::string error;
  ASSERT_TRUE(PlanGather(Spec(out, {}), Spec(self, {}), Spec(index, {}), 0, &a, &error));
  IndexError err{};
  a.error = &err;
  RunIndexOnHost<double>(IndexKind::kGather, a);
  EXPECT_EQ(err.hit, 0u);
  EXPECT_EQ(out[0], 2.5);
}

// --- index_select ----------------------------------------------------------------------------

template <typename T, typename I>
void CheckIndexSelect() {
  SCOPED_TRACE(kDtypeOf<T>);
  // self 2 x 3 x 4; index along dim 1 (size 3), with repeats.
  Buf<T> self = Iota<T>(24);
  std::vector<I> index = {2, 0, 2, 1, 0};
  Buf<T> out(2 * 5 * 4, From<T>(0));
  IndexArgs a;
  std::string error;
  ASSERT_TRUE(PlanIndexSelect(Spec(out, {2, 5, 4}), Spec(self, {2, 3, 4}), Spec(index, {5}),
                              kDtypeOf<I>, 1, &a, &error))
      << error;
  IndexError err{};
  a.error = &err;
  RunIndexOnHost<T>(IndexKind::kIndexSelect, a);
  EXPECT_EQ(err.hit, 0u);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 5; ++j) {
      const int64_t k = index[j];
      for (int l = 0; l < 4; ++l) {
        EXPECT_EQ(To(out[(i * 5 + j) * 4 + l]), To(self[(i * 3 + k) * 4 + l]));
      }
    }
  }
}

TEST(GpuIndexSelect, MatchesReferenceForEveryDtypeAndBothIndexDtypes) {
#define F(T) CheckIndexSelect<T, int64_t>();
  TSR_FOR_EACH_STORAGE(F)
#undef F
  CheckIndexSelect<float, int32_t>();
  CheckIndexSelect<int8_t, int32_t>();
}

TEST(GpuIndexSelect, TakesZeroDimIndexAndReportsBadOnes) {
  std::vector<int16_t> self = {5, 6, 7};
  {
    std::vector<int64_t> index = {1};
    std::vector<int16_t> out = {0};
    IndexArgs a;
    std::string error;
    ASSERT_TRUE(PlanIndexSelect(Spec(out, {1}), Spec(self, {3}), Spec(index, {}), TSR_DTYPE_INT64,
                                0, &a, &error));
    IndexError err{};
    a.error = &err;
    RunIndexOnHost<int16_t>(IndexKind::kIndexSelect, a);
    EXPECT_EQ(err.hit, 0u);
    EXPECT_EQ(out[0], 6);
  }
  // A negative index is out of range (PyTorch: "index out of range in self"), -1 included.
  std::vector<int32_t> index = {1, -1};
  std::vector<int16_t> out = {0, 0};
  IndexArgs a;
  std::string error;
  ASSERT_TRUE(PlanIndexSelect(Spec(out, {2}), Spec(self, {3}), Spec(index, {2}), TSR_DTYPE_INT32, 0,
                              &a, &error));
  IndexError err{};
  a.error = &err;
  RunIndexOnHost<int16_t>(IndexKind::kIndexSelect, a);
  EXPECT_EQ(err.hit, 1u);
  EXPECT_EQ(err.value, -1);
  EXPECT_EQ(out, (std::vector<int16_t>{6, 0}));
}

// --- scatter ---------------------------------------------------------------------------------

template <typename T>
void CheckScatterReplace() {
  SCOPED_TRACE(kDtypeOf<T>);
  // out 3 x 4 (a copy of self), scatter along dim 1 with a permutation per row (no repeats).
  Buf<T> out = Iota<T>(12);
  const Buf<T> self = out;
  std::vector<int64_t> index = {3, 1, 0, 2, 0, 1};  // 3 x 2
  Buf<T> src = Iota<T>(6, 2);
  for (bool value : {false, true}) {
    out = self;
    IndexArgs a;
    a.value = 0;
    const T v = From<T>(1);
    std::memcpy(&a.value, &v, sizeof v);
    std::string error;
    TensorSpec s = Spec(src, {3, 2});
    ASSERT_TRUE(
        PlanScatter(Spec(out, {3, 4}), Spec(index, {3, 2}), value ? nullptr : &s, 1, &a, &error));
    IndexError err{};
    a.error = &err;
    RunIndexOnHost<T>(IndexKind::kScatter, a);
    EXPECT_EQ(err.hit, 0u);
    Buf<T> want = self;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 2; ++j) want[i * 4 + index[i * 2 + j]] = value ? v : src[i * 2 + j];
    }
    for (int i = 0; i < 12; ++i)
      EXPECT_EQ(To(out[i]), To(want[i])) << "value " << value << " " << i;
  }
}

TEST(GpuIndexScatter, ReplacesForEveryDtypeFromTensorAndValue) {
#define F(T) CheckScatterReplace<T>();
  TSR_FOR_EACH_STORAGE(F)
#undef F
}

TEST(GpuIndexScatter, RepeatedIndicesWriteOneOfTheValues) {
  std::vector<float> out = {0, 0};
  std::vector<int64_t> index(600, 1);
  std::vector<float> src(600);
  std::iota(src.begin(), src.end(), 1.f);
  IndexArgs a;
  std::string error;
  TensorSpec s = Spec(src, {600});
  ASSERT_TRUE(PlanScatter(Spec(out, {2}), Spec(index, {600}), &s, 0, &a, &error));
  IndexError err{};
  a.error = &err;
  RunIndexOnHost<float>(IndexKind::kScatter, a);
  EXPECT_EQ(out[0], 0.f);
  EXPECT_TRUE(out[1] >= 1.f && out[1] <= 600.f && out[1] == std::floor(out[1]));
}

// add and multiply with repeated indices: exact in every dtype (small integers, powers of 2,
// wrapping integers: every order gives the same result).
template <typename T>
void CheckScatterCombine(bool multiply) {
  SCOPED_TRACE(kDtypeOf<T>);
  SCOPED_TRACE(multiply ? "multiply" : "add");
  // out 2 x 3; index 2 x 700 along dim 1 into 3 slots, repeats galore.
  const int64_t n = 700;
  Buf<T> out(6);
  for (int i = 0; i < 6; ++i) out[i] = From<T>(multiply ? 1 : i);
  Buf<T> want = out;
  std::vector<int64_t> index(2 * n);
  Buf<T> src(2 * n);
  for (int64_t i = 0; i < 2 * n; ++i) {
    index[i] = (i * 5) % 3;
    // multiply: mostly 1, a few 2 (-1 for the signed ones); add: 0..3 (bool: 0/1).
    double v = multiply ? (i % 97 == 0 ? 2 : (i % 89 == 0 && std::is_signed_v<OpMath<T>> ? -1 : 1))
                        : static_cast<double>(i % 4);
    if (std::is_same_v<T, bool>) v = multiply ? (i % 301 != 0) : (i % 250 == 0);
    if (std::is_same_v<T, BFloat16> && !multiply) v = i % 4 == 0;  // sums below 256: exact
    src[i] = From<T>(v);
  }
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      T& w = want[r * 3 + index[r * n + j]];
      w = multiply ? Combine<T, true>(w, src[r * n + j]) : Combine<T, false>(w, src[r * n + j]);
    }
  }
  IndexArgs a;
  std::string error;
  TensorSpec s = Spec(src, {2, n});
  ASSERT_TRUE(PlanScatter(Spec(out, {2, 3}), Spec(index, {2, n}), &s, 1, &a, &error));
  IndexError err{};
  a.error = &err;
  RunIndexOnHost<T>(multiply ? IndexKind::kScatterMul : IndexKind::kScatterAdd, a);
  EXPECT_EQ(err.hit, 0u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(To(out[i]), To(want[i])) << i;
}

TEST(GpuIndexScatter, AddsAndMultipliesRepeatedIndicesInEveryDtype) {
#define F(T)                     \
  CheckScatterCombine<T>(false); \
  CheckScatterCombine<T>(true);
  TSR_FOR_EACH_STORAGE(F)
#undef F
}

TEST(GpuIndexScatter, CombineWrapsIntegersAndRoundsHalvesOnce) {
  EXPECT_EQ((Combine<int8_t, false>(100, 100)), -56);
  EXPECT_EQ((Combine<uint8_t, true>(16, 32)), 0);
  EXPECT_EQ((Combine<bool, false>(true, true)), true);
  EXPECT_EQ((Combine<bool, true>(true, false)), false);
  EXPECT_EQ(ToFloat(Combine<Half, false>(ToHalf(2048.f), ToHalf(1.f))), 2048.f);
  EXPECT_EQ(ToFloat(Combine<BFloat16, true>(ToBFloat16(3.f), ToBFloat16(0.5f))), 1.5f);
}

TEST(GpuIndexScatter, ValueAddWithRepeatsAndAnOutOfRangeIndex) {
  std::vector<int64_t> out = {0, 0, 0};
  std::vector<int64_t> index = {0, 2, 2, 5, 2};
  IndexArgs a;
  const int64_t v = 10;
  std::memcpy(&a.value, &v, sizeof v);
  std::string error;
  ASSERT_TRUE(PlanScatter(Spec(out, {3}), Spec(index, {5}), nullptr, 0, &a, &error));
  IndexError err{};
  a.error = &err;
  RunIndexOnHost<int64_t>(IndexKind::kScatterAdd, a);
  EXPECT_EQ(err.hit, 1u);
  EXPECT_EQ(err.value, 5);
  EXPECT_EQ(out, (std::vector<int64_t>{10, 0, 30}));
}

TEST(GpuIndexScatter, ValueConvertsToTheOutputsDtypeAsTheCpuDoes) {
  auto bits = [](auto v) {
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof v);
    return b;
  };
  EXPECT_EQ(ScalarBits(ScalarKind::kDouble, 0, 2.7, TSR_DTYPE_INT8), bits(int8_t{2}));
  EXPECT_EQ(ScalarBits(ScalarKind::kDouble, 0, -2.7, TSR_DTYPE_INT32), bits(int32_t{-2}));
  EXPECT_EQ(ScalarBits(ScalarKind::kInt, -1, 0, TSR_DTYPE_UINT8), bits(uint8_t{255}));
  EXPECT_EQ(ScalarBits(ScalarKind::kInt, 300, 0, TSR_DTYPE_INT8), bits(int8_t{44}));
  EXPECT_EQ(ScalarBits(ScalarKind::kInt, INT64_MIN, 0, TSR_DTYPE_INT64), bits(INT64_MIN));
  EXPECT_EQ(ScalarBits(ScalarKind::kDouble, 0, 0.5, TSR_DTYPE_BOOL), bits(true));
  EXPECT_EQ(ScalarBits(ScalarKind::kBool, 1, 0, TSR_DTYPE_FLOAT32), bits(1.0f));
  EXPECT_EQ(ScalarBits(ScalarKind::kDouble, 0, 0.1, TSR_DTYPE_FLOAT64), bits(0.1));
  EXPECT_EQ(ScalarBits(ScalarKind::kDouble, 0, 0.1, TSR_DTYPE_FLOAT16), bits(ToHalf(0.1f)));
  EXPECT_EQ(ScalarBits(ScalarKind::kDouble, 0, -0.0, TSR_DTYPE_BFLOAT16), bits(ToBFloat16(-0.0f)));
  EXPECT_EQ(ScalarBits(ScalarKind::kDouble, 0, NAN, TSR_DTYPE_INT64), bits(INT64_MIN));
}

// The compare-and-swap loops under real contention: threads combining into neighbouring
// elements of one 32-bit word, and into one element.
template <typename T>
void Contend(bool multiply, double step, int per_thread, double want_each) {
  constexpr int kThreads = 4;
  alignas(8) T cells[8];
  for (T& c : cells) c = From<T>(multiply ? 1 : 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        T* cell = &cells[(t + i) % 2];  // two neighbours, shared by every thread
        if (multiply) {
          AtomicCombine<T, true>(cell, From<T>(step));
        } else {
          AtomicCombine<T, false>(cell, From<T>(step));
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(To(cells[0]), want_each) << kDtypeOf<T>;
  EXPECT_EQ(To(cells[1]), want_each) << kDtypeOf<T>;
}

TEST(GpuIndexScatter, AtomicCombineIsExactUnderContention) {
  // 4 threads x 400 = 1600 additions of 1, 800 into each of two neighbours.
  Contend<int16_t>(false, 1, 400, 800);
  Contend<Half>(false, 1, 400, 800);
  Contend<BFloat16>(false, 1, 100, 200);  // exact below 256 in bfloat16
  Contend<uint8_t>(false, 1, 100, 200);
  Contend<int8_t>(false, 1, 400, static_cast<int8_t>(800 % 256));
  Contend<float>(false, 1, 400, 800);
  Contend<double>(false, 1, 400, 800);
  Contend<int32_t>(false, 3, 400, 2400);
  Contend<int64_t>(false, 3, 400, 2400);
  Contend<int32_t>(true, 2, 10, 1 << 20);  // 20 doublings each
  Contend<double>(true, 2, 10, 1 << 20);
}

// --- flip, tril, triu, copy ------------------------------------------------------------------

template <typename T>
void CheckFlip() {
  SCOPED_TRACE(kDtypeOf<T>);
  // self: a 2 x 3 x 4 view of a 2 x 4 x 3 buffer (the last two dims transposed); flip 0 and 2.
  Buf<T> buf = Iota<T>(24);
  Buf<T> out(24, From<T>(0));
  IndexArgs a;
  std::string error;
  ASSERT_TRUE(PlanFlip(Spec(out, {2, 3, 4}), Spec(buf, {2, 3, 4}, {12, 1, 3}), {true, false, true},
                       &a, &error));
  RunIndexOnHost<T>(IndexKind::kCopy, a);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        const T want = buf[(1 - i) * 12 + j * 1 + (3 - k) * 3];
        EXPECT_EQ(To(out[(i * 3 + j) * 4 + k]), To(want)) << i << j << k;
      }
    }
  }
}

TEST(GpuIndexFlip, MatchesReferenceForEveryDtypeOnStridedInput) {
#define F(T) CheckFlip<T>();
  TSR_FOR_EACH_STORAGE(F)
#undef F
}

TEST(GpuIndexFlip, ZeroDimAndEmptyAndContiguousPlans) {
  std::vector<float> self = {4.f}, out = {0.f};
  IndexArgs a;
  std::string error;
  ASSERT_TRUE(PlanFlip(Spec(out, {}), Spec(self, {}), {true}, &a, &error));
  RunIndexOnHost<float>(IndexKind::kCopy, a);
  EXPECT_EQ(out[0], 4.f);
  std::vector<float> none;
  ASSERT_TRUE(PlanFlip(Spec(none, {3, 0}), Spec(none, {3, 0}), {true, true}, &a, &error));
  EXPECT_EQ(a.numel, 0);
  EXPECT_EQ(IndexBlocks(a.numel), 0);
  // Flipping nothing of a contiguous tensor is one dimension; flipping the outer one of two
  // keeps them apart (the strides differ in sign).
  std::vector<float> big(2 * 3 * 5), big_out(30);
  ASSERT_TRUE(PlanFlip(Spec(big_out, {2, 3, 5}), Spec(big, {2, 3, 5}), {}, &a, &error));
  EXPECT_EQ(a.ndim, 1);
  EXPECT_TRUE(a.narrow);
  ASSERT_TRUE(PlanFlip(Spec(big_out, {2, 3, 5}), Spec(big, {2, 3, 5}), {true}, &a, &error));
  EXPECT_EQ(a.ndim, 2);
}

template <typename T>
void CheckTri(bool upper, int64_t diagonal, bool transposed, bool in_place) {
  SCOPED_TRACE(kDtypeOf<T>);
  SCOPED_TRACE((upper ? "triu " : "tril ") + std::to_string(diagonal) +
               (transposed ? " transposed" : "") + (in_place ? " in place" : ""));
  // 2 batches of 3 x 4 matrices (or the transpose of 4 x 3 ones).
  Buf<T> self = Iota<T>(24);
  for (T& v : self) {
    if (To(v) == 0) v = From<T>(1);  // nonzero, so a zeroed element shows
  }
  const std::vector<int64_t> strides =
      transposed ? std::vector<int64_t>{12, 1, 3} : std::vector<int64_t>{12, 4, 1};
  Buf<T> out(24, From<T>(7));
  Buf<T>& dst = in_place ? self : out;
  const Buf<T> before = self;
  IndexArgs a;
  std::string error;
  ASSERT_TRUE(
      PlanTri(Spec(dst, {2, 3, 4}, strides), Spec(self, {2, 3, 4}, strides), diagonal, &a, &error));
  EXPECT_EQ(a.ndim, 3);
  EXPECT_EQ(a.col_dim, 0);
  EXPECT_EQ(a.row_dim, 1);
  RunIndexOnHost<T>(upper ? IndexKind::kTriu : IndexKind::kTril, a);
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) {
        const int64_t off = b * strides[0] + i * strides[1] + j * strides[2];
        const bool keep = upper ? j - i >= diagonal : j - i <= diagonal;
        EXPECT_EQ(To(dst[off]), keep ? To(before[off]) : 0.0) << b << i << j;
      }
    }
  }
}

TEST(GpuIndexTri, KeepsTheTriangleForEveryDtypeDiagonalAndLayout) {
  for (bool upper : {false, true}) {
    for (int64_t diagonal : {-1, 0, 2, 5, -5}) {
#define F(T) CheckTri<T>(upper, diagonal, false, false);
      TSR_FOR_EACH_STORAGE(F)
#undef F
    }
    CheckTri<float>(upper, 1, true, false);
    CheckTri<int64_t>(upper, 0, false, true);
  }
}

TEST(GpuIndexCopy, CopiesStridedToDenseAndTakesTheWidePath) {
  std::vector<int32_t> src(40);
  std::iota(src.begin(), src.end(), 0);
  std::vector<int32_t> dst(12, -1);
  // src: rows 0, 2, 4 and columns 1..4 of a 5 x 8 matrix.
  IndexArgs a;
  std::string error;
  ASSERT_TRUE(PlanCopy(Spec(dst, {3, 4}), Spec(src, {3, 4}, {16, 1}, 1), &a, &error));
  for (bool narrow : {true, false}) {
    std::fill(dst.begin(), dst.end(), -1);
    a.narrow = narrow;  // the 64-bit arithmetic of iterations of 2^31 elements or more
    RunIndexOnHost<int32_t>(IndexKind::kCopy, a);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 4; ++j) EXPECT_EQ(dst[i * 4 + j], 1 + i * 16 + j);
    }
  }
  IndexOperandSpec ops[3];
  std::vector<int64_t> huge = {int64_t{1} << 20, int64_t{1} << 12};
  ops[0].strides = {int64_t{1} << 12, 1};
  EXPECT_TRUE(MakeIndexArgs(huge, ops, {}, &a, &error));
  EXPECT_FALSE(a.narrow);
  EXPECT_EQ(a.numel, int64_t{1} << 32);
}

TEST(GpuIndexPlan, RefusesTooManyDimensions) {
  std::vector<int64_t> shape(14, 2);
  IndexOperandSpec ops[3];
  ops[0].strides.assign(14, 0);
  for (int d = 0; d < 14; ++d) ops[0].strides[d] = int64_t{4} << (2 * d);  // never mergeable
  IndexArgs a;
  std::string error;
  EXPECT_FALSE(MakeIndexArgs(shape, ops, {}, &a, &error));
  EXPECT_NE(error.find("at most 12"), std::string::npos) << error;
}

// --- sort and topk ---------------------------------------------------------------------------

// RunSortOnHost: every row's block on the host, phase by phase (the shared memory or the
// scratch is one array per row).
template <typename S>
void RunSortOnHost(const SortArgs& args, int64_t rows) {
  const uint32_t threads = static_cast<uint32_t>(SortThreads(args.padded));
  std::vector<uint64_t> keys(static_cast<size_t>(args.padded));
  std::vector<int32_t> pos(static_cast<size_t>(args.padded));
  for (int64_t row = 0; row < rows; ++row) {
    for (uint32_t t = 0; t < threads; ++t)
      SortLoad<S>(args, row, keys.data(), pos.data(), t, threads);
    for (int64_t k = 2; k <= args.padded; k *= 2) {
      for (int64_t j = k / 2; j > 0; j /= 2) {
        for (uint32_t t = 0; t < threads; ++t) {
          SortStep(keys.data(), pos.data(), args.padded, k, j, t, threads);
        }
      }
    }
    for (uint32_t t = 0; t < threads; ++t) SortStore<S>(args, row, pos.data(), t, threads);
  }
}

// The reference: a stable sort with NaN above everything and -0.0 equal to 0.0.
template <typename S>
std::vector<int64_t> ReferenceOrder(const Buf<S>& row, bool descending) {
  std::vector<int64_t> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  auto less = [](double a, double b) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a < b;
  };
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    const double a = To(row[x]), b = To(row[y]);
    return descending ? less(b, a) : less(a, b);
  });
  return order;
}

template <typename S>
S Sample(std::mt19937& rng) {
  std::uniform_int_distribution<int> pick(0, 19);
  const int p = pick(rng);
  if constexpr (kIsFloat<S>) {
    if (p == 0) return From<S>(std::numeric_limits<double>::quiet_NaN());
    if (p == 1) return From<S>(-0.0);
    if (p == 2) return From<S>(0.0);
    if (p == 3) return From<S>(std::numeric_limits<double>::infinity());
    if (p == 4) return From<S>(-std::numeric_limits<double>::infinity());
  }
  if constexpr (std::is_same_v<S, bool>) return p % 2 == 0;
  if constexpr (std::is_signed_v<OpMath<S>>) return From<S>(p - 10);
  return From<S>(p * 3);  // few distinct values: many ties
}

template <typename S>
void CheckSort(int64_t n, bool descending, int64_t count) {
  SCOPED_TRACE(kDtypeOf<S>);
  SCOPED_TRACE("n " + std::to_string(n) + (descending ? " descending" : "") + " count " +
               std::to_string(count));
  // 3 rows along dim 0 of an n x 3 tensor (strided rows), as sort(dim=0) reads them.
  std::mt19937 rng(static_cast<uint32_t>(n * 31 + descending));
  Buf<S> self(static_cast<size_t>(n * 3));
  for (S& v : self) v = Sample<S>(rng);
  Buf<S> values(static_cast<size_t>(count * 3), From<S>(0));
  std::vector<int64_t> indices(static_cast<size_t>(count * 3), -1);
  SortArgs a;
  int64_t rows = 0;
  std::string error;
  ASSERT_TRUE(MakeSortArgs(Spec(self, {n, 3}), 0, Spec(values, {count, 3}),
                           Spec(indices, {count, 3}), count, descending, &a, &rows, &error))
      << error;
  EXPECT_EQ(rows, n == 0 ? 0 : 3);
  RunSortOnHost<S>(a, rows);
  for (int64_t c = 0; c < 3 && n > 0; ++c) {
    Buf<S> row(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) row[i] = self[i * 3 + c];
    const std::vector<int64_t> order = ReferenceOrder(row, descending);
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(indices[i * 3 + c], order[i]) << "column " << c << " position " << i;
      S v = values[i * 3 + c], w = row[order[i]];
      EXPECT_EQ(std::memcmp(&v, &w, sizeof v), 0) << "column " << c << " position " << i;
    }
  }
}

TEST(GpuIndexSort, MatchesAStableSortForEveryDtypeLengthAndDirection) {
  for (int64_t n : {1, 2, 3, 5, 17, 64, 1000}) {
    for (bool descending : {false, true}) {
#define F(T) CheckSort<T>(n, descending, n);
      TSR_FOR_EACH_STORAGE(F)
#undef F
    }
  }
}

TEST(GpuIndexSort, SortsRowsLongerThanSharedMemory) {
  // 2048 elements: the longest shared-memory row; 3000 pads to 4096 and takes the scratch path.
  for (int64_t n : {kSortSharedMax, int64_t{3000}}) {
    CheckSort<float>(n, false, n);
    CheckSort<int64_t>(n, true, n);
    CheckSort<Half>(n, true, n);
  }
}

TEST(GpuIndexSort, TopkIsTheSortedRowsFirstK) {
  for (int64_t k : {0, 1, 3, 17}) {
    CheckSort<float>(17, true, k);   // largest
    CheckSort<float>(17, false, k);  // smallest
    CheckSort<int32_t>(17, true, k);
    CheckSort<BFloat16>(17, false, k);
  }
}

TEST(GpuIndexSort, NanIsLargestAndNegativeZeroTiesWithZero) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_LT(SortKey(-inf), SortKey(-1.0));
  EXPECT_LT(SortKey(-1.0), SortKey(-0.0));
  EXPECT_EQ(SortKey(-0.0), SortKey(0.0));
  EXPECT_EQ(SortKey(0.0f), SortKey(-0.0f));
  EXPECT_LT(SortKey(0.0), SortKey(1e-300));
  EXPECT_LT(SortKey(inf), SortKey(nan));
  EXPECT_EQ(SortKey(nan), SortKey(-nan));
  EXPECT_LT(SortKey(ToHalf(65504.f)), SortKey(ToHalf(INFINITY)));
  EXPECT_LT(SortKey<int8_t>(-128), SortKey<int8_t>(127));
  EXPECT_LT(SortKey<int64_t>(INT64_MIN), SortKey<int64_t>(-1));
  EXPECT_LT(SortKey<int64_t>(-1), SortKey<int64_t>(0));
  EXPECT_LT(SortKey<uint8_t>(1), SortKey<uint8_t>(255));
  // In a row: -0.0 and 0.0 keep their order and their bits; NaN goes last (first descending).
  std::vector<float> self = {0.f, -0.f, NAN, -1.f, 0.f, -0.f};
  std::vector<float> values(6);
  std::vector<int64_t> indices(6);
  for (bool descending : {false, true}) {
    SortArgs a;
    int64_t rows = 0;
    std::string error;
    ASSERT_TRUE(MakeSortArgs(Spec(self, {6}), 0, Spec(values, {6}), Spec(indices, {6}), 6,
                             descending, &a, &rows, &error));
    RunSortOnHost<float>(a, rows);
    const std::vector<int64_t> want = descending ? std::vector<int64_t>{2, 0, 1, 4, 5, 3}
                                                 : std::vector<int64_t>{3, 0, 1, 4, 5, 2};
    EXPECT_EQ(indices, want);
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(std::signbit(values[i]), std::signbit(self[want[i]])) << i;
    }
  }
}

TEST(GpuIndexSort, TakesZeroDimAndEmptyTensorsAndLastDimRows) {
  std::vector<double> self = {3.5}, values = {0};
  std::vector<int64_t> indices = {-1};
  SortArgs a;
  int64_t rows = 0;
  std::string error;
  ASSERT_TRUE(MakeSortArgs(Spec(self, {}), 0, Spec(values, {}), Spec(indices, {}), 1, false, &a,
                           &rows, &error));
  EXPECT_EQ(rows, 1);
  RunSortOnHost<double>(a, rows);
  EXPECT_EQ(values[0], 3.5);
  EXPECT_EQ(indices[0], 0);
  std::vector<double> none;
  std::vector<int64_t> no_indices;
  ASSERT_TRUE(MakeSortArgs(Spec(none, {4, 0}), 1, Spec(none, {4, 0}), Spec(no_indices, {4, 0}), 0,
                           false, &a, &rows, &error));
  EXPECT_EQ(rows, 0);
  // 2 x 3 x 4 along the last dim (dim -1 wrapped to 2): 6 rows of contiguous elements, the
  // other two dims merged into one.
  std::vector<int16_t> t = {4, 3, 2, 1, 1, 2, 3, 4, 9, 9, 0, 0, 5, 6, 5, 6, 7, 7, 7, 7, 1, 0, 1, 0};
  std::vector<int16_t> v(24);
  std::vector<int64_t> ix(24);
  ASSERT_TRUE(MakeSortArgs(Spec(t, {2, 3, 4}), 2, Spec(v, {2, 3, 4}), Spec(ix, {2, 3, 4}), 4, false,
                           &a, &rows, &error));
  EXPECT_EQ(rows, 6);
  EXPECT_EQ(a.outer_ndim, 1);
  RunSortOnHost<int16_t>(a, rows);
  EXPECT_EQ(v, (std::vector<int16_t>{1, 2, 3, 4, 1, 2, 3, 4, 0, 0, 9, 9,
                                     5, 5, 6, 6, 7, 7, 7, 7, 0, 0, 1, 1}));
  EXPECT_EQ(ix, (std::vector<int64_t>{3, 2, 1, 0, 0, 1, 2, 3, 2, 3, 0, 1,
                                      0, 2, 1, 3, 0, 1, 2, 3, 1, 3, 0, 2}));
}

}  // namespace
}  // namespace gpu
}  // namespace tessera
