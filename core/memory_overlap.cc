#include "core/memory_overlap.h"

#include <algorithm>

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
  DimVector dims;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[d] != 1) dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end(),
            [&](int64_t x, int64_t y) { return t.strides()[x] < t.strides()[y]; });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (t.strides()[d] != expected) return false;
    // Only an empty tensor's sizes (any strides allowed) can overflow the product; no stride
    // matches a product past INT64_MAX, so only the last dim may make it.
    if (__builtin_mul_overflow(expected, t.sizes()[d], &expected)) return d == dims.back();
  }
  return true;
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
