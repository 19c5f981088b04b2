#include "onednn.hpp"

#include <mutex>
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

dnnl::memory memory(const sdk::TensorView& t, const dnnl::memory::desc& md) {
  return dnnl::memory(md, engine(), t.data_ptr());
}

std::string key_of(const sdk::TensorView& t) {
  std::string k = std::to_string(static_cast<int>(t.dtype())) + ":";
  for (int64_t s : t.sizes()) k += std::to_string(s) + ",";
  k += "/";
  for (int64_t s : t.strides()) k += std::to_string(s) + ",";
  return k;
}

dnnl::primitive cached(const std::string& key, const std::function<dnnl::primitive()>& make) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, dnnl::primitive>();
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  dnnl::primitive p = make();  // outside the lock: creation may take milliseconds
  std::lock_guard<std::mutex> lock(mu);
  if (cache->size() > 4096) cache->clear();  // bound memory under shape churn
  return cache->emplace(key, std::move(p)).first->second;
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
