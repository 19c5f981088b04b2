// type_name<T>(): a C++ type's name as the compiler spells it ("int", "long long",
// "tessera::sdk::Tensor"), for error messages that name what was found: a kernel parameter of
// a type without a schema mapping, host elements of the wrong type. Read from the compiler's
// own signature of a function template (GCC and Clang write "... [with T = int]" and
// "... [T = int]"); elsewhere "a C++ type".
#pragma once

#include <string_view>

namespace tessera {
namespace sdk {

template <typename T>
constexpr std::string_view type_name() {
#if defined(__GNUC__) || defined(__clang__)
  constexpr std::string_view signature = __PRETTY_FUNCTION__;
  constexpr std::string_view key = "T = ";
  constexpr size_t start = signature.find(key);
  if constexpr (start == std::string_view::npos) {
    return "a C++ type";
  } else {
    constexpr std::string_view rest = signature.substr(start + key.size());
    // GCC ends the list with ';' (more parameters, "; std::string_view = ...") or ']'.
    constexpr size_t end = rest.find_first_of(";]");
    return rest.substr(0, end);
  }
#else
  return "a C++ type";
#endif
}

}  // namespace sdk
}  // namespace tessera
