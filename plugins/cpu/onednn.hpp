// oneDNN inside the CPU plugin: one CPU engine, a stream per thread, and a cache of
// primitives per thread keyed by everything their creation depends on (shapes, strides, dtypes,
// attributes, the thread count), so a repeated call pays only for execution.
#pragma once

#include <functional>
#include <initializer_list>
#include <limits>
#include <string>

#include "oneapi/dnnl/dnnl.hpp"
#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {
namespace onednn {

dnnl::engine& engine();
dnnl::stream& stream();

// Threads: for the lifetime of one oneDNN call on this thread, oneDNN's OpenMP threads are the
// runtime's thread count (tsr_num_threads: TESSERA_NUM_THREADS or tsr_set_num_threads; at most
// OMP_NUM_THREADS where the environment sets it), and the thread's OpenMP setting is put back
// after. OpenMP keeps one setting per thread that every
// library in the process shares (libtorch's torch::set_num_threads writes it), so without this
// an application's libtorch setting would decide Tessera's convolutions, and Tessera's would
// decide libtorch's. Where oneDNN is not built on OpenMP (no omp_* symbols in the process) it
// does nothing. Place one before every cached() primitive (which is made for, and keyed by, the
// count) and around every execution and dnnl_sgemm call.
//
// `work`: about how many multiply-adds (products) or element operations the call does. Below
// kSerialWork it runs on one thread: OpenMP's fork and join cost microseconds, more than a small
// call gains (a decoder step over hidden size 96 ran twice as slow on 2 threads as on 1).
class Threads {
 public:
  static constexpr int64_t kSerialWork = int64_t{1} << 16;
  explicit Threads(int64_t work = std::numeric_limits<int64_t>::max());
  ~Threads();
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;

 private:
  int previous_ = 0;  // 0: nothing to put back
  int outer_;         // the count of an enclosing Threads of this thread
};

// threads: the count the innermost Threads of this thread set (0: none), which primitives
// made under it are split for (cache keys include it).
int threads();

// fit_int32: whether every value fits 32 bits, as oneDNN's kernels keep strides, paddings and
// dilations in `int`; larger ones (legal: Note [Window arithmetic in 128 bits]) run our loops.
bool fit_int32(std::initializer_list<int64_t> values);

// data_type: oneDNN's type for a dtype, or undef where oneDNN has none we use.
dnnl::memory::data_type data_type(tsr_dtype dtype);

// desc: a plain strided memory descriptor of the tensor as it is (a 0-dim tensor as [1]).
dnnl::memory::desc desc(const sdk::TensorView& t);
dnnl::memory memory(const sdk::TensorView& t, const dnnl::memory::desc& md);

// cached returns the primitive for `key` and the thread count of the enclosing Threads,
// creating it with `make` the first time. `make` may throw dnnl::error (unsupported case);
// nothing is cached then.
dnnl::primitive cached(const std::string& key, const std::function<dnnl::primitive()>& make);

// key_of describes a tensor's dtype, sizes and strides for cache keys.
std::string key_of(const sdk::TensorView& t);

// native_bf16_matmul: whether oneDNN has a bfloat16 matmul better than its reference
// implementation on this CPU (it has one with AVX-512 BF16 or AMX, not on AVX2 machines, where
// the reference one runs some hundred times slower than float32 on dnnl_sgemm). Asked once, of
// a small product.
bool native_bf16_matmul();

}  // namespace onednn
}  // namespace cpu
}  // namespace tessera
