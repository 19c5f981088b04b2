// Matrix products of the CPU plugin: oneDNN (float32, bfloat16), dnnl_sgemm over float32 copies
// (float16, bfloat16) and our own loops (the other dtypes) against hand-checked values.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cpu_test_util.hpp"
#include "gmock/gmock.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Dims = std::vector<int64_t>;

TEST(CpuLinalg, MmEveryDtypeAgrees) {
  for (tsr_dtype dt : {TSR_DTYPE_FLOAT32, TSR_DTYPE_FLOAT64, TSR_DTYPE_FLOAT16, TSR_DTYPE_BFLOAT16,
                       TSR_DTYPE_INT32, TSR_DTYPE_INT64, TSR_DTYPE_UINT8}) {
    Tensor a = op("_to_copy", f32({1, 2, 3, 4, 5, 6}, {2, 3}), dt);
    Tensor b = op("_to_copy", f32({1, 0, 0, 1, 1, 1}, {3, 2}), dt);
    Tensor c = op("mm", a, b);
    EXPECT_EQ(c.dtype(), dt);
    EXPECT_THAT(values<double>(op("_to_copy", c, TSR_DTYPE_FLOAT64)), ElementsAre(4, 5, 10, 11))
        << sdk::dtype_name(dt);
  }
}

TEST(CpuLinalg, TransposedOperandsAndBatches) {
  Tensor a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THAT(values<float>(op("mm", a, op("t", a))), ElementsAre(14, 32, 32, 77));
  Tensor batch = f32({1, 2, 3, 4, 1, 0, 0, 1}, {2, 2, 2});
  EXPECT_THAT(values<float>(op("bmm", batch, batch)), ElementsAre(7, 10, 15, 22, 1, 0, 0, 1));
  EXPECT_THAT(shape(op("mm", f32({}, {2, 0}), f32({}, {0, 3}))), ElementsAre(2, 3));
  EXPECT_THAT(values<float>(op("mm", f32({}, {2, 0}), f32({}, {0, 3}))),
              ElementsAre(0, 0, 0, 0, 0, 0));
}

TEST(CpuLinalg, AddmmScalesAndBroadcastsSelf) {
  Tensor self = f32({1, 2}, {2});
  Tensor a = f32({1, 2, 3, 4}, {2, 2});
  Tensor eye = f32({1, 0, 0, 1}, {2, 2});
  EXPECT_THAT(values<float>(op("addmm", self, a, eye, Scalar(2), Scalar(3))),
              ElementsAre(5, 10, 11, 16));
  // beta = 0 ignores self, NaN included.
  Tensor nan = f32({std::nanf(""), 1}, {2});
  EXPECT_THAT(values<float>(op("addmm", nan, a, eye, Scalar(0))), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(values<double>(op("addmm", f64({1}, {1}), f64({1, 2, 3, 4}, {2, 2}),
                                f64({1, 0, 0, 1}, {2, 2}), Scalar(1), Scalar(2))),
              ElementsAre(3, 5, 7, 9));
  Tensor acc = f32({1, 1, 1, 1}, {2, 2});
  op("addmm_", acc, a, eye);
  EXPECT_THAT(values<float>(acc), ElementsAre(2, 3, 4, 5));
}

// A float32 matrix of `rows` x `cols` holding row-major `v`, laid out as `layout` says inside
// a NaN-filled buffer: row- or column-major, with or without padding between rows/columns,
// or every other column (no BLAS layout). The buffer is returned too, to check its padding.
struct Laid {
  Tensor view, buffer;
};
// Other dtypes than float32 fill the buffer with 7 where they have no NaN.
Laid lay_out(const std::vector<float>& v, int64_t rows, int64_t cols, const std::string& layout,
             tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
  const bool col = layout.rfind("col", 0) == 0;
  const int64_t pad = layout.find("padded") != std::string::npos ? 2 : 0;
  const int64_t step = layout == "every-other" ? 2 : 1;
  const int64_t ld = (col ? rows : cols * step) + pad;
  const int64_t n = ld * (col ? cols : rows) + 1;
  const bool floating = sdk::is_floating(dtype);
  Tensor buffer =
      op("_to_copy", op("full", std::vector<int64_t>{n}, Scalar(floating ? std::nan("") : 7.0)),
         dtype);
  const std::vector<int64_t> strides =
      col ? std::vector<int64_t>{1, ld} : std::vector<int64_t>{ld, step};
  Tensor view = op("as_strided", buffer, std::vector<int64_t>{rows, cols}, strides);
  op("copy_", view, f32(v, {rows, cols}));
  return {view, buffer};
}

// Every combination of operand and output layouts gives the same product, at two sizes: a
// product of at most 256 multiply-adds runs in gemm_small's loop, a larger one on the BLAS
// layouts' dnnl_sgemm (a column-major out as out^T = b^T a^T) and on oneDNN's matmul for the
// others. out starts as NaN and beta = 0 must not read it; padding between rows stays untouched.
TEST(CpuLinalg, EveryLayoutOfOperandsAndOutput) {
  struct Size {
    int M, K, N;
  };
  for (const Size sz : {Size{3, 4, 5}, Size{9, 8, 7}}) {
    const int M = sz.M, K = sz.K, N = sz.N;
    std::vector<float> a(M * K), b(K * N);
    for (int i = 0; i < M * K; ++i) a[i] = static_cast<float>(i % 13 + 1);
    for (int i = 0; i < K * N; ++i) b[i] = static_cast<float>(i * 5 % 4);
    std::vector<float> want(M * N, 0), want_addmm(M * N), self(M * N);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        for (int k = 0; k < K; ++k) want[i * N + j] += a[i * K + k] * b[k * N + j];
        want_addmm[i * N + j] = 0.5f * (i * N + j) + 2 * want[i * N + j];
        self[i * N + j] = static_cast<float>(i * N + j);
      }
    const std::vector<std::string> layouts = {"row", "col", "row-padded", "col-padded",
                                              "every-other"};
    for (const std::string& la : layouts)
      for (const std::string& lb : layouts)
        for (const std::string& lo : layouts) {
          SCOPED_TRACE(std::to_string(M * K * N) + " multiply-adds: a " + la + ", b " + lb +
                       ", out " + lo);
          Laid ta = lay_out(a, M, K, la), tb = lay_out(b, K, N, lb);
          Laid out = lay_out(std::vector<float>(M * N, std::nanf("")), M, N, lo);
          op("mm.out", ta.view, tb.view, out.view);
          EXPECT_EQ(values<float>(out.view), want);
          Laid acc = lay_out(self, M, N, lo);
          op("addmm.out", acc.view, ta.view, tb.view, Scalar(0.5), Scalar(2), acc.view);
          EXPECT_EQ(values<float>(acc.view), want_addmm);
          // The elements around the matrix in its buffer are still NaN.
          Tensor written = op("full", std::vector<int64_t>{out.buffer.numel()}, Scalar(0.0));
          op("copy_", op("as_strided", written, shape(out.view), out.view.strides().vec()),
             op("full", std::vector<int64_t>{M, N}, Scalar(1.0)));
          const std::vector<float> buf = values<float>(out.buffer), mask = values<float>(written);
          for (size_t i = 0; i < buf.size(); ++i)
            if (mask[i] == 0) {
              EXPECT_TRUE(std::isnan(buf[i])) << "buffer element " << i;
            }
        }
  }
}

// gemm_small's edges: a 1x1 product, an inner dimension of 0 (beta * self only), NaN and
// infinity in the operands propagating, beta 0 ignoring a NaN self, and products of exactly
// 256 multiply-adds (the loop) and just above (the library), each within float32 rounding of a
// float64 reference.
TEST(CpuLinalg, SmallProductsAndTheirEdges) {
  EXPECT_THAT(values<float>(op("mm", f32({2}, {1, 1}), f32({3}, {1, 1}))), ElementsAre(6));
  EXPECT_THAT(values<float>(op("addmm", f32({1, 2}, {2}), f32({}, {2, 0}), f32({}, {0, 2}),
                               Scalar(3), Scalar(5))),
              ElementsAre(3, 6, 3, 6));
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> got = values<float>(
      op("mm", f32({std::nanf(""), 1, inf, 0}, {2, 2}), f32({1, 0, 0, 1}, {2, 2})));
  EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1])) << "NaN * 0 is NaN";
  EXPECT_TRUE(std::isinf(got[2]) && std::isnan(got[3])) << "inf * 1 and inf * 0";
  EXPECT_THAT(values<float>(op("addmm", f32({std::nanf("")}, {1}), f32({2}, {1, 1}),
                               f32({4}, {1, 1}), Scalar(0), Scalar(0.5))),
              ElementsAre(4));
  for (const int64_t M : {4, 5}) {  // 4 * 8 * 8 = 256 multiply-adds; 5 * 8 * 8 = 320
    std::vector<float> a(M * 8), b(64);
    for (size_t i = 0; i < a.size(); ++i) a[i] = 0.1f * static_cast<float>(i % 11) - 0.3f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.7f - 0.05f * static_cast<float>(i % 17);
    const std::vector<float> product = values<float>(op("mm", f32(a, {M, 8}), f32(b, {8, 8})));
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < 8; ++j) {
        double want = 0;
        for (int64_t k = 0; k < 8; ++k) want += double{a[i * 8 + k]} * double{b[k * 8 + j]};
        EXPECT_NEAR(product[i * 8 + j], want, 1e-5) << M << " rows, element " << i << ", " << j;
      }
  }
}

// The dtypes off dnnl_sgemm's direct path: float16 and bfloat16 (float32 copies on dnnl_sgemm,
// or oneDNN's native bfloat16 matmul), float64 and int64 (our loop), with operands and outputs
// in BLAS and non-BLAS layouts, mm, addmm and bmm. The entries are small integers, so every
// product and sum is exact in each dtype and the results compare exactly.
TEST(CpuLinalg, ReducedFloat64AndIntegerProductsInEveryLayout) {
  const int64_t M = 5, K = 20, N = 6;
  std::vector<float> a(M * K), b(K * N), self(M * N);
  for (int64_t i = 0; i < M * K; ++i) a[i] = static_cast<float>((i * 7 % 5) - 2);
  for (int64_t i = 0; i < K * N; ++i) b[i] = static_cast<float>((i * 3 % 4) - 1);
  for (int64_t i = 0; i < M * N; ++i) self[i] = static_cast<float>(i % 9);
  std::vector<double> want(M * N, 0), want_addmm(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      for (int64_t k = 0; k < K; ++k) want[i * N + j] += a[i * K + k] * b[k * N + j];
      want_addmm[i * N + j] = 2 * self[i * N + j] + 3 * want[i * N + j];
    }
  for (tsr_dtype dt : {TSR_DTYPE_FLOAT16, TSR_DTYPE_BFLOAT16, TSR_DTYPE_FLOAT64, TSR_DTYPE_INT64}) {
    for (const char* la : {"row", "col", "every-other"})
      for (const char* lb : {"row", "col", "every-other"})
        for (const char* lo : {"row", "col-padded"}) {
          SCOPED_TRACE(std::string(sdk::dtype_name(dt)) + ": a " + la + ", b " + lb + ", out " +
                       lo);
          Laid ta = lay_out(a, M, K, la, dt), tb = lay_out(b, K, N, lb, dt);
          Laid out = lay_out(std::vector<float>(M * N, 7), M, N, lo, dt);
          op("mm.out", ta.view, tb.view, out.view);
          EXPECT_EQ(values<double>(op("_to_copy", out.view, TSR_DTYPE_FLOAT64)), want);
          Laid acc = lay_out(self, M, N, lo, dt);
          op("addmm.out", acc.view, ta.view, tb.view, Scalar(int64_t{2}), Scalar(int64_t{3}),
             acc.view);
          EXPECT_EQ(values<double>(op("_to_copy", acc.view, TSR_DTYPE_FLOAT64)), want_addmm);
        }
    // Batches: the second operand a transposed view of [3, N, K].
    Tensor x = op("_to_copy", op("expand", f32(a, {1, M, K}), Dims{3, M, K}), dt);
    Tensor y = op("transpose.int",
                  op("_to_copy", op("expand", op("t", f32(b, {K, N})), Dims{3, N, K}), dt),
                  int64_t{1}, int64_t{2});
    const std::vector<double> got =
        values<double>(op("_to_copy", op("bmm", x, y), TSR_DTYPE_FLOAT64));
    ASSERT_EQ(got.size(), static_cast<size_t>(3 * M * N)) << sdk::dtype_name(dt);
    for (int64_t bi = 0; bi < 3; ++bi) {
      EXPECT_EQ(std::vector<double>(got.begin() + bi * M * N, got.begin() + (bi + 1) * M * N), want)
          << sdk::dtype_name(dt) << " batch " << bi;
    }
  }
  // beta = 0 ignores out's NaNs in the reduced dtypes too.
  for (tsr_dtype dt : {TSR_DTYPE_FLOAT16, TSR_DTYPE_BFLOAT16}) {
    Laid ta = lay_out(a, M, K, "row", dt), tb = lay_out(b, K, N, "col", dt);
    Tensor nan = op("_to_copy", op("full", Dims{M, N}, Scalar(std::nan(""))), dt);
    op("addmm.out", nan, ta.view, tb.view, Scalar(int64_t{0}), Scalar(int64_t{1}), nan);
    EXPECT_EQ(values<double>(op("_to_copy", nan, TSR_DTYPE_FLOAT64)), want) << sdk::dtype_name(dt);
  }
}

TEST(CpuLinalg, ShapeAndDtypeErrorsNameTheOp) {
  EXPECT_THAT(error_of("mm", f32({1, 2}, {1, 2}), f32({1, 2}, {1, 2})),
              HasSubstr("mm: shapes [1, 2] and [1, 2] cannot be multiplied (2 != 1)"));
  EXPECT_THAT(error_of("mm", f32({1}, {1, 1}), f64({1}, {1, 1})),
              HasSubstr("expected both matrices to have the same dtype"));
  EXPECT_THAT(error_of("mm", b8({1}, {1, 1}), b8({1}, {1, 1})),
              HasSubstr("not implemented for dtype bool"));
  // matmul names itself and its own operands, not the mm or bmm it becomes ([2] unsqueezed).
  EXPECT_THAT(error_of("matmul", f32(std::vector<float>(6, 1), {2, 3}), f32({1, 2}, {2})),
              HasSubstr("matmul: shapes [2, 3] and [2] cannot be multiplied (3 != 2)"));
  EXPECT_THAT(error_of("matmul", f32({1, 2}, {2}), f32(std::vector<float>(12, 1), {2, 3, 2})),
              HasSubstr("matmul: shapes [2] and [2, 3, 2] cannot be multiplied (2 != 3)"));
  // Expanded operands take no memory, but their product would have 2^80 elements: refused when
  // planned, with the element count's error, in the functional and out= forms alike.
  const int64_t big = int64_t{1} << 40;
  Tensor tall = op("expand", f32({1}, {1, 1}), Dims{big, 1});
  Tensor wide = op("expand", f32({1}, {1, 1}), Dims{1, big});
  EXPECT_THAT(error_of("mm", tall, wide), HasSubstr("overflows int64"));
  EXPECT_THAT(error_of("mm.out", tall, wide, f32({0}, {1, 1})), HasSubstr("overflows int64"));
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera
