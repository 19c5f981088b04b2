// A plugin whose kernel takes an int where its op's schema has a float: the SDK refuses it at
// registration (signature_test.cc).
#include "tessera/sdk/plugin.hpp"

namespace {
tessera::sdk::Tensor Scale(const tessera::sdk::Tensor& self, int64_t /*factor*/) { return self; }
}  // namespace

TESSERA_PLUGIN(lib) {
  lib.describe("badsig", "0.1", TSR_DEVICE_PRIVATEUSE2, "badsig");
  lib.define("badsig::scale(Tensor self, float factor) -> Tensor");
  lib.impl<&Scale>("badsig::scale");
}
