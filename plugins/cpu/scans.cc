// Ops along one dimension, as out= kernels: cumsum, cumprod, _softmax, _log_softmax (own
// loops; float32 softmax goes to oneDNN in onednn_softmax.cc when it can).
#include "scans.hpp"

#include <cmath>
#include <limits>

#include "math.hpp"
#include "pointwise.hpp"
#include "reduce.hpp"

namespace tessera {
namespace cpu {

int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim) {
  const int64_t n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n) {
    sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) +
                                        ": dimension out of range (expected to be in range of [" +
                                        std::to_string(-n) + ", " + std::to_string(n - 1) +
                                        "], but got " + std::to_string(dim) + ")");
  }
  return dim < 0 ? dim + n : dim;
}

namespace {

template <typename T>
using line_acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                      std::conditional_t<kIsFloat<T>, float, int64_t>>;

template <typename T>
T& elem(char* p, int64_t i, int64_t stride) {
  return *reinterpret_cast<T*>(p + i * stride);
}

template <bool kProd>
void cumulative_out(const char* op, tsr_stack* s) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0);
  const sdk::Tensor out = arg<sdk::Tensor>(s, sdk::api().stack_size(s) - 1);
  const int64_t dim = wrap_dim(op, arg<int64_t>(s, 1), self.dim());
  const sdk::Tensor in = to_dtype(self, out.dtype());
  dispatch<kAll>(out.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = line_acc_t<T>;
    for_each_line(out, in, dim, [](char* o, int64_t os, const char* i, int64_t is, int64_t n) {
      Acc acc = kProd ? Acc(1) : Acc(0);
      for (int64_t k = 0; k < n; ++k) {
        const Acc x = static_cast<Acc>(load(*reinterpret_cast<const T*>(i + k * is)));
        acc = kProd ? wrap_mul<Acc>(acc, x) : wrap_add<Acc>(acc, x);
        elem<T>(o, k, os) = store<T>(acc);
      }
    });
  });
  set_result(s, out);
}

template <bool kLog>
void softmax_out(const char* op, tsr_stack* s) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0);
  const int64_t dim = wrap_dim(op, arg<int64_t>(s, 1), self.dim());
  const bool half_to_float = arg<bool>(s, 2);
  const sdk::Tensor out = arg<sdk::Tensor>(s, sdk::api().stack_size(s) - 1);
  if (half_to_float) {
    sdk::fail(TSR_UNIMPLEMENTED,
              std::string(op) + ": softmax with half to float conversion is not supported on cpu");
  }
  if (softmax_onednn(self, out, dim, kLog)) {
    set_result(s, out);
    return;
  }
  dispatch<kFloating>(self.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    for_each_line(out, self, dim, [](char* o, int64_t os, const char* i, int64_t is, int64_t n) {
      auto x = [&](int64_t k) {
        return static_cast<C>(load(*reinterpret_cast<const T*>(i + k * is)));
      };
      C max = -std::numeric_limits<C>::infinity();
      for (int64_t k = 0; k < n; ++k) max = max_nan(max, x(k));
      C sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(x(k) - max);
      if constexpr (kLog) {
        const C log_sum = std::log(sum);
        for (int64_t k = 0; k < n; ++k) elem<T>(o, k, os) = store<T>(x(k) - max - log_sum);
      } else {
        for (int64_t k = 0; k < n; ++k) elem<T>(o, k, os) = store<T>(std::exp(x(k) - max) / sum);
      }
    });
  });
  set_result(s, out);
}

}  // namespace

void register_scans(sdk::Library& lib) {
  impl<&cumulative_out<false>>(lib, "cumsum.out");
  impl<&cumulative_out<true>>(lib, "cumprod.out");
  impl<&softmax_out<false>>(lib, "_softmax.out");
  impl<&softmax_out<true>>(lib, "_log_softmax.out");
}

}  // namespace cpu
}  // namespace tessera
