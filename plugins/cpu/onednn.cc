#include "onednn.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <unordered_map>

namespace tessera {
namespace cpu {
namespace onednn {

dnnl::engine& engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

namespace {

// OpenMP's two calls, taken from the OpenMP runtime oneDNN already loaded (RTLD_NOLOAD: never
// loading one) rather than linked, so that the plugin builds and loads whatever threading
// runtime oneDNN has. (Not dlsym(RTLD_DEFAULT): the plugin and what it loaded are local to it.)
struct OpenMp {
  int (*get_max_threads)() = nullptr;
  void (*set_num_threads)(int) = nullptr;
  int cap = 0;  // OMP_NUM_THREADS as the process started (its first entry), 0 when unset
};

const OpenMp& Omp() {
  static const OpenMp omp = [] {
    OpenMp o;
    for (const char* lib : {"libgomp.so.1", "libomp.so.5", "libomp.so", "libiomp5.so"}) {
      void* handle = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
      if (handle == nullptr) continue;
      o.get_max_threads = reinterpret_cast<int (*)()>(dlsym(handle, "omp_get_max_threads"));
      o.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(handle, "omp_set_num_threads"));
      if (o.get_max_threads != nullptr && o.set_num_threads != nullptr) break;
      o = OpenMp();
    }
    // OMP_NUM_THREADS, from the environment (never from OpenMP's setting, which another
    // library may have changed since), caps oneDNN's threads: the sanitizer builds run
    // uninstrumented libgomp on one thread this way, with the runtime's pool on several.
    if (const char* env = std::getenv("OMP_NUM_THREADS")) o.cap = std::atoi(env);
    if (o.cap < 0) o.cap = 0;
    return o;
  }();
  return omp;
}

}  // namespace

namespace {
// The count the innermost Threads of this thread set (0: none), which cached_call keys by.
thread_local int tls_threads = 0;
}  // namespace

Threads::Threads(int64_t work) : outer_(tls_threads) {
  const OpenMp& omp = Omp();
  if (omp.set_num_threads == nullptr) return;
  const int threads = work < kSerialWork ? 1 : sdk::api().num_threads();
  const int want = omp.cap > 0 && omp.cap < threads ? omp.cap : threads;
  tls_threads = want;
  const int now = omp.get_max_threads();
  if (now == want) return;
  omp.set_num_threads(want);
  previous_ = now;
}

Threads::~Threads() {
  if (previous_ != 0) Omp().set_num_threads(previous_);
  tls_threads = outer_;
}

int threads() { return tls_threads; }

int64_t product_work(const sdk::TensorView& a, const sdk::TensorView& out) {
  const int64_t k = a.dim() > 0 ? a.size(-1) : 1;
  if (k > 0 && out.numel() > std::numeric_limits<int64_t>::max() / k) {
    return std::numeric_limits<int64_t>::max();
  }
  return out.numel() * k;
}

dnnl::primitive_attr product_attr(double alpha, double beta, bool accumulate) {
  dnnl::primitive_attr attr;
  if (alpha != 1) attr.set_output_scales(0, {static_cast<float>(alpha)});
  if (accumulate) {
    dnnl::post_ops ops;
    ops.append_sum(static_cast<float>(beta));
    attr.set_post_ops(ops);
  }
  return attr;
}

bool fit_int32(std::initializer_list<int64_t> values) {
  for (int64_t v : values) {
    if (v > std::numeric_limits<int32_t>::max()) return false;
  }
  return true;
}

dnnl::memory::data_type data_type(tsr_dtype dtype) {
  switch (dtype) {
    case TSR_DTYPE_FLOAT32:
      return dnnl::memory::data_type::f32;
    case TSR_DTYPE_BFLOAT16:
      return dnnl::memory::data_type::bf16;
    case TSR_DTYPE_FLOAT16:
      return dnnl::memory::data_type::f16;
    default:
      return dnnl::memory::data_type::undef;
  }
}

dnnl::memory::desc desc(const sdk::TensorView& t) {
  dnnl::memory::dims sizes = t.sizes().vec(), strides = t.strides().vec();
  if (sizes.empty()) {
    sizes = {1};
    strides = {1};
  }
  return dnnl::memory::desc(sizes, data_type(t.dtype()), strides);
}

Key& Key::add(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return add(bits);
}

Key& Key::add(const sdk::TensorView& t) {
  v_.push_back(t.dtype());
  v_.push_back(t.dim());
  for (int64_t s : t.sizes()) v_.push_back(s);
  for (int64_t s : t.strides()) v_.push_back(s);
  return *this;
}

Call::Call(dnnl::primitive p, std::initializer_list<std::pair<int, dnnl::memory::desc>> mds)
    : prim(std::move(p)) {
  for (const auto& [arg, md] : mds) {
    args.emplace_back(arg, dnnl::memory(md, engine(), DNNL_MEMORY_NONE));
  }
}

void run_primitive(const dnnl::primitive& p, const dnnl_exec_arg_t* args, int n) {
  dnnl::error::wrap_c_api(dnnl_primitive_execute(p.get(), stream().get(), n, args),
                          "could not execute a primitive");
  stream().wait();
}

void Call::run(std::initializer_list<void*> data) {
  constexpr size_t kMaxArgs = 8;
  if (data.size() != args.size() || args.size() > kMaxArgs) {
    throw dnnl::error(dnnl_invalid_arguments, "a primitive call with the wrong argument count");
  }
  dnnl_exec_arg_t exec[kMaxArgs];
  size_t i = 0;
  for (void* d : data) {
    args[i].second.set_data_handle(d);
    exec[i] = {args[i].first, args[i].second.get()};
    ++i;
  }
  run_primitive(prim, exec, static_cast<int>(args.size()));
}

Call& cached_call(Key& key, const std::function<Call()>& make) {
  // One cache per thread: this oneDNN (built without ONEDNN_ENABLE_CONCURRENT_EXEC, as
  // Debian's is) gives each primitive its own scratchpad, so two threads executing one
  // primitive at once corrupt each other's scratch memory (a crash, or wrong values). A thread
  // makes its own primitives, once per shape. A primitive splits its work for the thread count
  // it was made with (oneDNN's own cache keys by it too): made again for another count.
  thread_local std::unordered_map<std::vector<int64_t>, Call, KeyHash> cache;
  key.add(static_cast<int64_t>(tls_threads));
  auto it = cache.find(key.values());
  if (it != cache.end()) return it->second;
  Call made = make();
  if (cache.size() >= kMaxCachedPrimitives) cache.clear();  // bound memory under shape churn
  return cache.emplace(key.values(), std::move(made)).first->second;
}

bool native_bf16_matmul() {
  static const bool native = [] {
    try {
      const dnnl::memory::desc md({16, 16}, dnnl::memory::data_type::bf16,
                                  dnnl::memory::format_tag::ab);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(md, md, md), engine());
      return std::string(pd.impl_info_str()).rfind("ref", 0) != 0;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return native;
}

}  // namespace onednn
}  // namespace cpu
}  // namespace tessera
