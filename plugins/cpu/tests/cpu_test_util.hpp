// Helpers for the CPU plugin's tests: build tensors from values, call ops by name through the
// public embedding API, read results back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tessera/sdk/half.hpp"
#include "tessera/sdk/runtime.hpp"

namespace tessera {
namespace cpu_test {

// The runtime, with the default plugins (libtessera_cpu.so among them) loaded once.
inline void ensure_runtime() {
  static Runtime* runtime = new Runtime();
  (void)runtime;
}

#ifdef TESSERA_NPU_PLUGIN
// LoadSampleNpu loads the sample NPU plugin (TESSERA_NPU_PLUGIN; once, a later call finds it
// loaded) and returns its device.
inline tsr_device LoadSampleNpu() {
  const tsr_load_report* report = nullptr;
  tsr_error* e = tsr_plugin_load(sdk::to_c(TESSERA_NPU_PLUGIN), &report);
  if (e != nullptr) sdk::api().error_release(e);  // loaded already by another test
  return parse_device("npu:0");
}
#endif

template <typename T>
Tensor make(const std::vector<T>& values, const std::vector<int64_t>& sizes, tsr_dtype dtype) {
  ensure_runtime();
  return Tensor::from_host(values, sizes, dtype);
}
inline Tensor f32(const std::vector<float>& v, const std::vector<int64_t>& sizes) {
  return make(v, sizes, TSR_DTYPE_FLOAT32);
}
inline Tensor f64(const std::vector<double>& v, const std::vector<int64_t>& sizes) {
  return make(v, sizes, TSR_DTYPE_FLOAT64);
}
inline Tensor i64(const std::vector<int64_t>& v, const std::vector<int64_t>& sizes) {
  return make(v, sizes, TSR_DTYPE_INT64);
}
inline Tensor i32(const std::vector<int32_t>& v, const std::vector<int64_t>& sizes) {
  return make(v, sizes, TSR_DTYPE_INT32);
}
inline Tensor b8(const std::vector<uint8_t>& v, const std::vector<int64_t>& sizes) {
  return make(v, sizes, TSR_DTYPE_BOOL);
}
inline Tensor f16(const std::vector<float>& v, const std::vector<int64_t>& sizes) {
  std::vector<sdk::Half> h;
  for (float x : v) h.push_back(sdk::to_half(x));
  return make(h, sizes, TSR_DTYPE_FLOAT16);
}

// op calls `name` and returns its first result.
template <typename... Args>
Tensor op(const std::string& name, const Args&... args) {
  ensure_runtime();
  return call1(find_op(name), args...);
}
template <typename... Args>
std::vector<Tensor> ops(const std::string& name, const Args&... args) {
  ensure_runtime();
  return call(find_op(name), args...);
}
// error_of calls `name` expecting an error and returns its message.
template <typename... Args>
std::string error_of(const std::string& name, const Args&... args) {
  try {
    op(name, args...);
  } catch (const sdk::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << name << " unexpectedly succeeded";
  return "";
}

template <typename T>
std::vector<T> values(const Tensor& t) {
  Tensor c = op("contiguous", t);
  return c.to_vector<T>();
}
inline std::vector<float> half_values(const Tensor& t) {
  std::vector<float> out;
  for (sdk::Half h : values<sdk::Half>(t)) out.push_back(sdk::to_float(h));
  return out;
}
inline std::vector<int64_t> shape(const Tensor& t) { return t.sizes().vec(); }

}  // namespace cpu_test
}  // namespace tessera
