// The small ops a training step traced by make_fx calls besides its backward ops (op set 1.4):
// the *_like factories (dtype, device and clone's layout rule; their out= forms, which the
// conformance oracles cannot call: they take no dtype) and the aliases detach and
// _reshape_alias (writes through them reach the base; errors name the op called).
#include "cpu_test_util.hpp"
#include "gmock/gmock.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::HasSubstr;

TEST(LikeOps, DtypeDeviceAndLayout) {
  const Tensor base = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor transposed = op("t", base);
  Tensor t = op("ones_like", transposed, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                std::nullopt);
  EXPECT_EQ(shape(t), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t.strides().vec(), transposed.strides().vec());  // preserve_format: dense strides
  EXPECT_EQ(values<float>(t), std::vector<float>(6, 1));
  t = op("zeros_like", transposed, TSR_DTYPE_INT64);
  EXPECT_EQ(t.dtype(), TSR_DTYPE_INT64);
  EXPECT_EQ(values<int64_t>(t), std::vector<int64_t>(6, 0));
  t = op("full_like", base, 2.5);
  EXPECT_EQ(values<float>(t), std::vector<float>(6, 2.5));
  EXPECT_THAT(error_of("full_like", i64({1}, {1}), 1e30), HasSubstr("fill_value"));
  EXPECT_EQ(shape(op("empty_like", transposed)), (std::vector<int64_t>{3, 2}));
  t = op("empty_like", transposed, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
         TSR_MEMORY_FORMAT_CONTIGUOUS);
  EXPECT_EQ(t.strides().vec(), (std::vector<int64_t>{2, 1}));
}

TEST(LikeOps, OutFormsResizeToSelf) {
  const Tensor base = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  for (const char* name : {"zeros_like.out", "ones_like.out", "empty_like.out"}) {
    SCOPED_TRACE(name);
    const Tensor out = i64({9}, {1});
    op(name, base, std::nullopt, out);
    EXPECT_EQ(shape(out), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(out.dtype(), TSR_DTYPE_INT64);  // out keeps its dtype
    if (std::string(name) != "empty_like.out") {
      EXPECT_EQ(values<int64_t>(out), std::vector<int64_t>(6, name[0] == 'o' ? 1 : 0));
    }
  }
  const Tensor out = f32({0}, {1});
  op("full_like.out", base, 7.0, std::nullopt, out);
  EXPECT_EQ(shape(out), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(out), std::vector<float>(6, 7));
  EXPECT_THAT(error_of("full_like.out", base, 300, std::nullopt,
                       make(std::vector<uint8_t>{0}, {1}, TSR_DTYPE_UINT8)),
              HasSubstr("fill_value"));
}

TEST(ViewOps, DetachAndReshapeAliasShareStorage) {
  const Tensor base = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor detached = op("detach", base);
  op("fill_.Scalar", detached, 0.0);
  EXPECT_EQ(values<float>(base), std::vector<float>(6, 0));
  const Tensor alias =
      op("_reshape_alias", base, std::vector<int64_t>{3, 2}, std::vector<int64_t>{1, 3});
  op("fill_.Scalar", op("select.int", alias, int64_t{0}, int64_t{0}), 9.0);  // base[:, 0]
  EXPECT_EQ(values<float>(base), (std::vector<float>{9, 0, 0, 9, 0, 0}));
  EXPECT_THAT(error_of("_reshape_alias", base, std::vector<int64_t>{7}, std::vector<int64_t>{1}),
              HasSubstr("storage"));
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera
