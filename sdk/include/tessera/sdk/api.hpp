// The SDK's access to the runtime: every call goes through the tsr_runtime_api table, never
// through a linked symbol, so that plugins built on the SDK import nothing of the runtime.
// A plugin's table is set by TESSERA_PLUGIN's tsr_plugin_init; an application's by
// tessera::Runtime (runtime.hpp).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "tessera/c/plugin.h"

namespace tessera {
namespace sdk {

// The table for this shared object (one per plugin: the SDK is header-only and plugins are
// built with hidden visibility).
inline const tsr_runtime_api*& api_slot() {
  static const tsr_runtime_api* api = nullptr;
  return api;
}
inline const tsr_runtime_api& api() { return *api_slot(); }

inline tsr_string to_c(std::string_view s) { return tsr_string{s.data(), s.size()}; }
inline std::string_view from_c(tsr_string s) {
  return std::string_view(s.data ? s.data : "", s.size);
}

}  // namespace sdk
}  // namespace tessera
