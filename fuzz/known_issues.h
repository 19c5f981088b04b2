// Switches for the fuzz targets' oracles and inputs that would only find known, open bugs
// (issue 14). Each is off by default, so that a run looks past those bugs, and turned on by an
// environment variable of the same name set to 1 (docs/build.md, "Fuzzing"); turn it on, and
// then remove it, when its fix lands.
#ifndef TESSERA_FUZZ_KNOWN_ISSUES_H_
#define TESSERA_FUZZ_KNOWN_ISSUES_H_

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace tessera::fuzz {

inline bool EnvFlag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::strcmp(value, "1") == 0;
}

// TESSERA_FUZZ_SCHEMA_IDENTITY: print -> parse -> print must be the identity (issue 14, C.15:
// string defaults unescaped, Device defaults bare, floats with 6 digits, ints saturated).
inline bool SchemaIdentityOn() {
  static const bool on = EnvFlag("TESSERA_FUZZ_SCHEMA_IDENTITY");
  return on;
}

// TESSERA_FUZZ_HUGE_LIST_SIZES: schemas with fixed list sizes of 6 digits or more
// (`int[300000000] x=1` builds a 2.4 GB default, `int[9223372036854775807] x=1` throws
// std::bad_array_new_length out of the parser; issue 14, C.16). Off: such text is skipped.
inline bool HugeListSizesOn() {
  static const bool on = EnvFlag("TESSERA_FUZZ_HUGE_LIST_SIZES");
  return on;
}

// HasHugeListSize: `[` followed by 6 or more digits (spaces allowed, as the parser allows).
inline bool HasHugeListSize(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '[') continue;
    size_t j = i + 1, digits = 0;
    while (j < text.size() &&
           (text[j] == ' ' || text[j] == '\t' || text[j] == '-' || text[j] == '+')) {
      ++j;
    }
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j, ++digits;
    if (digits >= 6) return true;
  }
  return false;
}

// TESSERA_FUZZ_HUGE_INTS: ints beyond int32 (INT64_MAX, 2^62, ...) in op_call, as arguments
// and as elements of int lists (sizes, strides, dims). Off: scalar ints stay within int32 and
// list elements within [-4, 64], since signed overflows in core/ stop every run within
// seconds today (issue 14, A.1/A.2 and the audit it asks for: ContiguousStrides in
// core/shape.cc through ResizeOutput of ones.out/zeros.out/full.out, Slice's step in
// core/views.cc).
inline bool HugeIntsOn() {
  static const bool on = EnvFlag("TESSERA_FUZZ_HUGE_INTS");
  return on;
}

// TESSERA_FUZZ_FLIP_0DIM: flip and its forms on a 0-dim tensor in op_call (issue 14, A.4: the
// CPU kernel writes into a size-0 vector in plugins/cpu/index.cc and segfaults). Off: skipped.
inline bool Flip0DimOn() {
  static const bool on = EnvFlag("TESSERA_FUZZ_FLIP_0DIM");
  return on;
}

// TESSERA_FUZZ_LYING_STRINGS: descriptor and table strings whose size lies visibly (NULL with a
// length, 2^40, SIZE_MAX) in plugin_desc (issue 14, C.19: bad_alloc and no load report).
inline bool LyingStringsOn() {
  static const bool on = EnvFlag("TESSERA_FUZZ_LYING_STRINGS");
  return on;
}

}  // namespace tessera::fuzz

#endif  // TESSERA_FUZZ_KNOWN_ISSUES_H_
