// What the pointwise family's parts share (op_db_pointwise.cc, op set v1; op_db_special.cc and
// op_db_binary_math.cc, op set 1.7): the result-dtype rule, the reference functions more than one
// part uses, and the binary entries: a spec per op (its forms, a double reference, the dtype
// rule) and the samples every such op takes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {
namespace pointwise {

// What a pointwise op returns, given its operands' promoted dtype.
enum class Result {
  kSame,   // the promoted dtype
  kFloat,  // the promoted dtype; integers and bool give float32
  kBool,   // bool
};
tsr_dtype ResultOf(Result r, tsr_dtype promoted);

// References: sign (0 for NaN, as PyTorch's sign), and maximum / minimum with NaN propagating.
double Sign(double x);
double MaxNan(double a, double b);
double MinNan(double a, double b);

using F2 = std::function<double(double, double)>;

struct BinarySpec {
  std::string name;
  std::string out;
  std::string inplace;
  F2 f;  // of the operands converted to the dtype the op computes in
  Result result;
  DtypeMask dtypes;
  bool exclude_zero = false;  // divisors
  bool scalar_other = false;  // the Scalar overload
};

// BinarySamples: broadcasting pairs, 0-dim and empty operands, an int64 0-dim operand beside
// integers, the floating extremes against themselves; or, for a Scalar `other`, each unary shape
// with a Scalar of the dtype's kind.
std::vector<Sample> BinarySamples(tsr_dtype dtype, Rng& rng, bool exclude_zero, bool scalar_other);

// AddBinary: the OpInfo of a spec, with an error input for shapes that do not broadcast (none for
// the Scalar overload, whose `other` broadcasts with any self).
void AddBinary(std::vector<OpInfo>& db, const BinarySpec& b);

}  // namespace pointwise
}  // namespace conformance
}  // namespace tessera
