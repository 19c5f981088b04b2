// The float16 and bfloat16 conversions for plugins: the header-only base's
// tessera/base/float16.hpp, re-exported into tessera::sdk (sdk::float_to_half_bits,
// sdk::half_bits_to_float, the bfloat16 pair), where plugins have always found them. The base sits
// below core and the SDK alike (DESIGN.md's layers); this header adds nothing of its own.
#pragma once

#include "tessera/base/float16.hpp"

namespace tessera {
namespace sdk {
using namespace ::tessera::base;  // NOLINT(build/namespaces): a re-export, by design
}  // namespace sdk
}  // namespace tessera
