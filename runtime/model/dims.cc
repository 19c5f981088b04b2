#include "runtime/model/dims.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tessera {
namespace model {

SizeExpr SizeExpr::Constant(int64_t value) {
  SizeExpr e;
  if (value != 0) e.terms.push_back({value, {}});
  return e;
}

std::optional<int32_t> SizeExpr::single_dim() const {
  if (terms.size() == 1 && terms[0].coefficient == 1 && terms[0].dims.size() == 1) {
    return terms[0].dims[0];
  }
  return std::nullopt;
}

absl::StatusOr<int64_t> SizeExpr::Evaluate(absl::Span<const int64_t> dims) const {
  int64_t sum = 0;
  for (const Term& term : terms) {
    int64_t product = term.coefficient;
    for (int32_t d : term.dims) {
      if (__builtin_mul_overflow(product, dims[d], &product)) {
        return absl::OutOfRangeError("a size expression overflows int64 at these dims");
      }
    }
    if (__builtin_add_overflow(sum, product, &sum)) {
      return absl::OutOfRangeError("a size expression overflows int64 at these dims");
    }
  }
  return sum;
}

std::string SizeExpr::ToString(absl::Span<const GraphDim> dims) const {
  if (terms.empty()) return "0";
  std::string out;
  for (size_t k = 0; k < terms.size(); ++k) {
    const Term& t = terms[k];
    // A later term's sign is the operator; its magnitude as unsigned, so INT64_MIN's is right.
    const int64_t c = t.coefficient;
    const bool minus = k > 0 && c < 0;
    if (k > 0) out += minus ? " - " : " + ";
    const std::string coefficient =
        minus ? absl::StrCat(0 - static_cast<uint64_t>(c)) : absl::StrCat(c);
    std::vector<std::string> factors;
    if (coefficient != "1" || t.dims.empty()) factors.push_back(coefficient);
    for (int32_t d : t.dims) factors.push_back(dims[d].name);
    out += absl::StrJoin(factors, "*");
  }
  return out;
}

std::string SizesToString(absl::Span<const int64_t> sizes, absl::Span<const SizeExpr> exprs,
                          absl::Span<const GraphDim> dims) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < sizes.size(); ++i) {
    parts.push_back(exprs.empty() ? absl::StrCat(sizes[i]) : exprs[i].ToString(dims));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

}  // namespace model
}  // namespace tessera
