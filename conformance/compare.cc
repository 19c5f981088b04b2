#include "conformance/compare.h"

#include <cmath>
#include <cstdio>

namespace tessera {
namespace conformance {

Tolerance ToleranceFor(tsr_dtype dtype, double scale) {
  switch (dtype) {
    case TSR_DTYPE_FLOAT16:
      return {1e-5 * scale, 1e-3 * scale};
    case TSR_DTYPE_BFLOAT16:
      return {1e-5 * scale, 1.6e-2 * scale};
    case TSR_DTYPE_FLOAT32:
      return {1e-5 * scale, 1.3e-6 * scale};
    case TSR_DTYPE_FLOAT64:
      return {1e-7 * scale, 1e-7 * scale};
    default:
      return {0, 0};  // integers and bool: exact
  }
}

Comparison Compare(const HostTensor& actual, const HostTensor& expected, const Tolerance& tol,
                   const std::string& what) {
  Comparison c;
  if (actual.dtype != expected.dtype) {
    c.ok = false;
    c.message =
        what + ": expected dtype " + DtypeName(expected.dtype) + ", got " + DtypeName(actual.dtype);
    return c;
  }
  if (actual.shape != expected.shape) {
    c.ok = false;
    c.message = what + ": expected shape " + ShapeString(expected.shape) + ", got " +
                ShapeString(actual.shape);
    return c;
  }
  int64_t worst = -1;
  double signal = 0, noise = 0;
  for (size_t i = 0; i < actual.values.size(); ++i) {
    const double a = actual.values[i], e = expected.values[i];
    if (std::isfinite(a) && std::isfinite(e)) {
      signal += e * e;
      noise += (a - e) * (a - e);
    }
    if (std::isnan(a) && std::isnan(e)) continue;
    if (std::isinf(e) || std::isinf(a) || std::isnan(a) || std::isnan(e)) {
      if (a == e) continue;
      c.ok = false;
      if (worst < 0) worst = static_cast<int64_t>(i);
      c.max_abs = INFINITY;
      continue;
    }
    const double diff = std::fabs(a - e);
    const double rel = e == 0 ? (diff == 0 ? 0 : INFINITY) : diff / std::fabs(e);
    if (diff > c.max_abs) c.max_abs = diff;
    if (rel > c.max_rel && std::isfinite(rel)) c.max_rel = rel;
    if (diff > tol.atol + tol.rtol * std::fabs(e)) {
      if (c.ok) worst = static_cast<int64_t>(i);
      c.ok = false;
    }
  }
  const bool half = expected.dtype == TSR_DTYPE_FLOAT16 || expected.dtype == TSR_DTYPE_BFLOAT16;
  if (half) {
    c.snr_db = noise == 0 ? INFINITY : signal == 0 ? -INFINITY : 10 * std::log10(signal / noise);
  }
  if (!c.ok) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s: mismatch at element %lld: got %.9g, expected %.9g",
                  what.c_str(), static_cast<long long>(worst), actual.values[worst],
                  expected.values[worst]);
    c.message = buf;
    if (half) {
      std::snprintf(buf, sizeof buf, " (SNR of the whole result %.1f dB)", c.snr_db);
      c.message += buf;
    }
  }
  return c;
}

}  // namespace conformance
}  // namespace tessera
