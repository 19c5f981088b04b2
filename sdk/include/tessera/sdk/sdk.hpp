// The Tessera SDK: header-only C++17 over the stable C ABI. Plugins include plugin.hpp (and
// dispatch.hpp, loops.hpp as needed); applications include runtime.hpp.
#pragma once

#include "tessera/sdk/api.hpp"
#include "tessera/sdk/boxing.hpp"
#include "tessera/sdk/dispatch.hpp"
#include "tessera/sdk/error.hpp"
#include "tessera/sdk/loops.hpp"
#include "tessera/sdk/tensor.hpp"
