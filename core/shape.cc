#include "core/shape.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tessera/base/layout.hpp"

namespace tessera {

absl::StatusOr<int64_t> ComputeNumel(IntArrayRef sizes) {
  int64_t numel = 1;
  bool overflow = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "expected all sizes to be non-negative, but got size %d at dimension %d in %s", sizes[i],
          i, ShapeToString(sizes)));
    }
    // Keep multiplying after an overflow only to find a zero size, which makes the product 0.
    overflow |= __builtin_mul_overflow(numel, sizes[i], &numel);
  }
  if (overflow && std::find(sizes.begin(), sizes.end(), 0) == sizes.end()) {
    return absl::OutOfRangeError(
        absl::StrFormat("the number of elements of shape %s overflows int64 (at most %d elements)",
                        ShapeToString(sizes), INT64_MAX));
  }
  return overflow ? 0 : numel;
}

absl::Status ContiguousStridesInto(IntArrayRef sizes, DimVector* strides) {
  strides->resize(sizes.size());
  if (sizes.empty()) return absl::OkStatus();
  int64_t* out = strides->data();
  out[sizes.size() - 1] = 1;
  for (size_t i = sizes.size() - 1; i-- > 0;) {
    if (__builtin_mul_overflow(out[i + 1], std::max<int64_t>(sizes[i + 1], 1), &out[i])) {
      return absl::OutOfRangeError(
          absl::StrFormat("the contiguous strides of shape %s overflow int64 (the stride of "
                          "dimension %d)",
                          ShapeToString(sizes), i));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<DimVector> ContiguousStrides(IntArrayRef sizes) {
  DimVector strides;
  if (absl::Status s = ContiguousStridesInto(sizes, &strides); !s.ok()) return s;
  return strides;
}

bool IsContiguousLayout(IntArrayRef sizes, IntArrayRef strides) {
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return true;
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

absl::StatusOr<int64_t> StorageElementsFor(IntArrayRef sizes, IntArrayRef strides) {
  if (sizes.size() != strides.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("expected as many strides as sizes, got sizes %s and strides %s",
                        ShapeToString(sizes), ShapeToString(strides)));
  }
  int64_t last = 0;  // index of the last element reachable
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "expected all sizes to be non-negative, but got size %d at dimension %d", sizes[i], i));
    }
    if (strides[i] < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "expected all strides to be non-negative, but got stride %d at dimension %d", strides[i],
          i));
    }
    if (sizes[i] == 0) return 0;
  }
  // The count is the last index + 1, and that + 1 overflows too when the last index is
  // INT64_MAX: a wrapped (negative) count would read as "no storage needed" to bounds checks.
  int64_t elements = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t span;
    if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) ||
        __builtin_add_overflow(last, span, &last)) {
      elements = -1;
      break;
    }
  }
  if (elements < 0 || __builtin_add_overflow(last, 1, &elements)) {
    return absl::OutOfRangeError(absl::StrFormat(
        "the storage for sizes %s and strides %s overflows int64 (expected the last element's "
        "index to be below %d)",
        ShapeToString(sizes), ShapeToString(strides), INT64_MAX));
  }
  return elements;
}

absl::StatusOr<int64_t> WrapDim(int64_t dim, int64_t ndim, std::string_view op) {
  const int64_t wrapped = base::wrap_dim(dim, ndim);
  if (wrapped < 0) {
    const int64_t n = std::max<int64_t>(ndim, 1);
    return absl::OutOfRangeError(absl::StrFormat(
        "%s: Dimension out of range (expected to be in range of [%d, %d], but got %d)", op, -n,
        n - 1, dim));
  }
  return wrapped;
}

absl::StatusOr<DimVector> BroadcastShapes(IntArrayRef a, IntArrayRef b) {
  const size_t ndim = std::max(a.size(), b.size());
  DimVector out(ndim);
  for (size_t i = 0; i < ndim; ++i) {
    const int64_t sa = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t sb = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the size of tensor a (%d) must match the size of tensor b (%d) at non-singleton "
          "dimension %d (shapes %s and %s)",
          sa, sb, ndim - 1 - i, ShapeToString(a), ShapeToString(b)));
    }
    out[ndim - 1 - i] = sa == 1 ? sb : sa;
  }
  return out;
}

absl::StatusOr<int64_t> CheckedMul(int64_t a, int64_t b, std::string_view op,
                                   std::string_view what) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product)) {
    return absl::OutOfRangeError(
        absl::StrFormat("%s: %s (%d * %d) overflows int64", op, what, a, b));
  }
  return product;
}

absl::StatusOr<int64_t> CheckedAdd(int64_t a, int64_t b, std::string_view op,
                                   std::string_view what) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) {
    return absl::OutOfRangeError(
        absl::StrFormat("%s: %s (%d + %d) overflows int64", op, what, a, b));
  }
  return sum;
}

std::string ShapeToString(IntArrayRef sizes) {
  return absl::StrCat("[", absl::StrJoin(sizes, ", "), "]");
}

}  // namespace tessera
