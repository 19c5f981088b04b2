// The upsampling references' shared arithmetic, used by the forward ops' references
// (op_db_upsample.cc, op set 1.9) and their backward ops' (op_db_upsample_backward.cc, op set
// 1.10): the ten ops (mode and spatial dims) and their names, each resized dim's taps (which
// input positions an output position reads, with which weights) computed as ATen's UpSample.h
// computes them, the walk over every combination of one tap per dim, and the sample helpers
// both files build their cases with. The definitions of the functions declared here are in
// op_db_upsample.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {
namespace upsample {

using Shape = std::vector<int64_t>;
using Scales = std::vector<std::optional<double>>;

enum class Mode { kNearest, kNearestExact, kLinear, kCubic };

// Interpolates: linear and cubic weight their taps (and take align_corners); nearest reads one.
inline bool Interpolates(Mode m) { return m == Mode::kLinear || m == Mode::kCubic; }

// Ops: the ten upsampling ops as (mode, spatial dims), in the op database's order.
const std::vector<std::pair<Mode, int>>& Ops();

// OpName: the forward's name of an op, e.g. "upsample_bilinear2d".
std::string OpName(Mode mode, int dims);

// DimTaps: for each output position along one dim, the input positions it reads and their
// weights.
struct DimTaps {
  std::vector<std::vector<int64_t>> at;  // [output position][tap]
  std::vector<std::vector<double>> w;
};

// Weights: how TapsFor leaves the weights. ATen's forward CPU kernel stores them in the input's
// dtype (a rounding for float16 and bfloat16), its backward kernels keep them in opmath (float,
// or double for float64).
enum class Weights { kStoredInDtype, kOpmath };

// TapsFor: the taps of one dim resized from `in` to `out` for an input of `dtype` (float64 does
// the linear and cubic index arithmetic in double, the others in float, as ATen's opmath).
DimTaps TapsFor(Mode mode, tsr_dtype dtype, int64_t in, int64_t out, bool align_corners,
                std::optional<double> scale, Weights weights);

// ForEachTapCombination calls f(src, weight) for output position `pos` (all dims), once per
// combination of one tap per resized dim (the first dim's tap varying fastest): `src` the input
// position read, `weight` the product of the taps' weights.
template <typename F>
void ForEachTapCombination(const std::vector<DimTaps>& taps, const Shape& pos, F&& f) {
  const size_t dims = taps.size();
  const size_t per = taps[0].at[0].size();
  size_t combos = 1;
  for (size_t d = 0; d < dims; ++d) combos *= per;
  for (size_t c = 0; c < combos; ++c) {
    Shape src = pos;
    long double weight = 1;
    size_t rest = c;
    for (size_t d = 0; d < dims; ++d) {
      const size_t j = rest % per;
      rest /= per;
      const size_t o = static_cast<size_t>(pos[d + 2]);
      src[d + 2] = taps[d].at[o][j];
      weight *= taps[d].w[o][j];
    }
    f(src, weight);
  }
}

// Cube: [n, c] then `dims` sizes of `s`.
Shape Cube(int64_t n, int64_t c, int dims, int64_t s);

// Repeat: `dims` copies of v.
Shape Repeat(int dims, int64_t v);

// ScalesOf: the sample's `dims` scale arguments from index `first` (nullopt where not given).
Scales ScalesOf(const Sample& s, size_t first, int dims);

}  // namespace upsample
}  // namespace conformance
}  // namespace tessera
