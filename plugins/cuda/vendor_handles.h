// Handles of the vendor libraries the CUDA backend loads at first use (cuBLAS, cuDNN): one per
// (device, thread). A thread takes a device's handle from the library's pool at its first call
// there and gives it back when it ends. Handles are never destroyed (a process's end may come
// after the driver's), so a library has at most as many as threads ever called it at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace tessera {
namespace gpu {

// VendorHandles<Tag>: the pool of one library's handles (Tag: a type naming the library).
template <typename Tag>
class VendorHandles {
 public:
  // Get: the calling thread's handle on `device`, made by `create()` (which returns the handle
  // or fails the call itself) when neither the thread nor the pool has one.
  template <typename Create>
  static void* Get(int32_t device, Create&& create) {
    thread_local Mine mine;
    const size_t d = static_cast<size_t>(device);
    if (mine.by_device.size() <= d) mine.by_device.resize(d + 1, nullptr);
    if (mine.by_device[d] != nullptr) return mine.by_device[d];
    Pool& pool = Shared();
    {
      std::lock_guard<std::mutex> lock(pool.mu);
      if (pool.free.size() > d && !pool.free[d].empty()) {
        mine.by_device[d] = pool.free[d].back();
        pool.free[d].pop_back();
        return mine.by_device[d];
      }
    }
    return mine.by_device[d] = create();
  }

 private:
  struct Pool {
    std::mutex mu;
    std::vector<std::vector<void*>> free;  // per device index
  };
  static Pool& Shared() {
    static Pool* pool = new Pool;  // leaked: outlives the thread_local holders
    return *pool;
  }
  // A thread's handles, given back to the pool when it ends.
  struct Mine {
    std::vector<void*> by_device;
    ~Mine() {
      Pool& pool = Shared();
      std::lock_guard<std::mutex> lock(pool.mu);
      for (size_t d = 0; d < by_device.size(); ++d) {
        if (by_device[d] == nullptr) continue;
        if (pool.free.size() <= d) pool.free.resize(d + 1);
        pool.free[d].push_back(by_device[d]);
      }
    }
  };
};

}  // namespace gpu
}  // namespace tessera
