// Fuzz target: the schema parser (dispatcher/schema_parser.cc) on arbitrary text.
//
// Checked: any text parses or fails with an error, without a crash or a sanitizer report
// (fixed list sizes of any length included: `int[9223372036854775807] x=1` is refused), what
// parses prints, and the canonical form parses back to itself (print -> parse -> print is the
// identity: Note [Faithful schema text]).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "dispatcher/schema.h"

namespace {

[[noreturn]] void Fail(std::string_view what, std::string_view input, std::string_view printed,
                       std::string_view detail) {
  std::fprintf(stderr, "schema identity broken: %.*s\n  input:   %.*s\n  printed: %.*s\n  %.*s\n",
               static_cast<int>(what.size()), what.data(), static_cast<int>(input.size()),
               input.data(), static_cast<int>(printed.size()), printed.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Schemas are one line of a few hundred characters; longer inputs cost time, not coverage.
  if (size > 4096) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tessera::FunctionSchema> first = tessera::ParseSchema(text);
  if (!first.ok()) return 0;
  const std::string printed = first->ToString();
  (void)first->FullName();
  (void)first->HasWrittenArgument();
  absl::StatusOr<tessera::FunctionSchema> again = tessera::ParseSchema(printed);
  if (!again.ok()) {
    Fail("the canonical form does not parse", text, printed, again.status().ToString());
  }
  const std::string reprinted = again->ToString();
  if (reprinted != printed) Fail("print(parse(print(s))) != print(s)", text, printed, reprinted);
  return 0;
}
