// PluginGate: lets a plugin be unloaded while calls may still be entering its code.
//
// Every call into a plugin's code passes through its gate. Closing the gate waits until no call
// is inside; a call that arrives after the close gets an error instead of running code of an
// unloaded plugin. The gate is owned by shared_ptr and outlives the plugin: the registry may
// still hold (deregistered) kernels that point to it. Two ways in (Note [Gating kernel calls]):
// kernel calls, which run inside an op call, use MayEnterCall and CloseToCalls; the rest (a
// device's functions, reachable from outside any op call) Enter/Leave and Close.
//
// Note [Gating kernel calls]
// A kernel call used to Enter and Leave the gate like any other: a sequentially consistent
// increment and decrement of a count shared by every thread calling the plugin, two locked
// instructions per call on one cache line. On a 1-element add_ they cost some 10-40 ns
// (tessera_cpu_plugin_benchmark, BM_TesseraAddInplace1, 1 thread, the fastest of 10
// repetitions in alternating runs: 171-202 ns with them, 160-162 without), and every thread
// calling the plugin wrote the same line.
// A kernel call runs inside an op call, which already announces itself to the call epochs
// (Note [Reclaiming deregistered kernels] in dispatcher/op_registry.cc), so the gate can ask
// the epochs instead of counting: MayEnterCall is one load of `closed_`, and
// CloseToCalls, after setting `closed_`, retires an epoch and waits until every call that
// entered at or before it has left. A call that entered later read the epoch after the retire,
// so after `closed_` was set, and is refused; a call that entered earlier is waited for, and
// one whose announcement the wait did not see reads `closed_` after the wait's heavy barrier
// (the reasoning of the kernel slots, with `closed_` as the slot). The price is paid at unload:
// it waits for every call in flight on any thread, not only those inside this plugin, so a
// call that blocks until the unload finishes would wait forever; an unload from inside an op
// call or a parallel task is refused for that reason (PluginLoader::Unload).
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "dispatcher/call_epoch.h"

namespace tessera {
namespace capi {

class PluginGate {
 public:
  explicit PluginGate(std::string plugin_name) : plugin_name_(std::move(plugin_name)) {}

  // Enter returns false when the gate is closed (the caller must not run the plugin's code).
  // Both sides use sequentially consistent operations: either Close sees this call in flight,
  // or this call sees the gate closed. For code reachable outside op calls (a device's
  // functions); a gate entered this way is closed with Close or CloseToCalls.
  bool Enter() {
    in_flight_.fetch_add(1, std::memory_order_seq_cst);
    if (closed_.load(std::memory_order_seq_cst)) {
      Leave();
      return false;
    }
    return true;
  }
  void Leave() { in_flight_.fetch_sub(1, std::memory_order_seq_cst); }

  // Close stops new calls and waits for those inside (through Enter) to return.
  void Close() {
    closed_.store(true, std::memory_order_seq_cst);
    while (in_flight_.load(std::memory_order_seq_cst) != 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  // CloseWithoutWaiting: no call enters any more, but calls inside may still run; the plugin's
  // code must then stay mapped for as long as they might (Note [Refused after registering] in
  // plugin_loader.cc: where the waits of Close and CloseToCalls would wait for the caller).
  void CloseWithoutWaiting() { closed_.store(true, std::memory_order_seq_cst); }

  // MayEnterCall: whether a kernel call may run the plugin's code; there is nothing to leave.
  // Only inside an op call (CallScope), as every kernel call the dispatcher makes is,
  // and only on a gate that is closed with CloseToCalls (Close alone does not wait for it).
  bool MayEnterCall() const { return !closed_.load(std::memory_order_acquire); }

  // CloseToCalls: Close, then wait for every op call that entered before the close (Note
  // [Gating kernel calls]). Not from inside an op call or a parallel task, which it would wait
  // for (PluginLoader::Unload refuses those first).
  void CloseToCalls() {
    Close();  // for Enter's callers, if any
    CallEpochs::WaitForCallsBefore(CallEpochs::Retire());
  }

  const std::string& plugin_name() const { return plugin_name_; }

 private:
  std::string plugin_name_;
  std::atomic<int64_t> in_flight_{0};
  std::atomic<bool> closed_{false};
};

// GateExit leaves a gate that was entered when it goes out of scope, on every path: a gate
// never left makes unloading its plugin wait forever (see Note [Exceptions from plugin code]).
class GateExit {
 public:
  explicit GateExit(PluginGate* gate) : gate_(gate) {}
  GateExit(const GateExit&) = delete;
  GateExit& operator=(const GateExit&) = delete;
  ~GateExit() {
    if (gate_ != nullptr) gate_->Leave();
  }

 private:
  PluginGate* gate_;
};

// PluginUnloaded is the error for a kernel call of `op` that found its plugin's gate closed.
inline absl::Status PluginUnloaded(std::string_view op, const PluginGate& gate) {
  return absl::UnavailableError(
      absl::StrFormat("%s: the kernel's plugin '%s' has been unloaded", op, gate.plugin_name()));
}

// Note [Exceptions from plugin code]
// The ABI forbids exceptions across it: plugin code returns a tsr_error*, and the SDK turns
// every exception into one. A C++ plugin that bypasses the SDK may throw anyway. Where the
// runtime calls a kernel it catches what escapes (try costs nothing while nothing throws):
// the caller gets an INTERNAL error that names the kernel and its plugin, and the op call
// unwinds to its end (a device function's gate is left by a GateExit), so that the plugin can
// still be unloaded. Unwinding through the plugin's frames is the plugin's business; if its
// code has no unwind tables, the process terminates, which no runtime can prevent.

// KernelThrew is the error for an exception that escaped kernel `kernel` of `op`; call it
// from a catch block (it rethrows the exception to read it).
inline absl::Status KernelThrew(std::string_view op, std::string_view kernel,
                                const PluginGate* gate) {
  const std::string owner =
      gate != nullptr ? absl::StrFormat("plugin '%s'", gate->plugin_name()) : "the application";
  std::string what;
  try {
    throw;
  } catch (const std::exception& e) {
    what = absl::StrFormat("an exception: %s", e.what());
  } catch (...) {
    what = "a non-standard exception";
  }
  return absl::InternalError(
      absl::StrFormat("%s: kernel '%s' of %s threw %s (a kernel must return an error, not throw)",
                      op, kernel, owner, what));
}

}  // namespace capi
}  // namespace tessera
