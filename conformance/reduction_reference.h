// The reference side of reductions, shared by the op database's reduction families
// (op_db_reduction_composites.cc, op_db_core_extras.cc): the input values each output element
// reduces (GroupBy), folded into a result (FoldTo), and the mean and variance as ATen computes
// them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {

// Groups: a reduction's output shape and, per output element in row-major order, the input
// values it reduces.
struct Groups {
  std::vector<int64_t> shape;
  std::vector<std::vector<double>> values;
};

// GroupBy: `dims` nullopt reduces every dim; an empty list reduces every dim too when
// `empty_is_all` (sum, var, std: PyTorch treats dim=None and dim=[] alike there), and none
// otherwise (any.dims, all.dims). A 0-dim input is one group of its one element, whatever dim
// (0 or -1) and keepdim say.
inline Groups GroupBy(const HostTensor& in, const std::optional<std::vector<int64_t>>& dims,
                      bool keepdim, bool empty_is_all = true) {
  const int64_t nd = in.dim();
  const bool all = !dims || (dims->empty() && empty_is_all);
  std::vector<bool> reduced(static_cast<size_t>(nd), all);
  if (!all) {
    for (int64_t d : *dims) {
      if (nd > 0) reduced[static_cast<size_t>(d < 0 ? d + nd : d)] = true;
    }
  }
  Groups g;
  int64_t count = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[static_cast<size_t>(d)]) {
      g.shape.push_back(in.shape[d]);
      count *= in.shape[d];
    } else if (keepdim) {
      g.shape.push_back(1);
    }
  }
  g.values.resize(static_cast<size_t>(count));
  for (int64_t flat = 0; flat < in.numel(); ++flat) {
    const std::vector<int64_t> index = Unravel(flat, in.shape);
    int64_t o = 0;
    for (int64_t d = 0; d < nd; ++d) {
      if (!reduced[static_cast<size_t>(d)]) o = o * in.shape[d] + index[d];
    }
    g.values[static_cast<size_t>(o)].push_back(in.values[static_cast<size_t>(flat)]);
  }
  return g;
}

// FoldTo: each group folded to one value, rounded to `dtype`.
inline HostTensor FoldTo(const Groups& g, tsr_dtype dtype,
                         const std::function<double(const std::vector<double>&)>& fold) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = g.shape;
  for (const std::vector<double>& v : g.values) t.values.push_back(RoundTo(dtype, fold(v)));
  return t;
}

// MeanOf: over no elements NaN (PyTorch fills an empty reduction with NaN instead of dividing).
inline double MeanOf(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  long double s = 0;
  for (double x : v) s += x;
  return static_cast<double>(s / static_cast<long double>(v.size()));
}

// VarianceOf: sum((x - mean)^2) / max(0, N - correction), as PyTorch's Welford reduction
// divides: with no degrees of freedom left, 0 / 0 is NaN (one element, correction 1) and
// m2 / 0 is +inf; no elements is NaN.
inline double VarianceOf(const std::vector<double>& v, double correction) {
  if (v.empty()) return NAN;
  const long double mean = MeanOf(v);
  long double m2 = 0;
  for (double x : v) m2 += (x - mean) * (x - mean);
  const long double dof = std::max<long double>(0, static_cast<long double>(v.size()) - correction);
  if (dof == 0) return m2 == 0 ? NAN : INFINITY;
  return static_cast<double>(m2 / dof);
}

}  // namespace conformance
}  // namespace tessera
