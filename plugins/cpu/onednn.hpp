// oneDNN inside the CPU plugin: one CPU engine, a stream per thread, and a cache of
// primitives per thread keyed by everything their creation depends on (shapes, strides, dtypes,
// attributes, the thread count), so a repeated call pays only for execution.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

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
// does nothing. Place one before every cached_call (whose primitive is made for, and keyed by,
// the count) and around every execution and dnnl_sgemm call.
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

// product_work: the multiply-adds of out = a @ b (out's elements times a's last dim),
// saturated, which Threads sizes its threads by.
int64_t product_work(const sdk::TensorView& a, const sdk::TensorView& out);

// product_attr: a matrix product's attributes: alpha as the output scale and, with
// `accumulate`, beta as a sum post-op (out = alpha * a @ b + beta * out).
dnnl::primitive_attr product_attr(double alpha, double beta, bool accumulate);

// fit_int32: whether every value fits 32 bits, as oneDNN's kernels keep strides, paddings and
// dilations in `int`; larger ones (legal: Note [Window arithmetic in 128 bits]) run our loops.
bool fit_int32(std::initializer_list<int64_t> values);

// data_type: oneDNN's type for a dtype, or undef where oneDNN has none we use.
dnnl::memory::data_type data_type(tsr_dtype dtype);

// desc: a plain strided memory descriptor of the tensor as it is (a 0-dim tensor as [1]).
dnnl::memory::desc desc(const sdk::TensorView& t);

// Key: the integers a primitive's creation depends on, gathered per call: no strings, no
// printf on the call path (a decoder step spent 8 % of its time building string keys).
// The primitive families, each key's first value.
enum Family : int64_t {
  kMatmul = 1,
  kLinear,
  kSoftmax,
  kLogSoftmax,
  kAvgPool,
  kConv,
  kDeconv,
  kPrepackedMatmul,
  kStridedMatmul,
};

class Key {
 public:
  explicit Key(int64_t family) { v_.reserve(48), v_.push_back(family); }
  Key& add(int64_t v) {
    v_.push_back(v);
    return *this;
  }
  Key& add(double v);                  // its bits
  Key& add(const sdk::TensorView& t);  // dtype, dims, sizes, strides
  const std::vector<int64_t>& values() const { return v_; }

 private:
  std::vector<int64_t> v_;
};

// Call: a primitive and a memory object per argument, each created once with no buffer and
// pointed at the call's data by run(), which executes through oneDNN's C API (an argument
// array; the C++ API takes an unordered_map per call) and waits.
struct Call {
  dnnl::primitive prim;
  std::vector<std::pair<int, dnnl::memory>> args;  // DNNL_ARG_* and its memory, in run's order

  Call() = default;
  Call(dnnl::primitive p, std::initializer_list<std::pair<int, dnnl::memory::desc>> mds);
  // run: data[i] is args[i]'s buffer, one for each argument.
  void run(std::initializer_list<void*> data);
};

// cached_call returns this thread's Call for `key` (the thread count of the enclosing Threads
// added to it), creating it with `make` the first time. `make` may throw dnnl::error
// (unsupported case); nothing is cached then. The reference is valid until this thread's next
// cached_call (a full cache is emptied to make room).
Call& cached_call(Key& key, const std::function<Call()>& make);

// run_primitive: one execution through the C API, waited for.
void run_primitive(const dnnl::primitive& p, const dnnl_exec_arg_t* args, int n);

// The most primitives a thread's cache holds; past it the cache is emptied (shape churn).
constexpr size_t kMaxCachedPrimitives = 4096;

// Entries of a per-thread cache, keyed by Key values.
struct KeyHash {
  size_t operator()(const std::vector<int64_t>& k) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the integers
    for (int64_t v : k) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

// native_bf16_matmul: whether oneDNN has a bfloat16 matmul better than its reference
// implementation on this CPU (it has one with AVX-512 BF16 or AMX, not on AVX2 machines, where
// the reference one runs some hundred times slower than float32 on dnnl_sgemm). Asked once, of
// a small product.
bool native_bf16_matmul();

}  // namespace onednn
}  // namespace cpu
}  // namespace tessera
