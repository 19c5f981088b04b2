// Prints a digest of the bytes of many ops' results on fixed pseudo-random inputs. The ctest
// entry runs it with TESSERA_NUM_THREADS=1, 2 and 3 and compares: results must not depend on
// the thread count (nor on the run).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "tessera/sdk/runtime.hpp"

namespace {

using tessera::Scalar;
using tessera::Tensor;

uint64_t Digest(const Tensor& t) {
  const tsr_op* contiguous = tessera::find_op("contiguous");
  Tensor c = tessera::call1(contiguous, t);
  std::vector<unsigned char> bytes(static_cast<size_t>(c.numel()) * c.itemsize());
  c.copy_to_host(bytes.data(), bytes.size());
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

template <typename... Args>
Tensor Op(const char* name, const Args&... args) {
  return tessera::call1(tessera::find_op(name), args...);
}

}  // namespace

int main() {
  tessera::Runtime runtime;
  const int64_t n = 3 << 20;
  std::vector<float> v(n);
  uint32_t state = 12345;
  for (float& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 200.0f - 100.0f;
  }
  Tensor a = Tensor::from_host(v, {n}, TSR_DTYPE_FLOAT32);
  Tensor m = Op("view", a, std::vector<int64_t>{3072, 1024});
  const std::vector<int64_t> all, rows{1}, cols{0};
  struct Case {
    const char* name;
    Tensor result;
  };
  const Case cases[] = {
      {"sum", Op("sum", a)},
      {"sum.rows", Op("sum.dim_IntList", m, rows)},
      {"sum.cols", Op("sum.dim_IntList", m, cols)},
      {"mean", Op("mean", a)},
      {"var", Op("var.correction", a)},
      {"std.cols", Op("std.correction", m, cols)},
      {"norm", Op("norm.ScalarOpt_dim", a, Scalar(2), std::vector<int64_t>{0})},
      {"logsumexp", Op("logsumexp", m, rows)},
      {"prod.cols", Op("prod.dim_int", m, int64_t{0})},
      {"argmax", Op("argmax", a)},
      {"cumsum", Op("cumsum", m, int64_t{1})},
      {"softmax", Op("_softmax", m, int64_t{0}, false)},
      {"add", Op("add.Tensor", a, a, Scalar(0.5))},
      // On oneDNN's sgemm, which splits its work by the thread count: equal run to run for a
      // count, not across counts (check_determinism.sh; ".onednn" in the name says so).
      {"mm.onednn", Op("mm", Op("slice.Tensor", m, int64_t{0}, int64_t{0}, int64_t{256}),
                Op("t", Op("slice.Tensor", m, int64_t{0}, int64_t{0}, int64_t{512})))},
      {"half.sum", Op("sum", Op("_to_copy", a, TSR_DTYPE_FLOAT16))},
      // Batch norm training: per-channel statistics over 48 x 1024 values each.
      {"bn.train", Op("native_batch_norm", Op("view", a, std::vector<int64_t>{48, 64, 1024}),
                      std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.1, 1e-5)},
      // A float64 transposed convolution (our loop, parallel over output planes).
      {"convT.f64",
       Op("conv_transpose2d.input",
          Op("view",
             Op("_to_copy", Op("slice.Tensor", a, int64_t{0}, int64_t{0}, int64_t{16384}),
                TSR_DTYPE_FLOAT64),
             std::vector<int64_t>{1, 16, 32, 32}),
          Op("view",
             Op("_to_copy", Op("slice.Tensor", a, int64_t{0}, int64_t{0}, int64_t{1152}),
                TSR_DTYPE_FLOAT64),
             std::vector<int64_t>{16, 8, 3, 3}),
          std::nullopt, std::vector<int64_t>{2}, std::vector<int64_t>{1}, std::vector<int64_t>{1},
          int64_t{1}, std::vector<int64_t>{1})},
  };
  for (const Case& c : cases)
    std::printf("%-12s %016llx\n", c.name, static_cast<unsigned long long>(Digest(c.result)));
  return 0;
}
