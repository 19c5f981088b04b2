// Shape arithmetic shared by tensors, views and meta functions: element counts with overflow
// checks, contiguous strides, dimension wrapping and broadcasting.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace tessera {

// DimVector holds sizes or strides; up to 6 dimensions live inline (no heap allocation).
using DimVector = absl::InlinedVector<int64_t, 6>;
using IntArrayRef = absl::Span<const int64_t>;

// SameDims: a == b for shapes and strides, inline. Span's operator== calls memcmp, a library
// call that costs more than the compare itself for the few dims a shape has (small ops compare
// shapes several times per call).
inline bool SameDims(IntArrayRef a, IntArrayRef b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// ComputeNumel multiplies sizes; negative sizes and products above INT64_MAX are errors.
absl::StatusOr<int64_t> ComputeNumel(IntArrayRef sizes);

// ContiguousStrides gives row-major strides in elements (size-0 and size-1 dims get the stride
// they would have with size 1, as PyTorch does). An error when a stride overflows int64, which
// only an empty tensor's shape can make (a non-empty one's strides are at most its numel).
absl::StatusOr<DimVector> ContiguousStrides(IntArrayRef sizes);
// ContiguousStridesInto: the same into `strides` (resized to the rank), for callers that fill a
// plan in place (no StatusOr<DimVector> to move out of). On error `strides` is unspecified.
absl::Status ContiguousStridesInto(IntArrayRef sizes, DimVector* strides);

// IsContiguousLayout: row-major dense, ignoring strides of dims of size 1; empty tensors are
// contiguous.
bool IsContiguousLayout(IntArrayRef sizes, IntArrayRef strides);

// StorageElementsFor: how many elements a storage needs to hold a view with these sizes and
// strides at offset 0 (0 for an empty view). Errors on negative strides and overflow.
absl::StatusOr<int64_t> StorageElementsFor(IntArrayRef sizes, IntArrayRef strides);

// WrapDim turns a possibly negative dim into [0, ndim). A 0-dim tensor accepts -1 and 0, as
// in PyTorch. `op` names the operation in the error.
absl::StatusOr<int64_t> WrapDim(int64_t dim, int64_t ndim, std::string_view op);

// BroadcastShapes: the NumPy/PyTorch broadcast of two shapes.
absl::StatusOr<DimVector> BroadcastShapes(IntArrayRef a, IntArrayRef b);

// CheckedMul and CheckedAdd: a * b and a + b, or an OutOfRange error
// "<op>: <what> (a * b) overflows int64". For size, stride and offset arithmetic on values
// that callers choose (strides of size-1 and empty dims may be anything, as in PyTorch).
absl::StatusOr<int64_t> CheckedMul(int64_t a, int64_t b, std::string_view op,
                                   std::string_view what);
absl::StatusOr<int64_t> CheckedAdd(int64_t a, int64_t b, std::string_view op,
                                   std::string_view what);

// ShapeToString prints "[2, 3]".
std::string ShapeToString(IntArrayRef sizes);

}  // namespace tessera
