// The plugin loader through the C ABI: a good plugin loads and its kernels run; every broken
// plugin is refused with a precise report and leaves the process unharmed; unloading waits for
// calls in flight. Each refused plugin's load report is printed, so the test log shows them.
#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/c/tessera.h"

namespace {

using ::testing::HasSubstr;

std::string PluginPath(const std::string& variant) {
  return std::string(TESSERA_TEST_PLUGIN_DIR) + "/libtsr_test_plugin_" + variant + ".so";
}

tsr_string S(const std::string& s) { return tsr_string{s.data(), s.size()}; }
std::string Str(tsr_string s) { return std::string(s.data ? s.data : "", s.size); }

// Takes ownership of an error; returns "" for success, else its message.
std::string Consume(tsr_error* error, tsr_code* code = nullptr) {
  if (code) *code = tsr_error_code(error);
  if (error == nullptr) return "";
  std::string message = Str(tsr_error_message(error));
  tsr_error_release(error);
  return message;
}

std::string Format(const tsr_load_report* report) {
  std::string text(tsr_load_report_format(report, nullptr, 0), '\0');
  tsr_load_report_format(report, text.data(), text.size() + 1);
  return text;
}

const tsr_load_report* LoadGood() {
  const tsr_load_report* report = nullptr;
  EXPECT_EQ(Consume(tsr_plugin_load(S(PluginPath("good")), &report)), "");
  return report;
}

// Calls good::twice on a float32 tensor of `values`; returns the doubled values or the error.
std::string CallTwice(const std::vector<float>& values, std::vector<float>* out) {
  const tsr_op* op = nullptr;
  if (std::string e = Consume(tsr_op_find(S("good::twice"), &op)); !e.empty()) return e;
  const int64_t size = static_cast<int64_t>(values.size());
  tsr_tensor* t = nullptr;
  Consume(tsr_tensor_empty(&size, 1, TSR_DTYPE_FLOAT32, {TSR_DEVICE_CPU, 0}, &t));
  Consume(tsr_tensor_copy_from_host(t, values.data(), values.size() * sizeof(float)));
  tsr_stack* stack = nullptr;
  Consume(tsr_stack_create(&stack));
  Consume(tsr_stack_push_tensor(stack, t));
  tsr_tensor_release(t);
  std::string error = Consume(tsr_op_call(op, stack));
  if (error.empty()) {
    tsr_tensor* result = nullptr;
    error = Consume(tsr_stack_get_tensor(stack, 0, &result));
    out->resize(values.size());
    if (error.empty()) {
      error = Consume(tsr_tensor_copy_to_host(result, out->data(), out->size() * sizeof(float)));
    }
  }
  tsr_stack_release(stack);
  return error;
}

TEST(Loader, GoodPluginLoadsAndItsKernelsRun) {
  const tsr_load_report* report = LoadGood();
  ASSERT_NE(report, nullptr);
  std::cout << Format(report);
  EXPECT_TRUE(report->loaded);
  EXPECT_EQ(report->code, TSR_OK);
  EXPECT_EQ(Str(report->plugin_name), "good");
  EXPECT_EQ(Str(report->plugin_version), "0.1-test");
  EXPECT_EQ(Str(report->device_name), "testdev");
  EXPECT_EQ(report->device_type, TSR_DEVICE_PRIVATEUSE3);
  EXPECT_EQ(report->kernels_registered, 2);
  EXPECT_EQ(report->ops_registered, 2);
  EXPECT_EQ(report->runtime_abi_major, static_cast<uint32_t>(TSR_ABI_VERSION_MAJOR));

  std::vector<float> out;
  ASSERT_EQ(CallTwice({1.5f, -2.0f, 0.0f}, &out), "");
  EXPECT_THAT(out, ::testing::ElementsAre(3.0f, -4.0f, 0.0f));

  // A kernel's error reaches the caller with its code and message.
  const tsr_op* fail = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("good::fail"), &fail)), "");
  const int64_t one = 1;
  tsr_tensor* t = nullptr;
  Consume(tsr_tensor_empty(&one, 1, TSR_DTYPE_FLOAT32, {TSR_DEVICE_CPU, 0}, &t));
  tsr_stack* stack = nullptr;
  Consume(tsr_stack_create(&stack));
  Consume(tsr_stack_push_tensor(stack, t));
  tsr_code code;
  EXPECT_EQ(Consume(tsr_op_call(fail, stack), &code), "good::fail: failed on purpose");
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION);
  tsr_stack_release(stack);
  tsr_tensor_release(t);

  // Loading the same file again is a no-op with the same report.
  const tsr_load_report* again = nullptr;
  EXPECT_EQ(Consume(tsr_plugin_load(S(PluginPath("good")), &again)), "");
  EXPECT_EQ(again, report);
}

struct Refusal {
  const char* variant;
  tsr_code code;
  const char* reason;
};

TEST(Loader, BrokenPluginsAreRefusedWithAPreciseReport) {
  LoadGood();  // for the duplicate-name and taken-device cases
  const Refusal kRefusals[] = {
      {"wrong_major", TSR_FAILED_PRECONDITION,
       "was built against ABI 2.0, but this runtime provides ABI 1.0: major versions differ"},
      {"needs_newer_minor", TSR_FAILED_PRECONDITION,
       "needs ABI >= 1.7 (built against 1.7), but this runtime provides ABI 1.0"},
      {"no_entry", TSR_INVALID_ARGUMENT, "does not export the entry symbol 'tsr_plugin_init'"},
      {"init_error", TSR_UNAVAILABLE,
       "tsr_plugin_init returned an error: UNAVAILABLE: no test device is attached"},
      {"small_desc", TSR_INVALID_ARGUMENT, "struct_size is 16 bytes, smaller than the"},
      {"large_desc", TSR_INVALID_ARGUMENT, "but an ABI 1.0 descriptor has"},
      {"register_error", TSR_RESOURCE_EXHAUSTED,
       "register_fn returned an error: RESOURCE_EXHAUSTED: out of device memory while "
       "registering"},
      {"duplicate_name", TSR_ALREADY_EXISTS, "a plugin named 'good' is already loaded"},
      {"device_taken", TSR_ALREADY_EXISTS,
       "device type testdev is already provided by plugin 'good'"},
  };
  for (const Refusal& r : kRefusals) {
    const tsr_load_report* report = nullptr;
    tsr_code code;
    const std::string error = Consume(tsr_plugin_load(S(PluginPath(r.variant)), &report), &code);
    ASSERT_NE(report, nullptr) << r.variant;
    std::cout << Format(report);
    EXPECT_EQ(code, r.code) << r.variant << ": " << error;
    EXPECT_THAT(error, HasSubstr("refused to load plugin")) << r.variant;
    EXPECT_THAT(error, HasSubstr(r.reason)) << r.variant;
    EXPECT_FALSE(report->loaded) << r.variant;
    EXPECT_EQ(report->code, r.code) << r.variant;
    EXPECT_THAT(Str(report->reason), HasSubstr(r.reason)) << r.variant;
  }
  // The failed registration was rolled back: its op and kernel are gone.
  const tsr_op* op = nullptr;
  tsr_code code;
  Consume(tsr_op_find(S("regerr::op"), &op), &code);
  EXPECT_EQ(code, TSR_NOT_FOUND);
  // The process is unharmed: the good plugin still works.
  std::vector<float> out;
  EXPECT_EQ(CallTwice({1}, &out), "");
}

TEST(Loader, NewerMinorThatNeedsNothingNewLoads) {
  const tsr_load_report* report = nullptr;
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("optional_newer_minor")), &report)), "");
  std::cout << Format(report);
  EXPECT_TRUE(report->loaded);
  EXPECT_EQ(report->plugin_abi_minor, static_cast<uint32_t>(TSR_ABI_VERSION_MINOR + 7));
  EXPECT_EQ(Str(report->device_name), "newdev");
}

// A plugin compiled against the frozen ABI 1.0 headers loads and runs in today's runtime.
TEST(Loader, PluginBuiltAgainstFrozenV1HeadersLoadsAndRuns) {
  const tsr_load_report* report = nullptr;
  ASSERT_EQ(Consume(tsr_plugin_load(S(PluginPath("frozen_v1_0")), &report)), "");
  std::cout << Format(report);
  EXPECT_EQ(report->plugin_abi_major, 1u);
  EXPECT_EQ(report->plugin_abi_minor, 0u);
  const tsr_op* op = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("frozen::twice"), &op)), "");
  const int64_t size = 2;
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(&size, 1, TSR_DTYPE_FLOAT32, {TSR_DEVICE_CPU, 0}, &t)), "");
  const float in[2] = {1.25f, -3};
  ASSERT_EQ(Consume(tsr_tensor_copy_from_host(t, in, sizeof in)), "");
  tsr_stack* stack = nullptr;
  Consume(tsr_stack_create(&stack));
  Consume(tsr_stack_push_tensor(stack, t));
  ASSERT_EQ(Consume(tsr_op_call(op, stack)), "");
  tsr_tensor* out = nullptr;
  ASSERT_EQ(Consume(tsr_stack_get_tensor(stack, 0, &out)), "");
  float result[2] = {};
  ASSERT_EQ(Consume(tsr_tensor_copy_to_host(out, result, sizeof result)), "");
  EXPECT_EQ(result[0], 2.5f);
  EXPECT_EQ(result[1], -6.0f);
  tsr_stack_release(stack);
  tsr_tensor_release(t);
}

TEST(Loader, FilesThatAreNotPluginsAreRefused) {
  const std::string garbage = ::testing::TempDir() + "/not_a_plugin.so";
  std::ofstream(garbage) << "this is not an ELF file\n";
  const tsr_load_report* report = nullptr;
  tsr_code code;
  EXPECT_THAT(Consume(tsr_plugin_load(S(garbage), &report), &code), HasSubstr("dlopen failed"));
  EXPECT_EQ(code, TSR_INVALID_ARGUMENT);
  std::cout << Format(report);
  EXPECT_THAT(Consume(tsr_plugin_load(S("/nonexistent/libnothing.so"), &report)),
              HasSubstr("dlopen failed"));
  EXPECT_THAT(Consume(tsr_plugin_load(tsr_string{nullptr, 0}, &report)),
              HasSubstr("expected a path"));
}

TEST(Loader, EveryAttemptIsInTheReports) {
  // Its own refused and accepted attempts, so that the test stands alone as well.
  tsr_error_release(tsr_plugin_load(S(PluginPath("wrong_major")), nullptr));
  LoadGood();
  const tsr_load_report* const* reports = nullptr;
  size_t count = 0;
  tsr_load_reports(&reports, &count);
  ASSERT_GT(count, 0u);
  int refused = 0, loaded = 0;
  for (size_t i = 0; i < count; ++i) {
    refused += !reports[i]->loaded;
    loaded += reports[i]->loaded;
    EXPECT_EQ(reports[i]->struct_size, sizeof(tsr_load_report));
    EXPECT_EQ(reports[i]->loaded != 0, reports[i]->code == TSR_OK) << Format(reports[i]);
  }
  EXPECT_GE(refused, 1);
  EXPECT_GE(loaded, 1);
}

// Item 11 of issue 14: the list tsr_load_reports hands out stays valid, with the same entries,
// however many load attempts follow (they used to reallocate it under the caller).
TEST(Loader, ReportListStaysValidWhenLaterAttemptsAddReports) {
  tsr_error_release(tsr_plugin_load(S(PluginPath("wrong_major")), nullptr));
  const tsr_load_report* const* reports = nullptr;
  size_t count = 0;
  tsr_load_reports(&reports, &count);
  ASSERT_GT(count, 0u);
  const std::vector<const tsr_load_report*> before(reports, reports + count);
  constexpr size_t kMore = 200;
  for (size_t i = 0; i < kMore; ++i) {
    const std::string path = "/nonexistent/libtsr_report_" + std::to_string(i) + ".so";
    tsr_error_release(tsr_plugin_load(S(path), nullptr));
  }
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(reports[i], before[i]) << "entry " << i << " of the earlier list changed";
    EXPECT_EQ(reports[i]->struct_size, sizeof(tsr_load_report));
  }
  const tsr_load_report* const* now = nullptr;
  size_t now_count = 0;
  tsr_load_reports(&now, &now_count);
  ASSERT_EQ(now_count, count + kMore);
  for (size_t i = 0; i < count; ++i) EXPECT_EQ(now[i], before[i]);
  EXPECT_EQ(Str(now[now_count - 1]->path), "/nonexistent/libtsr_report_199.so");
}

TEST(Loader, UnloadWaitsForCallsInFlightAndDeregisters) {
  LoadGood();
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, refused{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 2; ++i) {
    callers.emplace_back([&] {
      while (!stop.load()) {
        std::vector<float> out;
        if (CallTwice({1, 2, 3}, &out).empty()) {
          ++ok;
          if (out[2] != 6.0f) std::abort();  // a call that returns must be right
        } else {
          ++refused;
        }
      }
    });
  }
  while (ok.load() < 100) std::this_thread::yield();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Consume(tsr_plugin_unload(S("good"))), "");
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(log, HasSubstr("test plugin unloaded")) << "unload_fn ran, after the last call";
  const int ok_at_unload = ok.load();
  while (refused.load() < 10) std::this_thread::yield();
  stop = true;
  for (auto& t : callers) t.join();
  EXPECT_LE(ok.load() - ok_at_unload, 2) << "at most the calls already in flight completed";

  std::vector<float> out;
  EXPECT_THAT(CallTwice({1}, &out), HasSubstr("unknown op 'good::twice'"));
  tsr_code code;
  EXPECT_THAT(Consume(tsr_plugin_unload(S("good")), &code), HasSubstr("no plugin named 'good'"));
  EXPECT_EQ(code, TSR_NOT_FOUND);

  // It can be loaded again.
  const tsr_load_report* report = LoadGood();
  EXPECT_TRUE(report->loaded);
  EXPECT_EQ(CallTwice({4}, &out), "");
  EXPECT_EQ(out[0], 8.0f);
}

// Issue 14, item 19: what a load/unload cycle of a small plugin leaves behind. Its load report
// stays, by the API's promise (tsr_load_reports); its kernel records are freed once no call can
// run them (Note [Reclaiming deregistered kernels] in dispatcher/op_registry.cc). Measured as
// heap bytes in use (mallinfo2) per cycle after warm-up, and printed; docs/reliability.md
// quotes the figure. Plain builds only: sanitizers bring their own allocator.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST(Loader, LoadUnloadCyclesGrowTheHeapOnlyByTheirLoadReports) {
  std::vector<float> out;
  auto cycle = [&] {
    LoadGood();
    EXPECT_EQ(CallTwice({1}, &out), "");
    EXPECT_EQ(Consume(tsr_plugin_unload(S("good"))), "");
  };
  for (int i = 0; i < 20; ++i) cycle();  // warm-up: caches, the report list's first arrays
  constexpr int kCycles = 500;
  const size_t before = mallinfo2().uordblks;
  for (int i = 0; i < kCycles; ++i) cycle();
  const double per_cycle =
      (static_cast<double>(mallinfo2().uordblks) - static_cast<double>(before)) / kCycles;
  std::printf("load/unload of the good test plugin: %.0f heap bytes per cycle\n", per_cycle);
  // Measured 437-450 bytes (RelWithDebInfo, glibc): what stays is the load report (its strings
  // and its place in the list), which tsr_load_reports promises to keep for the process, and
  // the device record (the device registry keeps every plugin device with its gate, so that a
  // tensor of an unloaded plugin is refused, never handed to the next one). Before kernel
  // records were reclaimed a cycle left 1103 bytes (dca1832); the limit has a 1.5x margin over
  // today's figure and still fails that.
  EXPECT_LT(per_cycle, 700);
  LoadGood();  // as the tests after this one expect
}
#endif

}  // namespace
