#include "conformance/host_tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "tessera/sdk/dtypes.hpp"
#include "tessera/sdk/half.hpp"

namespace tessera {
namespace conformance {

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

double HostTensor::at(const std::vector<int64_t>& index) const {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return values[static_cast<size_t>(flat)];
}

const char* DtypeName(tsr_dtype d) { return sdk::dtype_name(d); }
bool IsFloating(tsr_dtype d) { return sdk::is_floating(d); }
bool IsIntegral(tsr_dtype d, bool include_bool) { return sdk::is_integral(d, include_bool); }

namespace {

// RoundToFloat: v rounded to a binary floating format with `mantissa_bits` bits after the
// point, normal exponents down to `min_exponent` (below it the spacing stays that of
// 2^min_exponent: subnormals), and `max_finite` the largest finite value; ties to even, as an
// IEEE conversion does. Written with the references' own double arithmetic, not with the
// float16 conversions that the runtime and plugins share (tessera/sdk/float16.hpp), which
// reference_test.cc checks against this.
double RoundToFloat(double v, int mantissa_bits, int min_exponent, double max_finite) {
  if (!std::isfinite(v) || v == 0) return v;
  int exponent;
  std::frexp(v, &exponent);  // |v| = m * 2^exponent, m in [0.5, 1)
  const double spacing = std::ldexp(1.0, std::max(exponent - 1, min_exponent) - mantissa_bits);
  const double r = std::nearbyint(v / spacing) * spacing;  // both exact: powers of two
  return std::fabs(r) > max_finite ? std::copysign(HUGE_VAL, v) : r;
}

}  // namespace

double RoundTo(tsr_dtype dtype, double v) {
  auto wrap = [&](int bits, bool is_signed) {
    if (std::isnan(v) || std::isinf(v)) return 0.0;  // unspecified in C++; suites avoid it
    const int64_t i = static_cast<int64_t>(v);       // truncation toward zero, as casts do
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1);
    uint64_t u = static_cast<uint64_t>(i) & mask;
    if (is_signed && bits < 64 && (u >> (bits - 1)) & 1) u |= ~mask;
    return is_signed ? static_cast<double>(static_cast<int64_t>(u)) : static_cast<double>(u);
  };
  switch (dtype) {
    case TSR_DTYPE_BOOL:
      return v != 0 ? 1 : 0;
    case TSR_DTYPE_UINT8:
      return wrap(8, false);
    case TSR_DTYPE_INT8:
      return wrap(8, true);
    case TSR_DTYPE_INT16:
      return wrap(16, true);
    case TSR_DTYPE_INT32:
      return wrap(32, true);
    case TSR_DTYPE_INT64:
      return wrap(64, true);
    // Through float, as a kernel rounds its float result on store (straight from double, the
    // last bit could differ: double rounding).
    case TSR_DTYPE_FLOAT16:
      return RoundToFloat(static_cast<float>(v), 10, -14, 65504.0);
    case TSR_DTYPE_BFLOAT16:
      return RoundToFloat(static_cast<float>(v), 7, -126, 0x1.fep127);
    case TSR_DTYPE_FLOAT32:
      return static_cast<float>(v);
    default:
      return v;
  }
}

HostTensor MakeTensor(std::vector<int64_t> shape, tsr_dtype dtype, Rng& rng, const MakeOptions& o) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  const int64_t n = t.numel();
  t.values.resize(static_cast<size_t>(n));
  double low = -9, high = 10;
  if (dtype == TSR_DTYPE_BOOL) {
    low = 0;
    high = 2;
  } else if (dtype == TSR_DTYPE_UINT8) {
    low = 0;
  } else if (IsFloating(dtype)) {
    high = 9;
  }
  if (o.positive) low = IsFloating(dtype) ? 0.1 : 1;
  if (o.low < o.high) {
    low = o.low;
    high = o.high;
  }
  std::uniform_real_distribution<double> uniform(low, high);
  for (double& v : t.values) {
    do {
      v = uniform(rng);
      v = IsFloating(dtype) ? RoundTo(dtype, v) : std::floor(v);
      if (dtype == TSR_DTYPE_BOOL) v = v != 0;
    } while (o.exclude_zero && v == 0);
  }
  return t;
}

HostTensor ExtremeTensor(tsr_dtype dtype) {
  const double inf = std::numeric_limits<double>::infinity();
  const double large = dtype == TSR_DTYPE_FLOAT16   ? 6.0e4
                       : dtype == TSR_DTYPE_FLOAT64 ? 1e300
                                                    : 1e30;
  const double tiny = dtype == TSR_DTYPE_FLOAT16   ? 1e-7
                      : dtype == TSR_DTYPE_FLOAT64 ? 1e-300
                                                   : 1e-30;
  HostTensor t;
  t.dtype = dtype;
  t.values = {inf, -inf, std::nan(""), large, -large, tiny, -0.0, 0.0, 1.0, -1.5};
  for (double& v : t.values) v = RoundTo(dtype, v);
  t.shape = {static_cast<int64_t>(t.values.size())};
  return t;
}

const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kContiguous:
      return "contiguous";
    case Layout::kInterleaved:
      return "interleaved";
    case Layout::kOffset:
      return "offset";
    case Layout::kTransposed:
      return "transposed";
    case Layout::kExpanded:
      return "expanded";
  }
  return "?";
}

namespace {

// Host bytes of `values` in `dtype`.
std::vector<unsigned char> Encode(tsr_dtype dtype, const std::vector<double>& values) {
  const size_t item = sdk::api().dtype_size(dtype);
  std::vector<unsigned char> bytes(values.size() * item);
  for (size_t i = 0; i < values.size(); ++i) {
    unsigned char* p = bytes.data() + i * item;
    const double v = values[i];
    auto put = [&](auto x) { std::memcpy(p, &x, sizeof x); };
    switch (dtype) {
      case TSR_DTYPE_BOOL:
        put(static_cast<uint8_t>(v != 0));
        break;
      case TSR_DTYPE_UINT8:
        put(static_cast<uint8_t>(RoundTo(dtype, v)));
        break;
      case TSR_DTYPE_INT8:
        put(static_cast<int8_t>(RoundTo(dtype, v)));
        break;
      case TSR_DTYPE_INT16:
        put(static_cast<int16_t>(RoundTo(dtype, v)));
        break;
      case TSR_DTYPE_INT32:
        put(static_cast<int32_t>(RoundTo(dtype, v)));
        break;
      case TSR_DTYPE_INT64:
        put(static_cast<int64_t>(RoundTo(dtype, v)));
        break;
      case TSR_DTYPE_FLOAT16:
        put(sdk::to_half(static_cast<float>(v)).bits);
        break;
      case TSR_DTYPE_BFLOAT16:
        put(sdk::to_bfloat16(static_cast<float>(v)).bits);
        break;
      case TSR_DTYPE_FLOAT32:
        put(static_cast<float>(v));
        break;
      default:
        put(v);
    }
  }
  return bytes;
}

double Decode(tsr_dtype dtype, const unsigned char* p) {
  auto get = [&](auto x) {
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  switch (dtype) {
    case TSR_DTYPE_BOOL:
      return get(uint8_t{}) != 0;
    case TSR_DTYPE_UINT8:
      return get(uint8_t{});
    case TSR_DTYPE_INT8:
      return get(int8_t{});
    case TSR_DTYPE_INT16:
      return get(int16_t{});
    case TSR_DTYPE_INT32:
      return get(int32_t{});
    case TSR_DTYPE_INT64:
      return static_cast<double>(get(int64_t{}));
    case TSR_DTYPE_FLOAT16:
      return sdk::to_float(sdk::Half{get(uint16_t{})});
    case TSR_DTYPE_BFLOAT16:
      return sdk::to_float(sdk::BFloat16{get(uint16_t{})});
    case TSR_DTYPE_FLOAT32:
      return get(float{});
    default:
      return get(double{});
  }
}

Tensor CpuTensor(tsr_dtype dtype, const std::vector<int64_t>& shape,
                 const std::vector<double>& values) {
  Tensor t = Tensor::empty(shape, dtype);
  const std::vector<unsigned char> bytes = Encode(dtype, values);
  if (!bytes.empty()) t.copy_from_host(bytes.data(), bytes.size());
  return t;
}

template <typename... Args>
Tensor Call(const char* name, const Args&... args) {
  return call1(find_op(name), args...);
}

}  // namespace

double Poison(tsr_dtype dtype) {
  if (IsFloating(dtype)) return std::nan("");
  if (dtype == TSR_DTYPE_BOOL) return 1;
  return dtype == TSR_DTYPE_UINT8 ? 201 : -101;
}

Tensor EmptyOn(const std::vector<int64_t>& shape, tsr_dtype dtype, tsr_device device) {
  return Tensor::empty(shape, dtype, device);
}

Tensor ToDevice(const HostTensor& host, tsr_device device, Layout layout) {
  const int64_t nd = host.dim();
  const int64_t n = host.numel();
  Tensor cpu;
  switch (layout) {
    case Layout::kInterleaved: {
      if (nd == 0) return ToDevice(host, device, Layout::kContiguous);
      std::vector<int64_t> wide = host.shape;
      wide.back() *= 2;
      std::vector<double> values(static_cast<size_t>(n * 2), Poison(host.dtype));
      for (int64_t i = 0; i < n; ++i) values[2 * i] = host.values[i];
      Tensor base = tessera::to(CpuTensor(host.dtype, wide, values), device);
      return Call("slice.Tensor", base, int64_t{-1}, int64_t{0}, std::nullopt, int64_t{2});
    }
    case Layout::kOffset: {
      std::vector<double> values(static_cast<size_t>(n + 3), Poison(host.dtype));
      for (int64_t i = 0; i < n; ++i) values[3 + i] = host.values[i];
      Tensor base = tessera::to(CpuTensor(host.dtype, {n + 3}, values), device);
      std::vector<int64_t> strides(nd, 1);
      for (int64_t d = nd - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * std::max<int64_t>(host.shape[d + 1], 1);
      return Call("as_strided", base, host.shape, strides, int64_t{3});
    }
    case Layout::kTransposed: {
      if (nd < 2) return ToDevice(host, device, Layout::kInterleaved);
      // Store the last two dims swapped, contiguously, and transpose the view back.
      std::vector<int64_t> swapped = host.shape;
      std::swap(swapped[nd - 1], swapped[nd - 2]);
      const int64_t rows = host.shape[nd - 2], cols = host.shape[nd - 1];
      const int64_t mats = rows * cols == 0 ? 0 : n / (rows * cols);
      std::vector<double> values(static_cast<size_t>(n));
      for (int64_t m = 0; m < mats; ++m) {
        for (int64_t i = 0; i < rows; ++i) {
          for (int64_t j = 0; j < cols; ++j) {
            values[m * rows * cols + j * rows + i] = host.values[m * rows * cols + i * cols + j];
          }
        }
      }
      Tensor base = tessera::to(CpuTensor(host.dtype, swapped, values), device);
      return Call("transpose.int", base, nd - 2, nd - 1);
    }
    case Layout::kExpanded: {
      if (nd == 0 || host.shape[0] <= 1) return ToDevice(host, device, Layout::kContiguous);
      // Row 0 expanded over dim 0 (the caller made every row equal to it).
      std::vector<int64_t> one = host.shape;
      one[0] = 1;
      const int64_t row = n / host.shape[0];
      std::vector<double> values(host.values.begin(), host.values.begin() + row);
      Tensor base = tessera::to(CpuTensor(host.dtype, one, values), device);
      return Call("expand", base, host.shape);
    }
    case Layout::kContiguous:
      break;
  }
  cpu = CpuTensor(host.dtype, host.shape, host.values);
  return device.type == TSR_DEVICE_CPU ? cpu : tessera::to(cpu, device);
}

std::vector<int64_t> StridedPositions(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& strides, int64_t offset) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<int64_t> at(static_cast<size_t>(n));
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    at[static_cast<size_t>(i)] = offset;
    for (size_t d = 0; d < index.size(); ++d) at[static_cast<size_t>(i)] += index[d] * strides[d];
    for (size_t d = index.size(); d-- > 0;) {  // the next row-major index
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return at;
}

Tensor ToDeviceStrided(const HostTensor& host, tsr_device device,
                       const std::vector<int64_t>& strides, int64_t storage_offset) {
  const std::vector<int64_t> at = StridedPositions(host.shape, strides, storage_offset);
  int64_t extent = storage_offset;
  for (int64_t p : at) extent = std::max(extent, p + 1);
  std::vector<double> memory(static_cast<size_t>(extent), Poison(host.dtype));
  for (size_t i = 0; i < at.size(); ++i) memory[static_cast<size_t>(at[i])] = host.values[i];
  Tensor base = tessera::to(CpuTensor(host.dtype, {extent}, memory), device);
  return Call("as_strided", base, host.shape, strides, storage_offset);
}

HostTensor FromDevice(const Tensor& t) {
  HostTensor h;
  h.dtype = t.dtype();
  h.shape = t.sizes().vec();
  const size_t item = t.itemsize();
  std::vector<unsigned char> bytes(static_cast<size_t>(t.numel()) * item);
  if (!bytes.empty()) t.copy_to_host(bytes.data(), bytes.size());
  h.values.resize(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < h.values.size(); ++i)
    h.values[i] = Decode(h.dtype, bytes.data() + i * item);
  return h;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

HostTensor FromLong(std::vector<int64_t> shape, tsr_dtype dtype,
                    const std::vector<long double>& v) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  for (long double x : v) t.values.push_back(RoundTo(dtype, static_cast<double>(x)));
  return t;
}

}  // namespace conformance
}  // namespace tessera
