// PluginGate: lets a plugin be unloaded while calls may still be entering its kernels.
//
// Every call into a plugin's kernel passes through the gate (Enter/Leave). Unload closes the
// gate and waits until no call is inside; a call that arrives after the close gets an error
// instead of running code of an unloaded plugin. The gate is owned by shared_ptr and outlives
// the plugin: the registry may still hold (deregistered) kernels that point to it.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace tessera {
namespace capi {

class PluginGate {
 public:
  explicit PluginGate(std::string plugin_name) : plugin_name_(std::move(plugin_name)) {}

  // Enter returns false when the gate is closed (the caller must not run the kernel). Both
  // sides use sequentially consistent operations: either Close sees this call in flight, or
  // this call sees the gate closed.
  bool Enter() {
    in_flight_.fetch_add(1, std::memory_order_seq_cst);
    if (closed_.load(std::memory_order_seq_cst)) {
      Leave();
      return false;
    }
    return true;
  }
  void Leave() { in_flight_.fetch_sub(1, std::memory_order_seq_cst); }

  // Close stops new calls and waits for running ones to return.
  void Close() {
    closed_.store(true, std::memory_order_seq_cst);
    while (in_flight_.load(std::memory_order_seq_cst) != 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
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

// Note [Exceptions from plugin code]
// The ABI forbids exceptions across it: plugin code returns a tsr_error*, and the SDK turns
// every exception into one. A C++ plugin that bypasses the SDK may throw anyway. Where the
// runtime calls a kernel it catches what escapes (try costs nothing while nothing throws):
// the caller gets an INTERNAL error that names the kernel and its plugin, and the gate is left
// by a GateExit, so that the plugin can still be unloaded. Unwinding through the plugin's
// frames is the plugin's business; if its code has no unwind tables, the process terminates,
// which no runtime can prevent.

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
