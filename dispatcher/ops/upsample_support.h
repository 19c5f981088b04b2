// What the upsampling composites share: the forward ops (upsample_ops.cc, op set 1.9) and their
// backward ops (upsample_backward_ops.cc, op set 1.10). It holds the modes, the per-dim taps
// (source indices and weights, computed on the host as ATen's UpSample.h computes them; see
// Note [Upsampling as gathers]), the checks of upsample_{1,2,3}d_common_check, a host table
// copied to a device, and the registration of the ten ops (their names and scale arguments). The
// definitions of the functions declared here are in upsample_ops.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "core/host_copy.h"
#include "core/shape.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace upsample {

enum class Mode { kNearest, kNearestExact, kLinear, kCubic };

// Interpolates: linear and cubic weight their taps (and take align_corners); nearest copies one.
constexpr bool Interpolates(Mode m) { return m == Mode::kLinear || m == Mode::kCubic; }

// Taps: one resized dim's gather: `index[t][o]` the source position of tap t for output position
// o, `weight[t][o]` its weight (linear, cubic; empty for nearest).
struct Taps {
  std::vector<std::vector<int64_t>> index;
  std::vector<std::vector<double>> weight;
};

// Weights: how DimTaps leaves the weights. ATen's forward CPU kernel stores them in the input's
// dtype (a rounding for float16 and bfloat16; none for float32 and float64), its backward
// kernels keep them in opmath (float, or double for float64).
enum class Weights { kStoredInDtype, kOpmath };

// DimTaps: the taps of one resized dim from `in` positions to `out`, for an input of `dtype`
// (which picks ATen's opmath for the index arithmetic), as ATen's nearest_idx,
// nearest_exact_idx, compute_source_index_and_lambda and the cubic helpers give them.
Taps DimTaps(Mode mode, ScalarType dtype, int64_t in, int64_t out, bool align_corners,
             std::optional<double> scale, Weights weights);

// CheckSizes: upsample_{1,2,3}d_common_check's checks of an input of `input_size` resized to
// `output_size` (its `dims` spatial sizes), with ATen's messages. The forward checks self's
// sizes, the backward its input_size argument.
absl::Status CheckSizes(const OperatorHandle& op, IntArrayRef input_size,
                        const IntList& output_size, int dims);

// OnDevice: `values` as a tensor of `dtype` and `shape` (numel == values.size()) on `device`,
// through host type H (on the meta device, the shape alone).
template <typename H, typename V>
absl::StatusOr<Tensor> OnDevice(OpRegistry& r, const std::vector<V>& values, ScalarType dtype,
                                Device device, IntList shape) {
  TSR_ASSIGN_OR_RETURN(Tensor t,
                       CallOne(r, "empty.memory_format",
                               {Value(std::move(shape)), Value(dtype), Value(), Value(device)}));
  if (device.type == DeviceType::kMeta) return t;  // a shape: no values to hold
  const std::vector<H> host(values.begin(), values.end());
  TSR_RETURN_IF_ERROR(CopyHostToTensor(host.data(), t));
  return t;
}

// WeightOnDevice: one tap's weights in `compute` (float32 or float64) on `device`, shaped to
// broadcast along `dim` of a tensor of rank `rank`.
inline absl::StatusOr<Tensor> WeightOnDevice(OpRegistry& r, const std::vector<double>& weight,
                                             ScalarType compute, Device device, int64_t rank,
                                             int64_t dim) {
  IntList shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(dim)] = static_cast<int64_t>(weight.size());
  return compute == ScalarType::kFloat64 ? OnDevice<double>(r, weight, compute, device, shape)
                                         : OnDevice<float>(r, weight, compute, device, shape);
}

// Definition: a schema (built at registration, so held as a string until DefineAll reads it) and
// its kernel.
struct Definition {
  std::string schema;
  KernelFunction kernel;
};

// DefineEach registers as composites, for each of the ten upsampling ops, the Definitions that
// `definitions(mode, dims, name, scales)` returns: `mode` and `dims` as std::integral_constant
// (so that they can pick templates), `name` the forward's name, `scales` its scale arguments'
// schema ("float? scales_h=None, float? scales_w=None").
template <typename F>
absl::Status DefineEach(OpRegistry& registry, F definitions) {
  const std::string w = "float? scales=None";
  const std::string hw = "float? scales_h=None, float? scales_w=None";
  const std::string dhw = "float? scales_d=None, float? scales_h=None, float? scales_w=None";
  using N = std::integral_constant<Mode, Mode::kNearest>;
  using E = std::integral_constant<Mode, Mode::kNearestExact>;
  using L = std::integral_constant<Mode, Mode::kLinear>;
  using C = std::integral_constant<Mode, Mode::kCubic>;
  using D1 = std::integral_constant<int, 1>;
  using D2 = std::integral_constant<int, 2>;
  using D3 = std::integral_constant<int, 3>;
  std::vector<Definition> all;
  auto add = [&all](std::vector<Definition> more) {
    for (Definition& d : more) all.push_back(std::move(d));
  };
  add(definitions(N{}, D1{}, "upsample_nearest1d", w));
  add(definitions(N{}, D2{}, "upsample_nearest2d", hw));
  add(definitions(N{}, D3{}, "upsample_nearest3d", dhw));
  add(definitions(E{}, D1{}, "_upsample_nearest_exact1d", w));
  add(definitions(E{}, D2{}, "_upsample_nearest_exact2d", hw));
  add(definitions(E{}, D3{}, "_upsample_nearest_exact3d", dhw));
  add(definitions(L{}, D1{}, "upsample_linear1d", w));
  add(definitions(L{}, D2{}, "upsample_bilinear2d", hw));
  add(definitions(L{}, D3{}, "upsample_trilinear3d", dhw));
  add(definitions(C{}, D2{}, "upsample_bicubic2d", hw));
  // `all` holds the schema strings while DefineAll reads them.
  std::vector<OpDefinition> defs;
  for (Definition& d : all) defs.push_back({d.schema.c_str(), std::move(d.kernel)});
  return DefineAll(registry, std::move(defs), KernelSlot::kComposite);
}

}  // namespace upsample
}  // namespace ops
}  // namespace tessera
