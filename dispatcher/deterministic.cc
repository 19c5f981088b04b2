#include "dispatcher/deterministic.h"

#include <cstdlib>
#include <iostream>

#include "absl/strings/str_format.h"

namespace tessera {
namespace {

int ModeFromEnvironment() {
  const char* env = std::getenv("TESSERA_DETERMINISTIC");
  if (env == nullptr || std::string_view(env).empty() || std::string_view(env) == "0") return 0;
  if (std::string_view(env) == "1") return static_cast<int>(DeterministicMode::kOn);
  if (std::string_view(env) == "warn") return static_cast<int>(DeterministicMode::kWarn);
  std::cerr << "tessera: TESSERA_DETERMINISTIC is '" << env
            << "', expected 0, 1 or warn: deterministic algorithms stay off" << std::endl;
  return 0;
}

std::atomic<DeterminismWarningSink>& Sink() {
  static std::atomic<DeterminismWarningSink> sink{nullptr};
  return sink;
}

}  // namespace

namespace internal {
std::atomic<int>& DeterministicModeSlot() {
  static std::atomic<int> mode{ModeFromEnvironment()};
  return mode;
}
}  // namespace internal

absl::Status SetDeterministicMode(int mode) {
  if (mode != static_cast<int>(DeterministicMode::kOff) &&
      mode != static_cast<int>(DeterministicMode::kOn) &&
      mode != static_cast<int>(DeterministicMode::kWarn)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "deterministic algorithms: mode %d is not one of 0 (off), 1 (on) and 2 (warn)", mode));
  }
  internal::DeterministicModeSlot().store(mode, std::memory_order_relaxed);
  return absl::OkStatus();
}

void SetDeterminismWarningSink(DeterminismWarningSink sink) {
  Sink().store(sink, std::memory_order_release);
}

void WarnNondeterministic(std::atomic<bool>* warned, std::string_view op,
                          const KernelFunction& kernel) {
  if (warned->exchange(true, std::memory_order_relaxed)) return;
  const std::string message = absl::StrFormat(
      "%s ran kernel '%s', which is nondeterministic (%s): two identical calls may give "
      "different bits (deterministic algorithms: warn; with 1 the kernel would not run: the op's "
      "composite or the device's fallback would, or the call would be refused)",
      op, kernel.name, kernel.nondeterministic_reason);
  if (DeterminismWarningSink sink = Sink().load(std::memory_order_acquire)) {
    sink(message);
  } else {
    std::cerr << "tessera: " << message << std::endl;
  }
}

absl::Status NondeterministicRefusal(std::string_view op, std::string_view device,
                                     const KernelFunction& kernel) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s on %s has no deterministic implementation: its kernel '%s' is nondeterministic (%s), "
      "and no composite or fallback can run it instead, while deterministic algorithms are on "
      "(TESSERA_DETERMINISTIC=1 or tsr_set_deterministic_algorithms; 0 allows the kernel, warn "
      "allows it with a warning)",
      op, device, kernel.name, kernel.nondeterministic_reason));
}

}  // namespace tessera
