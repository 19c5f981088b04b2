#include "core/shape.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Shape, NumelChecksNegativeSizesAndOverflow) {
  EXPECT_EQ(*ComputeNumel({}), 1);
  EXPECT_EQ(*ComputeNumel({2, 3, 4}), 24);
  EXPECT_EQ(*ComputeNumel({5, 0, 7}), 0);
  absl::StatusOr<int64_t> neg = ComputeNumel({2, -1});
  EXPECT_EQ(neg.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(neg.status().message(), HasSubstr("size -1 at dimension 1"));
  absl::StatusOr<int64_t> big = ComputeNumel({int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_EQ(big.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(big.status().message(), HasSubstr("overflows int64"));
  EXPECT_EQ(*ComputeNumel({int64_t{1} << 40, int64_t{1} << 40, 0}), 0) << "zero wins";
}

TEST(Shape, ContiguousStridesAndLayoutChecks) {
  EXPECT_THAT(*ContiguousStrides({2, 3, 4}), ElementsAre(12, 4, 1));
  EXPECT_THAT(*ContiguousStrides({2, 0, 4}), ElementsAre(4, 4, 1));
  EXPECT_THAT(*ContiguousStrides({}), ElementsAre());
  EXPECT_TRUE(IsContiguousLayout({2, 3}, {3, 1}));
  EXPECT_FALSE(IsContiguousLayout({2, 3}, {1, 2}));
  EXPECT_TRUE(IsContiguousLayout({2, 1, 3}, {3, 99, 1})) << "size-1 dims do not matter";
  EXPECT_TRUE(IsContiguousLayout({0, 3}, {7, 7})) << "empty is contiguous";
  EXPECT_FALSE(IsContiguousLayout({2, 3}, {0, 1})) << "expanded is not contiguous";
}

TEST(Shape, ContiguousStridesIntoReusesItsVectorAndReportsOverflow) {
  DimVector strides = {7, 7, 7, 7, 7, 7, 7, 7};  // longer than the rank, on the heap
  ASSERT_TRUE(ContiguousStridesInto({2, 3}, &strides).ok());
  EXPECT_THAT(strides, ElementsAre(3, 1));
  ASSERT_TRUE(ContiguousStridesInto({}, &strides).ok());
  EXPECT_THAT(strides, ElementsAre());
  const absl::Status overflow = ContiguousStridesInto({0, INT64_MAX, 4}, &strides);
  EXPECT_EQ(overflow.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(overflow.message(), HasSubstr("overflow int64"));
}

TEST(Shape, SameDimsComparesLengthAndEveryElement) {
  EXPECT_TRUE(SameDims({}, {}));
  EXPECT_TRUE(SameDims({2, 3}, {2, 3}));
  EXPECT_FALSE(SameDims({2, 3}, {2, 4}));
  EXPECT_FALSE(SameDims({2, 3}, {2, 3, 1}));
  EXPECT_FALSE(SameDims({1}, {}));
}

TEST(Shape, StorageElementsForStridedViews) {
  EXPECT_EQ(*StorageElementsFor({2, 3}, {3, 1}), 6);
  EXPECT_EQ(*StorageElementsFor({2, 3}, {1, 2}), 6);
  EXPECT_EQ(*StorageElementsFor({2, 3}, {10, 2}), 15);
  EXPECT_EQ(*StorageElementsFor({4, 3}, {0, 1}), 3);
  EXPECT_EQ(*StorageElementsFor({0, 3}, {3, 1}), 0);
  EXPECT_EQ(*StorageElementsFor({}, {}), 1);
  EXPECT_EQ(StorageElementsFor({2}, {-1}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StorageElementsFor({2}, {1, 1}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StorageElementsFor({3}, {INT64_MAX}).status().code(), absl::StatusCode::kOutOfRange);
}

// The last reachable index can be exactly INT64_MAX; the element count is that + 1, which
// used to wrap negative and read as "no storage needed".
TEST(Shape, StorageElementsForRejectsALastIndexOfInt64Max) {
  absl::StatusOr<int64_t> elements = StorageElementsFor({2}, {INT64_MAX});
  ASSERT_FALSE(elements.ok()) << "got " << *elements;
  EXPECT_EQ(elements.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(elements.status().message(),
              HasSubstr("sizes [2] and strides [9223372036854775807] overflows int64"));
  EXPECT_EQ(StorageElementsFor({2, 4}, {INT64_MAX - 3, 1}).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(*StorageElementsFor({2}, {INT64_MAX - 1}), INT64_MAX);
}

TEST(Shape, WrapDimAcceptsNegativeAndRejectsOutOfRange) {
  EXPECT_EQ(*WrapDim(-1, 3, "sum"), 2);
  EXPECT_EQ(*WrapDim(0, 0, "sum"), 0);
  EXPECT_EQ(*WrapDim(-1, 0, "sum"), 0);
  absl::StatusOr<int64_t> bad = WrapDim(3, 3, "sum");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(bad.status().message(),
            "sum: Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  EXPECT_FALSE(WrapDim(1, 0, "sum").ok());
}

TEST(Shape, BroadcastsLikeNumPy) {
  EXPECT_THAT(*BroadcastShapes({3, 1}, {1, 4}), ElementsAre(3, 4));
  EXPECT_THAT(*BroadcastShapes({5, 3, 1}, {4}), ElementsAre(5, 3, 4));
  EXPECT_THAT(*BroadcastShapes({}, {2, 2}), ElementsAre(2, 2));
  EXPECT_THAT(*BroadcastShapes({0, 1}, {1, 3}), ElementsAre(0, 3));
  EXPECT_THAT(*BroadcastShapes({1}, {0}), ElementsAre(0));
  absl::StatusOr<DimVector> bad = BroadcastShapes({2, 3}, {4, 3});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("size of tensor a (2) must match the size of tensor b (4) at "
                        "non-singleton dimension 0"));
}

}  // namespace
}  // namespace tessera
