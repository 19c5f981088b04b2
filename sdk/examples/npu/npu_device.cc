#include "npu_device.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "tessera/sdk/error.hpp"

namespace npu {
namespace {

// A first-fit arena over one block of host memory, 64-byte granules.
class Arena {
 public:
  static constexpr size_t kCapacity = size_t{256} << 20;
  static constexpr size_t kGranule = 64;

  Arena() : base_(static_cast<char*>(std::aligned_alloc(kGranule, kCapacity))) {
    if (base_ == nullptr) {
      tessera::sdk::fail(TSR_RESOURCE_EXHAUSTED, "npu: cannot map the device's 256 MiB arena");
    }
    free_[0] = kCapacity;
  }
  ~Arena() { std::free(base_); }

  void* Allocate(size_t nbytes) {
    const size_t size = (nbytes + kGranule - 1) / kGranule * kGranule + kGranule;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < size) continue;
      const size_t offset = it->first;
      const size_t rest = it->second - size;
      free_.erase(it);
      if (rest > 0) free_[offset + size] = rest;
      used_[offset] = size;
      in_use_ += size;
      return base_ + offset;
    }
    return nullptr;
  }

  void Free(void* ptr) {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t offset = static_cast<size_t>(static_cast<char*>(ptr) - base_);
    auto used = used_.find(offset);
    if (used == used_.end()) std::abort();  // a double or foreign free: a runtime bug
    size_t size = used->second;
    used_.erase(used);
    in_use_ -= size;
    size_t start = offset;
    // Coalesce with the free neighbours.
    auto next = free_.lower_bound(offset);
    if (next != free_.end() && next->first == offset + size) {
      size += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        start = prev->first;
        size += prev->second;
        free_.erase(prev);
      }
    }
    free_[start] = size;
  }

  size_t in_use() {
    std::lock_guard<std::mutex> lock(mu_);
    return in_use_;
  }

 private:
  char* base_;
  std::mutex mu_;
  std::map<size_t, size_t> free_;  // offset -> size
  std::map<size_t, size_t> used_;
  size_t in_use_ = 0;
};

// The open device's arena: set by OpenDevice when the plugin registers, before any tensor
// exists, and cleared by CloseDevice when it is unloaded, after the last one is freed.
std::atomic<Arena*> g_arena{nullptr};

tsr_error* Error(tsr_code code, const char* message) {
  return tessera::sdk::api().error_create(code, tessera::sdk::to_c(message));
}

tsr_error* CheckIndex(int32_t index) {
  return index == 0 ? nullptr : Error(TSR_INVALID_ARGUMENT, "npu: only npu:0 exists");
}

tsr_error* Count(void*, int32_t* out) {
  *out = 1;
  return nullptr;
}

tsr_error* Allocate(void*, int32_t index, size_t nbytes, void** out) {
  if (tsr_error* e = CheckIndex(index)) return e;
  Arena* arena = g_arena.load(std::memory_order_acquire);
  if (arena == nullptr) return Error(TSR_FAILED_PRECONDITION, "npu: the device is not open");
  *out = arena->Allocate(nbytes);
  return *out ? nullptr : Error(TSR_RESOURCE_EXHAUSTED, "npu: out of device memory");
}

void Free(void*, int32_t, void* ptr) { g_arena.load(std::memory_order_acquire)->Free(ptr); }

tsr_error* HostToDevice(void*, int32_t index, void* dst, const void* src, size_t n) {
  if (tsr_error* e = CheckIndex(index)) return e;
  WriteDevice(dst, src, n);
  return nullptr;
}

tsr_error* DeviceToHost(void*, int32_t index, void* dst, const void* src, size_t n) {
  if (tsr_error* e = CheckIndex(index)) return e;
  ReadDevice(dst, src, n);
  return nullptr;
}

tsr_error* DeviceToDevice(void*, int32_t dst_index, void* dst, int32_t src_index, const void* src,
                          size_t n) {
  if (tsr_error* e = CheckIndex(dst_index)) return e;
  if (tsr_error* e = CheckIndex(src_index)) return e;
  std::memmove(dst, src, n);  // both scrambled alike
  return nullptr;
}

tsr_error* Synchronize(void*, int32_t index) { return CheckIndex(index); }

}  // namespace

void ReadDevice(void* host, const void* device, size_t nbytes) {
  auto* out = static_cast<unsigned char*>(host);
  const auto* in = static_cast<const unsigned char*>(device);
  for (size_t i = 0; i < nbytes; ++i) out[i] = in[i] ^ kScrambleKey;
}

void WriteDevice(void* device, const void* host, size_t nbytes) {
  auto* out = static_cast<unsigned char*>(device);
  const auto* in = static_cast<const unsigned char*>(host);
  for (size_t i = 0; i < nbytes; ++i) out[i] = in[i] ^ kScrambleKey;
}

size_t BytesInUse() {
  Arena* arena = g_arena.load(std::memory_order_acquire);
  return arena == nullptr ? 0 : arena->in_use();
}

void OpenDevice() {
  if (g_arena.load(std::memory_order_acquire) == nullptr) g_arena.store(new Arena());
}

void CloseDevice() { delete g_arena.exchange(nullptr); }

const tsr_device_interface& DeviceInterface() {
  static const tsr_device_interface iface = [] {
    tsr_device_interface f{};
    f.struct_size = sizeof f;
    f.device_count = &Count;
    f.allocate = &Allocate;
    f.free = &Free;
    f.copy_host_to_device = &HostToDevice;
    f.copy_device_to_host = &DeviceToHost;
    f.copy_device_to_device = &DeviceToDevice;
    f.synchronize = &Synchronize;
    return f;
  }();
  return iface;
}

}  // namespace npu
