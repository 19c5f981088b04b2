// Copies and conversions: copy_ (any dtype to any dtype, broadcasting), clone.
#include <cstring>

#include "pointwise.hpp"
#include "tessera/base/layout.hpp"

namespace tessera {
namespace cpu {

void copy_cast(const sdk::TensorView& dst, const sdk::TensorView& src) {
  // A small dense copy of one dtype (no broadcast: as many elements, src's shape broadcasts to
  // dst's) is the bytes, without an iterator to build (~500 instructions of a 1-element copy_).
  // memmove rather than memcpy: it costs nothing more here, and is right whatever memory a
  // caller hands in. Larger copies take the iterator, which splits them across threads.
  if (dst.dtype() == src.dtype() && dst.numel() == src.numel() && dst.numel() < kGrain &&
      dst.is_contiguous() && src.is_contiguous()) {
    if (dst.numel() > 0) {
      std::memmove(dst.data_ptr(), src.data_ptr(),
                   static_cast<size_t>(dst.numel()) * dst.itemsize());
    }
    return;
  }
  TensorIterator it(dst.sizes());
  it.add_view(dst);
  it.add_view(src);
  it.build();
  dispatch<kAll>(dst.dtype(), "copy_", [&](auto to) {
    using To = typename decltype(to)::type;
    dispatch<kAll>(src.dtype(), "copy_", [&](auto from) {
      using From = typename decltype(from)::type;
      it.for_each([](char** data, const int64_t* s, int64_t n) {
        if (s[0] == sizeof(To) && s[1] == sizeof(From)) {
          To* out = reinterpret_cast<To*>(data[0]);
          const From* in = reinterpret_cast<const From*>(data[1]);
          for (int64_t i = 0; i < n; ++i) out[i] = convert<To>(in[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) {
            *reinterpret_cast<To*>(data[0] + i * s[0]) =
                convert<To>(*reinterpret_cast<const From*>(data[1] + i * s[1]));
          }
        }
      });
    });
  });
}

void scalar_to(const sdk::Scalar& s, tsr_dtype dtype, void* dst) {
  dispatch<kAll>(dtype, "scalar", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if (s.c.kind == TSR_SCALAR_DOUBLE) {
      v = convert<T>(s.c.d);
    } else if (s.c.kind == TSR_SCALAR_BOOL) {
      v = convert<T>(s.c.i != 0);
    } else {
      v = convert<T>(s.c.i);
    }
    std::memcpy(dst, &v, sizeof v);
  });
}

namespace {

using sdk::TensorView;

// True when the strides cover the elements densely without overlap, in any dimension order.
bool is_non_overlapping_and_dense(const TensorView& t) {
  return base::is_non_overlapping_and_dense(t.sizes().data, t.strides().data, t.sizes().size);
}

bool same_strides(const TensorView& a, const TensorView& b) {
  if (a.dim() != b.dim()) return false;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (a.strides()[d] != b.strides()[d]) return false;
  }
  return true;
}

// copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
TensorView copy_kernel(TensorView self, TensorView src, bool /*non_blocking*/) {
  if (self.data_ptr() != src.data_ptr() || !same_strides(self, src) ||
      self.dtype() != src.dtype()) {
    copy_cast(self, src);
  }
  return self;
}

// clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
sdk::Tensor clone_kernel(TensorView self, std::optional<int64_t> memory_format) {
  const bool preserve = !memory_format || *memory_format == TSR_MEMORY_FORMAT_PRESERVE;
  sdk::Tensor out;
  if (preserve && is_non_overlapping_and_dense(self)) {
    tsr_tensor* t = nullptr;
    sdk::check(sdk::api().tensor_empty_strided(self.sizes().data, self.strides().data,
                                               self.sizes().size, self.dtype(), sdk::kCpu, &t));
    out = sdk::Tensor::adopt(t);
  } else {
    out = sdk::Tensor::empty(self.sizes().vec(), self.dtype());
  }
  copy_cast(sdk::view_of(out), self);
  return out;
}

// fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
TensorView fill_kernel(const sdk::KernelContext& ctx, TensorView self, sdk::Scalar value) {
  dispatch<kAll>(self.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    scalar_to(value, self.dtype(), &v);
    if (self.is_contiguous() && self.numel() <= kGrain) {  // one thread's share: no iterator
      T* out = self.data<T>();
      for (int64_t i = 0, n = self.numel(); i < n; ++i) out[i] = v;
      return;
    }
    TensorIterator it(self.sizes());
    it.add_view(self);
    it.build();
    it.for_each([v](char** data, const int64_t* strides, int64_t n) {
      if (strides[0] == static_cast<int64_t>(sizeof(T))) {
        T* out = reinterpret_cast<T*>(data[0]);
        for (int64_t i = 0; i < n; ++i) out[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(data[0] + i * strides[0]) = v;
      }
    });
  });
  return self;
}

}  // namespace

void register_copy(sdk::Library& lib) {
  lib.impl<&fill_kernel>(TESSERA_OP("fill_.Scalar"));
  lib.impl<&copy_kernel>(TESSERA_OP("copy_"));
  lib.impl<&clone_kernel>(TESSERA_OP("clone"));
}

}  // namespace cpu
}  // namespace tessera
