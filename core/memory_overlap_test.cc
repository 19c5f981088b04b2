#include "core/memory_overlap.h"

#include "core/views.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

Tensor Contig(std::initializer_list<int64_t> sizes, ScalarType dtype = ScalarType::kFloat32) {
  return *Empty(sizes, dtype, Device(DeviceType::kCPU));
}

TEST(MemoryOverlap, DenseInAnyDimensionOrder) {
  Tensor a = Contig({3, 4});
  EXPECT_TRUE(IsNonOverlappingAndDense(a));
  EXPECT_TRUE(IsNonOverlappingAndDense(*T(a)));
  EXPECT_TRUE(IsNonOverlappingAndDense(Contig({0, 5})));
  EXPECT_TRUE(IsNonOverlappingAndDense(*Slice(a, 0, 1, 2, 1)));   // one row: dense
  EXPECT_FALSE(IsNonOverlappingAndDense(*Slice(a, 1, 0, 4, 2)));  // every other column
  EXPECT_FALSE(IsNonOverlappingAndDense(*Expand(Contig({1, 4}), {3, 4})));
}

TEST(MemoryOverlap, InternalOverlapOfExpandedAndStridedTensors) {
  EXPECT_EQ(HasInternalOverlap(Contig({3, 4})), InternalOverlap::kNo);
  EXPECT_EQ(HasInternalOverlap(*Expand(Contig({1, 4}), {3, 4})), InternalOverlap::kYes);
  EXPECT_EQ(HasInternalOverlap(*Expand(Contig({}), {5})), InternalOverlap::kYes);
  // An expanded dim of size 1 or an empty tensor writes nothing twice.
  EXPECT_EQ(HasInternalOverlap(*Expand(Contig({1, 4}), {1, 4})), InternalOverlap::kNo);
  EXPECT_EQ(HasInternalOverlap(*Expand(Contig({1, 4}), {0, 4})), InternalOverlap::kNo);
  // Not dense and no stride 0: not decided cheaply (the callers allow it).
  EXPECT_EQ(HasInternalOverlap(*Slice(Contig({3, 4}), 1, 0, 4, 2)), InternalOverlap::kTooHard);
  Tensor windows = *AsStrided(Contig({6}), {4, 3}, {1, 1}, 0);  // overlapping windows
  EXPECT_EQ(HasInternalOverlap(windows), InternalOverlap::kTooHard);
}

TEST(MemoryOverlap, FullPartialNoneAndTooHard) {
  Tensor a = Contig({4, 4});
  EXPECT_EQ(GetOverlap(a, a), Overlap::kFull);
  EXPECT_EQ(GetOverlap(a, *View(a, {4, 4})), Overlap::kFull);  // another impl, same view
  EXPECT_EQ(GetOverlap(a, Contig({4, 4})), Overlap::kNone);    // another storage
  EXPECT_EQ(GetOverlap(*Slice(a, 0, 0, 2, 1), *Slice(a, 0, 2, 4, 1)), Overlap::kNone);
  EXPECT_EQ(GetOverlap(*Slice(a, 0, 0, 3, 1), *Slice(a, 0, 1, 4, 1)), Overlap::kPartial);
  EXPECT_EQ(GetOverlap(a, *T(a)), Overlap::kPartial);  // same range, other order
  // Columns 0 and 1: their byte ranges interleave, and they share nothing; not dense.
  EXPECT_EQ(GetOverlap(*Select(a, 1, 0), *Select(a, 1, 1)), Overlap::kTooHard);
  // Empty tensors share nothing, even with themselves.
  Tensor empty = *Slice(a, 0, 0, 0, 1);
  EXPECT_EQ(GetOverlap(empty, a), Overlap::kNone);
  // The same bytes seen with another dtype are not the same view.
  Tensor bytes = Contig({8}, ScalarType::kInt32);
  Tensor halves = *FromStorage(bytes.impl()->storage(), ScalarType::kInt16, {16}, {1}, 0);
  EXPECT_EQ(GetOverlap(bytes, halves), Overlap::kPartial);
}

// An empty tensor may carry any strides; the running product of sizes that a stride must
// match overflowed (signed) and, wrapped, matched the next stride by accident.
TEST(MemoryOverlap, DenseCheckDoesNotOverflowOnEmptyTensorsWithHugeSizes) {
  const int64_t big = int64_t{1} << 32;
  // Sorted by stride: [big] stride 1, [big + 2] stride big, [0] stride 2^33; the product
  // big * (big + 2) = 2^64 + 2^33 wrapped to 2^33, the last stride.
  Tensor t = *AsStrided(Contig({1}), {0, big, big + 2}, {int64_t{1} << 33, 1, big}, 0);
  EXPECT_FALSE(IsNonOverlappingAndDense(t));
  EXPECT_TRUE(IsNonOverlappingAndDense(*AsStrided(Contig({1}), {0, big}, {big, 1}, 0)));
}

}  // namespace
}  // namespace tessera
