// Op database entries for a vendor's own ops, from cases libraries (`conformance --cases`,
// tessera/conformance/cases.h): loading a library, checking what it describes, and the OpInfos
// whose samples, references and error inputs call into it.
#pragma once

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {

// CasesLibraryError: a cases library broke its interface while the suite ran it (a malformed
// sample or result, a callback's error). The message names the library, the op and what was
// expected and found; the oracles report such a case as a failure.
class CasesLibraryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// LoadCasesLibrary dlopens `path`, calls its entry point (TSR_CASES_ENTRY) and checks what it
// returns: the interface version, the struct sizes, and per op its name (an op defined now, and
// not in `taken`), its dtypes and its callbacks. On success it appends one OpInfo per op to
// `ops` and returns true; otherwise `*error` names the library, what was expected and what was
// found. The library stays loaded for the process.
bool LoadCasesLibrary(const std::string& path, const std::set<std::string>& taken,
                      std::vector<OpInfo>* ops, std::string* error);

}  // namespace conformance
}  // namespace tessera
