// Reading a case's arguments back from JSON, as the case files write them (tessera_dump_cases'
// lines, docs/conformance.md "Side by side with PyTorch") and as recordings do
// (TESSERA_RECORD, "Cases from recordings"): one object per argument with its `kind`.
#pragma once

#include <stdexcept>
#include <string>

#include "conformance/json.h"
#include "conformance/op_db.h"

namespace tessera {
namespace conformance {

// CaseJsonError: a malformed argument; the message says what was expected and found.
struct CaseJsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// CaseNotReplayable: a well-formed argument no case can be made of (a tensor larger than
// kMaxReplayElements, a value the recording could not carry).
struct CaseNotReplayable : CaseJsonError {
  using CaseJsonError::CaseJsonError;
};
inline constexpr int64_t kMaxReplayElements = int64_t{1} << 28;

// IntegerFrom: an integer of a case file: a number within int64, or a string of its digits (a
// recording writes integers beyond 2^53 so, where a double would round them).
int64_t IntegerFrom(const Json& v, const char* what);

// A number of a case file: a JSON number, a bool, or "nan", "inf", "-inf".
double NumberFrom(const Json& v);
tsr_dtype DtypeFrom(const Json& v);

// TensorFrom reads {"dtype", "shape", "values"}. A recorded tensor may also give its "strides"
// and "storage_offset" (the layout it had, kept in `strides` and `storage_offset`), and may
// lack "values" (a recording keeps only small tensors'): with `draw`, such values are drawn
// (floating in [-1, 1], integers and bool as MakeTensor draws them), consistent with the
// strides where elements share memory; without, a tensor without values is an error.
HostTensor TensorFrom(const Json& j, Rng* draw = nullptr, std::vector<int64_t>* strides = nullptr,
                      int64_t* storage_offset = nullptr);

// ArgFrom reads one argument (`kind`: tensor, tensor_list, scalar, int, bool, double, int_list,
// bool_list, string, none, dtype, device, generator). Throws CaseJsonError.
Arg ArgFrom(const Json& j, Rng* draw = nullptr);

}  // namespace conformance
}  // namespace tessera
