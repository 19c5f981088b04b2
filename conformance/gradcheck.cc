#include "conformance/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {
namespace {

// Within: gradcheck's closeness test, folded into `check` (max errors, first message).
bool Within(double analytic, double numeric, const std::string& where, GradCheck* check) {
  const double abs = std::fabs(analytic - numeric);
  const double rel = numeric == 0 ? (abs == 0 ? 0 : INFINITY) : abs / std::fabs(numeric);
  check->max_abs = std::max(check->max_abs, abs);
  if (std::isfinite(rel)) check->max_rel = std::max(check->max_rel, rel);
  if (abs <= kGradAtol + kGradRtol * std::fabs(numeric) && !std::isnan(analytic)) return true;
  if (check->ok) {
    char text[160];
    std::snprintf(text, sizeof text,
                  ": the backward op gives %.17g, central differences of the forward give %.17g "
                  "(atol %g, rtol %g)",
                  analytic, numeric, kGradAtol, kGradRtol);
    check->ok = false;
    check->message = where + text;
  }
  return false;
}

bool SameShapes(const std::vector<HostTensor>& inputs, const std::vector<HostTensor>& analytic,
                const std::vector<std::string>& names, GradCheck* check) {
  if (analytic.size() < inputs.size()) {
    check->ok = false;
    check->message = "expected " + std::to_string(inputs.size()) + " gradients, got " +
                     std::to_string(analytic.size());
    return false;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (analytic[i].shape != inputs[i].shape || analytic[i].dtype != inputs[i].dtype) {
      check->ok = false;
      check->message = "the gradient of " + names[i] + ": expected " + DtypeName(inputs[i].dtype) +
                       ShapeString(inputs[i].shape) + " (its input's dtype and shape), got " +
                       DtypeName(analytic[i].dtype) + ShapeString(analytic[i].shape);
      return false;
    }
  }
  return true;
}

}  // namespace

GradCheck CheckElementwise(const GradLoss& loss, const std::vector<HostTensor>& inputs,
                           const std::vector<HostTensor>& analytic,
                           const std::vector<std::string>& names, Rng& rng) {
  GradCheck check;
  if (!SameShapes(inputs, analytic, names, &check)) return check;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int64_t> elements(static_cast<size_t>(inputs[i].numel()));
    std::iota(elements.begin(), elements.end(), 0);
    if (static_cast<int64_t>(elements.size()) > kGradMaxElements) {
      std::shuffle(elements.begin(), elements.end(), rng);
      elements.resize(kGradMaxElements);
      std::sort(elements.begin(), elements.end());
    }
    for (int64_t j : elements) {
      std::vector<HostTensor> plus = inputs, minus = inputs;
      plus[i].values[j] += kGradEps;
      minus[i].values[j] -= kGradEps;
      const double numeric = (loss(plus) - loss(minus)) / (2 * kGradEps);
      Within(analytic[i].values[j], numeric,
             "the gradient of " + names[i] + " at element " + std::to_string(j), &check);
    }
  }
  return check;
}

GradCheck CheckProjection(const GradLoss& loss, const std::vector<HostTensor>& inputs,
                          const std::vector<HostTensor>& analytic,
                          const std::vector<std::string>& names, Rng& rng) {
  GradCheck check;
  if (!SameShapes(inputs, analytic, names, &check)) return check;
  std::normal_distribution<double> normal;
  std::vector<HostTensor> plus = inputs, minus = inputs;
  long double projected = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t j = 0; j < inputs[i].values.size(); ++j) {
      const double v = normal(rng);
      plus[i].values[j] += kGradEps * v;
      minus[i].values[j] -= kGradEps * v;
      projected += analytic[i].values[j] * v;
    }
  }
  const double numeric = (loss(plus) - loss(minus)) / (2 * kGradEps);
  Within(static_cast<double>(projected), numeric, "along a random direction", &check);
  return check;
}

}  // namespace conformance
}  // namespace tessera
