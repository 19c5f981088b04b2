// Deterministic algorithms: the process-wide switch of PyTorch's
// torch.use_deterministic_algorithms, and what it does to kernels declared nondeterministic.
//
// Note [Deterministic algorithms]
// A kernel whose two identical calls may give different bits (a GPU's atomic adds accumulate in
// scheduling order) is registered with the reason (KernelFunction::nondeterministic; the C ABI's
// tsr_kernel_desc.nondeterministic). The mode (tessera/c/determinism.h) decides what a call
// that would run such a kernel does:
//   - off (the default): the kernel runs;
//   - warn: the kernel runs, and its first run logs a warning with the reason;
//   - on: the kernel is passed over as if it were not registered, so the call takes the next
//     thing the lookup finds (a kernel derived from a sibling form, the op's composite, the
//     device type's fallback: the CPU fallback computes deterministically); where nothing is
//     left the call fails with FAILED_PRECONDITION naming the kernel, its reason and the switch
//     (OpRegistry::LookupBeyondKernel).
// The mode is read where a kernel slot is read (AllowedKernel in internal/operator_entry.h: the
// boxed lookups and the derived forms; the unboxed fast path leaves such kernels to the boxed
// path), after the kernel's own flag, so a call of a deterministic kernel pays one test of a
// field on the cache line it reads anyway. Warn mode warns where the kernel runs (LookupToRun,
// CallKernel), not where a lookup only asks. Deterministic kernels never consult the mode; a
// kernel with a deterministic path of its own reads it (tsr_deterministic_algorithms) and
// registers as deterministic.
#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "dispatcher/kernel.h"

namespace tessera {

enum class DeterministicMode : int { kOff = 0, kOn = 1, kWarn = 2 };

namespace internal {
// The mode, initialized from TESSERA_DETERMINISTIC (0, 1 or warn; anything else is off, with a
// message on stderr) before the first read.
std::atomic<int>& DeterministicModeSlot();
}  // namespace internal

inline DeterministicMode GetDeterministicMode() {
  return static_cast<DeterministicMode>(
      internal::DeterministicModeSlot().load(std::memory_order_relaxed));
}
absl::Status SetDeterministicMode(int mode);

// Where the warnings of warn mode go (the runtime's log); stderr until one is set.
using DeterminismWarningSink = void (*)(std::string_view message);
void SetDeterminismWarningSink(DeterminismWarningSink sink);

// WarnNondeterministic logs, once per op (its form that owns the kernel), that `kernel` of `op`
// runs while warn mode is on.
void WarnNondeterministic(std::atomic<bool>* warned, std::string_view op,
                          const KernelFunction& kernel);

// WarnIfNondeterministic: where a kernel is about to run (not where a lookup only asks), warn
// mode's warning, once per op, for a nondeterministic kernel; nothing for a deterministic one
// (one load of its flag).
inline void WarnIfNondeterministic(std::atomic<bool>* warned, std::string_view op,
                                   const KernelFunction& kernel) {
  if (ABSL_PREDICT_FALSE(kernel.nondeterministic) &&
      GetDeterministicMode() == DeterministicMode::kWarn) {
    WarnNondeterministic(warned, op, kernel);
  }
}

// NondeterministicRefusal: the error of a call left with nothing but a nondeterministic kernel.
absl::Status NondeterministicRefusal(std::string_view op, std::string_view device,
                                     const KernelFunction& kernel);

}  // namespace tessera
