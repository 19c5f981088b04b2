#include "core/views.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor Contig(std::initializer_list<int64_t> sizes, Device device = Device(DeviceType::kCPU)) {
  return *Empty(sizes, ScalarType::kFloat32, device);
}

// Layout of a view: sizes, strides and storage offset, checked together.
#define EXPECT_LAYOUT(t, want_sizes, want_strides, want_offset) \
  do {                                                          \
    const Tensor view_ = (t);                                   \
    EXPECT_THAT(view_.sizes(), ElementsAre want_sizes);         \
    EXPECT_THAT(view_.strides(), ElementsAre want_strides);     \
    EXPECT_EQ(view_.storage_offset(), want_offset);             \
  } while (0)

TEST(Views, ViewInfersSizesAndKeepsStorage) {
  Tensor base = Contig({2, 3, 4});
  Tensor v = *View(base, {6, -1});
  EXPECT_LAYOUT(v, (6, 4), (4, 1), 0);
  EXPECT_TRUE(v.IsSameStorage(base));
  Tensor flat = *View(base, {-1});
  EXPECT_LAYOUT(flat, (24), (1), 0);
  Tensor scalar = *View(Contig({1}), {});
  EXPECT_EQ(scalar.dim(), 0);
}

TEST(Views, ViewOnNonContiguousBaseSplitsOnlyWithinChunks) {
  Tensor base = *Transpose(Contig({4, 6}), 0, 1);  // sizes (6, 4), strides (1, 6)
  Tensor split = *View(base, {2, 3, 4});           // splitting the stride-1 dim is fine
  EXPECT_LAYOUT(split, (2, 3, 4), (3, 1, 6), 0);
  absl::StatusOr<Tensor> merged = View(base, {24});
  ASSERT_FALSE(merged.ok());
  EXPECT_THAT(merged.status().message(), HasSubstr("use reshape instead"));
  Tensor sliced = *Slice(Contig({4, 6}), 1, 1, 5, 1);  // (4, 4) strides (6, 1) offset 1
  Tensor ok = *View(sliced, {4, 2, 2});
  EXPECT_LAYOUT(ok, (4, 2, 2), (6, 2, 1), 1);
}

TEST(Views, ViewRejectsBadShapes) {
  Tensor base = Contig({2, 3});
  EXPECT_THAT(View(base, {4, -1}).status().message(),
              HasSubstr("shape '[4, -1]' is invalid for input of size 6"));
  EXPECT_THAT(View(base, {-1, -1}).status().message(), HasSubstr("only one dimension"));
  EXPECT_THAT(View(base, {-2, 3}).status().message(), HasSubstr("invalid shape dimension -2"));
  EXPECT_THAT(View(Contig({0}), {0, -1}).status().message(), HasSubstr("ambiguous"));
  EXPECT_FALSE(View(Tensor(), {1}).ok());
}

TEST(Views, PermuteTransposeAndT) {
  Tensor base = Contig({2, 3, 4});
  EXPECT_LAYOUT(*Permute(base, {2, 0, 1}), (4, 2, 3), (1, 12, 4), 0);
  EXPECT_LAYOUT(*Permute(base, {-1, 0, 1}), (4, 2, 3), (1, 12, 4), 0);
  EXPECT_THAT(Permute(base, {0, 0, 1}).status().message(), HasSubstr("duplicate dims"));
  EXPECT_THAT(Permute(base, {0, 1}).status().message(), HasSubstr("does not match"));
  EXPECT_LAYOUT(*Transpose(base, 0, -1), (4, 3, 2), (1, 4, 12), 0);
  EXPECT_EQ(Transpose(base, 0, 3).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_LAYOUT(*T(Contig({2, 5})), (5, 2), (1, 5), 0);
  EXPECT_LAYOUT(*T(Contig({5})), (5), (1), 0);
  EXPECT_THAT(T(base).status().message(), HasSubstr("<= 2 dimensions, but self is 3D"));
  Tensor s = *Transpose(Contig({}), 0, -1);
  EXPECT_EQ(s.dim(), 0);
}

TEST(Views, ExpandUsesZeroStrides) {
  Tensor base = Contig({3, 1});
  EXPECT_LAYOUT(*Expand(base, {2, 3, 4}), (2, 3, 4), (0, 1, 0), 0);
  EXPECT_LAYOUT(*Expand(base, {-1, 5}), (3, 5), (1, 0), 0);
  EXPECT_LAYOUT(*Expand(Contig({}), {2, 2}), (2, 2), (0, 0), 0);
  EXPECT_THAT(Expand(base, {4, 1}).status().message(),
              HasSubstr("expanded size of the tensor (4) must match the existing size (3)"));
  EXPECT_THAT(Expand(base, {-1, 3, 1}).status().message(), HasSubstr("leading, non-existing"));
  EXPECT_THAT(Expand(base, {3}).status().message(), HasSubstr("greater or equal"));
  EXPECT_LAYOUT(*Expand(Contig({0, 1}), {0, 4}), (0, 4), (1, 0), 0);
}

TEST(Views, SliceClampsLikePythonAndSteps) {
  Tensor base = Contig({10, 4});
  EXPECT_LAYOUT(*Slice(base, 0, 2, 8, 3), (2, 4), (12, 1), 8);
  EXPECT_LAYOUT(*Slice(base, 0, -3, std::nullopt, 1), (3, 4), (4, 1), 28);
  EXPECT_LAYOUT(*Slice(base, 0, 100, 200, 1), (0, 4), (4, 1), 0);
  EXPECT_LAYOUT(*Slice(base, 1, 3, 1, 1), (10, 0), (4, 1), 0);
  EXPECT_LAYOUT(*Slice(base, -1, std::nullopt, std::nullopt, 2), (10, 2), (4, 2), 0);
  EXPECT_THAT(Slice(base, 0, 0, 5, 0).status().message(), HasSubstr("step must be positive"));
  EXPECT_FALSE(Slice(Contig({}), 0, 0, 1, 1).ok());
  // On a transposed, offset base.
  Tensor t = *Transpose(*Slice(base, 0, 1, 9, 1), 0, 1);  // (4, 8) strides (1, 4) offset 4
  EXPECT_LAYOUT(*Slice(t, 1, 2, 6, 2), (4, 2), (1, 8), 12);
}

TEST(Views, SelectNarrowSqueezeUnsqueeze) {
  Tensor base = Contig({3, 1, 5});
  EXPECT_LAYOUT(*Select(base, 0, -1), (1, 5), (5, 1), 10);
  EXPECT_LAYOUT(*Select(base, 2, 4), (3, 1), (5, 5), 4);
  EXPECT_THAT(Select(base, 0, 3).status().message(),
              HasSubstr("index 3 out of range for tensor of size [3, 1, 5] at dimension 0"));
  EXPECT_THAT(Select(Contig({}), 0, 0).status().message(), HasSubstr("0-dim"));
  EXPECT_EQ(Select(Contig({}), 0, 0).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_LAYOUT(*Narrow(base, 2, 1, 3), (3, 1, 3), (5, 5, 1), 1);
  EXPECT_LAYOUT(*Narrow(base, 2, -2, 2), (3, 1, 2), (5, 5, 1), 3);
  EXPECT_THAT(Narrow(base, 2, 3, 3).status().message(), HasSubstr("exceeds dimension size (5)"));
  EXPECT_LAYOUT(*Squeeze(base), (3, 5), (5, 1), 0);
  EXPECT_LAYOUT(*SqueezeDims(base, {0, 1}), (3, 5), (5, 1), 0);
  EXPECT_LAYOUT(*SqueezeDims(Contig({}), {0}), (), (), 0);
  EXPECT_FALSE(SqueezeDims(base, {3}).ok());
  EXPECT_LAYOUT(*Unsqueeze(base, 0), (1, 3, 1, 5), (15, 5, 5, 1), 0);
  EXPECT_LAYOUT(*Unsqueeze(base, -1), (3, 1, 5, 1), (5, 5, 1, 1), 0);
  EXPECT_LAYOUT(*Unsqueeze(Contig({}), 0), (1), (1), 0);
  EXPECT_FALSE(Unsqueeze(base, 4).ok());
}

TEST(Views, DiagonalUnfoldAsStrided) {
  Tensor m = Contig({3, 4});
  EXPECT_LAYOUT(*Diagonal(m, 0, 0, 1), (3), (5), 0);
  EXPECT_LAYOUT(*Diagonal(m, 1, 0, 1), (3), (5), 1);
  EXPECT_LAYOUT(*Diagonal(m, -1, 0, 1), (2), (5), 4);
  EXPECT_LAYOUT(*Diagonal(m, 10, 0, 1), (0), (5), 0);
  EXPECT_LAYOUT(*Diagonal(Contig({2, 3, 4}), 0, 0, 2), (3, 2), (4, 13), 0);
  EXPECT_THAT(Diagonal(m, 0, 1, -1).status().message(), HasSubstr("cannot be identical"));
  EXPECT_LAYOUT(*Unfold(Contig({7}), 0, 3, 2), (3, 3), (2, 1), 0);
  EXPECT_LAYOUT(*Unfold(m, 1, 2, 1), (3, 3, 2), (4, 1, 1), 0);
  EXPECT_LAYOUT(*Unfold(Contig({}), 0, 1, 1), (1), (1), 0);
  EXPECT_THAT(Unfold(m, 1, 5, 1).status().message(), HasSubstr("maximum size"));
  EXPECT_LAYOUT(*AsStrided(m, {2, 2}, {1, 4}, 3), (2, 2), (1, 4), 3);
  absl::StatusOr<Tensor> oob = AsStrided(m, {2, 2}, {1, 4}, 8);
  EXPECT_EQ(oob.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_FALSE(AsStrided(m, {2, 2}, {1}, 0).ok());
}

// as_strided(float32[1], size=[2], stride=[INT64_MAX]) put element [1] 4 bytes before the
// buffer: the bounds check saw a negative element count and was skipped.
TEST(Views, AsStridedRejectsAViewWhoseLastElementOverflowsInt64) {
  absl::StatusOr<Tensor> wrapped = AsStrided(Contig({1}), {2}, {INT64_MAX}, std::nullopt);
  ASSERT_FALSE(wrapped.ok()) << wrapped->ToString();
  EXPECT_EQ(wrapped.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(wrapped.status().message(), HasSubstr("as_strided: "));
  EXPECT_THAT(wrapped.status().message(), HasSubstr("strides [9223372036854775807] overflows"));
  // Any length before the buffer: sizes [2, K], strides [INT64_MAX - (K - 1), 1].
  EXPECT_FALSE(AsStrided(Contig({1}), {2, 8}, {INT64_MAX - 7, 1}, std::nullopt).ok());
}

// Python's x[::huge] is one element: (e - s + step - 1) / step overflowed to a negative size.
TEST(Views, SliceWithAHugeStepTakesOneElement) {
  // A dim left with at most one element never steps: its stride is kept, not multiplied.
  EXPECT_LAYOUT(*Slice(Contig({10}), 0, 0, 10, INT64_MAX), (1), (1), 0);
  EXPECT_LAYOUT(*Slice(Contig({10}), 0, 3, 10, INT64_MAX - 1), (1), (1), 3);
  EXPECT_LAYOUT(*Slice(Contig({10}), 0, 4, 4, INT64_MAX), (0), (1), 0);
  EXPECT_LAYOUT(*Slice(Contig({2, 10}), 0, 0, 2, INT64_MAX), (1, 10), (10, 1), 0);
  // Two elements whose stride times the step does not fit: an error, not a wrapped stride.
  Tensor wide = *AsStrided(Contig({1}), {0, 5}, {1, int64_t{1} << 62}, 0);
  absl::StatusOr<Tensor> v = Slice(wide, 1, 0, 5, 2);
  ASSERT_FALSE(v.ok()) << v->ToString();
  EXPECT_EQ(v.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(v.status().message(),
              HasSubstr("slice: the stride times the step (4611686018427387904 * 2) overflows "
                        "int64"));
}

TEST(Views, UnfoldRejectsAStrideTimesStepThatOverflows) {
  // One window never steps: its stride is kept (x.unfold(0, 1, huge) is one window, as PyTorch).
  EXPECT_LAYOUT(*Unfold(Contig({3}), 0, 1, INT64_MAX), (1, 1), (1, 1), 0);
  Tensor t = *Transpose(Contig({2, 3}), 0, 1);  // (3, 2) strides (1, 3)
  EXPECT_LAYOUT(*Unfold(t, 1, 1, INT64_MAX), (3, 1, 1), (1, 3, 3), 0);
  // Three windows of an (empty) tensor whose stride is 2^62: 2^62 * 2 does not fit.
  Tensor wide = *AsStrided(Contig({1}), {0, 5}, {1, int64_t{1} << 62}, 0);
  absl::StatusOr<Tensor> v = Unfold(wide, 1, 1, 2);
  ASSERT_FALSE(v.ok()) << v->ToString();
  EXPECT_EQ(v.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(v.status().message(),
              HasSubstr("unfold: the stride times the step (4611686018427387904 * 2) overflows"));
}

// Size-1 and empty tensors may carry any stride (as in PyTorch); the views computed from them
// multiplied or added those strides unchecked.
TEST(Views, ViewsOfHugeStridesOnSizeOneOrEmptyDimsFailCleanly) {
  Tensor one = *AsStrided(Contig({1}), {1, 1}, {INT64_MAX, INT64_MAX}, 0);
  absl::StatusOr<Tensor> diag = Diagonal(one, 0, 0, 1);
  ASSERT_FALSE(diag.ok()) << diag->ToString();
  EXPECT_THAT(diag.status().message(),
              HasSubstr("diagonal: the sum of the two dims' strides (9223372036854775807 + "
                        "9223372036854775807) overflows int64"));
  Tensor empty = *AsStrided(Contig({1}), {0, 4}, {1, INT64_MAX}, 0);
  absl::StatusOr<Tensor> sel = Select(empty, 1, 2);
  ASSERT_FALSE(sel.ok()) << sel->ToString();
  EXPECT_THAT(sel.status().message(),
              HasSubstr("select: the index times the stride (2 * 9223372036854775807) overflows"));
  absl::StatusOr<Tensor> sl = Slice(empty, 1, 2, 4, 1);
  ASSERT_FALSE(sl.ok()) << sl->ToString();
  EXPECT_THAT(sl.status().message(),
              HasSubstr("slice: the start times the stride (2 * 9223372036854775807) overflows"));
  absl::StatusOr<Tensor> un = Unsqueeze(empty, 1);
  ASSERT_FALSE(un.ok()) << un->ToString();
  EXPECT_THAT(un.status().message(),
              HasSubstr("unsqueeze: the size times the stride (4 * 9223372036854775807) "
                        "overflows"));
  Tensor tall = *AsStrided(Contig({1}), {3, 0}, {INT64_MAX, 1}, 0);
  absl::StatusOr<Tensor> ex = Expand(tall, {1, 3, 0});
  ASSERT_FALSE(ex.ok()) << ex->ToString();
  EXPECT_THAT(ex.status().message(),
              HasSubstr("expand: the size times the stride (3 * 9223372036854775807) overflows"));
}

// view multiplied the old sizes into a count; with the 0 last, [2^40, 2^40, 0] overflowed
// before reaching it (the wrapped 0 was right only by luck).
TEST(Views, ViewOfAnEmptyTensorWithHugeLeadingDimsDoesNotOverflow) {
  const int64_t big = int64_t{1} << 40;
  Tensor empty = Contig({big, big, 0});
  EXPECT_LAYOUT(*View(empty, {-1}), (0), (1), 0);
  EXPECT_LAYOUT(*View(empty, {big, 0, big}), (big, 0, big), (big, big, 1), 0);
}

// Every view op on one non-contiguous base with an offset: (3, 4) with strides (2, 8) at
// offset 10, made by two slices and a transpose of a (6, 8) tensor. Expected layouts by hand.
TEST(Views, EveryViewOpOnANonContiguousOffsetBase) {
  Tensor base = *Transpose(*Slice(*Slice(Contig({6, 8}), 0, 1, 5, 1), 1, 2, 8, 2), 0, 1);
  EXPECT_LAYOUT(base, (3, 4), (2, 8), 10);
  EXPECT_LAYOUT(*View(base, {3, 2, 2}), (3, 2, 2), (2, 16, 8), 10);
  EXPECT_FALSE(View(base, {12}).ok());
  EXPECT_LAYOUT(*Permute(base, {1, 0}), (4, 3), (8, 2), 10);
  EXPECT_LAYOUT(*T(base), (4, 3), (8, 2), 10);
  EXPECT_LAYOUT(*Unsqueeze(base, 0), (1, 3, 4), (6, 2, 8), 10);
  EXPECT_LAYOUT(*Unsqueeze(base, 2), (3, 4, 1), (2, 8, 1), 10);
  EXPECT_LAYOUT(*Expand(*Unsqueeze(base, 0), {5, 3, 4}), (5, 3, 4), (0, 2, 8), 10);
  EXPECT_LAYOUT(*Select(base, 1, 2), (3), (2), 26);
  EXPECT_LAYOUT(*Narrow(base, 0, 1, 2), (2, 4), (2, 8), 12);
  EXPECT_LAYOUT(*Slice(base, 1, 1, 4, 2), (3, 2), (2, 16), 18);
  EXPECT_LAYOUT(*Squeeze(*Unsqueeze(base, 1)), (3, 4), (2, 8), 10);
  EXPECT_LAYOUT(*Diagonal(base, 0, 0, 1), (3), (10), 10);
  EXPECT_LAYOUT(*Diagonal(base, 1, 0, 1), (3), (10), 18);
  EXPECT_LAYOUT(*Unfold(base, 1, 2, 2), (3, 2, 2), (2, 16, 8), 10);
  EXPECT_LAYOUT(*AsStrided(base, {2}, {5}, 11), (2), (5), 11);
  EXPECT_LAYOUT(*AsStrided(base, {2}, {5}, std::nullopt), (2), (5), 10);
}

TEST(Views, WorkOnMetaTensorsWithoutMemory) {
  Tensor meta = Contig({4, 6}, Device(DeviceType::kMeta));
  Tensor v = *Transpose(*View(meta, {2, 2, 6}), 0, 2);
  EXPECT_LAYOUT(v, (6, 2, 2), (1, 6, 12), 0);
  EXPECT_EQ(v.device(), Device(DeviceType::kMeta));
  EXPECT_EQ(v.data_ptr(), nullptr);
}

}  // namespace
}  // namespace tessera
