// The references' own statement of PyTorch's type promotion, by its rules: written apart from
// the promotion table that the runtime and the SDK share (tessera/sdk/dtypes.hpp), so that a
// wrong entry there shows up as a reference failure instead of being agreed with.
// conformance/tests/reference_test.cc checks it against PyTorch's own table, transcribed.
#pragma once

#include "tessera/c/common.h"

namespace tessera {
namespace conformance {

// PromoteTypes: what PyTorch's promoteTypes gives: bool gives way to anything, a floating type
// wins over an integral one, and otherwise the result is the smallest dtype that holds every
// value of both (uint8 with int8 is int16, float16 with bfloat16 is float32).
tsr_dtype PromoteTypes(tsr_dtype a, tsr_dtype b);

}  // namespace conformance
}  // namespace tessera
