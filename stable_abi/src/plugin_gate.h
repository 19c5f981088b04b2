// PluginGate: lets a plugin be unloaded while calls may still be entering its kernels.
//
// Every call into a plugin's kernel passes through the gate (Enter/Leave). Unload closes the
// gate and waits until no call is inside; a call that arrives after the close gets an error
// instead of running code of an unloaded plugin. The gate is owned by shared_ptr and outlives
// the plugin: the registry may still hold (deregistered) kernels that point to it.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

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

}  // namespace capi
}  // namespace tessera
