// CodeName: Abseil's name of a tsr_code ("INVALID_ARGUMENT"), so that a reader of a report or a
// message needs no table of numbers; "?" for a number outside the known codes.
#pragma once

#include "tessera/c/error.h"

namespace tessera {
namespace conformance {

const char* CodeName(tsr_code code);

}  // namespace conformance
}  // namespace tessera
