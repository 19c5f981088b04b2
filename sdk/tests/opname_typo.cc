// Must not compile: TESSERA_OP names an op that is not in the op set (a typo). The compiler
// gives the SDK's message for that alone, not also the signature check's (expect_compile_error.sh
// --absent), which has no schema to compare with.
#include "tessera/sdk/plugin.hpp"

namespace {
tessera::sdk::Tensor Neg(const tessera::sdk::Tensor& self) { return self; }
}  // namespace

TESSERA_PLUGIN(lib) {
  lib.describe("typo", "0.1", TSR_DEVICE_PRIVATEUSE2, "typo");
  lib.impl<&Neg>(TESSERA_OP("negg"));
}
