// What reflection and replication padding's forwards (padding_ops.cc) and backwards
// (padding_backward_ops.cc) share: how a padding list reads, ATen's checks of it with their
// messages, and the index of self's element each padded position holds, so that a backward
// reads its forward's arguments exactly as the forward did and adds into the elements it read.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "core/shape.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {

// How a padded dim reads self: reflected at its edges (the edge element once) or with the edge
// element repeated.
enum class PadKind { kReflect, kReplicate };

// PadPair: the (before, after) padding of the dim `i` pairs from the last, as every padding
// op's list runs (pair 0 pads the last dim).
struct PadPair {
  int64_t before, after;
};
inline PadPair PairOf(const IntList& pad, int64_t i) { return {pad[2 * i], pad[2 * i + 1]}; }

// CheckPadLength: a padding list for the last `dims` dims holds 2 * dims numbers.
inline absl::Status CheckPadLength(const OperatorHandle& op, const IntList& pad, int64_t dims) {
  if (static_cast<int64_t>(pad.size()) != 2 * dims) {
    return Invalid(op, absl::StrFormat("padding size is expected to be %d, but got: %d", 2 * dims,
                                       pad.size()));
  }
  return absl::OkStatus();
}

// PaddedSize: size + before + after of dim `dim`, refused where it overflows int64.
inline absl::StatusOr<int64_t> PaddedSize(const OperatorHandle& op, int64_t size, PadPair p,
                                          int64_t dim) {
  int64_t out = 0;
  if (__builtin_add_overflow(size, p.before, &out) || __builtin_add_overflow(out, p.after, &out)) {
    return Invalid(
        op, absl::StrFormat("padding (%d, %d) of dimension %d of size %d overflows int64", p.before,
                            p.after, dim, size));
  }
  return out;
}

// CheckReflectPadding: a reflection of self's last `dims` dims (of `sizes`) pads each by less
// than its size on either side (ATen's padding::pad_shape_check).
inline absl::Status CheckReflectPadding(const OperatorHandle& op, IntArrayRef sizes,
                                        const IntList& pad, int64_t dims) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t d = nd - 1 - i;
    const PadPair p = PairOf(pad, i);
    if (p.before >= sizes[d] || p.after >= sizes[d]) {
      return Invalid(op, absl::StrFormat("Argument #%d: Padding size should be less than the "
                                         "corresponding input dimension, but got: padding (%d, "
                                         "%d) at dimension %d of input %s",
                                         4 + 2 * i, p.before, p.after, d, ShapeToString(sizes)));
    }
  }
  return absl::OkStatus();
}

// PadIndex: for each position of the padded dim `dim` of self (`size` elements along it), the
// element of self it holds, on `device`. Position k of the output is self's position
// i = k - before (negative before self's first element, past its last beyond it; a negative
// padding crops, so i starts inside self): a reflection reads (size - 1) - |(size - 1) - |i||, a
// replication clamp(i, 0, size - 1). Both agree with ATen's kernels for negative paddings too
// (they index relative to the uncropped self), and the checks keep i within
// [-(size - 1), 2 (size - 1)], where one reflection suffices.
inline absl::StatusOr<Tensor> PadIndex(const OperatorHandle& op, int64_t size, int64_t dim,
                                       PadPair p, PadKind kind, Device device) {
  OpRegistry& r = op.registry();
  int64_t start = 0, end = 0;
  if (__builtin_sub_overflow(int64_t{0}, p.before, &start) ||
      __builtin_add_overflow(size, p.after, &end)) {
    return Invalid(
        op, absl::StrFormat("padding (%d, %d) of dimension %d of size %d overflows int64", p.before,
                            p.after, dim, size));
  }
  TSR_ASSIGN_OR_RETURN(Tensor i,
                       CallOne(r, "arange.start",
                               {Value(Scalar(start)), Value(Scalar(end)), Value(ScalarType::kInt64),
                                Value(std::nullopt), Value(device), Value(std::nullopt)}));
  const Value last = Value(Scalar(size - 1));
  if (kind == PadKind::kReplicate) {
    return CallOne(r, "clamp", {Value(i), Value(Scalar(int64_t{0})), last});
  }
  const Value one = Value(Scalar(int64_t{1}));
  TSR_ASSIGN_OR_RETURN(Tensor t, CallOne(r, "abs", {Value(i)}));
  TSR_ASSIGN_OR_RETURN(t, CallOne(r, "rsub.Scalar", {Value(t), last, one}));
  TSR_ASSIGN_OR_RETURN(t, CallOne(r, "abs", {Value(t)}));
  return CallOne(r, "rsub.Scalar", {Value(t), last, one});
}

}  // namespace ops
}  // namespace tessera
