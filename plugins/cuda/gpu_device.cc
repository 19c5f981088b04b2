#include "gpu_device.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "caching_allocator.h"
#include "tessera/sdk/error.hpp"
#include "tessera/sdk/stream.hpp"

namespace tessera {
namespace gpu {
namespace {

namespace sdk = ::tessera::sdk;

std::string DeviceName(int32_t index) {
  return std::string(TESSERA_GPU_PLUGIN_NAME ":") + std::to_string(index);
}

// Fail: a tsr_error for the vendor's error `e` while doing `what` on device `index`. Out of
// memory is RESOURCE_EXHAUSTED; anything else (a kernel's illegal address, surfacing at a
// synchronizing call) INTERNAL, with the vendor's own text.
tsr_error* Fail(cudaError_t e, const char* what, int32_t index) {
  const tsr_code code = e == cudaErrorMemoryAllocation ? TSR_RESOURCE_EXHAUSTED : TSR_INTERNAL;
  const std::string message = std::string(TESSERA_GPU_VENDOR " error on ") + DeviceName(index) +
                              " in " + what + ": " + ErrorText(e);
  return sdk::api().error_create(code, sdk::to_c(message));
}

tsr_error* Check(cudaError_t e, const char* what, int32_t index) {
  return e == cudaSuccess ? nullptr : Fail(e, what, index);
}

tsr_error* CheckIndex(int32_t index) {
  const int32_t count = DeviceCount();
  if (index >= 0 && index < count) return nullptr;
  const std::string message = "no device " + DeviceName(index) + ": " + std::to_string(count) +
                              " " TESSERA_GPU_VENDOR " device(s) present";
  return sdk::api().error_create(TSR_INVALID_ARGUMENT, sdk::to_c(message));
}

cudaStream_t CurrentStream(int32_t index) {
  return static_cast<cudaStream_t>(sdk::current_stream(tsr_device{TESSERA_GPU_DEVICE_TYPE, index}));
}

// The device's own calls, for the caching allocator.
class Backing final : public BackingAllocator {
 public:
  explicit Backing(int32_t index) : index_(index) {}
  void* Malloc(size_t nbytes, bool* oom, std::string* error) override {
    DeviceGuard guard(index_);
    void* ptr = nullptr;
    const cudaError_t e = cudaMalloc(&ptr, nbytes);
    if (e == cudaSuccess) return ptr;
    (void)cudaGetLastError();  // a failed allocation is not the next kernel launch's error
    *oom = e == cudaErrorMemoryAllocation;
    *error = ErrorText(e);
    return nullptr;
  }
  void Free(void* ptr) override {
    DeviceGuard guard(index_);
    (void)cudaFree(ptr);
  }
  void* RecordEvent(void* stream) override {
    DeviceGuard guard(index_);
    cudaEvent_t event = nullptr;
    if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) return nullptr;
    if (cudaEventRecord(event, static_cast<cudaStream_t>(stream)) != cudaSuccess) {
      (void)cudaEventDestroy(event);
      return nullptr;
    }
    return event;
  }
  bool EventDone(void* event) override {
    // Not ready: false. Done, or an error (the device's sticky error, which its next
    // synchronizing call reports): the block may go back to its pool. The runtime also keeps
    // any status but success as its last error, which the next kernel launch's check
    // (cudaGetLastError) would report as that op's failure: cleared here, as PyTorch's
    // allocator does. A sticky error survives the clearing.
    const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e != cudaErrorNotReady;
  }
  void DestroyEvent(void* event) override {
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
  }
  void SynchronizeStream(void* stream) override {
    DeviceGuard guard(index_);
    (void)cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  }

 private:
  int32_t index_;
};

// One allocator per device, made on first use; never destroyed (tensors may outlive the
// plugin's statics at exit).
struct DeviceState {
  std::once_flag once;
  Backing* backing = nullptr;
  CachingAllocator* allocator = nullptr;
  std::once_flag properties_once;
  std::string name, arch;
  tsr_device_properties properties{};
};

DeviceState& State(int32_t index) {
  static DeviceState* states = new DeviceState[std::max(DeviceCount(), 1)];
  DeviceState& s = states[index];
  std::call_once(s.once, [&s, index] {
    CachingAllocator::Mode mode = CachingAllocator::Mode::kCaching;
    std::string ignored;  // checked when the plugin registered (CheckAllocatorSetting)
    CachingAllocator::ModeFromEnvironment(&mode, &ignored);
    s.backing = new Backing(index);
    s.allocator = new CachingAllocator(s.backing, mode);
  });
  return s;
}

#define TSR_GPU_CHECK_INDEX(index) \
  if (tsr_error* e = CheckIndex(index)) return e

tsr_error* Count(void*, int32_t* out) {
  *out = DeviceCount();
  return nullptr;
}

tsr_error* Allocate(void*, int32_t index, size_t nbytes, void** out) {
  TSR_GPU_CHECK_INDEX(index);
  bool oom = false;
  std::string error;
  *out = State(index).allocator->Allocate(nbytes, CurrentStream(index), &oom, &error);
  if (*out != nullptr || nbytes == 0) return nullptr;
  const std::string message = DeviceName(index) + ": " + error;
  return sdk::api().error_create(oom ? TSR_RESOURCE_EXHAUSTED : TSR_INTERNAL, sdk::to_c(message));
}

void Free(void*, int32_t index, void* ptr) {
  if (!State(index).allocator->Free(ptr)) {
    const std::string message =
        DeviceName(index) + ": free of memory this plugin did not allocate (ignored)";
    sdk::api().log(TSR_LOG_ERROR, sdk::to_c(message));
  }
}

// The synchronous copies: queued on the calling thread's current stream (after its work), then
// waited for (Note [Asynchronous devices]).
tsr_error* CopySync(int32_t index, void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                    const char* what) {
  TSR_GPU_CHECK_INDEX(index);
  DeviceGuard guard(index);
  const cudaStream_t stream = CurrentStream(index);
  if (n > 0) {
    if (tsr_error* e = Check(cudaMemcpyAsync(dst, src, n, kind, stream), what, index)) return e;
  }
  return Check(cudaStreamSynchronize(stream), what, index);
}

tsr_error* HostToDevice(void*, int32_t index, void* dst, const void* src, size_t n) {
  return CopySync(index, dst, src, n, cudaMemcpyHostToDevice, "copy_host_to_device");
}
tsr_error* DeviceToHost(void*, int32_t index, void* dst, const void* src, size_t n) {
  return CopySync(index, dst, src, n, cudaMemcpyDeviceToHost, "copy_device_to_host");
}

// Between two devices: after the source's current stream, on the destination's.
tsr_error* DeviceToDevice(void*, int32_t dst_index, void* dst, int32_t src_index, const void* src,
                          size_t n) {
  if (dst_index == src_index) {
    return CopySync(dst_index, dst, src, n, cudaMemcpyDeviceToDevice, "copy_device_to_device");
  }
  TSR_GPU_CHECK_INDEX(src_index);
  TSR_GPU_CHECK_INDEX(dst_index);
  {
    DeviceGuard guard(src_index);
    if (tsr_error* e = Check(cudaStreamSynchronize(CurrentStream(src_index)),
                             "copy_device_to_device", src_index)) {
      return e;
    }
  }
  DeviceGuard guard(dst_index);
  const cudaStream_t stream = CurrentStream(dst_index);
  if (tsr_error* e = Check(cudaMemcpyPeerAsync(dst, dst_index, src, src_index, n, stream),
                           "copy_device_to_device", dst_index)) {
    return e;
  }
  return Check(cudaStreamSynchronize(stream), "copy_device_to_device", dst_index);
}

tsr_error* Synchronize(void*, int32_t index) {
  TSR_GPU_CHECK_INDEX(index);
  DeviceGuard guard(index);
  return Check(cudaDeviceSynchronize(), "synchronize", index);
}

tsr_error* StreamCreate(void*, int32_t index, void** out) {
  TSR_GPU_CHECK_INDEX(index);
  DeviceGuard guard(index);
  cudaStream_t stream = nullptr;
  // Non-blocking: a stream is ordered against the default stream only by events, as in
  // PyTorch, not by the legacy default stream's implicit synchronization.
  if (tsr_error* e = Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                           "stream_create", index)) {
    return e;
  }
  *out = stream;
  return nullptr;
}
void StreamDestroy(void*, int32_t index, void* stream) {
  DeviceGuard guard(index);
  (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream));  // queued work still completes
}
tsr_error* StreamSynchronize(void*, int32_t index, void* stream) {
  TSR_GPU_CHECK_INDEX(index);
  DeviceGuard guard(index);
  return Check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "stream_synchronize",
               index);
}
tsr_error* EventCreate(void*, int32_t index, void** out) {
  TSR_GPU_CHECK_INDEX(index);
  DeviceGuard guard(index);
  cudaEvent_t event = nullptr;
  if (tsr_error* e =
          Check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "event_create", index)) {
    return e;
  }
  *out = event;
  return nullptr;
}
void EventDestroy(void*, int32_t index, void* event) {
  DeviceGuard guard(index);
  (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
}
tsr_error* EventRecord(void*, int32_t index, void* event, void* stream) {
  TSR_GPU_CHECK_INDEX(index);
  DeviceGuard guard(index);
  return Check(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)),
               "event_record", index);
}
tsr_error* EventSynchronize(void*, int32_t index, void* event) {
  TSR_GPU_CHECK_INDEX(index);
  DeviceGuard guard(index);
  return Check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "event_synchronize", index);
}

tsr_error* GetProperties(void*, int32_t index, tsr_device_properties* out) {
  TSR_GPU_CHECK_INDEX(index);
  DeviceState& s = State(index);
  cudaError_t error = cudaSuccess;
  std::call_once(s.properties_once, [&] {
    cudaDeviceProp prop{};
    error = cudaGetDeviceProperties(&prop, index);
    if (error != cudaSuccess) return;
    s.name = prop.name;
#if defined(TESSERA_GPU_HIP)
    s.arch = prop.gcnArchName;
    s.arch = s.arch.substr(0, s.arch.find(':'));  // "gfx90a:sramecc+:xnack-" -> "gfx90a"
#else
    s.arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
#endif
    s.properties.total_memory = prop.totalGlobalMem;
    s.properties.multiprocessor_count = prop.multiProcessorCount;
  });
  if (error != cudaSuccess) return Fail(error, "get_properties", index);
  tsr_device_properties p = s.properties;
  p.name = sdk::to_c(s.name);
  p.arch = sdk::to_c(s.arch);
  p.flags = TSR_DEVICE_PROPERTY_ASYNC;
  const size_t size = std::min(out->struct_size, sizeof p);
  std::memcpy(reinterpret_cast<char*>(out) + sizeof(size_t),
              reinterpret_cast<const char*>(&p) + sizeof(size_t), size - sizeof(size_t));
  return nullptr;
}

tsr_error* StreamWaitEvent(void*, int32_t index, void* stream, void* event) {
  TSR_GPU_CHECK_INDEX(index);
  DeviceGuard guard(index);
  return Check(
      cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0),
      "stream_wait_event", index);
}

tsr_error* CopyAsync(int32_t index, void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                     void* stream, const char* what) {
  TSR_GPU_CHECK_INDEX(index);
  if (n == 0) return nullptr;
  DeviceGuard guard(index);
  return Check(cudaMemcpyAsync(dst, src, n, kind, static_cast<cudaStream_t>(stream)), what, index);
}
tsr_error* HostToDeviceAsync(void*, int32_t index, void* dst, const void* src, size_t n,
                             void* stream) {
  return CopyAsync(index, dst, src, n, cudaMemcpyHostToDevice, stream, "copy_host_to_device_async");
}
tsr_error* DeviceToHostAsync(void*, int32_t index, void* dst, const void* src, size_t n,
                             void* stream) {
  return CopyAsync(index, dst, src, n, cudaMemcpyDeviceToHost, stream, "copy_device_to_host_async");
}
tsr_error* DeviceToDeviceAsync(void*, int32_t dst_index, void* dst, int32_t src_index,
                               const void* src, size_t n, void* stream) {
  if (dst_index == src_index) {
    return CopyAsync(dst_index, dst, src, n, cudaMemcpyDeviceToDevice, stream,
                     "copy_device_to_device_async");
  }
  TSR_GPU_CHECK_INDEX(src_index);
  TSR_GPU_CHECK_INDEX(dst_index);
  if (n == 0) return nullptr;
  DeviceGuard guard(dst_index);
  return Check(
      cudaMemcpyPeerAsync(dst, dst_index, src, src_index, n, static_cast<cudaStream_t>(stream)),
      "copy_device_to_device_async", dst_index);
}

tsr_error* RecordStream(void*, int32_t index, void* ptr, void* stream) {
  TSR_GPU_CHECK_INDEX(index);
  if (State(index).allocator->RecordStream(ptr, stream)) return nullptr;
  const std::string message =
      DeviceName(index) + ": record_stream: the memory is not a live allocation of this device";
  return sdk::api().error_create(TSR_INVALID_ARGUMENT, sdk::to_c(message));
}

tsr_error* MemoryStats(void*, int32_t index, tsr_memory_stats* out) {
  TSR_GPU_CHECK_INDEX(index);
  const tsr_memory_stats stats = State(index).allocator->Stats();
  const size_t size = std::min(out->struct_size, sizeof stats);
  std::memcpy(reinterpret_cast<char*>(out) + sizeof(size_t),
              reinterpret_cast<const char*>(&stats) + sizeof(size_t), size - sizeof(size_t));
  return nullptr;
}

tsr_error* EmptyCache(void*, int32_t index) {
  TSR_GPU_CHECK_INDEX(index);
  State(index).allocator->EmptyCache();
  return nullptr;
}

}  // namespace

std::string ErrorText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

int32_t DeviceCount(std::string* why) {
  struct Counted {
    int32_t count = 0;
    std::string why;
  };
  static const Counted counted = [] {
    Counted c;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      c.why = ErrorText(e);
      return c;
    }
    c.count = n;
    if (n == 0) c.why = "the " TESSERA_GPU_VENDOR " runtime reports no device";
    return c;
  }();
  if (why != nullptr) *why = counted.why;
  return counted.count;
}

std::string CheckAllocatorSetting() {
  CachingAllocator::Mode mode;
  std::string error;
  return CachingAllocator::ModeFromEnvironment(&mode, &error) ? "" : error;
}

DeviceGuard::DeviceGuard(int32_t index) : index_(index) {
  if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
  if (previous_ != index_) (void)cudaSetDevice(index_);
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0 && previous_ != index_) (void)cudaSetDevice(previous_);
}

const tsr_device_interface& DeviceInterface() {
  static const tsr_device_interface iface = [] {
    tsr_device_interface f{};
    f.struct_size = sizeof f;
    f.device_type = TESSERA_GPU_DEVICE_TYPE;
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
    f.get_properties = &GetProperties;
    f.stream_wait_event = &StreamWaitEvent;
    f.copy_host_to_device_async = &HostToDeviceAsync;
    f.copy_device_to_host_async = &DeviceToHostAsync;
    f.copy_device_to_device_async = &DeviceToDeviceAsync;
    f.record_stream = &RecordStream;
    f.memory_stats = &MemoryStats;
    f.empty_cache = &EmptyCache;
    return f;
  }();
  return iface;
}

}  // namespace gpu
}  // namespace tessera
