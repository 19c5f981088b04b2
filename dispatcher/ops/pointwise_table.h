// The pointwise table: how a family of pointwise ops is declared once, schema by schema, and
// gets its meta function, call plan and out=/in-place forms (pointwise_meta.cc builds them).
//
// One row per op: its schema, which arguments are operands (they broadcast together and, as
// tensors or Scalars, take part in type promotion), the rule that turns the promoted type into
// the output type, and an optional check of its other arguments. The op set v1 pointwise ops
// (pointwise_meta.cc) and the activations with their backward ops (activation_ops.cc) are such
// tables.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "dispatcher/call_plan.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/unboxed_call.h"

namespace tessera {
namespace ops {

enum class Rule {
  kPromote,     // the promoted type
  kIntToFloat,  // the promoted type, integers and bool computed in the default float
  kBool,        // comparisons and predicates: bool
  kIntegral,    // bitwise ops: integral or bool only
  kNoBool,      // neg and sub: not defined for bool
  kDivMode,     // div with rounding_mode: kIntToFloat for None, kPromote for trunc/floor
  kMaskedSelf,  // masked_fill: self's dtype; mask (bool) and self broadcast together (the
                // out-of-place form expands self, as PyTorch's does); a value tensor is 0-dim
  kWhere,       // where: first operand is the bool condition; it broadcasts, not promotes
  kClamp,       // clamp: kPromote, and min and max may not both be None
  kSameDtype,   // lerp: every tensor operand has self's dtype (no promotion, as in PyTorch)
  kSecondOperandDtype,  // mish_backward: computed in the promoted dtype, returned in its
                        // second operand's (self's), as ATen's kernel allocates it
};

// ArgCheck: a check of an op's other arguments that is op semantics (alpha, gelu's
// approximate), against the dtype the op computes in: made once for every backend, as
// PyTorch's structured meta functions make it, so that no kernel repeats it.
// Each check is one template over the arguments' form (a Stack, or UnboxedArgs on the fast path:
// Note [The unboxed fast path]), instantiated for both (ARG_CHECK).
template <typename Args>
using ArgCheckOf = absl::Status (*)(const OperatorHandle& op, const Args& s, ScalarType compute);
struct ArgCheck {
  ArgCheckOf<Stack> boxed = nullptr;
  ArgCheckOf<UnboxedArgs> unboxed = nullptr;

  template <typename Args>
  ArgCheckOf<Args> For() const {
    if constexpr (std::is_same_v<Args, Stack>) {
      return boxed;
    } else {
      return unboxed;
    }
  }
};
#define ARG_CHECK(f) \
  ::tessera::ops::ArgCheck { &f<::tessera::Stack>, &f<::tessera::UnboxedArgs> }

// The operands' argument positions: leading, unless a row says otherwise (elu_backward's
// operands are its first and last arguments).
using OperandPositions = std::array<int8_t, 3>;
inline constexpr OperandPositions kLeadingOperands = {0, 1, 2};

struct PointwiseSpec {
  const char* schema;
  int operands;
  Rule rule;
  const char* out;      // the out= form's name (or whole schema), "" for none
  const char* inplace;  // the in-place form's name, "" for none (and where `out` is "")
  ArgCheck check = {};
  OperandPositions at = kLeadingOperands;
  // The dtypes the out= form may take: the computed one or any it casts to (most), or exactly
  // the computed one (signbit: PyTorch refuses a non-bool out).
  OutDtypeRule out_dtype = OutDtypeRule::kCastable;
};

// PointwiseTable: a family's rows with their plan functions. Both must outlive every registry
// the table defines ops in (the plans' contexts point at the rows): keep it in a static.
class PointwiseTable {
 public:
  explicit PointwiseTable(std::vector<PointwiseSpec> specs);
  PointwiseTable(const PointwiseTable&) = delete;
  PointwiseTable& operator=(const PointwiseTable&) = delete;

  // Define defines every row's op with its Meta kernel and plan, and its out= and in-place
  // forms.
  absl::Status Define(OpRegistry& registry) const;

 private:
  std::vector<PointwiseSpec> specs_;
  std::vector<PlanFunction> plans_;
};

// RefusedBy: OK for no reason, otherwise INVALID_ARGUMENT "<op>: <why>" (the checks of
// tessera/base/op_checks.hpp return a reason or nullptr).
absl::Status RefusedBy(const OperatorHandle& op, const char* why);

// CheckGeluApproximateAt: gelu's and gelu_backward's `approximate`, "none" or "tanh".
absl::Status CheckGeluApproximateAt(const OperatorHandle& op, const std::string& approximate);

}  // namespace ops
}  // namespace tessera
