// A pretend asynchronous device, for the tests of ABI 1.1's streams and events
// (runtime/tests/async_device_test.cc; device.h, Note [Asynchronous devices]).
//
// Its "device" is host memory, but nothing happens when it is asked: kernels and asynchronous
// copies are queued on a stream (a list of tasks) and run only when something synchronizes
// (a stream, an event, the device, a synchronous copy). So a runtime that forgot to order
// something reads stale data, and the tests see it. Its allocator caches freed blocks per
// stream and hands them out again at once to the same stream, as a caching allocator does, so
// that memory used on another stream is overwritten early unless record_stream holds it.
// Asynchronous errors (adev::fault_) are kept and returned by the next synchronizing call.
//
// Built twice (runtime/CMakeLists.txt):
//   ASYNC_FULL  (device "adev",  PrivateUse2): every 1.1 slot of tsr_device_interface;
//   ASYNC_V1_0  (device "adev10", PrivateUse3): a 1.0-sized interface (streams and events as
//               1.0 has them, no 1.1 slot), so that the runtime's documented defaults run.
// Two devices each (adev:0, adev:1), to test mixing them up.
//
// The conformance suite's device contract (conformance/device_contract.cc) builds ASYNC_FULL
// again with one bug planted each (ADEV_PLANTED_BUG, conformance/tests/CMakeLists.txt), to prove
// that each of its checks catches what it names:
//   1 overlapping_blocks     the allocator hands out blocks that overlap half of the previous one
//   2 off_by_one_d2h         copies to the host leave out the last byte
//   3 event_never_completes  event_synchronize never returns
//   4 copy_ignores_stream    asynchronous copies are queued on the default stream, not theirs
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/sdk/plugin.hpp"
#include "tessera/sdk/stream.hpp"

#ifndef ADEV_PLANTED_BUG
#define ADEV_PLANTED_BUG 0  // none: the healthy device
#endif
#if !defined(ASYNC_FULL) && !defined(ASYNC_V1_0)
#error "define ASYNC_FULL or ASYNC_V1_0"
#endif

namespace adev {
namespace {

namespace sdk = tessera::sdk;

#ifdef ASYNC_FULL
constexpr tsr_device_type kType = TSR_DEVICE_PRIVATEUSE2;
constexpr const char* kName = "adev";
#else
constexpr tsr_device_type kType = TSR_DEVICE_PRIVATEUSE3;
constexpr const char* kName = "adev10";
#endif
constexpr int32_t kDevices = 2;

struct Stream {
  std::deque<std::function<void()>> queue;
  uint64_t enqueued = 0;  // tasks ever queued
  uint64_t executed = 0;  // tasks ever run
};

struct Event {
  Stream* stream = nullptr;
  uint64_t target = 0;  // the stream's `enqueued` when recorded
};

struct Block {
  size_t size = 0;
  Stream* stream = nullptr;                           // the stream it was allocated on (its pool)
  std::vector<Stream*> recorded;                      // record_stream
  std::vector<std::pair<Stream*, uint64_t>> pending;  // once freed: wait for these
};

// One mutex for both devices, recursive: a task may run another stream's tasks (wait_event),
// also another device's (a copy between devices waits for the source device's stream).
// Made on first use and freed with the devices (FreeDevices), never by a static destructor.
std::recursive_mutex*& MutexPointer() {
  static std::recursive_mutex* mu = new std::recursive_mutex();
  return mu;
}
std::recursive_mutex& TheMutex() { return *MutexPointer(); }

// One device's state.
class Device {
 public:
  std::recursive_mutex& mu = TheMutex();

  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  // At unload (FreeDevices) no tensor of the device is left: every block is cached or was never
  // handed out, and all of it goes back.
  ~Device() {
    for (auto& [ptr, block] : live_) DeleteBlock(ptr);
    for (auto& [ptr, block] : cached_) DeleteBlock(ptr);
#if ADEV_PLANTED_BUG == 1
    delete[] arena_;
#endif
  }

  Stream* Resolve(void* native) { return native ? static_cast<Stream*>(native) : &default_; }
  Stream* Current(int32_t index) { return Resolve(sdk::current_stream(tsr_device{kType, index})); }
  Stream* NewStream() {
    streams_.push_back(std::make_unique<Stream>());
    return streams_.back().get();
  }
  // Streams are never freed: blocks and events may still name them.

  void Enqueue(Stream* s, std::function<void()> task) {
    s->queue.push_back(std::move(task));
    ++s->enqueued;
  }
  void RunUntil(Stream* s, uint64_t target) {
    while (s->executed < target) {
      std::function<void()> task = std::move(s->queue.front());
      s->queue.pop_front();
      task();
      ++s->executed;
    }
  }
  void Drain(Stream* s) { RunUntil(s, s->enqueued); }
  void DrainAll() {
    bool more = true;
    while (more) {
      more = false;
      Drain(&default_);
      for (auto& s : streams_) {
        more = more || !s->queue.empty();
        Drain(s.get());
      }
    }
  }

  void Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }
  // TakeError returns the kept asynchronous error (once), as a synchronizing call must.
  tsr_error* TakeError() {
    if (error_.empty()) return nullptr;
    tsr_error* e = sdk::api().error_create(TSR_INTERNAL, sdk::to_c(error_));
    error_.clear();
    return e;
  }

  // Allocate: NULL when the memory cannot be had.
  void* Allocate(size_t nbytes, Stream* stream) {
    const size_t size = nbytes == 0 ? 1 : nbytes;
    // The most recently freed block first, as caching allocators do (it is likely still hot).
    for (auto it = cached_.rbegin(); it != cached_.rend(); ++it) {
      if (it->second.size != size || it->second.stream != stream || !Passed(it->second)) continue;
      void* ptr = it->first;
      Block block = std::move(it->second);
      cached_.erase(std::next(it).base());
      block.pending.clear();
      live_[ptr] = std::move(block);
      ++stats_.allocations;
      ++stats_.cache_hits;
      Account();
      return ptr;
    }
#if ADEV_PLANTED_BUG == 1
    void* ptr = OverlappingBlock(size);
#else
    void* ptr = new (std::nothrow) char[size];  // no exception may cross the C interface
#endif
    if (ptr == nullptr) return nullptr;
    live_[ptr] = Block{size, stream, {}, {}};
    ++stats_.allocations;
    ++stats_.device_allocations;
    Account();
    return ptr;
  }
  void Free(void* ptr) {
    auto it = live_.find(ptr);
    if (it == live_.end()) std::abort();  // a double or foreign free: a runtime bug
    Block block = std::move(it->second);
    live_.erase(it);
    for (Stream* s : block.recorded) block.pending.emplace_back(s, s->enqueued);
    block.recorded.clear();
    cached_.emplace_back(ptr, std::move(block));
    Account();
  }
  void RecordStream(void* ptr, Stream* stream) {
    auto it = live_.find(ptr);
    if (it != live_.end() && stream != it->second.stream) it->second.recorded.push_back(stream);
  }
  void DeleteBlock(void* ptr) {
#if ADEV_PLANTED_BUG == 1
    if (InArena(ptr)) return;
#endif
    delete[] static_cast<char*>(ptr);
  }
  void EmptyCache() {
    for (auto it = cached_.begin(); it != cached_.end();) {
      if (!Passed(it->second)) {
        ++it;
        continue;
      }
      DeleteBlock(it->first);
      ++stats_.device_frees;
      it = cached_.erase(it);
    }
    Account();
  }
  tsr_memory_stats stats() const { return stats_; }

 private:
#if ADEV_PLANTED_BUG == 1
  // Planted bug: blocks cut from an arena that moves on by half a block only.
  static constexpr size_t kArena = size_t{256} << 20;
  void* OverlappingBlock(size_t size) {
    if (size > kArena / 2) return new (std::nothrow) char[size];
    if (arena_ == nullptr) arena_ = new char[kArena];
    if (next_ + size > kArena) next_ = 0;
    char* p = arena_ + next_;
    next_ += std::max<size_t>(16, size / 2 / 16 * 16);  // never the same address twice
    return p;
  }
  bool InArena(void* p) const { return arena_ != nullptr && p >= arena_ && p < arena_ + kArena; }
  char* arena_ = nullptr;
  size_t next_ = 0;
#endif
  static bool Passed(const Block& b) {
    for (const auto& [stream, target] : b.pending) {
      if (stream->executed < target) return false;
    }
    return true;
  }
  void Account() {
    uint64_t allocated = 0, reserved = 0;
    for (const auto& [ptr, block] : live_) allocated += block.size;
    reserved = allocated;
    for (const auto& [ptr, block] : cached_) reserved += block.size;
    stats_.allocated_bytes = allocated;
    stats_.reserved_bytes = reserved;
    if (allocated > stats_.peak_allocated_bytes) stats_.peak_allocated_bytes = allocated;
    if (reserved > stats_.peak_reserved_bytes) stats_.peak_reserved_bytes = reserved;
  }

  Stream default_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::string error_;
  std::unordered_map<void*, Block> live_;
  std::vector<std::pair<void*, Block>> cached_;
  tsr_memory_stats stats_{};
};

// The devices' state: made on first use, freed when the plugin is unloaded (FreeDevices, the
// unload function: the runtime calls it once the last tensor of the device is gone), never by a
// static destructor (tensors may outlive the plugin's statics at exit).
Device*& Devices() {
  static Device* devices = new Device[kDevices];
  return devices;
}
Device& TheDevice(int32_t index) { return Devices()[index]; }
void FreeDevices() {
  delete[] Devices();
  Devices() = nullptr;
  delete MutexPointer();
  MutexPointer() = nullptr;
}

tsr_error* Error(tsr_code code, const std::string& message) {
  return sdk::api().error_create(code, sdk::to_c(message));
}

tsr_error* CheckIndex(int32_t index) {
  if (index >= 0 && index < kDevices) return nullptr;
  return Error(TSR_INVALID_ARGUMENT, std::string(kName) + ": no device " + std::to_string(index));
}

#define ADEV_LOCK(index)                          \
  if (tsr_error* e = CheckIndex(index)) return e; \
  Device& dev = TheDevice(index);                 \
  std::lock_guard<std::recursive_mutex> lock(dev.mu)

tsr_error* Count(void*, int32_t* out) {
  *out = kDevices;
  return nullptr;
}

tsr_error* Allocate(void*, int32_t index, size_t nbytes, void** out) {
  ADEV_LOCK(index);
  *out = dev.Allocate(nbytes, dev.Current(index));
  if (*out != nullptr) return nullptr;
  return Error(TSR_RESOURCE_EXHAUSTED, std::string(kName) + ": out of memory allocating " +
                                           std::to_string(nbytes) + " bytes");
}

void Free(void*, int32_t index, void* ptr) {
  Device& dev = TheDevice(index);
  std::lock_guard<std::recursive_mutex> lock(dev.mu);
  dev.Free(ptr);
}

// The synchronous copies: after the calling thread's current stream, complete on return.
tsr_error* SyncCopy(int32_t index, void* dst, const void* src, size_t n) {
  ADEV_LOCK(index);
  dev.Drain(dev.Current(index));
  std::memcpy(dst, src, n);
  return dev.TakeError();
}
tsr_error* HostToDevice(void*, int32_t index, void* dst, const void* src, size_t n) {
  return SyncCopy(index, dst, src, n);
}
tsr_error* DeviceToHost(void*, int32_t index, void* dst, const void* src, size_t n) {
#if ADEV_PLANTED_BUG == 2
  if (n > 0) --n;  // planted bug: the last byte is left out
#endif
  return SyncCopy(index, dst, src, n);
}
tsr_error* DeviceToDevice(void*, int32_t dst_index, void* dst, int32_t src_index, const void* src,
                          size_t n) {
  if (tsr_error* e = CheckIndex(src_index)) return e;
  {
    Device& from = TheDevice(src_index);
    std::lock_guard<std::recursive_mutex> lock(from.mu);
    from.Drain(from.Current(src_index));
  }
  return SyncCopy(dst_index, dst, src, n);
}

tsr_error* Synchronize(void*, int32_t index) {
  ADEV_LOCK(index);
  dev.DrainAll();
  return dev.TakeError();
}

tsr_error* StreamCreate(void*, int32_t index, void** out) {
  ADEV_LOCK(index);
  *out = dev.NewStream();
  return nullptr;
}
void StreamDestroy(void*, int32_t index, void* stream) {
  Device& dev = TheDevice(index);
  std::lock_guard<std::recursive_mutex> lock(dev.mu);
  dev.Drain(dev.Resolve(stream));  // queued work still completes
}
tsr_error* StreamSynchronize(void*, int32_t index, void* stream) {
  ADEV_LOCK(index);
  dev.Drain(dev.Resolve(stream));
  return dev.TakeError();
}
tsr_error* EventCreate(void*, int32_t index, void** out) {
  if (tsr_error* e = CheckIndex(index)) return e;
  *out = new Event();
  return nullptr;
}
void EventDestroy(void*, int32_t, void* event) { delete static_cast<Event*>(event); }
tsr_error* EventRecord(void*, int32_t index, void* event, void* stream) {
  ADEV_LOCK(index);
  Event* e = static_cast<Event*>(event);
  e->stream = dev.Resolve(stream);
  e->target = e->stream->enqueued;
  return nullptr;
}
tsr_error* EventSynchronize(void*, int32_t index, void* event) {
#if ADEV_PLANTED_BUG == 3
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // planted bug: never
#endif
  ADEV_LOCK(index);
  const Event* e = static_cast<const Event*>(event);
  if (e->stream != nullptr) dev.RunUntil(e->stream, e->target);
  return dev.TakeError();
}

#ifdef ASYNC_FULL
tsr_error* GetProperties(void*, int32_t index, tsr_device_properties* out) {
  if (tsr_error* e = CheckIndex(index)) return e;
  if (TSR_FIELD_FITS(tsr_device_properties, flags, out->struct_size)) {
    out->name = sdk::to_c(index == 0 ? "pretend async device 0" : "pretend async device 1");
    out->arch = sdk::to_c("adev-1");
    out->total_memory = uint64_t{256} << 20;
    out->multiprocessor_count = 4;
    out->flags = TSR_DEVICE_PROPERTY_ASYNC;
  }
  return nullptr;
}
tsr_error* StreamWaitEvent(void*, int32_t index, void* stream, void* event) {
  ADEV_LOCK(index);
  const Event e = *static_cast<const Event*>(event);  // as recorded now
  Device* d = &dev;
  if (e.stream != nullptr)
    dev.Enqueue(dev.Resolve(stream), [d, e] { d->RunUntil(e.stream, e.target); });
  return nullptr;
}
tsr_error* AsyncCopy(int32_t index, void* dst, const void* src, size_t n, void* stream) {
  ADEV_LOCK(index);
#if ADEV_PLANTED_BUG == 4
  stream = nullptr;  // planted bug: queued on the default stream whatever the caller asked
#endif
  dev.Enqueue(dev.Resolve(stream), [dst, src, n] { std::memcpy(dst, src, n); });
  return nullptr;
}
tsr_error* HostToDeviceAsync(void*, int32_t index, void* dst, const void* src, size_t n,
                             void* stream) {
  return AsyncCopy(index, dst, src, n, stream);
}
tsr_error* DeviceToHostAsync(void*, int32_t index, void* dst, const void* src, size_t n,
                             void* stream) {
#if ADEV_PLANTED_BUG == 2
  if (n > 0) --n;  // planted bug: the last byte is left out
#endif
  return AsyncCopy(index, dst, src, n, stream);
}
tsr_error* DeviceToDeviceAsync(void*, int32_t dst_index, void* dst, int32_t src_index,
                               const void* src, size_t n, void* stream) {
  if (tsr_error* e = CheckIndex(src_index)) return e;
  return AsyncCopy(dst_index, dst, src, n, stream);
}
tsr_error* RecordStream(void*, int32_t index, void* ptr, void* stream) {
  ADEV_LOCK(index);
  dev.RecordStream(ptr, dev.Resolve(stream));
  return nullptr;
}
tsr_error* MemoryStats(void*, int32_t index, tsr_memory_stats* out) {
  ADEV_LOCK(index);
  const tsr_memory_stats stats = dev.stats();
  std::memcpy(reinterpret_cast<char*>(out) + sizeof(size_t),
              reinterpret_cast<const char*>(&stats) + sizeof(size_t),
              std::min(out->struct_size, sizeof stats) - sizeof(size_t));
  return nullptr;
}
tsr_error* EmptyCache(void*, int32_t index) {
  ADEV_LOCK(index);
  dev.EmptyCache();
  return nullptr;
}
#endif

const tsr_device_interface& Interface() {
  static const tsr_device_interface iface = [] {
    tsr_device_interface f{};
#ifdef ASYNC_FULL
    f.struct_size = sizeof f;
    f.get_properties = &GetProperties;
    f.stream_wait_event = &StreamWaitEvent;
    f.copy_host_to_device_async = &HostToDeviceAsync;
    f.copy_device_to_host_async = &DeviceToHostAsync;
    f.copy_device_to_device_async = &DeviceToDeviceAsync;
    f.record_stream = &RecordStream;
    f.memory_stats = &MemoryStats;
    f.empty_cache = &EmptyCache;
#else
    // The 1.0 interface: everything up to event_synchronize, as a 1.0 plugin states it.
    f.struct_size = offsetof(tsr_device_interface, event_synchronize) + sizeof(void*);
#endif
    f.device_type = kType;
    f.device_count = &Count;
    f.allocate = &Allocate;
    f.free = &Free;
    f.copy_host_to_device = &HostToDevice;
    f.copy_device_to_host = &DeviceToHost;
    f.copy_device_to_device = &DeviceToDevice;
    f.synchronize = &Synchronize;
    f.stream_create = &StreamCreate;
    f.stream_destroy = &StreamDestroy;
    f.stream_synchronize = &StreamSynchronize;
    f.event_create = &EventCreate;
    f.event_destroy = &EventDestroy;
    f.event_record = &EventRecord;
    f.event_synchronize = &EventSynchronize;
    return f;
  }();
  return iface;
}

// Kernels: contiguous float32 only; each queues its work on its device's current stream.
float* Floats(const char* op, const sdk::Tensor& t) {
  if (t.dtype() != TSR_DTYPE_FLOAT32 || !t.is_contiguous()) {
    sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": contiguous float32 tensors only");
  }
  return t.data<float>();
}

template <typename F>
void Launch(const sdk::Tensor& t, F task) {
  const int32_t index = t.device().index;
  Device& dev = TheDevice(index);
  std::lock_guard<std::recursive_mutex> lock(dev.mu);
  dev.Enqueue(dev.Current(index), std::move(task));
}

sdk::Tensor Fill(const sdk::Tensor& self, double value) {
  float* p = Floats("adev::fill_", self);
  const int64_t n = self.numel();
  const float v = static_cast<float>(value);
  Launch(self, [p, n, v] {
    for (int64_t i = 0; i < n; ++i) p[i] = v;
  });
  return self;
}

sdk::Tensor Accumulate(const sdk::Tensor& self, const sdk::Tensor& other) {
  float* p = Floats("adev::accumulate_", self);
  const float* q = Floats("adev::accumulate_", other);
  if (other.numel() != self.numel() || other.device().index != self.device().index) {
    sdk::fail(TSR_INVALID_ARGUMENT, "adev::accumulate_: expected tensors of one size and device");
  }
  const int64_t n = self.numel();
  Launch(self, [p, q, n] {
    for (int64_t i = 0; i < n; ++i) p[i] += q[i];
  });
  return self;
}

sdk::Tensor Fault(const sdk::Tensor& self) {
  const int32_t index = self.device().index;
  Device* dev = &TheDevice(index);
  const void* address = self.data_ptr();
  Launch(self, [dev, index, address] {
    char text[160];
    std::snprintf(text, sizeof text,
                  "%s:%d: illegal memory access at %p in kernel adev::fault_ (a pretend "
                  "asynchronous fault)",
                  kName, static_cast<int>(index), address);
    dev->Fail(text);
  });
  return self;
}

}  // namespace
}  // namespace adev

TESSERA_PLUGIN(lib) {
  lib.describe(adev::kName, "1.0.0", adev::kType, adev::kName);
  lib.on_unload(&adev::FreeDevices);
  lib.device(adev::Interface());
  lib.define("adev::fill_(Tensor(a!) self, float value) -> Tensor(a!)");
  lib.define("adev::accumulate_(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  lib.define("adev::fault_(Tensor(a!) self) -> Tensor(a!)");
  lib.impl<&adev::Fill>("adev::fill_");
  lib.impl<&adev::Accumulate>("adev::accumulate_");
  lib.impl<&adev::Fault>("adev::fault_");
  lib.cpu_fallback();
}
