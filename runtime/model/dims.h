// Dynamic dims: one model file serving several sizes of a dim (a batch, a sequence length).
//
// Note [Dynamic dims]
// A file of format version 2 may declare named dims (`"dims": [{"name": "batch", "min": 1,
// "max": 64}]`) and write any integer of an input's sizes or of an `int`/`ints` argument as a
// polynomial in them (a SizeExpr: `{"expr": [[12, "t", "t"], [3]]}` is 12·t² + 3). The exporter
// finds those polynomials by tracing the program at several sizes (docs/model_format.md,
// "Dynamic dims"); the runtime only evaluates them:
//  - the reader requires each dim to be, exactly, the size of some input axis (its source: the
//    first such axis), so a run can read the dims off its inputs without solving anything;
//  - a run binds every dim from its source axis, refuses a value outside [min, max] (the range
//    the exporter checked), evaluates every other dynamic axis of the inputs and refuses an
//    input that disagrees, naming the dims and where they came from;
//  - each node's dynamic arguments are evaluated into that run's argument block (a few
//    multiply-adds per argument, so no per-shape cache is kept: nothing can go stale), with
//    int64 overflow an error naming the node.
// A dim's value never changes the graph: the exporter refused a program whose graph does.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace tessera {
namespace model {

struct GraphDim {
  std::string name;
  int64_t min = 0;
  int64_t max = std::numeric_limits<int64_t>::max();
  // The input axis the dim is read from at a run (Note [Dynamic dims]).
  int32_t input = -1;
  int32_t axis = -1;
};

// The bounds the reader holds an expression to: a model file is untrusted input.
inline constexpr size_t kMaxDims = 8;
inline constexpr size_t kMaxTerms = 64;         // 3^3 monomials of three dims, with room
inline constexpr size_t kMaxFactorsPerTerm = 8;  // degree 2 in each of four dims

// SizeExpr: a polynomial in the dims with int64 coefficients, a sum of terms, each a coefficient
// times a product of dims (a dim repeated for its powers). No terms: 0.
struct SizeExpr {
  struct Term {
    int64_t coefficient = 0;
    std::vector<int32_t> dims;  // indices into the model's dims
  };
  std::vector<Term> terms;

  static SizeExpr Constant(int64_t value);
  // single_dim: the dim the expression is exactly (1·d), if it is one.
  std::optional<int32_t> single_dim() const;
  // Evaluate at `dims` (a value per dim); an int64 overflow is an error.
  absl::StatusOr<int64_t> Evaluate(absl::Span<const int64_t> dims) const;
  // ToString: "12*t*t + 3", with the dims' names.
  std::string ToString(absl::Span<const GraphDim> dims) const;
};

// SizesToString: sizes some of which are expressions, "[batch, 3, 2*seq]"; `exprs` empty: all
// of `sizes` are constants.
std::string SizesToString(absl::Span<const int64_t> sizes, absl::Span<const SizeExpr> exprs,
                          absl::Span<const GraphDim> dims);

}  // namespace model
}  // namespace tessera
