// ABI 1.1's asynchronous devices (tessera/c/device.h, Note [Asynchronous devices]) against a
// pretend device whose kernels and copies are queued and run only when synchronized
// (tests/plugins/async_plugin.cc): current streams, stream-ordered copies, events, errors that
// surface later, record_stream. Each test runs on both builds of that device: "adev", with every
// 1.1 slot of tsr_device_interface, and "adev10", a 1.0-sized interface, where the runtime's
// documented defaults stand in for the missing slots.
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/sdk/runtime.hpp"

namespace {

using tessera::Event;
using tessera::Stream;
using tessera::StreamGuard;
using tessera::Tensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

tessera::Runtime* g_runtime = nullptr;
const tsr_load_report* g_full_report = nullptr;
const tsr_load_report* g_v1_0_report = nullptr;

class Environment : public ::testing::Environment {
 public:
  void SetUp() override {
    g_runtime = new tessera::Runtime();  // the CPU plugin, for the fallback
    g_full_report = &g_runtime->load_plugin(TESSERA_ASYNC_FULL_PLUGIN);
    g_v1_0_report = &g_runtime->load_plugin(TESSERA_ASYNC_V1_0_PLUGIN);
    g_runtime->load_plugin(TESSERA_NPU_PLUGIN);
  }
};
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new Environment());

// ErrorOf runs f and returns the message of the sdk::Error it throws ("" when none).
std::string ErrorOf(const std::function<void()>& f, tsr_code* code = nullptr) {
  try {
    f();
  } catch (const tessera::sdk::Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "";
}

// CodeOf releases a C error and returns its code (TSR_OK for NULL), and its message.
tsr_code CodeOf(tsr_error* e, std::string* message = nullptr) {
  if (e == nullptr) return TSR_OK;
  const tsr_code code = tsr_error_code(e);
  if (message) {
    const tsr_string m = tsr_error_message(e);
    *message = std::string(m.data, m.size);
  }
  tsr_error_release(e);
  return code;
}

class AsyncDeviceTest : public ::testing::TestWithParam<const char*> {
 protected:
  bool full() const { return std::string(GetParam()) == "adev"; }
  tsr_device device(int index = 0) const {
    return tessera::parse_device(std::string(GetParam()) + ":" + std::to_string(index));
  }
  std::string name(int index = 0) const {
    return std::string(GetParam()) + ":" + std::to_string(index);
  }

  Tensor On(const std::vector<float>& values, int index = 0) const {
    return Tensor::from_host(values, {static_cast<int64_t>(values.size())}, TSR_DTYPE_FLOAT32,
                             device(index));
  }
  static void Call(const char* op, const Tensor& a) { tessera::call(tessera::find_op(op), a); }
  static void Call(const char* op, const Tensor& a, double v) {
    tessera::call(tessera::find_op(op), a, v);
  }
  static void Call(const char* op, const Tensor& a, const Tensor& b) {
    tessera::call(tessera::find_op(op), a, b);
  }
  void Fill(const Tensor& t, double v) const { Call("adev::fill_", t, v); }
  void Accumulate(const Tensor& t, const Tensor& other) const {
    Call("adev::accumulate_", t, other);
  }
  // Peek reads the pretend device's memory directly, without any ordering: it shows what has
  // run so far (the pretend device's memory is host memory; a real one's is not).
  static std::vector<float> Peek(const Tensor& t) {
    const float* p = t.data<float>();
    return std::vector<float>(p, p + t.numel());
  }
};

INSTANTIATE_TEST_SUITE_P(Devices, AsyncDeviceTest, ::testing::Values("adev", "adev10"),
                         [](const auto& info) { return std::string(info.param); });

TEST_P(AsyncDeviceTest, CurrentStreamIsTheDefaultUntilSetPerDeviceAndThread) {
  EXPECT_EQ(Stream::current(device()).native(), nullptr);
  EXPECT_EQ(Stream::default_of(device()).native(), nullptr);
  Stream side = Stream::create(device());
  ASSERT_NE(side.native(), nullptr);
  EXPECT_EQ(side.device().type, device().type);
  EXPECT_EQ(side.device().index, 0);
  {
    StreamGuard guard(side);
    EXPECT_EQ(Stream::current(device()).native(), side.native());
    EXPECT_EQ(tsr_stream_current_native(device()), side.native());
    EXPECT_EQ(tsr_stream_current_native(device(1)), nullptr);  // per device
    void* other_thread = &side;
    std::thread([&] { other_thread = tsr_stream_current_native(device()); }).join();
    EXPECT_EQ(other_thread, nullptr);  // per thread
    Stream inner = Stream::create(device());
    {
      StreamGuard nested(inner);
      EXPECT_EQ(tsr_stream_current_native(device()), inner.native());
    }
    EXPECT_EQ(tsr_stream_current_native(device()), side.native());
  }
  EXPECT_EQ(tsr_stream_current_native(device()), nullptr);
  // A thread's current stream keeps the stream alive after the application's handle is gone.
  {
    Stream held = Stream::create(device());
    void* native = held.native();
    ASSERT_EQ(tsr_stream_set_current(held.get()), nullptr);
    held = Stream::default_of(device());
    EXPECT_EQ(tsr_stream_current_native(device()), native);
    ASSERT_EQ(tsr_stream_set_current(held.get()), nullptr);  // back to the default
    EXPECT_EQ(tsr_stream_current_native(device()), nullptr);
  }
}

TEST_P(AsyncDeviceTest, KernelsQueueOnTheCurrentStreamAndRunWhenItIsSynchronized) {
  Tensor t = On({1, 2, 3});
  Stream side = Stream::create(device());
  {
    StreamGuard guard(side);
    Fill(t, 7);
  }
  EXPECT_THAT(Peek(t), ElementsAre(1, 2, 3));  // queued, not run
  Stream::default_of(device()).synchronize();
  EXPECT_THAT(Peek(t), ElementsAre(1, 2, 3));  // another stream's work
  side.synchronize();
  EXPECT_THAT(Peek(t), ElementsAre(7, 7, 7));
}

TEST_P(AsyncDeviceTest, SynchronousCopiesAndTheCpuFallbackComeAfterTheCurrentStream) {
  Tensor t = On({1, 2, 3});
  Stream side = Stream::create(device());
  StreamGuard guard(side);
  Fill(t, 5);
  EXPECT_THAT(t.to_vector<float>(), ElementsAre(5, 5, 5));
  Fill(t, -2);
  // neg has no kernel on this device: the CPU fallback copies t to the host, after `side`.
  EXPECT_THAT(tessera::neg(t).to_vector<float>(), ElementsAre(2, 2, 2));
}

TEST_P(AsyncDeviceTest, AsynchronousCopiesQueueOnTheirStream) {
  Tensor t = On({1, 2, 3});
  Stream side = Stream::create(device());
  {
    StreamGuard guard(side);
    Fill(t, 4);
  }
  std::vector<float> host(3, 0.0f);
  ASSERT_EQ(tsr_tensor_copy_to_host_async(t.get(), host.data(), 12, side.get()), nullptr);
  if (full()) {
    EXPECT_THAT(host, ElementsAre(0, 0, 0));  // queued behind the fill
    side.synchronize();
  }  // else: no asynchronous slot, so the copy ran after synchronizing the stream
  EXPECT_THAT(host, ElementsAre(4, 4, 4));

  const std::vector<float> source = {8, 9, 10};
  {
    StreamGuard guard(side);
    ASSERT_EQ(tsr_tensor_copy_from_host_async(t.get(), source.data(), 12, nullptr), nullptr);
  }
  if (full()) {
    EXPECT_THAT(Peek(t), ElementsAre(4, 4, 4));
  }
  side.synchronize();
  EXPECT_THAT(Peek(t), ElementsAre(8, 9, 10));

  // A strided view is copied synchronously, after the stream.
  Tensor wide = On({0, 0, 0, 0});
  {
    StreamGuard guard(side);
    Fill(wide, 6);
  }
  const tsr_op* slice = tessera::find_op("slice.Tensor");
  Tensor every_other = tessera::call1(slice, wide, int64_t{0}, int64_t{0}, int64_t{4}, int64_t{2});
  ASSERT_FALSE(every_other.is_contiguous());
  std::vector<float> two(2, 0.0f);
  ASSERT_EQ(tsr_tensor_copy_to_host_async(every_other.get(), two.data(), 8, side.get()), nullptr);
  EXPECT_THAT(two, ElementsAre(6, 6));
}

TEST_P(AsyncDeviceTest, EventsOrderOneStreamAfterAnother) {
  Stream producer = Stream::create(device());
  Stream consumer = Stream::create(device());
  auto run = [&](bool wait) {
    Tensor t = On({0, 0, 0});
    Tensor u = On({1, 1, 1});
    Event ready = Event::create(device());
    {
      StreamGuard guard(producer);
      Fill(t, 3);
      ready.record();  // the current stream: producer
    }
    if (wait) consumer.wait(ready);
    {
      StreamGuard guard(consumer);
      Accumulate(u, t);
    }
    consumer.synchronize();
    std::vector<float> result = Peek(u);
    producer.synchronize();
    return result;
  };
  EXPECT_THAT(run(/*wait=*/true), ElementsAre(4, 4, 4));
  // Without the wait the consumer reads t before the producer filled it: the test can tell.
  EXPECT_THAT(run(/*wait=*/false), ElementsAre(1, 1, 1));

  // The host waits for an event, and an event never recorded is complete.
  Tensor t = On({0, 0});
  Event done = Event::create(device());
  done.synchronize();
  consumer.wait(done);
  {
    StreamGuard guard(producer);
    Fill(t, 9);
  }
  done.record(producer);
  EXPECT_THAT(Peek(t), ElementsAre(0, 0));
  done.synchronize();
  EXPECT_THAT(Peek(t), ElementsAre(9, 9));
}

TEST_P(AsyncDeviceTest, AsynchronousErrorsSurfaceAtTheNextSynchronizingCall) {
  Tensor t = On({1});
  Stream side = Stream::create(device());
  {
    StreamGuard guard(side);
    Call("adev::fault_", t);  // queued: nothing went wrong yet
  }
  tsr_code code = TSR_OK;
  std::string error = ErrorOf([&] { side.synchronize(); }, &code);
  EXPECT_EQ(code, TSR_INTERNAL);
  EXPECT_THAT(error, HasSubstr("tsr_stream_synchronize: " + name() + ": "));
  EXPECT_THAT(error, HasSubstr("illegal memory access at"));  // the device's own text
  EXPECT_THAT(error, HasSubstr("adev::fault_"));
  EXPECT_EQ(ErrorOf([&] { side.synchronize(); }), "");  // reported once

  Call("adev::fault_", t);  // on the default stream
  EXPECT_THAT(
      ErrorOf([&] { tessera::synchronize(device()); }),
      HasSubstr("tsr_device_synchronize: " + name() + ": " + name() + ": illegal memory access"));
  Call("adev::fault_", t);
  EXPECT_THAT(ErrorOf([&] { t.to_vector<float>(); }),
              HasSubstr("copying to the host float32[1] on " + name()));
  Event event = Event::create(device());
  Call("adev::fault_", t);
  event.record();
  EXPECT_THAT(ErrorOf([&] { event.synchronize(); }), HasSubstr("tsr_event_synchronize: " + name()));
  EXPECT_EQ(ErrorOf([&] { tessera::synchronize(device()); }), "");
}

TEST_P(AsyncDeviceTest, RecordStreamKeepsMemoryFromReuseUntilTheStreamPassesIt) {
  Stream side = Stream::create(device());
  Stream main_stream = Stream::default_of(device());
  // `a` is read on `side` and then freed; its memory (the default stream's pool) goes straight
  // to `b`, which the default stream overwrites before `side` ran, unless `a` was recorded.
  auto run = [&](bool record) {
    Tensor out = On({0, 0, 0, 0, 0});
    Tensor a = On({1, 1, 1, 1, 1});
    const void* a_memory = a.data_ptr();
    {
      StreamGuard guard(side);
      Accumulate(out, a);
    }
    if (record) tessera::record_stream(a, side);
    a = Tensor();
    Tensor b = Tensor::empty({5}, TSR_DTYPE_FLOAT32, device());
    const bool reused = b.data_ptr() == a_memory;
    Fill(b, 100);
    main_stream.synchronize();
    side.synchronize();
    return std::make_pair(reused, Peek(out));
  };
  auto [reused_without, without] = run(/*record=*/false);
  EXPECT_TRUE(reused_without);
  EXPECT_THAT(without, ElementsAre(100, 100, 100, 100, 100));  // the hazard is real here
  auto [reused_with, with] = run(/*record=*/true);
  EXPECT_THAT(with, ElementsAre(1, 1, 1, 1, 1));
  // The plugin's record_stream kept the block out of its pool; without one, the runtime
  // synchronized `side` before freeing it, and then it may be reused safely.
  if (full()) {
    EXPECT_FALSE(reused_with);
  }

  // CPU tensors have nothing to record; a stream of another device is an error.
  Tensor cpu = Tensor::from_host<float>({1}, {1}, TSR_DTYPE_FLOAT32);
  tessera::record_stream(cpu, Stream::default_of(tessera::parse_device("cpu")));
  Tensor t = On({1});
  tsr_code code = TSR_OK;
  const std::string error =
      ErrorOf([&] { tessera::record_stream(t, Stream::create(device(1))); }, &code);
  EXPECT_EQ(code, TSR_INVALID_ARGUMENT);
  EXPECT_THAT(error, HasSubstr("tsr_tensor_record_stream: the tensor is of " + name(0) +
                               " but the stream is of " + name(1)));
}

TEST_P(AsyncDeviceTest, CopiesBetweenItsDevicesGoDeviceToDeviceInStreamOrder) {
  static const tsr_op* copy = tessera::find_op("copy_");
  Stream side0 = Stream::create(device(0));
  Stream side1 = Stream::create(device(1));
  Tensor from = On({1, 2, 3}, 0);
  Tensor to = On({0, 0, 0}, 1);
  {
    StreamGuard guard(side0);
    Fill(from, 5);  // queued on adev:0's current stream
  }
  {
    StreamGuard guard0(side0);
    StreamGuard guard1(side1);
    tessera::call(copy, to, from, true);  // non_blocking
  }
  if (full()) {
    EXPECT_THAT(Peek(to), ElementsAre(0, 0, 0));  // queued on adev:1's current stream
    EXPECT_THAT(Peek(from), ElementsAre(1, 2, 3));
    side1.synchronize();  // waits for side0's fill first (an event), then copies
  }  // else: no asynchronous slots: copy_device_to_device, after both current streams
  EXPECT_THAT(Peek(to), ElementsAre(5, 5, 5));
  // Blocking, from the default streams: done when copy_ returns.
  Tensor back = On({0, 0, 0}, 0);
  tessera::call(copy, back, to, false);
  EXPECT_THAT(Peek(back), ElementsAre(5, 5, 5));
}

TEST_P(AsyncDeviceTest, PropertiesAndAllocatorStatistics) {
  tsr_device_properties props{};
  props.struct_size = sizeof props;
  ASSERT_EQ(tsr_device_get_properties(device(), &props), nullptr);
  EXPECT_EQ(props.struct_size, sizeof props);
  const std::string props_name(props.name.data, props.name.size);
  const std::string arch(props.arch.data, props.arch.size);
  tsr_memory_stats stats{};
  stats.struct_size = sizeof stats;
  if (full()) {
    EXPECT_EQ(props_name, "pretend async device 0");
    EXPECT_EQ(arch, "adev-1");
    EXPECT_EQ(props.total_memory, uint64_t{256} << 20);
    EXPECT_EQ(props.multiprocessor_count, 4);
    EXPECT_EQ(props.flags, TSR_DEVICE_PROPERTY_ASYNC);
    {
      Tensor t = On({1, 2, 3});
      ASSERT_EQ(tsr_device_memory_stats(device(), &stats), nullptr);
      EXPECT_GE(stats.allocated_bytes, 12u);
      EXPECT_GE(stats.reserved_bytes, stats.allocated_bytes);
      EXPECT_GE(stats.peak_allocated_bytes, stats.allocated_bytes);
      EXPECT_GT(stats.allocations, 0u);
      EXPECT_LE(stats.cache_hits + stats.device_allocations, stats.allocations);
    }
    Stream::default_of(device()).synchronize();
    ASSERT_EQ(tsr_device_empty_cache(device()), nullptr);
    ASSERT_EQ(tsr_device_memory_stats(device(), &stats), nullptr);
    EXPECT_EQ(stats.reserved_bytes, stats.allocated_bytes);  // the cache is empty
    EXPECT_GT(stats.device_frees, 0u);
    // A caller built against an older, smaller struct gets only what fits.
    tsr_memory_stats old{};
    old.struct_size = offsetof(tsr_memory_stats, allocations);
    old.allocations = 12345;
    ASSERT_EQ(tsr_device_memory_stats(device(), &old), nullptr);
    EXPECT_EQ(old.struct_size, offsetof(tsr_memory_stats, allocations));
    EXPECT_EQ(old.allocations, 12345u);
  } else {
    EXPECT_EQ(props_name, "adev10");  // the defaults: the device type's name, nothing else
    EXPECT_EQ(arch, "");
    EXPECT_EQ(props.total_memory, 0u);
    EXPECT_EQ(props.flags, 0u);
    std::string message;
    EXPECT_EQ(CodeOf(tsr_device_memory_stats(device(), &stats), &message), TSR_UNIMPLEMENTED);
    EXPECT_THAT(message, HasSubstr(name() + " keeps no allocator statistics"));
    EXPECT_EQ(tsr_device_empty_cache(device()), nullptr);  // nothing cached: nothing to do
  }
  tsr_device_properties none{};
  std::string message;
  EXPECT_EQ(CodeOf(tsr_device_get_properties(device(), &none), &message), TSR_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("out->struct_size is 0"));
  props.struct_size = sizeof props;
  EXPECT_EQ(CodeOf(tsr_device_get_properties(device(7), &props), &message), TSR_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("device " + name(7) + " does not exist"));
}

TEST_P(AsyncDeviceTest, StreamAndEventErrorsNameTheirArguments) {
  std::string message;
  EXPECT_EQ(CodeOf(tsr_stream_synchronize(nullptr), &message), TSR_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("tsr_stream_synchronize: expected a stream, got NULL"));
  EXPECT_EQ(CodeOf(tsr_stream_set_current(nullptr)), TSR_INVALID_ARGUMENT);
  EXPECT_EQ(CodeOf(tsr_stream_create(device(), nullptr)), TSR_INVALID_ARGUMENT);
  tsr_stream* s = nullptr;
  EXPECT_EQ(CodeOf(tsr_stream_create(device(2), &s), &message), TSR_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("tsr_stream_create: device " + name(2) + " does not exist"));
  EXPECT_EQ(s, nullptr);
  Stream zero = Stream::create(device(0));
  Event one = Event::create(device(1));
  EXPECT_EQ(CodeOf(tsr_stream_wait_event(zero.get(), one.get()), &message), TSR_INVALID_ARGUMENT);
  EXPECT_THAT(message,
              HasSubstr("the stream is of " + name(0) + " but the event is of " + name(1)));
  EXPECT_EQ(CodeOf(tsr_event_record(one.get(), zero.get()), &message), TSR_INVALID_ARGUMENT);
  Tensor t = On({1, 2});
  float host[2];
  EXPECT_EQ(CodeOf(tsr_tensor_copy_to_host_async(t.get(), host, 8, Stream::create(device(1)).get()),
                   &message),
            TSR_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("expected a stream of the tensor's device"));
  EXPECT_EQ(CodeOf(tsr_tensor_copy_to_host_async(t.get(), host, 4, nullptr), &message),
            TSR_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("expected a buffer of 8 bytes"));
  tsr_stream_release(nullptr);
  tsr_event_release(nullptr);
  EXPECT_EQ(tsr_stream_native(nullptr), nullptr);
}

TEST_P(AsyncDeviceTest, TheLoadReportCountsTheDevices) {
  const tsr_load_report* report = full() ? g_full_report : g_v1_0_report;
  ASSERT_TRUE(report->loaded);
  EXPECT_EQ(report->device_count, 2);
  char text[2048];
  tsr_load_report_format(report, text, sizeof text);
  EXPECT_THAT(std::string(text), HasSubstr("  devices: 2\n"));
}

TEST_P(AsyncDeviceTest, StreamsOfAnUnloadedPluginAreRefusedButStillReleased) {
  // In a child process: unloading the plugin would take it from the other tests.
  EXPECT_EXIT(
      {
        Stream side = Stream::create(device());
        Event event = Event::create(device());
        if (tsr_stream_set_current(side.get()) != nullptr) std::exit(1);
        const std::string plugin = GetParam();
        if (tsr_plugin_unload(tsr_string{plugin.data(), plugin.size()}) != nullptr) std::exit(2);
        std::string message;
        if (CodeOf(tsr_stream_synchronize(side.get()), &message) != TSR_FAILED_PRECONDITION) {
          std::exit(3);
        }
        if (message.find("which was unloaded") == std::string::npos) std::exit(4);
        if (CodeOf(tsr_event_record(event.get(), nullptr)) != TSR_FAILED_PRECONDITION) std::exit(5);
        if (tsr_stream_current_native(device()) != nullptr) std::exit(6);  // never the old handle
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// Devices without streams: the CPU and a 1.0-style synchronous plugin (the sample NPU).
TEST(SynchronousDevices, HaveOnlyADefaultStreamAndNoEvents) {
  for (const char* text : {"cpu", "npu:0"}) {
    SCOPED_TRACE(text);
    const tsr_device d = tessera::parse_device(text);
    Stream current = Stream::current(d);
    EXPECT_EQ(current.native(), nullptr);
    current.synchronize();
    tsr_code code = TSR_OK;
    EXPECT_THAT(ErrorOf([&] { Stream::create(d); }, &code), HasSubstr("has no streams"));
    EXPECT_EQ(code, TSR_UNIMPLEMENTED);
    EXPECT_THAT(ErrorOf([&] { Event::create(d); }, &code), HasSubstr("has no events"));
    EXPECT_EQ(code, TSR_UNIMPLEMENTED);
    ASSERT_EQ(tsr_stream_set_current(current.get()), nullptr);
    tsr_device_properties props{};
    props.struct_size = sizeof props;
    ASSERT_EQ(tsr_device_get_properties(d, &props), nullptr);
    EXPECT_EQ(std::string(props.name.data, props.name.size), std::string(text).substr(0, 3));
    EXPECT_EQ(props.flags, 0u);
    EXPECT_EQ(tsr_device_empty_cache(d), nullptr);
  }
  // Asynchronous copies of a synchronous device's tensors are done when the call returns.
  Tensor t = Tensor::from_host<float>({1, 2}, {2}, TSR_DTYPE_FLOAT32, tessera::parse_device("npu"));
  float host[2] = {0, 0};
  ASSERT_EQ(tsr_tensor_copy_to_host_async(t.get(), host, sizeof host, nullptr), nullptr);
  EXPECT_EQ(host[1], 2.0f);
  tessera::record_stream(t, Stream::current(tessera::parse_device("npu")));
}

}  // namespace
