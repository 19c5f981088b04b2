// Op set 1.8's and 1.9's composites (dispatcher/ops/*_composites.cc, shape_ops.cc,
// rearrange_ops.cc, isin_ops.cc, advanced_index_ops.cc) on the CPU plugin, where the conformance
// suite's samples cannot reach: sizes and shifts at the ends of int64 (views of an expanded
// tensor cost no memory, so they are cheap to ask for), a value that aliases the tensor it fills,
// isin's two algorithms against each other, and where advanced indexing puts the index shape.
#include <cstdint>
#include <limits>
#include <optional>
#include <random>

#include "cpu_test_util.hpp"
#include "gmock/gmock.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// code_of calls `name` expecting an error and returns its code (TSR_OK if it succeeded).
template <typename... Args>
tsr_code code_of(const std::string& name, const Args&... args) {
  try {
    ops(name, args...);
  } catch (const sdk::Error& e) {
    return e.code();
  }
  return TSR_OK;
}

// A [size] float32 tensor of one stored element, expanded: any size, no memory.
Tensor Huge(int64_t size) {
  return op("expand", f32({1}, {1}), std::vector<int64_t>{size}, false);
}

TEST(Composites, SizesPastInt64AreRefusedNotWrapped) {
  const Tensor big = Huge(int64_t{1} << 40);
  // repeat: 2^40 * 2^24 overflows; a wrapped product would give a wrong shape.
  EXPECT_THAT(error_of("repeat", big, std::vector<int64_t>{int64_t{1} << 24}),
              HasSubstr("overflows int64"));
  // constant_pad_nd: padding by INT64_MAX.
  EXPECT_THAT(error_of("constant_pad_nd", f32({1, 2}, {2}), std::vector<int64_t>{kMax, 1}),
              HasSubstr("overflows int64"));
  // diag_embed: |INT64_MIN| has no int64.
  EXPECT_EQ(code_of("diag_embed", f32({1, 2}, {2}), kMin, int64_t{0}, int64_t{1}),
            TSR_INVALID_ARGUMENT);
  // A list of 2^40 views is refused before it is built.
  EXPECT_EQ(code_of("split.Tensor", big, int64_t{1}, int64_t{0}), TSR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(code_of("unbind.int", big, int64_t{0}), TSR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(code_of("chunk", f32({}, {0}), int64_t{1} << 40, int64_t{0}),
            TSR_RESOURCE_EXHAUSTED);
  // chunk's ceil(size / chunks) with chunks near INT64_MAX: one piece each, no overflow.
  EXPECT_EQ(ops("chunk", f32({1, 2, 3, 4}, {4}), kMax, int64_t{0}).size(), 4u);
}

TEST(Composites, ExtremeShiftsAndPadsComputeOrAreRefused) {
  const Tensor x = f32({0, 1, 2, 3, 4}, {5});
  // INT64_MIN mod 5 is -3: a roll by 3 to the left, i.e. by 2 to the right.
  EXPECT_EQ(values<float>(op("roll", x, std::vector<int64_t>{kMin}, std::vector<int64_t>{})),
            values<float>(op("roll", x, std::vector<int64_t>{2}, std::vector<int64_t>{})));
  // A crop of one side larger than the dim, which the other side's padding would make up:
  // refused (ATen narrows side by side), not an out-of-range narrow.
  EXPECT_EQ(code_of("constant_pad_nd", f32({1, 2, 3, 4}, {4}), std::vector<int64_t>{3, -6}),
            TSR_INVALID_ARGUMENT);
  EXPECT_EQ(code_of("constant_pad_nd", f32({1, 2, 3, 4}, {4}), std::vector<int64_t>{-5, 10}),
            TSR_INVALID_ARGUMENT);
}

TEST(Composites, FillWithAnElementOfSelfReadsItFirst) {
  // x.fill_(x[2]): the value is copied before x is written (ATen's fill_ clones it too).
  const Tensor x = f32({1, 2, 3, 4}, {4});
  const Tensor third = op("select.int", x, int64_t{0}, int64_t{2});
  op("fill_.Tensor", x, third);
  EXPECT_EQ(values<float>(x), (std::vector<float>{3, 3, 3, 3}));
}

TEST(Composites, IsinSortsLargeInputsAndAgreesWithComparingPairs) {
  // 5000 x 5000 ids goes the sorting way (more than 2^22 pairs), 5000 x 32 the pairwise way:
  // the same ids must be found either way, NaN never, -0.0 as 0.0.
  std::mt19937_64 rng(7);
  std::vector<int64_t> ids(5000), tests(5000);
  for (int64_t& v : ids) v = static_cast<int64_t>(rng() % 20000);
  for (int64_t& v : tests) v = static_cast<int64_t>(rng() % 20000);
  const Tensor found =
      op("isin.Tensor_Tensor", i64(ids, {50, 100}), i64(tests, {5000}), false, false);
  const std::vector<uint8_t> got = values<uint8_t>(found);
  std::vector<bool> in_tests(20000, false);
  for (int64_t v : tests) in_tests[v] = true;
  ASSERT_EQ(shape(found), (std::vector<int64_t>{50, 100}));
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(got[i] != 0, in_tests[ids[i]]) << i;

  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> elements{nan, -0.0f, 1.5f, 2.0f};
  std::vector<float> many(5000, 7.0f);
  many[0] = nan;
  many[1] = 0.0f;
  many[2] = 2.0f;
  for (const std::vector<float>& t : {many, std::vector<float>(many.begin(), many.begin() + 40)}) {
    std::vector<float> padded = elements;
    padded.resize(5000, 7.0f);  // enough elements for the sorting way with 5000 tests
    const std::vector<uint8_t> flags = values<uint8_t>(op(
        "isin.Tensor_Tensor", f32(padded, {5000}), f32(t, {static_cast<int64_t>(t.size())}),
        false, false));
    EXPECT_EQ(std::vector<uint8_t>(flags.begin(), flags.begin() + 4),
              (std::vector<uint8_t>{0, 1, 0, 1}))
        << t.size() << " test elements";
  }
}

// Op set 1.9's advanced indexing (dispatcher/ops/advanced_index_ops.cc), where PyTorch puts the
// broadcast index shape: in place of adjacent indexed dims, first for separated ones.
std::vector<float> Iota(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

TEST(Composites, AdvancedIndexPutsTheIndexShapeWherePyTorchDoes) {
  const Tensor x = f32(Iota(24), {2, 3, 4});
  using Indices = std::vector<std::optional<Tensor>>;
  // x[:, [[0], [2]], [1, 3]]: adjacent, so [2] + [2, 2] (the indices broadcast) + [].
  const Tensor adjacent =
      op("index.Tensor", x, Indices{std::nullopt, i64({0, 2}, {2, 1}), i64({1, 3}, {2})});
  ASSERT_EQ(shape(adjacent), (std::vector<int64_t>{2, 2, 2}));
  std::vector<float> expected;
  for (int a = 0; a < 2; ++a)
    for (int row : {0, 2})
      for (int col : {1, 3}) expected.push_back(static_cast<float>(a * 12 + row * 4 + col));
  EXPECT_EQ(values<float>(adjacent), expected);
  // x[[0, 1], :, [-1, 0]]: separated by a slice, so the index shape [2] comes first, then [3].
  const Tensor apart =
      op("index.Tensor", x, Indices{i64({0, 1}, {2}), std::nullopt, i32({-1, 0}, {2})});
  ASSERT_EQ(shape(apart), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(apart), (std::vector<float>{3, 7, 11, 12, 16, 20}));
  // A mask stands for the coordinates of its true elements: x[mask] with mask [2, 3].
  const Tensor masked = op("index.Tensor", x, Indices{b8({1, 0, 0, 0, 0, 1}, {2, 3})});
  ASSERT_EQ(shape(masked), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(values<float>(masked), (std::vector<float>{0, 1, 2, 3, 20, 21, 22, 23}));
  EXPECT_EQ(code_of("index.Tensor", x, Indices{i64({3}, {1})}), TSR_OUT_OF_RANGE);
  EXPECT_EQ(code_of("index.Tensor", x, Indices{f32({0}, {1})}), TSR_OUT_OF_RANGE);
}

TEST(Composites, IndexPutAccumulatesDuplicatesAndWritesThroughAPermutation) {
  using Indices = std::vector<std::optional<Tensor>>;
  const Tensor z = f32({0, 0, 0, 0, 0}, {5});
  op("index_put_", z, Indices{i64({0, 0, 4}, {3})}, f32({1, 2, 3}, {3}), true);
  EXPECT_EQ(values<float>(z), (std::vector<float>{3, 0, 0, 0, 3}));
  // x[[0, 1], :, [3, 0]] = 100: separated indices, written back through the permuted view.
  const Tensor x = f32(Iota(24), {2, 3, 4});
  const Tensor put = op("index_put", x, Indices{i64({0, 1}, {2}), std::nullopt, i64({3, 0}, {2})},
                        f32({100}, {}), false);
  std::vector<float> expected = Iota(24);
  for (int j = 0; j < 3; ++j) expected[0 * 12 + j * 4 + 3] = expected[1 * 12 + j * 4 + 0] = 100;
  EXPECT_EQ(values<float>(put), expected);
  EXPECT_EQ(values<float>(x), Iota(24));  // the functional form leaves self alone
}

TEST(Composites, NonzeroAndMaskedOpsCountOnTheHost) {
  EXPECT_EQ(shape(op("nonzero", f32({3}, {}))), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(shape(op("nonzero", f32({0}, {}))), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(values<int64_t>(op("nonzero", f32({0, 1, 0, 2, 3, 0}, {2, 3}))),
            (std::vector<int64_t>{0, 1, 1, 0, 1, 1}));
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(values<float>(op("masked_select", x, b8({0, 1}, {2}))), (std::vector<float>{2, 4}));
  EXPECT_EQ(values<float>(op("masked_scatter", x, b8({1, 0, 0, 1}, {2, 2}), f32({9, 8, 7}, {3}))),
            (std::vector<float>{9, 2, 3, 8}));
  EXPECT_THAT(error_of("masked_scatter", x, b8({1, 1, 1, 1}, {2, 2}), f32({9}, {1})),
              HasSubstr("Number of elements of source < number of ones in mask"));
}

TEST(Composites, UniqueDimOrdersWideSlicesByRankFolding) {
  // 1000-element slices: ordered in log2(1000) rounds of rank folding, as a per-element sort
  // would order them. Rows 0 and 2 equal; row 1 is less (it starts lower).
  std::vector<float> v;
  for (int row : {1, 0, 1}) {
    for (int i = 0; i < 1000; ++i) v.push_back(static_cast<float>(i + row));
  }
  const std::vector<Tensor> out =
      ops("unique_dim", f32(v, {3, 1000}), int64_t{0}, true, true, true);
  ASSERT_EQ(out.size(), 3u);
  ASSERT_EQ(shape(out[0]), (std::vector<int64_t>{2, 1000}));
  const std::vector<float> slices = values<float>(out[0]);
  EXPECT_EQ(slices[0], 0);     // the lesser slice first
  EXPECT_EQ(slices[1000], 1);  // then the repeated one
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(values<int64_t>(out[2]), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera
