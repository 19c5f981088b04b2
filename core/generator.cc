#include "core/generator.h"

#include <map>
#include <utility>

namespace tessera {

PhiloxState Generator::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

void Generator::set_state(PhiloxState state) {
  absl::MutexLock lock(&mu_);
  state_ = state;
}

PhiloxState Generator::Reserve() {
  absl::MutexLock lock(&mu_);
  const PhiloxState drawn = state_;
  ++state_.offset;  // wraps after 2^64 calls, as Philox's counter does
  return drawn;
}

namespace {

struct DefaultGenerators {
  absl::Mutex mu;
  uint64_t seed ABSL_GUARDED_BY(mu) = kDefaultSeed;
  std::map<std::pair<int, int>, GeneratorRef> by_device ABSL_GUARDED_BY(mu);
};

DefaultGenerators& Defaults() {
  static auto* defaults = new DefaultGenerators();  // never destroyed: used until exit
  return *defaults;
}

}  // namespace

GeneratorRef DefaultGenerator(Device device) {
  DefaultGenerators& d = Defaults();
  absl::MutexLock lock(&d.mu);
  GeneratorRef& slot = d.by_device[{static_cast<int>(device.type), device.index}];
  if (slot.get() == nullptr) slot = GeneratorRef::Make(d.seed);
  return slot;
}

void ManualSeedAll(uint64_t seed) {
  DefaultGenerators& d = Defaults();
  absl::MutexLock lock(&d.mu);
  d.seed = seed;
  for (auto& [device, generator] : d.by_device) generator->manual_seed(seed);
}

}  // namespace tessera
