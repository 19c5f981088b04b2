// Must not compile: a typed C kernel for clamp.out that takes `min` and `max` by value, where
// the schema's Scalar? calls for `const tsr_scalar*` (expect_compile_error.sh checks that the
// compiler refuses it with the SDK's message).
#include "tessera/sdk/plugin.hpp"

namespace {
tsr_error* ClampOut(void*, tsr_tensor*, tsr_scalar, tsr_scalar, tsr_tensor*, tsr_tensor**) {
  return nullptr;
}
}  // namespace

TESSERA_PLUGIN(lib) {
  lib.describe("mismatch", "0.1", TSR_DEVICE_PRIVATEUSE2, "mismatch");
  lib.impl_typed(TESSERA_OP("clamp.out"), &ClampOut);
}
