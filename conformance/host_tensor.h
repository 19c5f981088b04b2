// HostTensor: a tensor's dtype, shape and values as doubles on the host: what the suite
// generates inputs as, computes fp64 references in, and reads results back into. Values are
// always representable in the dtype (generation rounds them).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tessera/sdk/runtime.hpp"

namespace tessera {
namespace conformance {

struct HostTensor {
  tsr_dtype dtype = TSR_DTYPE_FLOAT32;
  std::vector<int64_t> shape;
  std::vector<double> values;  // row-major

  int64_t numel() const;
  int64_t dim() const { return static_cast<int64_t>(shape.size()); }
  double at(const std::vector<int64_t>& index) const;  // row-major index
};

using Rng = std::mt19937_64;

const char* DtypeName(tsr_dtype d);
bool IsFloating(tsr_dtype d);
bool IsIntegral(tsr_dtype d, bool include_bool);
// Round (or wrap, for integers; "!= 0" for bool) a double to what `dtype` can hold, as a
// cast to that dtype would.
double RoundTo(tsr_dtype dtype, double v);
// FromLong: a tensor of `dtype` from long double values (references' accumulators), each rounded
// to the dtype.
HostTensor FromLong(std::vector<int64_t> shape, tsr_dtype dtype, const std::vector<long double>& v);

// Value ranges per dtype, as PyTorch's make_tensor: bool {0, 1}; uint8 [0, 10); other
// integers [-9, 10); floating [-9, 9].
struct MakeOptions {
  bool exclude_zero = false;  // divisors
  bool positive = false;      // (0, 9]: log, sqrt of "valid" inputs
  double low = 0, high = 0;   // override the range when low < high
};
HostTensor MakeTensor(std::vector<int64_t> shape, tsr_dtype dtype, Rng& rng,
                      const MakeOptions& options = {});
// Extreme values for floating dtypes: inf, -inf, nan, large, tiny, -0.0, 0, 1.
HostTensor ExtremeTensor(tsr_dtype dtype);

// How an input tensor is laid out on the device (the "layouts" oracle).
enum class Layout {
  kContiguous,
  kInterleaved,  // every other element of a buffer whose other elements are poison
  kOffset,       // a view at storage offset 3 of a poisoned buffer
  kTransposed,   // the last two dims stored swapped and viewed back (non-contiguous)
  kExpanded,     // stride 0 along dim 0 (the sample's rows are made equal first)
};
const char* LayoutName(Layout layout);

// ToDevice makes a tensor with `host`'s values on `device` in `layout`.
Tensor ToDevice(const HostTensor& host, tsr_device device, Layout layout = Layout::kContiguous);
// StridedPositions: where each element of `shape` (row-major) lies in memory laid out with
// `strides` from `offset`.
std::vector<int64_t> StridedPositions(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& strides, int64_t offset);
// ToDeviceStrided makes a tensor with `host`'s values on `device` laid out with `strides` from
// `storage_offset` in a poisoned buffer (a recorded call's layout). Elements that share memory
// must have equal values.
Tensor ToDeviceStrided(const HostTensor& host, tsr_device device,
                       const std::vector<int64_t>& strides, int64_t storage_offset);
// FromDevice reads any tensor back (any device, any strides).
HostTensor FromDevice(const Tensor& t);
// Poison: a value no correct kernel produces from the suite's inputs, in every dtype (NaN for
// the floating ones): what memory a kernel must overwrite holds before it runs.
double Poison(tsr_dtype dtype);
// Empty tensor of a shape and dtype on a device.
Tensor EmptyOn(const std::vector<int64_t>& shape, tsr_dtype dtype, tsr_device device);

std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace conformance
}  // namespace tessera
