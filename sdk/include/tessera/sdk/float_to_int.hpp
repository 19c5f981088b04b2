// The float -> int64 rule for plugins: the header-only base's tessera/base/float_to_int.hpp,
// re-exported into tessera::sdk (sdk::float_to_int64), where plugins have always
// found it. The base sits below core and the SDK alike (DESIGN.md's layers); this header
// adds nothing of its own.
#pragma once

#include "tessera/base/float_to_int.hpp"

namespace tessera {
namespace sdk {
using namespace ::tessera::base;  // NOLINT(build/namespaces): a re-export, by design
}  // namespace sdk
}  // namespace tessera
