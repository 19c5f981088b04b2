// Must not compile: the kernel ignores add.Tensor's `alpha` (expect_compile_error.sh checks that
// the compiler refuses it with the SDK's message).
#include "tessera/sdk/plugin.hpp"

namespace {
tessera::sdk::Tensor Add(const tessera::sdk::Tensor& self, const tessera::sdk::Tensor&) {
  return self;
}
}  // namespace

TESSERA_PLUGIN(lib) {
  lib.describe("mismatch", "0.1", TSR_DEVICE_PRIVATEUSE2, "mismatch");
  lib.impl<&Add>(TESSERA_OP("add.Tensor"));
}
