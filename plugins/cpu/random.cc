// The random kernels: uniform_ and normal_ (every other random op is a composite over them).
// Each element takes its numbers from its own Philox block, indexed by its row-major position
// (tessera/sdk/random.hpp, docs/random.md), so the result is the same whatever the threads and
// the same as any other backend's for the same draw.
#include "tessera/sdk/random.hpp"

#include <cstdint>

#include "kernel_support.hpp"
#include "tensor_iterator.hpp"

namespace tessera {
namespace cpu {
namespace {

using sdk::RandomDraw;
using sdk::TensorView;

// ForEachElement runs value(block) -> T for every element of `self` in parallel chunks of
// row-major positions and stores it through self's strides.
template <typename T, typename Value>
void ForEachElement(const TensorView& self, const RandomDraw& draw, const Value& value) {
  struct Chunk {
    const TensorView* self;
    const RandomDraw* draw;
    const Value* value;
    static tsr_error* run(void* context, int64_t begin, int64_t end) {
      const Chunk& c = *static_cast<const Chunk*>(context);
      T* data = c.self->template data<T>();
      if (c.self->is_contiguous()) {
        for (int64_t i = begin; i < end; ++i) data[i] = (*c.value)(c.draw->block(i));
        return nullptr;
      }
      // Strided: the position's multi-index, advanced like an odometer.
      const sdk::IntSpan sizes = c.self->sizes(), strides = c.self->strides();
      const size_t ndim = sizes.size;
      DimList index(ndim, 0);
      int64_t offset = 0;
      for (size_t d = ndim, rest = static_cast<size_t>(begin); d-- > 0;) {
        index[d] = static_cast<int64_t>(rest % sizes.data[d]);
        rest /= sizes.data[d];
        offset += index[d] * strides.data[d];
      }
      for (int64_t i = begin; i < end; ++i) {
        data[offset] = (*c.value)(c.draw->block(i));
        for (size_t d = ndim; d-- > 0;) {
          offset += strides.data[d];
          if (++index[d] < sizes.data[d]) break;
          offset -= index[d] * strides.data[d];
          index[d] = 0;
        }
      }
      return nullptr;
    }
  };
  if (self.numel() == 0) return;
  Chunk chunk{&self, &draw, &value};
  sdk::check(sdk::api().parallel_for(0, self.numel(), kGrain / 8, &Chunk::run, &chunk));
}

// uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None)
TensorView uniform_kernel(const sdk::KernelContext& ctx, TensorView self, double from, double to,
                          RandomDraw draw) {
  dispatch<kFloating>(self.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, double>) {
      ForEachElement<T>(
          self, draw, [&](const sdk::PhiloxBlock& b) { return sdk::uniform_double(b, from, to); });
    } else {
      const float lo = static_cast<float>(from), hi = static_cast<float>(to);
      ForEachElement<T>(self, draw, [&](const sdk::PhiloxBlock& b) {
        return store<T>(sdk::uniform_float(b, lo, hi));
      });
    }
  });
  return self;
}

// normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None)
TensorView normal_kernel(const sdk::KernelContext& ctx, TensorView self, double mean, double std,
                         RandomDraw draw) {
  dispatch<kFloating>(self.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachElement<T>(self, draw, [&](const sdk::PhiloxBlock& b) {
      // A 16-bit output rounds the double to float, then the float to 16 bits (store).
      return store<T>(compute_t<T>(sdk::normal(b, mean, std)));
    });
  });
  return self;
}

}  // namespace

void register_random(sdk::Library& lib) {
  lib.impl<&uniform_kernel>(TESSERA_OP("uniform_"));
  lib.impl<&normal_kernel>(TESSERA_OP("normal_"));
}

}  // namespace cpu
}  // namespace tessera
