#include "core/memory_overlap.h"

#include <algorithm>

#include "tessera/base/layout.hpp"

namespace tessera {
namespace {

// The byte range [begin, end) of the storage that `t`'s elements lie in (strides are never
// negative here). Only for tensors with elements.
struct ByteRange {
  int64_t begin, end;
};
ByteRange RangeOf(const Tensor& t) {
  const int64_t item = static_cast<int64_t>(ElementSize(t.dtype()));
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.sizes()[d] - 1) * t.strides()[d];
  return {t.storage_offset() * item, (last + 1) * item};
}

bool SameView(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.storage_offset() == b.storage_offset() &&
         std::equal(a.sizes().begin(), a.sizes().end(), b.sizes().begin(), b.sizes().end()) &&
         std::equal(a.strides().begin(), a.strides().end(), b.strides().begin(), b.strides().end());
}

}  // namespace

bool IsNonOverlappingAndDense(const Tensor& t) {
  return base::is_non_overlapping_and_dense(t.sizes().data(), t.strides().data(),
                                            static_cast<size_t>(t.dim()));
}

InternalOverlap HasInternalOverlap(const Tensor& t) {
  // A contiguous tensor is dense without overlap: is_contiguous() is cached on the TensorImpl,
  // while IsNonOverlappingAndDense sorts the dims on every call.
  if (t.numel() <= 1 || t.is_contiguous() || IsNonOverlappingAndDense(t)) {
    return InternalOverlap::kNo;
  }
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[d] > 1 && t.strides()[d] == 0) return InternalOverlap::kYes;
  }
  return InternalOverlap::kTooHard;
}

Overlap GetOverlap(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.numel() == 0 || b.numel() == 0) return Overlap::kNone;
  if (a.impl() == b.impl()) return Overlap::kFull;
  if (!a.IsSameStorage(b)) return Overlap::kNone;
  const ByteRange ra = RangeOf(a), rb = RangeOf(b);
  if (ra.end <= rb.begin || rb.end <= ra.begin) return Overlap::kNone;
  if (SameView(a, b)) return Overlap::kFull;
  if (IsNonOverlappingAndDense(a) && IsNonOverlappingAndDense(b)) return Overlap::kPartial;
  return Overlap::kTooHard;
}

}  // namespace tessera
