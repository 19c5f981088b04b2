#include "core/views.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"

namespace tessera {
namespace {

// MakeView builds the result of every view op; FromStorage re-checks that it stays in bounds.
absl::StatusOr<Tensor> MakeView(const Tensor& self, IntArrayRef sizes, IntArrayRef strides,
                                int64_t storage_offset) {
  TSR_ASSIGN_OR_RETURN(Tensor view, FromStorage(self.impl()->storage(), self.dtype(), sizes,
                                                strides, storage_offset));
  InheritImmutability(self, &view);  // Note [Immutable tensors]
  return view;
}

absl::Status CheckDefined(const Tensor& self, const char* op) {
  if (!self.defined()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: expected a tensor, got undefined", op));
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<DimVector> ComputeViewStrides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                            IntArrayRef new_sizes) {
  DimVector new_strides(new_sizes.size(), 1);
  if (old_sizes.empty()) return new_strides;
  // An empty shape's other sizes may multiply past INT64_MAX: look for the 0, do not multiply.
  if (std::find(old_sizes.begin(), old_sizes.end(), 0) != old_sizes.end()) {
    if (std::equal(old_sizes.begin(), old_sizes.end(), new_sizes.begin(), new_sizes.end())) {
      return DimVector(old_strides.begin(), old_strides.end());
    }
    absl::StatusOr<DimVector> strides = ContiguousStrides(new_sizes);
    if (!strides.ok()) return std::nullopt;  // reshape's copy then reports the overflow
    return *std::move(strides);
  }
  // Walk both shapes from the innermost dim, matching "chunks" of old dims that are laid out
  // contiguously with respect to each other; a new dim may not straddle two chunks.
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  // Strides may be any int64 (a Meta tensor's, or a size-1 dim's): a product that overflows
  // is no stride an old dim can have (a chunk ends there) and no stride a new dim of more than
  // one element can take (the view is impossible); a new dim of one element takes any stride.
  // Found by the op_meta fuzzer.
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];  // a suffix of a non-empty tensor's sizes: fits
    int64_t contiguous_stride = 0;
    const bool chunk_ends =
        tensor_d == 0 ||
        (old_sizes[tensor_d - 1] != 1 &&
         (__builtin_mul_overflow(tensor_numel, chunk_base_stride, &contiguous_stride) ||
          old_strides[tensor_d - 1] != contiguous_stride));
    if (chunk_ends) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        if (__builtin_mul_overflow(view_numel, chunk_base_stride, &new_strides[view_d])) {
          if (new_sizes[view_d] != 1) return std::nullopt;
          new_strides[view_d] = chunk_base_stride;
        }
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

absl::StatusOr<DimVector> InferViewSizes(IntArrayRef sizes, int64_t numel) {
  DimVector out(sizes.begin(), sizes.end());
  std::optional<size_t> infer_dim;
  int64_t known = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (infer_dim) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "only one dimension can be inferred, got shape %s", ShapeToString(sizes)));
      }
      infer_dim = i;
    } else if (sizes[i] < 0) {
      return absl::InvalidArgumentError(absl::StrFormat("invalid shape dimension %d in shape %s",
                                                        sizes[i], ShapeToString(sizes)));
    } else if (__builtin_mul_overflow(known, sizes[i], &known)) {
      return absl::OutOfRangeError(
          absl::StrFormat("shape %s overflows int64 elements", ShapeToString(sizes)));
    }
  }
  if (infer_dim) {
    if (known == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "cannot reshape a tensor of %d elements into shape %s because the unspecified "
          "dimension size -1 can be any value and is ambiguous",
          numel, ShapeToString(sizes)));
    }
    if (numel % known == 0) {
      out[*infer_dim] = numel / known;
      return out;
    }
  } else if (known == numel) {
    return out;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("shape '%s' is invalid for input of size %d", ShapeToString(sizes), numel));
}

absl::StatusOr<Tensor> View(const Tensor& self, IntArrayRef sizes) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "view"));
  TSR_ASSIGN_OR_RETURN(DimVector new_sizes, InferViewSizes(sizes, self.numel()));
  std::optional<DimVector> strides = ComputeViewStrides(self.sizes(), self.strides(), new_sizes);
  if (!strides) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "view: size %s is not compatible with input tensor's size %s and stride %s (at least one "
        "dimension spans across two contiguous subspaces); use reshape instead",
        ShapeToString(sizes), ShapeToString(self.sizes()), ShapeToString(self.strides())));
  }
  return MakeView(self, new_sizes, *strides, self.storage_offset());
}

absl::StatusOr<Tensor> AsStrided(const Tensor& self, IntArrayRef sizes, IntArrayRef strides,
                                 std::optional<int64_t> storage_offset) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "as_strided"));
  if (sizes.size() != strides.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "as_strided: expected as many strides as sizes, got sizes %s (%d) and strides %s (%d)",
        ShapeToString(sizes), sizes.size(), ShapeToString(strides), strides.size()));
  }
  absl::StatusOr<Tensor> view =
      MakeView(self, sizes, strides, storage_offset.value_or(self.storage_offset()));
  if (!view.ok()) {
    // The only view op whose strides come straight from the caller: say which op refused them.
    return absl::Status(view.status().code(),
                        absl::StrCat("as_strided: ", view.status().message()));
  }
  return view;
}

absl::StatusOr<Tensor> Permute(const Tensor& self, IntArrayRef dims) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "permute"));
  const int64_t ndim = self.dim();
  if (static_cast<int64_t>(dims.size()) != ndim) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "permute: number of dims in the tensor (%d) does not match the length of the desired "
        "ordering of dims %s (%d)",
        ndim, ShapeToString(dims), dims.size()));
  }
  DimVector sizes(ndim), strides(ndim);
  absl::InlinedVector<bool, 6> seen(ndim, false);
  for (int64_t i = 0; i < ndim; ++i) {
    TSR_ASSIGN_OR_RETURN(const int64_t d, WrapDim(dims[i], ndim, "permute"));
    if (seen[d]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("permute: duplicate dims are not allowed, got %s", ShapeToString(dims)));
    }
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return MakeView(self, sizes, strides, self.storage_offset());
}

absl::StatusOr<Tensor> Transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "transpose"));
  TSR_ASSIGN_OR_RETURN(const int64_t d0, WrapDim(dim0, self.dim(), "transpose"));
  TSR_ASSIGN_OR_RETURN(const int64_t d1, WrapDim(dim1, self.dim(), "transpose"));
  if (self.dim() == 0) return MakeView(self, {}, {}, self.storage_offset());
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  std::swap(sizes[d0], sizes[d1]);
  std::swap(strides[d0], strides[d1]);
  return MakeView(self, sizes, strides, self.storage_offset());
}

absl::StatusOr<Tensor> T(const Tensor& self) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "t"));
  if (self.dim() > 2) {
    return absl::InvalidArgumentError(
        absl::StrFormat("t: expects a tensor with <= 2 dimensions, but self is %dD", self.dim()));
  }
  if (self.dim() < 2) return MakeView(self, self.sizes(), self.strides(), self.storage_offset());
  return Transpose(self, 0, 1);
}

absl::StatusOr<Tensor> Expand(const Tensor& self, IntArrayRef sizes) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "expand"));
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  const int64_t tensor_dim = self.dim();
  if (ndim < tensor_dim) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "expand: the number of sizes provided (%d) must be greater or equal to the number of "
        "dimensions in the tensor (%d)",
        ndim, tensor_dim));
  }
  DimVector out_sizes(ndim), out_strides(ndim);
  for (int64_t i = ndim - 1; i >= 0; --i) {
    const int64_t dim = tensor_dim - 1 - (ndim - 1 - i);
    int64_t size = dim >= 0 ? self.sizes()[dim] : 1;
    int64_t stride = dim >= 0 ? self.strides()[dim] : 1;
    if (dim < 0 && i + 1 < ndim) {
      TSR_ASSIGN_OR_RETURN(stride, CheckedMul(out_sizes[i + 1], out_strides[i + 1], "expand",
                                              "the size times the stride"));
    }
    int64_t target = sizes[i];
    if (target == -1) {
      if (dim < 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "expand: the expanded size of the tensor (-1) isn't allowed in a leading, "
            "non-existing dimension %d",
            i));
      }
      target = size;
    } else if (target < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("expand: expected sizes >= -1, got %d at dimension %d", target, i));
    }
    if (size != target) {
      if (size != 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "expand: the expanded size of the tensor (%d) must match the existing size (%d) at "
            "non-singleton dimension %d. Target sizes: %s. Tensor sizes: %s",
            target, size, i, ShapeToString(sizes), ShapeToString(self.sizes())));
      }
      size = target;
      stride = 0;
    }
    out_sizes[i] = size;
    out_strides[i] = stride;
  }
  return MakeView(self, out_sizes, out_strides, self.storage_offset());
}

absl::StatusOr<Tensor> Slice(const Tensor& self, int64_t dim, std::optional<int64_t> start,
                             std::optional<int64_t> end, int64_t step) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "slice"));
  if (self.dim() == 0) {
    // OUT_OF_RANGE, as select's: PyTorch raises IndexError for both.
    return absl::OutOfRangeError("slice: cannot be applied to a 0-dim tensor");
  }
  TSR_ASSIGN_OR_RETURN(const int64_t d, WrapDim(dim, self.dim(), "slice"));
  if (step <= 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("slice: step must be positive, got %d", step));
  }
  const int64_t size = self.sizes()[d];
  auto clamp = [size](int64_t v) {
    if (v < 0) v += size;
    return std::clamp<int64_t>(v, 0, size);
  };
  const int64_t s = clamp(start.value_or(0));
  const int64_t e = std::max(s, clamp(end.value_or(size)));
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  // Not (e - s + step - 1) / step: that overflows for Python's x[::huge].
  sizes[d] = e == s ? 0 : (e - s - 1) / step + 1;
  int64_t offset = self.storage_offset();
  if (sizes[d] > 0) {
    TSR_ASSIGN_OR_RETURN(const int64_t skip,
                         CheckedMul(s, strides[d], "slice", "the start times the stride"));
    TSR_ASSIGN_OR_RETURN(offset, CheckedAdd(offset, skip, "slice", "the offset plus the start"));
  }
  // A dim of at most one element never steps, so its stride is free: keeping it avoids an
  // overflow of stride * step that PyTorch wraps silently (x[::INT64_MAX] is one element).
  if (sizes[d] > 1) {
    TSR_ASSIGN_OR_RETURN(strides[d],
                         CheckedMul(strides[d], step, "slice", "the stride times the step"));
  }
  return MakeView(self, sizes, strides, offset);
}

absl::StatusOr<Tensor> Select(const Tensor& self, int64_t dim, int64_t index) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "select"));
  if (self.dim() == 0) {
    return absl::OutOfRangeError("select: cannot be applied to a 0-dim tensor");
  }
  TSR_ASSIGN_OR_RETURN(const int64_t d, WrapDim(dim, self.dim(), "select"));
  const int64_t size = self.sizes()[d];
  if (index < -size || index >= size) {
    return absl::OutOfRangeError(
        absl::StrFormat("select: index %d out of range for tensor of size %s at dimension %d",
                        index, ShapeToString(self.sizes()), d));
  }
  if (index < 0) index += size;
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  TSR_ASSIGN_OR_RETURN(const int64_t skip,
                       CheckedMul(index, strides[d], "select", "the index times the stride"));
  TSR_ASSIGN_OR_RETURN(const int64_t offset, CheckedAdd(self.storage_offset(), skip, "select",
                                                        "the offset plus the index"));
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return MakeView(self, sizes, strides, offset);
}

absl::StatusOr<Tensor> Narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "narrow"));
  if (self.dim() == 0) {
    return absl::InvalidArgumentError("narrow: cannot be applied to a 0-dim tensor");
  }
  TSR_ASSIGN_OR_RETURN(const int64_t d, WrapDim(dim, self.dim(), "narrow"));
  const int64_t size = self.sizes()[d];
  if (start < -size || start > size) {
    return absl::OutOfRangeError(absl::StrFormat(
        "narrow: start (%d) out of range for dimension %d of size %d (expected [%d, %d])", start, d,
        size, -size, size));
  }
  if (start < 0) start += size;
  if (length < 0 || length > size - start) {  // not start + length > size: that may overflow
    return absl::OutOfRangeError(absl::StrFormat(
        "narrow: start (%d) + length (%d) exceeds dimension size (%d), or length is negative",
        start, length, size));
  }
  return Slice(self, d, start, start + length, 1);
}

absl::StatusOr<Tensor> Squeeze(const Tensor& self) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "squeeze"));
  DimVector sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (self.sizes()[i] == 1) continue;
    sizes.push_back(self.sizes()[i]);
    strides.push_back(self.strides()[i]);
  }
  return MakeView(self, sizes, strides, self.storage_offset());
}

absl::StatusOr<Tensor> SqueezeDims(const Tensor& self, IntArrayRef dims) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "squeeze"));
  absl::InlinedVector<bool, 6> drop(self.dim(), false);
  for (int64_t dim : dims) {
    TSR_ASSIGN_OR_RETURN(const int64_t d, WrapDim(dim, self.dim(), "squeeze"));
    if (self.dim() > 0 && self.sizes()[d] == 1) drop[d] = true;
  }
  DimVector sizes, strides;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (drop[i]) continue;
    sizes.push_back(self.sizes()[i]);
    strides.push_back(self.strides()[i]);
  }
  return MakeView(self, sizes, strides, self.storage_offset());
}

absl::StatusOr<Tensor> Unsqueeze(const Tensor& self, int64_t dim) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "unsqueeze"));
  TSR_ASSIGN_OR_RETURN(const int64_t d, WrapDim(dim, self.dim() + 1, "unsqueeze"));
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  int64_t stride = 1;
  if (d < self.dim()) {
    TSR_ASSIGN_OR_RETURN(
        stride, CheckedMul(sizes[d], strides[d], "unsqueeze", "the size times the stride"));
  }
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return MakeView(self, sizes, strides, self.storage_offset());
}

absl::StatusOr<Tensor> Diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "diagonal"));
  if (self.dim() < 2) {
    // OUT_OF_RANGE: PyTorch's dim wrap refuses a dim of a 0-dim or 1-D tensor (IndexError).
    return absl::OutOfRangeError(absl::StrFormat(
        "diagonal: expected a tensor with at least 2 dimensions, got %dD", self.dim()));
  }
  TSR_ASSIGN_OR_RETURN(const int64_t d1, WrapDim(dim1, self.dim(), "diagonal"));
  TSR_ASSIGN_OR_RETURN(const int64_t d2, WrapDim(dim2, self.dim(), "diagonal"));
  if (d1 == d2) {
    return absl::InvalidArgumentError(
        absl::StrFormat("diagonal: dimensions cannot be identical %d, %d", dim1, dim2));
  }
  const int64_t n1 = self.sizes()[d1], n2 = self.sizes()[d2];
  const int64_t diag_size =
      std::max<int64_t>(offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2), 0);
  int64_t storage_offset = self.storage_offset();
  if (diag_size > 0) {  // then -offset < n1: no overflow negating it
    TSR_ASSIGN_OR_RETURN(
        const int64_t skip,
        offset >= 0
            ? CheckedMul(offset, self.strides()[d2], "diagonal", "the offset times the stride")
            : CheckedMul(-offset, self.strides()[d1], "diagonal", "the offset times the stride"));
    TSR_ASSIGN_OR_RETURN(storage_offset, CheckedAdd(storage_offset, skip, "diagonal",
                                                    "the storage offset plus the diagonal's"));
  }
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  TSR_ASSIGN_OR_RETURN(const int64_t diag_stride, CheckedAdd(strides[d1], strides[d2], "diagonal",
                                                             "the sum of the two dims' strides"));
  for (int64_t d : {std::max(d1, d2), std::min(d1, d2)}) {
    sizes.erase(sizes.begin() + d);
    strides.erase(strides.begin() + d);
  }
  sizes.push_back(diag_size);
  strides.push_back(diag_stride);
  return MakeView(self, sizes, strides, storage_offset);
}

absl::StatusOr<Tensor> Unfold(const Tensor& self, int64_t dim, int64_t size, int64_t step) {
  TSR_RETURN_IF_ERROR(CheckDefined(self, "unfold"));
  TSR_ASSIGN_OR_RETURN(const int64_t d, WrapDim(dim, self.dim(), "unfold"));
  const int64_t dim_size = self.dim() == 0 ? 1 : self.sizes()[d];
  const int64_t dim_stride = self.dim() == 0 ? 1 : self.strides()[d];
  if (size < 0 || size > dim_size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unfold: maximum size for tensor at dimension %d is %d but size is %d", d, dim_size, size));
  }
  if (step <= 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unfold: step must be positive, got %d", step));
  }
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  DimVector strides(self.strides().begin(), self.strides().end());
  if (self.dim() > 0) {
    sizes[d] = (dim_size - size) / step + 1;
    if (sizes[d] > 1) {  // one window never steps: its stride is free (as in Slice)
      TSR_ASSIGN_OR_RETURN(strides[d],
                           CheckedMul(strides[d], step, "unfold", "the stride times the step"));
    }
  }
  sizes.push_back(size);
  strides.push_back(dim_stride);
  return MakeView(self, sizes, strides, self.storage_offset());
}

}  // namespace tessera
