// The C entry points of generators (tessera/c/generator.h): a tsr_generator* is a core
// Generator* whose intrusive count is the handle's count (Note [Random numbers] in
// core/generator.h).
#include "tessera/c/generator.h"

#include "absl/strings/str_format.h"
#include "core/generator.h"
#include "dispatcher/value.h"
#include "runtime/handles.h"

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

namespace {

Generator* Unwrap(tsr_generator* g) { return reinterpret_cast<Generator*>(g); }
const Generator* Unwrap(const tsr_generator* g) { return reinterpret_cast<const Generator*>(g); }
tsr_generator* Wrap(GeneratorRef g) { return reinterpret_cast<tsr_generator*>(g.Leak()); }

tsr_error* NullArgument(const char* fn, const char* what) {
  return MakeError(absl::StatusCode::kInvalidArgument,
                   absl::StrFormat("%s: expected %s, got NULL", fn, what));
}

}  // namespace

extern "C" {

tsr_error* tsr_generator_create(uint64_t seed, tsr_generator** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out == nullptr) return NullArgument(__func__, "an output pointer");
    *out = Wrap(GeneratorRef::Make(seed));
    return nullptr;
  });
}

tsr_error* tsr_generator_default(tsr_device device, tsr_generator** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out == nullptr) return NullArgument(__func__, "an output pointer");
    absl::StatusOr<Device> d = ToDevice(device, __func__);
    if (!d.ok()) return ToError(d.status());
    *out = Wrap(DefaultGenerator(*d));
    return nullptr;
  });
}

void tsr_generator_retain(tsr_generator* generator) {
  if (generator != nullptr) Unwrap(generator)->Retain();
}

void tsr_generator_release(tsr_generator* generator) {
  if (generator != nullptr) Unwrap(generator)->Release();
}

tsr_error* tsr_generator_get_state(const tsr_generator* generator, uint64_t* seed,
                                   uint64_t* offset) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (generator == nullptr) return NullArgument(__func__, "a generator");
    if (seed == nullptr || offset == nullptr) return NullArgument(__func__, "output pointers");
    const PhiloxState state = Unwrap(generator)->state();
    *seed = state.seed;
    *offset = state.offset;
    return nullptr;
  });
}

tsr_error* tsr_generator_set_state(tsr_generator* generator, uint64_t seed, uint64_t offset) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (generator == nullptr) return NullArgument(__func__, "a generator");
    Unwrap(generator)->set_state(PhiloxState{seed, offset});
    return nullptr;
  });
}

void tsr_manual_seed(uint64_t seed) { ManualSeedAll(seed); }

tsr_error* tsr_stack_push_generator(tsr_stack* stack, tsr_generator* generator) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (stack == nullptr) return NullArgument(__func__, "a stack");
    if (generator == nullptr) {
      return NullArgument(__func__,
                          "a generator (push None with tsr_stack_push_none for the default one)");
    }
    Unwrap(stack)->push_back(Value(GeneratorRef::Share(Unwrap(generator))));
    return nullptr;
  });
}

}  // extern "C"
