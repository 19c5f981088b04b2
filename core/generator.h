// Generator: the state of a counter-based random number generator (Philox-4x32-10), and the
// default generator of each device.
//
// Note [Random numbers]
// A random op's numbers are a pure function of (seed, offset, element index): Philox-4x32-10
// with the seed as its key and (element index, offset) as its counter (docs/random.md gives
// the exact mapping of each distribution). A generator holds nothing else: a seed and the next
// offset. The dispatcher reserves one offset per random kernel call from the call's generator
// (the op's `Generator? generator` argument, or the default generator of the call's device)
// and hands (seed, offset) to the kernel in the call plan, so that a kernel keeps no state and
// every backend that follows the mapping gives the same bits for the same seed: the CPU plugin,
// a vendor's plugin, and the CPU fallback that stands in for a missing kernel. PyTorch keeps a
// stateful mt19937 on the CPU and Philox on CUDA, so its two backends disagree.
#pragma once

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "core/device.h"
#include "core/ref_counted.h"

namespace tessera {

// PhiloxState: what one random kernel call draws from: Philox's key (the seed) and the high
// half of its counter (the offset; the low half is the element index).
struct PhiloxState {
  uint64_t seed = 0;
  uint64_t offset = 0;
  friend bool operator==(const PhiloxState& a, const PhiloxState& b) {
    return a.seed == b.seed && a.offset == b.offset;
  }
};

// PyTorch's default seed (c10::default_rng_seed_val), so that a fresh process starts alike.
inline constexpr uint64_t kDefaultSeed = 67280421310721ull;

// Generator is shared (an intrusive count: the C ABI's tsr_generator* is a Generator*) and
// thread-safe: concurrent calls each reserve a distinct offset.
class Generator : public RefCounted {
 public:
  explicit Generator(uint64_t seed = kDefaultSeed) : state_{seed, 0} {}

  PhiloxState state() const ABSL_LOCKS_EXCLUDED(mu_);
  void set_state(PhiloxState state) ABSL_LOCKS_EXCLUDED(mu_);
  // manual_seed: seed `seed`, offset 0 (torch.Generator.manual_seed).
  void manual_seed(uint64_t seed) { set_state(PhiloxState{seed, 0}); }
  // Reserve returns the state one random kernel call draws from and advances the offset past
  // it.
  PhiloxState Reserve() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  PhiloxState state_ ABSL_GUARDED_BY(mu_);
};

using GeneratorRef = Ref<Generator>;

// DefaultGenerator: the generator of `device` that random ops use when given none; one per
// device, created on first use, seeded with kDefaultSeed or with the last ManualSeedAll.
GeneratorRef DefaultGenerator(Device device);
// ManualSeedAll seeds every default generator, those created later included, with `seed` at
// offset 0 (torch.manual_seed).
void ManualSeedAll(uint64_t seed);

}  // namespace tessera
