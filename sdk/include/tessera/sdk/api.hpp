// The SDK's access to the runtime: every call goes through the tsr_runtime_api table, never
// through a linked symbol, so that plugins built on the SDK import nothing of the runtime.
// A plugin's table is set by TESSERA_PLUGIN's tsr_plugin_init; an application's by
// tessera::Runtime (runtime.hpp).
#pragma once

#include <stdexcept>
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
// NoRuntime: what a call before the table is set gets, instead of a crash (an application that
// calls an op before it made its tessera::Runtime).
[[noreturn, gnu::cold, gnu::noinline]] inline void NoRuntime() {
  throw std::logic_error(
      "tessera: no runtime API in this shared object yet: an application creates a "
      "tessera::Runtime before its first call (tessera/sdk/runtime.hpp); a plugin gets the "
      "table from TESSERA_PLUGIN's tsr_plugin_init");
}
inline const tsr_runtime_api& api() {
  const tsr_runtime_api* table = api_slot();
  if (__builtin_expect(table == nullptr, 0)) NoRuntime();
  return *table;
}

inline tsr_string to_c(std::string_view s) { return tsr_string{s.data(), s.size()}; }
inline std::string_view from_c(tsr_string s) {
  return std::string_view(s.data ? s.data : "", s.size);
}

}  // namespace sdk
}  // namespace tessera
