// Matrix products of the CPU plugin: oneDNN (float32, bfloat16) and our own loops (the other
// dtypes) against hand-checked values.
#include "cpu_test_util.hpp"
#include "gmock/gmock.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

TEST(CpuLinalg, ShapeAndDtypeErrorsNameTheOp) {
  EXPECT_THAT(error_of("mm", f32({1, 2}, {1, 2}), f32({1, 2}, {1, 2})),
              HasSubstr("mm: shapes [1, 2] and [1, 2] cannot be multiplied (2 != 1)"));
  EXPECT_THAT(error_of("mm", f32({1}, {1, 1}), f64({1}, {1, 1})),
              HasSubstr("expected both matrices to have the same dtype"));
  EXPECT_THAT(error_of("mm", b8({1}, {1, 1}), b8({1}, {1, 1})),
              HasSubstr("not implemented for dtype bool"));
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera
