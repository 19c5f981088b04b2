// Op set 1.8's composites (dispatcher/ops/*_composites.cc, shape_ops.cc, rearrange_ops.cc,
// isin_ops.cc) on the CPU plugin, where the conformance suite's samples cannot reach: sizes and
// shifts at the ends of int64 (views of an expanded tensor cost no memory, so they are cheap to
// ask for), a value that aliases the tensor it fills, and isin's two algorithms against each
// other.
#include <cstdint>
#include <limits>
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

}  // namespace
}  // namespace cpu_test
}  // namespace tessera
