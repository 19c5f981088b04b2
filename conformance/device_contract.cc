#include "conformance/device_contract.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>
#include <sstream>
#include <thread>
#include <utility>

#include "conformance/code_name.h"
#include "conformance/crash_handler.h"
#include "tessera/c/loader.h"
#include "tessera/c/tensor.h"
#include "tessera/sdk/ops.hpp"
#include "tessera/sdk/runtime.hpp"

namespace tessera {
namespace conformance {
namespace {

// A check ends by returning (pass) or by throwing one of these.
struct CheckFailed {
  std::string message;
};
struct CheckSkipped {
  std::string reason;
};
[[noreturn]] void Fail(const std::string& message) { throw CheckFailed{message}; }

// What every check knows of the device under test.
struct Device {
  tsr_device device{};
  std::string name;  // "npu:0"
  int32_t count = 0;
};

std::string ErrorText(tsr_error* e) {
  const std::string text = std::string(CodeName(tsr_error_code(e))) + ": " +
                           std::string(sdk::from_c(sdk::api().error_message(e)));
  sdk::api().error_release(e);
  return text;
}

// Ok fails the check when a runtime call returned an error, saying what was being done.
void Ok(tsr_error* e, const std::string& doing) {
  if (e != nullptr) Fail(doing + " failed: " + ErrorText(e));
}

// Owned references of the C handles.
struct TensorRef {
  tsr_tensor* t = nullptr;
  TensorRef() = default;
  explicit TensorRef(tsr_tensor* t) : t(t) {}
  TensorRef(TensorRef&& o) noexcept : t(std::exchange(o.t, nullptr)) {}
  TensorRef& operator=(TensorRef&& o) noexcept {
    std::swap(t, o.t);
    return *this;
  }
  ~TensorRef() {
    if (t != nullptr) tsr_tensor_release(t);
  }
  void reset() {
    if (t != nullptr) tsr_tensor_release(std::exchange(t, nullptr));
  }
};
struct StreamRef {
  tsr_stream* s = nullptr;
  ~StreamRef() {
    if (s != nullptr) tsr_stream_release(s);
  }
};
struct EventRef {
  tsr_event* e = nullptr;
  ~EventRef() {
    if (e != nullptr) tsr_event_release(e);
  }
};

// Bytes allocates `n` bytes (a uint8 tensor) on the device.
TensorRef Bytes(const Device& d, size_t n) {
  const int64_t size = static_cast<int64_t>(n);
  tsr_tensor* t = nullptr;
  Ok(tsr_tensor_empty(&size, 1, TSR_DTYPE_UINT8, d.device, &t),
     "allocating " + std::to_string(n) + " bytes on " + d.name);
  return TensorRef(t);
}

// View: bytes [offset, offset + n) of `base`'s storage.
TensorRef View(const TensorRef& base, size_t offset, size_t n) {
  const int64_t size = static_cast<int64_t>(n), stride = 1;
  tsr_tensor* t = nullptr;
  Ok(tsr_tensor_as_strided(base.t, &size, &stride, 1, static_cast<int64_t>(offset), &t),
     "viewing bytes " + std::to_string(offset) + ".." + std::to_string(offset + n));
  return TensorRef(t);
}

// Pattern: bytes that differ from their neighbours and between patterns (`seed`), never 0.
std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = static_cast<uint8_t>(1 + (i * 131 + (i >> 8) * 7 + seed * 37) % 251);
  }
  return out;
}

void Write(const TensorRef& t, const std::vector<uint8_t>& bytes, const std::string& what) {
  Ok(tsr_tensor_copy_from_host(t.t, bytes.data(), bytes.size()),
     "copy_from_host of " + std::to_string(bytes.size()) + " bytes into " + what);
}
std::vector<uint8_t> Read(const TensorRef& t, size_t n, const std::string& what) {
  std::vector<uint8_t> out(n);
  Ok(tsr_tensor_copy_to_host(t.t, out.data(), n),
     "copy_to_host of " + std::to_string(n) + " bytes from " + what);
  return out;
}

// FirstDifference: the first index where `got` differs from `want`, or -1.
int64_t FirstDifference(const uint8_t* got, const uint8_t* want, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) return static_cast<int64_t>(i);
  }
  return -1;
}

std::string Byte(uint8_t b) { return std::to_string(static_cast<int>(b)); }

// SynchronizeOnExit waits for all the device's work when a check ends (returning or failing),
// declared after the host buffers that queued copies use: a device that queued a copy on the
// wrong stream must not write into a buffer that no longer exists.
struct SynchronizeOnExit {
  tsr_device device;
  ~SynchronizeOnExit() {
    if (tsr_error* e = tsr_device_synchronize(device)) sdk::api().error_release(e);
  }
};

// A stream of the device, or the check is skipped: a synchronous device has none.
void CreateStream(const Device& d, StreamRef* s) {
  tsr_error* e = tsr_stream_create(d.device, &s->s);
  if (e != nullptr && tsr_error_code(e) == TSR_UNIMPLEMENTED) {
    sdk::api().error_release(e);
    throw CheckSkipped{
        d.name +
        " is synchronous (its device interface has no stream_create): no streams to check"};
  }
  Ok(e, "tsr_stream_create on " + d.name);
}

// ---- allocation -----------------------------------------------------------------------------

// Odd sizes around the boundaries allocators round to, 0 and a large block.
constexpr size_t kSizes[] = {
    0, 1, 3, 7, 63, 64, 65, 4095, 4097, (size_t{1} << 20) + 13, size_t{64} << 20};

void AllocateSizes(const Device& d) {
  for (size_t n : kSizes) {
    TensorRef t = Bytes(d, n);
    if (n > 0 && tsr_tensor_data_ptr(t.t) == nullptr)
      Fail("allocating " + std::to_string(n) + " bytes gave a NULL data pointer");
    const std::vector<uint8_t> want = Pattern(n, 1);
    Write(t, want, "a block of " + std::to_string(n) + " bytes");
    const std::vector<uint8_t> got = Read(t, n, "a block of " + std::to_string(n) + " bytes");
    if (const int64_t i = FirstDifference(got.data(), want.data(), n); i >= 0) {
      Fail("a block of " + std::to_string(n) + " bytes does not keep what was written: byte " +
           std::to_string(i) + " reads " + Byte(got[i]) + ", expected " + Byte(want[i]));
    }
  }
}

// Every element of every dtype may be read and written in place, and vector loads want more:
// blocks are aligned to 16 bytes at least (device.h, allocate).
constexpr uintptr_t kAlignment = 16;

void AllocateAlignment(const Device& d) {
  std::vector<TensorRef> live;  // kept, so that each block is a new one
  for (size_t n : {1, 3, 5, 7, 9, 13, 17, 33, 100, 4097}) {
    live.push_back(Bytes(d, n));
    const uintptr_t p = reinterpret_cast<uintptr_t>(tsr_tensor_data_ptr(live.back().t));
    if (p % kAlignment != 0) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "a block of %zu bytes starts at %#jx, not aligned to %ju bytes (expected "
                    "every block aligned to at least %ju)",
                    n, static_cast<uintmax_t>(p), static_cast<uintmax_t>(kAlignment),
                    static_cast<uintmax_t>(kAlignment));
      Fail(text);
    }
  }
}

// Live blocks never share a byte: each is filled with its own pattern, then all are read back.
void AllocateDistinct(const Device& d) {
  constexpr int kBlocks = 48;
  std::vector<TensorRef> blocks;
  std::vector<std::vector<uint8_t>> patterns;
  for (int i = 0; i < kBlocks; ++i) {
    const size_t n = 1 + static_cast<size_t>(i) * 193 % 5000;
    blocks.push_back(Bytes(d, n));
    patterns.push_back(Pattern(n, static_cast<uint32_t>(i + 2)));
    Write(blocks.back(), patterns.back(), "block " + std::to_string(i));
  }
  for (int i = 0; i < kBlocks; ++i) {
    const size_t n = patterns[i].size();
    const std::vector<uint8_t> got = Read(blocks[i], n, "block " + std::to_string(i));
    const int64_t at = FirstDifference(got.data(), patterns[i].data(), n);
    if (at < 0) continue;
    // Whose bytes are these? The block written later over this one.
    std::string whose = "another block's";
    for (int j = i + 1; j < kBlocks; ++j) {
      const std::vector<uint8_t>& q = patterns[j];
      for (size_t k = 0; k < q.size(); ++k) {
        if (q[k] == got[at] &&
            (at + 1 >= static_cast<int64_t>(n) || k + 1 >= q.size() || q[k + 1] == got[at + 1])) {
          whose = "block " + std::to_string(j) + "'s";
          j = kBlocks;
          break;
        }
      }
    }
    Fail("live blocks overlap: block " + std::to_string(i) + " (" + std::to_string(n) +
         " bytes) lost its contents at byte " + std::to_string(at) + ", which now holds " + whose +
         " (expected every live block to be memory of its own)");
  }
}

void AllocateOutOfMemory(const Device& d) {
  const int64_t huge = int64_t{1} << 50;  // 1 PiB: more than any device has
  tsr_tensor* t = nullptr;
  tsr_error* e = tsr_tensor_empty(&huge, 1, TSR_DTYPE_UINT8, d.device, &t);
  if (e == nullptr) {
    tsr_tensor_release(t);
    Fail("allocating 1 PiB succeeded (expected RESOURCE_EXHAUSTED)");
  }
  const tsr_code code = tsr_error_code(e);
  const std::string text = ErrorText(e);
  if (code != TSR_RESOURCE_EXHAUSTED)
    Fail("allocating 1 PiB: expected RESOURCE_EXHAUSTED, got " + text);
  // ... and the device still works.
  TensorRef after = Bytes(d, 4096);
  Write(after, Pattern(4096, 3), "a block allocated after running out of memory");
}

// Memory given back is accounted for: after a burst of allocations and frees the device's
// allocator counts as many bytes in use as before (where it keeps counters).
void AllocateBalance(const Device& d) {
  tsr_memory_stats before{};
  before.struct_size = sizeof before;
  tsr_error* e = tsr_device_memory_stats(d.device, &before);
  if (e != nullptr && tsr_error_code(e) == TSR_UNIMPLEMENTED) {
    sdk::api().error_release(e);
    throw CheckSkipped{d.name + " keeps no allocator counters (no memory_stats)"};
  }
  Ok(e, "tsr_device_memory_stats");
  for (int round = 0; round < 200; ++round) {
    TensorRef a = Bytes(d, 4096 + static_cast<size_t>(round) % 7);
    TensorRef b = Bytes(d, 1 + static_cast<size_t>(round));
  }
  tsr_memory_stats after{};
  after.struct_size = sizeof after;
  Ok(tsr_device_memory_stats(d.device, &after), "tsr_device_memory_stats");
  if (after.allocated_bytes != before.allocated_bytes) {
    Fail("after 400 blocks were allocated and freed, allocated_bytes is " +
         std::to_string(after.allocated_bytes) + " (expected " +
         std::to_string(before.allocated_bytes) + ", as before them)");
  }
}

// ---- copies ---------------------------------------------------------------------------------

constexpr size_t kSpan = 4101;  // odd, so that no copy is a whole number of words
// (offset, bytes) of the copies: the first and last byte, odd middles, the whole and nothing.
constexpr std::pair<size_t, size_t> kRanges[] = {{0, 1},     {1, 1},         {kSpan - 1, 1},
                                                 {7, 13},    {1, kSpan - 1}, {0, kSpan - 1},
                                                 {0, kSpan}, {kSpan, 0},     {3, 4096}};
constexpr uint8_t kGuard = 0xA5;

std::string Range(size_t offset, size_t n) {
  return "bytes " + std::to_string(offset) + ".." + std::to_string(offset + n) + " of " +
         std::to_string(kSpan);
}

// A copy into part of a block writes exactly that part.
void CopyHostToDeviceBounds(const Device& d) {
  TensorRef base = Bytes(d, kSpan);
  for (const auto& [offset, n] : kRanges) {
    const std::vector<uint8_t> guard(kSpan, kGuard);
    Write(base, guard, "the whole block");
    const std::vector<uint8_t> part = Pattern(n, 4);
    Write(View(base, offset, n), part, Range(offset, n));
    const std::vector<uint8_t> got = Read(base, kSpan, "the whole block");
    for (size_t i = 0; i < kSpan; ++i) {
      const bool inside = i >= offset && i < offset + n;
      const uint8_t want = inside ? part[i - offset] : kGuard;
      if (got[i] == want) continue;
      Fail("copy_host_to_device into " + Range(offset, n) + ": byte " + std::to_string(i) +
           (inside ? " (inside the copy)" : " (outside the copy)") + " reads " + Byte(got[i]) +
           ", expected " + Byte(want));
    }
  }
}

// A copy out of part of a block reads exactly that part, and writes only its host bytes.
void CopyDeviceToHostBounds(const Device& d) {
  TensorRef base = Bytes(d, kSpan);
  const std::vector<uint8_t> whole = Pattern(kSpan, 5);
  Write(base, whole, "the whole block");
  constexpr size_t kPad = 64;
  for (const auto& [offset, n] : kRanges) {
    std::vector<uint8_t> host(n + 2 * kPad, kGuard);
    Ok(tsr_tensor_copy_to_host(View(base, offset, n).t, host.data() + kPad, n),
       "copy_to_host of " + Range(offset, n));
    for (size_t i = 0; i < host.size(); ++i) {
      const bool inside = i >= kPad && i < kPad + n;
      const uint8_t want = inside ? whole[offset + i - kPad] : kGuard;
      if (host[i] == want) continue;
      Fail("copy_device_to_host of " + Range(offset, n) + ": " +
           (inside
                ? "host byte " + std::to_string(i - kPad) + " of the copy reads " + Byte(host[i]) +
                      ", expected " + Byte(want) + " (device byte " +
                      std::to_string(offset + i - kPad) + ")"
                : "it wrote host memory " + std::to_string(i < kPad ? kPad - i : i - kPad - n + 1) +
                      " byte(s) " + (i < kPad ? "before" : "past") + " its destination"));
    }
  }
}

// Copies between two devices of the plugin (copy_ from npu:0 to npu:1), at offsets, blocking
// and not; the device interface's copy_device_to_device(_async).
void CopyDeviceToDevice(const Device& d) {
  if (d.count < 2) {
    throw CheckSkipped{d.name + " is its plugin's only device: copies between devices need two"};
  }
  Device other = d;
  other.device.index = d.device.index == 0 ? 1 : 0;
  TensorRef from = Bytes(d, kSpan), to = Bytes(other, kSpan);
  const std::vector<uint8_t> whole = Pattern(kSpan, 6);
  Write(from, whole, "the source block");
  for (const bool non_blocking : {false, true}) {
    for (const auto& [offset, n] : kRanges) {
      if (n == 0) continue;
      Write(to, std::vector<uint8_t>(kSpan, kGuard), "the destination block");
      const size_t at = (offset + 5) % (kSpan - n + 1);  // another offset on the other side
      TensorRef src = View(from, offset, n), dst = View(to, at, n);
      try {
        ops::copy_(sdk::Tensor::borrow(dst.t), sdk::Tensor::borrow(src.t), non_blocking);
      } catch (const sdk::Error& e) {
        Fail(std::string("copy_ between devices failed: ") + CodeName(e.code()) + ": " + e.what());
      }
      Ok(tsr_device_synchronize(other.device), "tsr_device_synchronize");
      const std::vector<uint8_t> got = Read(to, kSpan, "the destination block");
      for (size_t i = 0; i < kSpan; ++i) {
        const bool inside = i >= at && i < at + n;
        const uint8_t want = inside ? whole[offset + i - at] : kGuard;
        if (got[i] == want) continue;
        Fail(std::string("copy_device_to_device") + (non_blocking ? "_async" : "") + " of " +
             Range(offset, n) + " to offset " + std::to_string(at) + ": destination byte " +
             std::to_string(i) + " reads " + Byte(got[i]) + ", expected " + Byte(want));
      }
    }
  }
}

// ---- synchronization, streams and events ----------------------------------------------------

void Synchronize(const Device& d) {
  Ok(tsr_device_synchronize(d.device), "tsr_device_synchronize on " + d.name);
  TensorRef t = Bytes(d, 1024);
  const std::vector<uint8_t> want = Pattern(1024, 7);
  std::vector<uint8_t> got(1024);
  SynchronizeOnExit synchronized{d.device};
  Ok(tsr_tensor_copy_from_host_async(t.t, want.data(), want.size(), nullptr),
     "tsr_tensor_copy_from_host_async on the current stream");
  Ok(tsr_device_synchronize(d.device), "tsr_device_synchronize after an asynchronous copy");
  Ok(tsr_tensor_copy_to_host_async(t.t, got.data(), got.size(), nullptr),
     "tsr_tensor_copy_to_host_async on the current stream");
  Ok(tsr_device_synchronize(d.device), "tsr_device_synchronize after an asynchronous copy");
  if (const int64_t i = FirstDifference(got.data(), want.data(), got.size()); i >= 0) {
    Fail(
        "after tsr_device_synchronize, asynchronous copies on the current stream had not "
        "completed: byte " +
        std::to_string(i) + " reads " + Byte(got[i]) + ", expected " + Byte(want[i]));
  }
}

// Work on one stream runs in the order it was queued.
void StreamOrder(const Device& d) {
  StreamRef s;
  CreateStream(d, &s);
  TensorRef t = Bytes(d, kSpan);
  const std::vector<uint8_t> first = Pattern(kSpan, 8), second = Pattern(100, 9);
  std::vector<uint8_t> got(kSpan, 0);
  SynchronizeOnExit synchronized{d.device};
  TensorRef part = View(t, 17, second.size());
  Ok(tsr_tensor_copy_from_host_async(t.t, first.data(), kSpan, s.s), "queueing a copy");
  Ok(tsr_tensor_copy_from_host_async(part.t, second.data(), second.size(), s.s),
     "queueing a copy into bytes 17..117");
  Ok(tsr_tensor_copy_to_host_async(t.t, got.data(), kSpan, s.s), "queueing a copy back");
  Ok(tsr_stream_synchronize(s.s), "tsr_stream_synchronize");
  std::vector<uint8_t> want = first;
  std::copy(second.begin(), second.end(), want.begin() + 17);
  if (const int64_t i = FirstDifference(got.data(), want.data(), kSpan); i >= 0) {
    Fail(
        "three copies queued on one stream did not run in order (a write, a write into its "
        "bytes 17..117, a read): byte " +
        std::to_string(i) + " reads " + Byte(got[i]) + ", expected " + Byte(want[i]));
  }
}

// An asynchronous copy is queued on the stream it is given: synchronizing that stream (and only
// it) completes the copy.
void StreamCopyOnItsStream(const Device& d) {
  StreamRef s;
  CreateStream(d, &s);
  TensorRef t = Bytes(d, kSpan);
  const std::vector<uint8_t> want = Pattern(kSpan, 10);
  std::vector<uint8_t> got(kSpan, 0);
  SynchronizeOnExit synchronized{d.device};
  Ok(tsr_tensor_copy_from_host_async(t.t, want.data(), kSpan, s.s), "queueing a copy");
  Ok(tsr_tensor_copy_to_host_async(t.t, got.data(), kSpan, s.s), "queueing a copy back");
  Ok(tsr_stream_synchronize(s.s), "tsr_stream_synchronize of the copies' stream");
  if (const int64_t i = FirstDifference(got.data(), want.data(), kSpan); i >= 0) {
    Fail(
        "two copies queued on a stream had not completed when that stream was synchronized "
        "(were they queued on another stream?): byte " +
        std::to_string(i) + " reads " + Byte(got[i]) + ", expected " + Byte(want[i]));
  }
}

// The synchronous copies start after the work queued on the calling thread's current stream.
void StreamSyncCopyAfterCurrent(const Device& d) {
  StreamRef s;
  CreateStream(d, &s);
  StreamRef previous;
  Ok(tsr_stream_get_current(d.device, &previous.s), "tsr_stream_get_current");
  Ok(tsr_stream_set_current(s.s), "tsr_stream_set_current");
  TensorRef t = Bytes(d, kSpan);
  const std::vector<uint8_t> want = Pattern(kSpan, 11);
  std::vector<uint8_t> got(kSpan, 0);
  SynchronizeOnExit synchronized{d.device};
  tsr_error* e = tsr_tensor_copy_from_host_async(t.t, want.data(), kSpan, nullptr);
  if (e == nullptr) e = tsr_tensor_copy_to_host(t.t, got.data(), kSpan);
  if (tsr_error* back = tsr_stream_set_current(previous.s)) sdk::api().error_release(back);
  Ok(e, "a copy queued on the current stream, then a synchronous copy back");
  if (const int64_t i = FirstDifference(got.data(), want.data(), kSpan); i >= 0) {
    Fail("a synchronous copy did not wait for the work queued on the current stream: byte " +
         std::to_string(i) + " reads " + Byte(got[i]) + ", expected " + Byte(want[i]));
  }
}

// event_synchronize returns once the work before the event's record has completed.
void EventSynchronize(const Device& d) {
  StreamRef s;
  CreateStream(d, &s);
  EventRef e;
  Ok(tsr_event_create(d.device, &e.e), "tsr_event_create");
  TensorRef t = Bytes(d, kSpan);
  const std::vector<uint8_t> want = Pattern(kSpan, 12);
  std::vector<uint8_t> got(kSpan, 0);
  SynchronizeOnExit synchronized{d.device};
  Ok(tsr_tensor_copy_from_host_async(t.t, want.data(), kSpan, s.s), "queueing a copy");
  Ok(tsr_tensor_copy_to_host_async(t.t, got.data(), kSpan, s.s), "queueing a copy back");
  Ok(tsr_event_record(e.e, s.s), "tsr_event_record");
  Ok(tsr_event_synchronize(e.e), "tsr_event_synchronize");
  if (const int64_t i = FirstDifference(got.data(), want.data(), kSpan); i >= 0) {
    Fail(
        "tsr_event_synchronize returned before the work recorded before the event completed: "
        "byte " +
        std::to_string(i) + " reads " + Byte(got[i]) + ", expected " + Byte(want[i]));
  }
  Ok(tsr_event_synchronize(e.e), "tsr_event_synchronize of a completed event, again");
  Ok(tsr_stream_synchronize(s.s), "tsr_stream_synchronize");
}

// A stream that waits for an event runs its later work after the work before the event.
void EventWaitAcrossStreams(const Device& d) {
  StreamRef producer, consumer;
  CreateStream(d, &producer);
  CreateStream(d, &consumer);
  EventRef e;
  Ok(tsr_event_create(d.device, &e.e), "tsr_event_create");
  TensorRef t = Bytes(d, kSpan);
  const std::vector<uint8_t> want = Pattern(kSpan, 13);
  std::vector<uint8_t> got(kSpan, 0);
  SynchronizeOnExit synchronized{d.device};
  Ok(tsr_tensor_copy_from_host_async(t.t, want.data(), kSpan, producer.s),
     "queueing a copy on the producing stream");
  Ok(tsr_event_record(e.e, producer.s), "tsr_event_record");
  Ok(tsr_stream_wait_event(consumer.s, e.e), "tsr_stream_wait_event");
  Ok(tsr_tensor_copy_to_host_async(t.t, got.data(), kSpan, consumer.s),
     "queueing a copy back on the waiting stream");
  Ok(tsr_stream_synchronize(consumer.s), "tsr_stream_synchronize of the waiting stream");
  if (const int64_t i = FirstDifference(got.data(), want.data(), kSpan); i >= 0) {
    Fail(
        "a stream that waited for an event ran its copy before the work recorded before the "
        "event: byte " +
        std::to_string(i) + " reads " + Byte(got[i]) + ", expected " + Byte(want[i]));
  }
  Ok(tsr_stream_synchronize(producer.s), "tsr_stream_synchronize");
}

// Memory freed while another stream still uses it (record_stream) is not handed out again
// before that stream has passed its work.
void StreamRecordStream(const Device& d) {
  StreamRef side;
  CreateStream(d, &side);
  const std::vector<uint8_t> want = Pattern(kSpan, 14), other = Pattern(kSpan, 15);
  std::vector<uint8_t> got(kSpan, 0);
  SynchronizeOnExit synchronized{d.device};
  std::vector<TensorRef> later;
  {
    TensorRef used = Bytes(d, kSpan);
    Write(used, want, "a block");
    Ok(tsr_tensor_copy_to_host_async(used.t, got.data(), kSpan, side.s),
       "queueing a copy on a side stream");
    Ok(tsr_tensor_record_stream(used.t, side.s), "tsr_tensor_record_stream");
  }                              // freed here, its copy perhaps still queued
  for (int i = 0; i < 4; ++i) {  // same-sized blocks, written at once: a reuse would show
    later.push_back(Bytes(d, kSpan));
    Write(later.back(), other, "a block allocated after it");
  }
  Ok(tsr_stream_synchronize(side.s), "tsr_stream_synchronize of the side stream");
  if (const int64_t i = FirstDifference(got.data(), want.data(), kSpan); i >= 0) {
    Fail(
        "memory recorded for a side stream was handed out again before that stream's copy ran "
        "(record_stream ignored): byte " +
        std::to_string(i) + " reads " + Byte(got[i]) + ", expected " + Byte(want[i]));
  }
}

// ---- device indices and unloading ----------------------------------------------------------

void IndexBounds(const Device& d) {
  for (const int32_t index : {d.count, d.count + 1, -1}) {
    tsr_device bad = d.device;
    bad.index = index;
    const int64_t n = 16;
    tsr_tensor* t = nullptr;
    tsr_error* e = tsr_tensor_empty(&n, 1, TSR_DTYPE_UINT8, bad, &t);
    if (e == nullptr) {
      tsr_tensor_release(t);
      Fail("allocating on device index " + std::to_string(index) + " succeeded, but " +
           std::to_string(d.count) + " device(s) exist (expected INVALID_ARGUMENT)");
    }
    const tsr_code code = tsr_error_code(e);
    const std::string text = ErrorText(e);
    if (code != TSR_INVALID_ARGUMENT) {
      Fail("allocating on device index " + std::to_string(index) +
           ": expected INVALID_ARGUMENT, got " + text);
    }
  }
}

// The plugin providing the device type, from the load reports; empty for the CPU's own device.
std::string PluginOf(const Device& d) {
  const tsr_load_report* const* reports = nullptr;
  size_t count = 0;
  tsr_load_reports(&reports, &count);
  for (size_t i = count; i-- > 0;) {
    if (reports[i]->loaded && reports[i]->device_type == d.device.type)
      return std::string(sdk::from_c(reports[i]->plugin_name));
  }
  return "";
}

// Unloading the plugin while its memory is live: the device goes away at once, the memory
// stays readable until released (the shared object stays open for it), and releasing it frees
// it through the plugin without a crash. Last: the device is gone afterwards.
void UnloadWithLiveMemory(const Device& d) {
  if (d.device.type == TSR_DEVICE_CPU) {
    throw CheckSkipped{"the CPU device is the runtime's own: no plugin to unload"};
  }
  const std::string plugin = PluginOf(d);
  if (plugin.empty()) throw CheckSkipped{"no loaded plugin provides " + d.name};
  TensorRef live = Bytes(d, kSpan);
  const std::vector<uint8_t> want = Pattern(kSpan, 16);
  Write(live, want, "a block");
  Ok(tsr_device_synchronize(d.device), "tsr_device_synchronize");
  Ok(tsr_plugin_unload(sdk::to_c(plugin)), "tsr_plugin_unload('" + plugin + "')");
  int32_t count = -1;
  Ok(tsr_device_count(d.device.type, &count), "tsr_device_count after unloading");
  if (count != 0) {
    Fail("after unloading '" + plugin + "', tsr_device_count is " + std::to_string(count) +
         " (expected 0: its device is deregistered)");
  }
  std::vector<uint8_t> got(kSpan, 0);
  if (tsr_error* e = tsr_tensor_copy_to_host(live.t, got.data(), kSpan)) {
    const tsr_code code = tsr_error_code(e);
    const std::string text = ErrorText(e);
    if (code != TSR_FAILED_PRECONDITION) {
      Fail(
          "reading memory of an unloaded plugin's device: expected its bytes or "
          "FAILED_PRECONDITION, got " +
          text);
    }
  } else if (const int64_t i = FirstDifference(got.data(), want.data(), kSpan); i >= 0) {
    Fail("memory of an unloaded plugin's device lost its contents: byte " + std::to_string(i) +
         " reads " + Byte(got[i]) + ", expected " + Byte(want[i]));
  }
  live.reset();  // freed through the unloaded plugin's interface: must not crash
}

struct Check {
  const char* name;
  void (*run)(const Device&);
};

// The copies between host and device first: every later check reads its results through them.
constexpr Check kChecks[] = {
    {"copy.device_to_host_bounds", &CopyDeviceToHostBounds},
    {"copy.host_to_device_bounds", &CopyHostToDeviceBounds},
    {"device.index_bounds", &IndexBounds},
    {"allocate.sizes", &AllocateSizes},
    {"allocate.alignment", &AllocateAlignment},
    {"allocate.distinct_blocks", &AllocateDistinct},
    {"allocate.out_of_memory", &AllocateOutOfMemory},
    {"allocate.balance", &AllocateBalance},
    {"copy.device_to_device", &CopyDeviceToDevice},
    {"device.synchronize", &Synchronize},
    {"stream.order", &StreamOrder},
    {"stream.copy_on_its_stream", &StreamCopyOnItsStream},
    {"stream.sync_copy_after_current", &StreamSyncCopyAfterCurrent},
    {"event.synchronize", &EventSynchronize},
    {"event.wait_across_streams", &EventWaitAcrossStreams},
    {"stream.record_stream", &StreamRecordStream},
    {"unload.live_memory", &UnloadWithLiveMemory},
};

// RunOne runs a check on a thread of its own (its current streams are the defaults) and waits
// at most `deadline` seconds for it. The outcome is shared with the thread, which may outlive
// this call when the check hangs.
ContractResult RunOne(const Check& check, const Device& d, double deadline, bool* hung) {
  auto outcome = std::make_shared<std::promise<ContractResult>>();
  std::future<ContractResult> done = outcome->get_future();
  const auto start = std::chrono::steady_clock::now();
  NoteRunningCase("device contract", "*", "", "device_contract", check.name);  // a crash names it
  std::thread([check, d, outcome] {
    ContractResult r{check.name, Status::kPass, ""};
    try {
      check.run(d);
    } catch (const CheckFailed& f) {
      r.status = Status::kFail;
      r.message = f.message;
    } catch (const CheckSkipped& s) {
      r.status = Status::kSkipped;
      r.message = s.reason;
    } catch (const std::exception& e) {
      r.status = Status::kFail;
      r.message = std::string("threw: ") + e.what();
    }
    outcome->set_value(std::move(r));
  }).detach();
  ContractResult r;
  if (done.wait_for(std::chrono::duration<double>(deadline)) == std::future_status::ready) {
    r = done.get();
  } else {
    *hung = true;
    char text[160];
    std::snprintf(text, sizeof text,
                  "did not return within %g s: a call into the device never returned (an "
                  "event or stream that never completes?)",
                  deadline);
    r = ContractResult{check.name, Status::kFail, text};
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!*hung) NoteCaseDone();
  return r;
}

}  // namespace

std::vector<std::string> DeviceContractChecks() {
  std::vector<std::string> names;
  for (const Check& c : kChecks) names.push_back(c.name);
  return names;
}

ContractRun RunDeviceContract(tsr_device device, double deadline_seconds) {
  Device d;
  d.device = device;
  char name[64];
  tsr_device_format(device, name, sizeof name);
  d.name = name;
  ContractRun run;
  if (tsr_error* e = tsr_device_count(device.type, &d.count)) {
    // Without the count no check can say which indices exist: none runs.
    run.results.push_back(
        ContractResult{"device.count", Status::kFail,
                       "tsr_device_count for " + d.name + " failed: " + ErrorText(e)});
    return run;
  }
  std::string hung_check;
  std::string copy_failed;  // the first of the host copies' checks that failed
  for (const Check& check : kChecks) {
    if (run.hung) {
      run.results.push_back(
          ContractResult{check.name, Status::kSkipped,
                         "not run: " + hung_check + " hung, so the device may be wedged"});
      continue;
    }
    ContractResult r = RunOne(check, d, deadline_seconds, &run.hung);
    if (run.hung) hung_check = check.name;
    const bool host_copies =
        r.check == "copy.device_to_host_bounds" || r.check == "copy.host_to_device_bounds";
    if (ContractFailed(r) && host_copies && copy_failed.empty()) {
      copy_failed = r.check;
    } else if (ContractFailed(r) && !copy_failed.empty()) {
      // Said, not hidden: this failure may be the broken copy's, not a bug of its own.
      r.message += " [" + copy_failed +
                   " failed first; this check reads its results through "
                   "the same copies]";
    }
    run.results.push_back(std::move(r));
  }
  return run;
}

bool ContractFailed(const ContractResult& r) { return r.status == Status::kFail; }

Json DeviceContractJson(const std::vector<ContractResult>& results) {
  Json checks = Json::Array();
  for (const ContractResult& r : results) {
    Json c = Json::Object();
    c.set("check", r.check);
    c.set("status", StatusName(r.status));
    c.set("message", r.message);
    c.set("seconds", r.seconds);
    checks.push(c);
  }
  return checks;
}

std::string DeviceContractJUnitSuite(const std::string& device,
                                     const std::vector<ContractResult>& results) {
  int failures = 0, skipped = 0;
  for (const ContractResult& r : results) {
    failures += ContractFailed(r);
    skipped += r.status == Status::kSkipped;
  }
  std::ostringstream out;
  out << "  <testsuite name=\"device_contract\" tests=\"" << results.size() << "\" failures=\""
      << failures << "\" skipped=\"" << skipped << "\">\n";
  for (const ContractResult& r : results) {
    out << "    <testcase classname=\"" << XmlEscape(device + ".device_contract") << "\" name=\""
        << XmlEscape(r.check) << "\" time=\"" << r.seconds << "\">";
    if (ContractFailed(r)) out << "<failure message=\"" << XmlEscape(r.message) << "\"/>";
    if (r.status == Status::kSkipped)
      out << "<skipped message=\"" << XmlEscape(r.message) << "\"/>";
    out << "</testcase>\n";
  }
  out << "  </testsuite>\n";
  return out.str();
}

namespace {
// MarkdownCell: text a table cell can hold (a plugin's error text may have '|' or newlines).
std::string MarkdownCell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else {
      out += c == '\n' || c == '\r' ? ' ' : c;
    }
  }
  return out;
}
}  // namespace

std::string DeviceContractMarkdown(const std::vector<ContractResult>& results) {
  std::ostringstream out;
  out << "\n## Device contract\n\nThe device interface itself (allocation, copies, "
         "synchronization, streams, events, unloading), each check by name.\n\n"
      << "| check | status | message |\n|---|---|---|\n";
  for (const ContractResult& r : results) {
    out << "| " << r.check << " | " << StatusName(r.status) << " | " << MarkdownCell(r.message)
        << " |\n";
  }
  return out.str();
}

std::string DeviceContractTerminal(const std::vector<ContractResult>& results) {
  std::ostringstream out;
  int counts[3] = {};
  out << "\ndevice contract:\n";
  for (const ContractResult& r : results) {
    char line[128];
    std::snprintf(line, sizeof line, "  %-34s %-7s %6.3f s\n", r.check.c_str(),
                  StatusName(r.status), r.seconds);
    out << line;
    if (!r.message.empty()) out << "    " << r.message << "\n";
    ++counts[r.status == Status::kPass ? 0 : r.status == Status::kFail ? 1 : 2];
  }
  out << "device contract: " << counts[0] << " passed, " << counts[1] << " failed, " << counts[2]
      << " skipped\n";
  return out.str();
}

}  // namespace conformance
}  // namespace tessera
