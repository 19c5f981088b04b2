#include "weight_cache.hpp"

#include <cstdlib>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "onednn.hpp"

namespace tessera {
namespace cpu {
namespace weight_cache {
namespace {

size_t BoundBytes() {
  static const size_t bound = [] {
    const char* env = std::getenv("TESSERA_CPU_WEIGHT_CACHE_MB");
    long long mb = 512;
    if (env != nullptr && *env != '\0') {
      char* end = nullptr;
      mb = std::strtoll(env, &end, 10);
      if (*end != '\0' || mb < 0 || mb > (1ll << 30)) {
        const std::string message =
            "TESSERA_CPU_WEIGHT_CACHE_MB: expected a number of MiB >= 0, got '" + std::string(env) +
            "'; using 512";
        sdk::api().log(TSR_LOG_WARNING, sdk::to_c(message));
        mb = 512;
      }
    }
    return static_cast<size_t>(mb) << 20;
  }();
  return bound;
}

// Key: the immutable id and the view's layout; the target layouts under it are compared with
// memory::desc's ==.
using Key = std::vector<int64_t>;

struct Item {
  Key key;
  Copy copy;
  size_t bytes;
};

struct Cache {
  std::mutex mu;
  std::list<Item> lru;  // most recently used first
  std::unordered_multimap<Key, std::list<Item>::iterator, onednn::KeyHash> index;
  size_t bytes = 0;
  Stats stats;

  std::list<Item>::iterator find(const Key& key, const dnnl::memory::desc& md) {
    auto [lo, hi] = index.equal_range(key);
    for (auto it = lo; it != hi; ++it) {
      if (it->second->copy.md == md) return it->second;
    }
    return lru.end();
  }
  void evict_to(size_t bound) {
    while (bytes > bound && !lru.empty()) {
      Item& last = lru.back();
      auto [lo, hi] = index.equal_range(last.key);
      for (auto it = lo; it != hi; ++it) {
        if (it->second == std::prev(lru.end())) {
          index.erase(it);
          break;
        }
      }
      bytes -= last.bytes;
      lru.pop_back();
    }
  }
};

Cache& Global() {
  static Cache* cache = new Cache();  // never destroyed: kernels may run during exit
  return *cache;
}

Key KeyOf(const sdk::TensorView& t, uint64_t id) {
  Key k{static_cast<int64_t>(id), t.dtype(), t.storage_offset(), t.dim()};
  for (int64_t s : t.sizes()) k.push_back(s);
  for (int64_t s : t.strides()) k.push_back(s);
  return k;
}

}  // namespace

Copy get(const sdk::TensorView& t, uint64_t id, const dnnl::memory::desc& md,
         const std::function<void(void* dst)>& reorder, Admit admit) {
  const size_t bytes = md.get_size();
  if (bytes > BoundBytes()) return Copy{md, nullptr, dnnl::memory()};
  Cache& c = Global();
  const Key key = KeyOf(t, id);
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.find(key, md);
    if (it != c.lru.end()) {
      c.lru.splice(c.lru.begin(), c.lru, it);
      ++c.stats.hits;
      return it->copy;
    }
    ++c.stats.misses;
    if (admit == Admit::kIntoRoom && c.bytes + bytes > BoundBytes()) {
      return Copy{md, nullptr, dnnl::memory()};
    }
  }
  // Made outside the lock (a reorder of megabytes); two threads may both make one, and the
  // second keeps the first's.
  std::shared_ptr<void> data(std::aligned_alloc(64, (bytes + 63) / 64 * 64), &std::free);
  if (!data) return Copy{md, nullptr, dnnl::memory()};
  reorder(data.get());
  dnnl::memory memory(md, onednn::engine(), data.get());
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.find(key, md);
  if (it != c.lru.end()) return it->copy;
  c.lru.push_front(Item{key, Copy{md, std::move(data), std::move(memory)}, bytes});
  c.index.emplace(key, c.lru.begin());
  c.bytes += bytes;
  ++c.stats.copies;
  c.evict_to(BoundBytes());
  c.stats.bytes = static_cast<int64_t>(c.bytes);
  // The new copy is first in the list and no larger than the bound: it stays.
  return c.lru.front().copy;
}

void clear() {
  Cache& c = Global();
  std::lock_guard<std::mutex> lock(c.mu);
  c.index.clear();
  c.lru.clear();
  c.bytes = 0;
  c.stats.bytes = 0;
}

Stats stats() {
  Cache& c = Global();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.stats;
}

}  // namespace weight_cache
}  // namespace cpu
}  // namespace tessera
