// Whether tensors share memory, for ops that write (Note [Memory overlap] in
// dispatcher/memory_overlap_check.cc). PyTorch's rules: exact where the layouts are dense,
// "too hard" (and allowed) where they are not.
#pragma once

#include "core/tensor.h"

namespace tessera {

// IsNonOverlappingAndDense: the elements cover a contiguous range of the storage exactly once,
// in any dimension order (a transposed or permuted contiguous tensor is; a slice with a step
// or an expanded tensor is not).
bool IsNonOverlappingAndDense(const Tensor& t);

enum class InternalOverlap {
  kNo,       // every element has its own memory location
  kYes,      // some elements share one (a stride 0 over a dimension of size > 1)
  kTooHard,  // not decided cheaply (e.g. as_strided with overlapping strides)
};
// HasInternalOverlap: whether writing every element of `t` writes some location twice.
InternalOverlap HasInternalOverlap(const Tensor& t);

enum class Overlap {
  kNone,     // no location in common
  kFull,     // the same view: same storage, offset, sizes, strides and dtype
  kPartial,  // some locations in common, but not the same view
  kTooHard,  // their byte ranges meet, but one is not dense: may or may not share locations
};
// GetOverlap: how `a` and `b` share memory. Empty tensors share nothing.
Overlap GetOverlap(const Tensor& a, const Tensor& b);

}  // namespace tessera
