// The CUDA backend's cuBLAS path on the host (blas.h, Note [cuBLAS at first use]): the loader
// against a fake libcublas (fake_cublas.c) and an absent one, the TESSERA_GPU_BLAS knob, and the
// mapping of row-major products onto cuBLAS's column-major calls, checked both argument by
// argument and by letting the fake multiply what the arguments say and comparing with the
// product computed here from our strides.
#include "blas.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/c/common.h"

namespace tessera {
namespace gpu {
namespace {

using ::testing::HasSubstr;

// fake_cublas.c's record.
struct FakeCublasRecord {
  int creates, set_streams, gemm_calls, batched_calls;
  void* stream;
  int transa, transb, m, n, k, lda, ldb, ldc, batch, atype, btype, ctype, compute, algo;
  long long stride_a, stride_b, stride_c;
  double alpha, beta;
  int status;
};

class FakeCublas : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(LoadBlasLibrary({TESSERA_FAKE_CUBLAS}, &lib_, &error)) << error;
    auto get = reinterpret_cast<FakeCublasRecord* (*)()>(dlsym(lib_.dl, "fake_cublas_record"));
    ASSERT_NE(get, nullptr);
    record_ = get();
    *record_ = FakeCublasRecord{};
    ASSERT_EQ(lib_.create(&handle_), kCublasStatusSuccess);
  }

  BlasLibrary lib_;
  FakeCublasRecord* record_ = nullptr;
  cublas_handle handle_ = nullptr;
};

TEST(BlasMode, ParsesEveryValueAndRefusesOthersNamingTheVariable) {
  BlasMode mode = BlasMode::kOwn;
  std::string error;
  EXPECT_TRUE(ParseBlasMode(nullptr, true, &mode, &error));
  EXPECT_EQ(mode, BlasMode::kAuto);
  EXPECT_TRUE(ParseBlasMode("", true, &mode, &error));
  EXPECT_EQ(mode, BlasMode::kAuto);
  EXPECT_TRUE(ParseBlasMode("own", true, &mode, &error));
  EXPECT_EQ(mode, BlasMode::kOwn);
  EXPECT_TRUE(ParseBlasMode("auto", true, &mode, &error));
  EXPECT_EQ(mode, BlasMode::kAuto);
  EXPECT_TRUE(ParseBlasMode("cublas", true, &mode, &error));
  EXPECT_EQ(mode, BlasMode::kLibrary);
  EXPECT_FALSE(ParseBlasMode("cuBLAS", true, &mode, &error));
  EXPECT_THAT(error, HasSubstr("TESSERA_GPU_BLAS is 'cuBLAS'; expected auto, cublas or own"));
  EXPECT_FALSE(ParseBlasMode("rocblas", true, &mode, &error));
  EXPECT_THAT(error, HasSubstr("'rocblas'"));
}

TEST(BlasMode, RefusesCublasOnABackendWithoutBlas) {
  BlasMode mode;
  std::string error;
  EXPECT_TRUE(ParseBlasMode("own", false, &mode, &error));
  EXPECT_TRUE(ParseBlasMode("auto", false, &mode, &error));
  EXPECT_FALSE(ParseBlasMode("cublas", false, &mode, &error));
  EXPECT_THAT(error, HasSubstr("expected auto or own (this backend has no BLAS library"));
}

TEST(BlasLoader, TriesTheCudaNamesInOrder) {
  EXPECT_EQ(DefaultCublasNames(), (std::vector<std::string>{"libcublas.so.13", "libcublas.so"}));
}

TEST(BlasLoader, NamesEveryLibrarySearchedWhenNoneLoads) {
  BlasLibrary lib;
  std::string error;
  EXPECT_FALSE(LoadBlasLibrary({"/nonexistent/libcublas.so.13", "libtessera_no_such_cublas.so"},
                               &lib, &error));
  EXPECT_EQ(lib.dl, nullptr);
  EXPECT_THAT(error, HasSubstr("no usable cuBLAS library (searched, in order: "
                               "/nonexistent/libcublas.so.13: "));
  EXPECT_THAT(error, HasSubstr("; libtessera_no_such_cublas.so: "));
}

TEST(BlasLoader, RefusesALibraryLackingASymbolAndTakesTheNextName) {
  BlasLibrary lib;
  std::string error;
  EXPECT_FALSE(LoadBlasLibrary({TESSERA_FAKE_CUBLAS_PARTIAL}, &lib, &error));
  EXPECT_THAT(error, HasSubstr("loaded, but has no symbol cublasGemmStridedBatchedEx"));
  ASSERT_TRUE(LoadBlasLibrary({TESSERA_FAKE_CUBLAS_PARTIAL, TESSERA_FAKE_CUBLAS}, &lib, &error))
      << error;
  EXPECT_EQ(lib.path, TESSERA_FAKE_CUBLAS);
  EXPECT_NE(lib.create, nullptr);
  EXPECT_NE(lib.destroy, nullptr);
  EXPECT_NE(lib.set_stream, nullptr);
  EXPECT_NE(lib.gemm_ex, nullptr);
  EXPECT_NE(lib.gemm_strided_batched_ex, nullptr);
  EXPECT_NE(lib.get_status_string, nullptr);
}

// A row-major M x K @ K x N product of contiguous operands.
GemmProblem Contiguous(int64_t m, int64_t n, int64_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_row = k;
  p.a_col = 1;
  p.b_row = n;
  p.b_col = 1;
  p.c_row = n;
  p.c_col = 1;
  p.alpha = 1;
  p.beta = 0;
  return p;
}

TEST(BlasPlan, MapsARowMajorProductOntoTheTransposedColumnMajorOne) {
  BlasGemmCall c;
  std::string why;
  float a, b, out;
  GemmProblem p = Contiguous(2, 4, 3);
  p.a = &a;
  p.b = &b;
  p.c = &out;
  ASSERT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT32, p, &c, &why), BlasPlan::kReady) << why;
  // C^T (4 x 2, ldc 4) = B^T (op N: B's memory, ld 4) @ A^T (op N: A's memory, ld 3).
  EXPECT_EQ(c.m, 4);
  EXPECT_EQ(c.n, 2);
  EXPECT_EQ(c.k, 3);
  EXPECT_EQ(c.a, &b);
  EXPECT_EQ(c.b, &a);
  EXPECT_EQ(c.c, &out);
  EXPECT_EQ(c.transa, kCublasOpN);
  EXPECT_EQ(c.transb, kCublasOpN);
  EXPECT_EQ(c.lda, 4);
  EXPECT_EQ(c.ldb, 3);
  EXPECT_EQ(c.ldc, 4);
  EXPECT_EQ(c.batch, 1);
}

TEST(BlasPlan, UsesTheTransposeFlagForTransposedViews) {
  BlasGemmCall c;
  std::string why;
  GemmProblem p = Contiguous(2, 4, 3);
  p.a_row = 1;  // A = a 3 x 2 buffer, transposed
  p.a_col = 2;
  p.b_row = 1;  // B = a 4 x 3 buffer with padded rows (ld 5), transposed
  p.b_col = 5;
  ASSERT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT32, p, &c, &why), BlasPlan::kReady) << why;
  EXPECT_EQ(c.transa, kCublasOpT);
  EXPECT_EQ(c.lda, 5);
  EXPECT_EQ(c.transb, kCublasOpT);
  EXPECT_EQ(c.ldb, 2);
  // A column-major output (a transposed view) is C itself: A @ B, no swap.
  p.c_row = 1;
  p.c_col = 2;
  ASSERT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT32, p, &c, &why), BlasPlan::kReady) << why;
  EXPECT_EQ(c.m, 2);
  EXPECT_EQ(c.n, 4);
  EXPECT_EQ(c.transa, kCublasOpN);  // A's memory is column-major A
  EXPECT_EQ(c.lda, 2);
  EXPECT_EQ(c.transb, kCublasOpN);
  EXPECT_EQ(c.ldb, 5);
  EXPECT_EQ(c.ldc, 2);
}

TEST(BlasPlan, AsksForContiguousCopiesOfOtherStridesAndKeepsTheOwnKernelForTheRest) {
  BlasGemmCall c;
  std::string why;
  GemmProblem p = Contiguous(2, 4, 3);
  p.a_col = 2;  // every other column
  EXPECT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT32, p, &c, &why), BlasPlan::kCopyA);
  p = Contiguous(2, 4, 3);
  p.b_row = 0;  // an expanded row
  EXPECT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT32, p, &c, &why), BlasPlan::kCopyB);
  p = Contiguous(2, 4, 3);
  p.b_row = 2;  // rows overlapping (ld < N)
  EXPECT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT64, p, &c, &why), BlasPlan::kCopyB);
  p = Contiguous(2, 4, 3);
  p.c_col = 2;
  EXPECT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT32, p, &c, &why), BlasPlan::kUseOwnKernel);
  EXPECT_THAT(why, HasSubstr("output's strides"));
  p = Contiguous(2, 4, 0);
  EXPECT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT32, p, &c, &why), BlasPlan::kUseOwnKernel);
  EXPECT_EQ(why, "K = 0");
  p = Contiguous(int64_t{1} << 31, 4, 3);
  EXPECT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT32, p, &c, &why), BlasPlan::kUseOwnKernel);
  EXPECT_EQ(why, "sizes beyond int");
  p = Contiguous(2, 4, 3);
  EXPECT_EQ(PlanBlasGemm(TSR_DTYPE_INT32, p, &c, &why), BlasPlan::kUseOwnKernel);
  // Vectors: any stride of a size-1 dimension.
  p = Contiguous(1, 1, 3);
  p.a_row = 77;
  p.b_col = 99;
  p.c_row = 5;
  p.c_col = 7;
  EXPECT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT32, p, &c, &why), BlasPlan::kReady) << why;
}

TEST(BlasPlan, GivesEachDtypeItsDataAndComputeTypes) {
  const struct {
    int32_t dtype;
    int data, compute;
  } cases[] = {{TSR_DTYPE_FLOAT16, kCudaR16F, kCublasCompute32F},
               {TSR_DTYPE_BFLOAT16, kCudaR16BF, kCublasCompute32F},
               {TSR_DTYPE_FLOAT32, kCudaR32F, kCublasCompute32F},
               {TSR_DTYPE_FLOAT64, kCudaR64F, kCublasCompute64F}};
  for (const auto& t : cases) {
    BlasGemmCall c;
    std::string why;
    GemmProblem p = Contiguous(2, 4, 3);
    p.alpha = 0.5;
    p.beta = 2;
    ASSERT_EQ(PlanBlasGemm(t.dtype, p, &c, &why), BlasPlan::kReady) << why;
    EXPECT_EQ(c.data_type, t.data) << t.dtype;
    EXPECT_EQ(c.compute_type, t.compute) << t.dtype;
    if (t.compute == kCublasCompute64F) {
      EXPECT_EQ(*static_cast<const double*>(c.alpha()), 0.5);
      EXPECT_EQ(*static_cast<const double*>(c.beta()), 2.0);
    } else {
      EXPECT_EQ(*static_cast<const float*>(c.alpha()), 0.5f);
      EXPECT_EQ(*static_cast<const float*>(c.beta()), 2.0f);
    }
  }
}

TEST_F(FakeCublas, PassesEveryArgumentOfABatchedCall) {
  std::vector<float> a(3 * 2 * 3), b(3 * 3 * 4), out(3 * 2 * 4);
  GemmProblem p = Contiguous(2, 4, 3);
  p.batch = 3;
  p.a = a.data();
  p.b = b.data();
  p.c = out.data();
  p.a_batch = 6;
  p.b_batch = 12;
  p.c_batch = 8;
  p.alpha = 3;
  BlasGemmCall c;
  std::string why;
  ASSERT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT16, p, &c, &why), BlasPlan::kReady) << why;
  ASSERT_EQ(lib_.set_stream(handle_, &why), kCublasStatusSuccess);
  ASSERT_EQ(RunBlasGemm(lib_, handle_, c), "");
  EXPECT_EQ(record_->stream, &why);
  EXPECT_EQ(record_->gemm_calls, 0);
  EXPECT_EQ(record_->batched_calls, 1);
  EXPECT_EQ(record_->batch, 3);
  EXPECT_EQ(record_->stride_a, 12);  // cuBLAS's A is our B
  EXPECT_EQ(record_->stride_b, 6);
  EXPECT_EQ(record_->stride_c, 8);
  EXPECT_EQ(record_->m, 4);
  EXPECT_EQ(record_->n, 2);
  EXPECT_EQ(record_->k, 3);
  EXPECT_EQ(record_->atype, kCudaR16F);
  EXPECT_EQ(record_->btype, kCudaR16F);
  EXPECT_EQ(record_->ctype, kCudaR16F);
  EXPECT_EQ(record_->compute, kCublasCompute32F);
  EXPECT_EQ(record_->algo, kCublasGemmDefault);
  EXPECT_EQ(record_->alpha, 3.0);
  EXPECT_EQ(record_->beta, 0.0);
}

TEST_F(FakeCublas, ReportsTheLibrarysStatusText) {
  float a = 1, b = 1, out = 0;
  GemmProblem p = Contiguous(1, 1, 1);
  p.a = &a;
  p.b = &b;
  p.c = &out;
  BlasGemmCall c;
  std::string why;
  ASSERT_EQ(PlanBlasGemm(TSR_DTYPE_FLOAT32, p, &c, &why), BlasPlan::kReady);
  record_->status = 13;
  EXPECT_EQ(RunBlasGemm(lib_, handle_, c),
            "cuBLAS status 13 (CUBLAS_STATUS_EXECUTION_FAILED (fake))");
}

// A strided operand: rows x cols elements at (r * sr + c * sc) of its own buffer.
template <typename T>
struct Operand {
  int64_t rows, cols, sr, sc, batch_stride;
  std::vector<T> data;
  T at(int64_t t, int64_t r, int64_t c) const { return data[t * batch_stride + r * sr + c * sc]; }
};

enum class Layout { kRowMajor, kTransposed, kPaddedRows, kStepped };

template <typename T>
Operand<T> MakeOperand(int64_t batch, int64_t rows, int64_t cols, Layout layout, T seed) {
  Operand<T> o{rows, cols, 0, 0, 0, {}};
  switch (layout) {
    case Layout::kRowMajor:
      o.sr = cols;
      o.sc = 1;
      break;
    case Layout::kTransposed:
      o.sr = 1;
      o.sc = rows;
      break;
    case Layout::kPaddedRows:
      o.sr = cols + 3;
      o.sc = 1;
      break;
    case Layout::kStepped:
      o.sr = 2 * cols;
      o.sc = 2;
      break;
  }
  o.batch_stride = (rows * cols) * 2 + 7;
  o.data.assign(static_cast<size_t>(batch * o.batch_stride), std::numeric_limits<T>::quiet_NaN());
  for (int64_t t = 0; t < batch; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        o.data[t * o.batch_stride + r * o.sr + c * o.sc] =
            static_cast<T>(std::fmod(seed * (t + 1) + 0.25 * r - 0.5 * c + r * c, 7.0) - 3);
      }
    }
  }
  return o;
}

// What the plugin does for kCopyA / kCopyB: a contiguous copy.
template <typename T>
void MakeContiguous(int64_t batch, Operand<T>* o) {
  Operand<T> c{o->rows, o->cols, o->cols, 1, o->rows * o->cols, {}};
  c.data.resize(static_cast<size_t>(batch * c.batch_stride));
  for (int64_t t = 0; t < batch; ++t) {
    for (int64_t r = 0; r < o->rows; ++r) {
      for (int64_t k = 0; k < o->cols; ++k)
        c.data[t * c.batch_stride + r * o->cols + k] = o->at(t, r, k);
    }
  }
  *o = std::move(c);
}

template <typename T>
void CheckProducts(int32_t dtype, FakeCublasRecord* record, const BlasLibrary& lib,
                   cublas_handle handle) {
  const Layout layouts[] = {Layout::kRowMajor, Layout::kTransposed, Layout::kPaddedRows,
                            Layout::kStepped};
  const int64_t m = 5, n = 3, k = 4;
  for (int64_t batch : {int64_t{1}, int64_t{3}}) {
    for (Layout la : layouts) {
      for (Layout lb : layouts) {
        for (Layout lc : {Layout::kRowMajor, Layout::kTransposed, Layout::kPaddedRows}) {
          for (double beta : {0.0, -1.5}) {
            SCOPED_TRACE(::testing::Message() << "batch " << batch << " layouts "
                                              << static_cast<int>(la) << " " << static_cast<int>(lb)
                                              << " " << static_cast<int>(lc) << " beta " << beta);
            Operand<T> a = MakeOperand<T>(batch, m, k, la, T(1));
            Operand<T> b = MakeOperand<T>(batch, k, n, lb, T(2));
            Operand<T> c = MakeOperand<T>(batch, m, n, lc, T(3));
            if (beta == 0) {  // beta = 0 ignores C, NaN included
              for (int64_t t = 0; t < batch; ++t) {
                for (int64_t r = 0; r < m; ++r) {
                  for (int64_t j = 0; j < n; ++j) {
                    c.data[t * c.batch_stride + r * c.sr + j * c.sc] =
                        std::numeric_limits<T>::quiet_NaN();
                  }
                }
              }
            }
            const Operand<T> c0 = c;
            GemmProblem p;
            p.batch = batch;
            p.m = m;
            p.n = n;
            p.k = k;
            p.alpha = 0.5;
            p.beta = beta;
            auto set_a = [&] {
              p.a = a.data.data();
              p.a_batch = a.batch_stride;
              p.a_row = a.sr;
              p.a_col = a.sc;
            };
            auto set_b = [&] {
              p.b = b.data.data();
              p.b_batch = b.batch_stride;
              p.b_row = b.sr;
              p.b_col = b.sc;
            };
            set_a();
            set_b();
            p.c = c.data.data();
            p.c_batch = c.batch_stride;
            p.c_row = c.sr;
            p.c_col = c.sc;
            BlasGemmCall call;
            std::string why;
            BlasPlan plan;
            int copies = 0;
            while ((plan = PlanBlasGemm(dtype, p, &call, &why)) != BlasPlan::kReady) {
              ASSERT_NE(plan, BlasPlan::kUseOwnKernel) << why;
              ASSERT_LT(++copies, 3);
              const bool stepped =
                  plan == BlasPlan::kCopyA ? la == Layout::kStepped : lb == Layout::kStepped;
              EXPECT_TRUE(stepped) << "only stepped operands need a copy";
              if (plan == BlasPlan::kCopyA) {
                MakeContiguous(batch, &a);
                set_a();
              } else {
                MakeContiguous(batch, &b);
                set_b();
              }
            }
            const int calls = record->gemm_calls + record->batched_calls;
            ASSERT_EQ(RunBlasGemm(lib, handle, call), "");
            EXPECT_EQ(record->gemm_calls + record->batched_calls, calls + 1);
            EXPECT_EQ(record->batch, batch);
            for (int64_t t = 0; t < batch; ++t) {
              for (int64_t r = 0; r < m; ++r) {
                for (int64_t j = 0; j < n; ++j) {
                  double want = 0;
                  for (int64_t l = 0; l < k; ++l) want += double(a.at(t, r, l)) * b.at(t, l, j);
                  want *= 0.5;
                  if (beta != 0) want += beta * double(c0.at(t, r, j));
                  EXPECT_NEAR(double(c.at(t, r, j)), want, 1e-4)
                      << "at batch " << t << " row " << r << " column " << j;
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST_F(FakeCublas, ComputesTheRowMajorProductForEveryLayoutFloat32) {
  CheckProducts<float>(TSR_DTYPE_FLOAT32, record_, lib_, handle_);
  EXPECT_EQ(record_->compute, kCublasCompute32F);
  EXPECT_GT(record_->gemm_calls, 0);
  EXPECT_GT(record_->batched_calls, 0);
}

TEST_F(FakeCublas, ComputesTheRowMajorProductForEveryLayoutFloat64) {
  CheckProducts<double>(TSR_DTYPE_FLOAT64, record_, lib_, handle_);
  EXPECT_EQ(record_->compute, kCublasCompute64F);
  EXPECT_EQ(record_->atype, kCudaR64F);
}

}  // namespace
}  // namespace gpu
}  // namespace tessera
