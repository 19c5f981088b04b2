// Calls where Tessera once disagreed with PyTorch, each asserting the value PyTorch 1.13 gives
// (checked side by side with Debian's python3-torch; Tessera does not depend on it), and the
// overloads PyTorch's own samples call: masked_fill.Tensor, round.decimals, scatter with
// reduce, sort.stable.
#include <cmath>
#include <optional>
#include <string>
#include <tuple>

#include "cpu_test_util.hpp"
#include "gmock/gmock.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Dims = std::vector<int64_t>;

// linspace(start, end, steps, *, dtype, layout, device, pin_memory)
Tensor linspace(double start, double end, int64_t steps, tsr_dtype dtype) {
  return op("linspace", Scalar(start), Scalar(end), steps, dtype, std::nullopt, std::nullopt,
            std::nullopt);
}
// arange.start_step(start, end, step, *, dtype, layout, device, pin_memory)
Tensor arange(double start, double end, double step, tsr_dtype dtype) {
  return op("arange.start_step", Scalar(start), Scalar(end), Scalar(step), dtype, std::nullopt,
            std::nullopt, std::nullopt);
}

TEST(PyTorchParity, LinspaceWithOneStepIsStart) {
  Tensor u8 = linspace(0, 4, 1, TSR_DTYPE_UINT8);
  EXPECT_THAT(shape(u8), ElementsAre(1));
  EXPECT_THAT(values<uint8_t>(u8), ElementsAre(0));
  EXPECT_THAT(values<float>(linspace(0, -3, 1, TSR_DTYPE_FLOAT32)), ElementsAre(0.0f));
  EXPECT_THAT(shape(linspace(2, 0, 0, TSR_DTYPE_FLOAT32)), ElementsAre(0));
}

TEST(PyTorchParity, LinspaceConvertsBoundsToAnIntegralDtypeFirst) {
  // torch.linspace(0.5, 3, 4, dtype=torch.int64) == [0, 1, 2, 3]: from 0, not 0.5.
  EXPECT_THAT(values<int64_t>(linspace(0.5, 3, 4, TSR_DTYPE_INT64)), ElementsAre(0, 1, 2, 3));
  // torch.linspace(5, -1, 6, dtype=torch.int8) == [5, 3, 2, 1, 0, -1]: the second half counts
  // back from end, so both ends are exact and the middle truncates toward zero.
  EXPECT_THAT(values<int8_t>(linspace(5, -1, 6, TSR_DTYPE_INT8)), ElementsAre(5, 3, 2, 1, 0, -1));
  // torch.linspace(4.3, 50, 50, dtype=torch.int64)[1:5] == [4, 5, 6, 7] (from 4, not 4.3).
  const std::vector<int64_t> v = values<int64_t>(linspace(4.3, 50, 50, TSR_DTYPE_INT64));
  EXPECT_THAT(std::vector<int64_t>(v.begin() + 1, v.begin() + 5), ElementsAre(4, 5, 6, 7));
  // A bound outside the dtype's range is refused, as c10::checked_convert refuses it.
  try {
    linspace(-1.0, 2.0, 7, TSR_DTYPE_UINT8);
    ADD_FAILURE() << "linspace(-1.0, 2.0, 7, dtype=uint8) succeeded";
  } catch (const sdk::Error& e) {
    EXPECT_THAT(
        e.what(),
        HasSubstr("linspace: argument 'start' (-1) cannot be converted to uint8 without overflow"));
  }
}

TEST(PyTorchParity, AddmmConvertsBetaAndAlphaToTheDtypeOrRefuses) {
  // torch.addmm(a, a, a, alpha=2.5) on int64 ones: alpha truncates to 2 (1 + 2 * 2 = 5).
  const Tensor ones = i64({1, 1, 1, 1}, {2, 2});
  EXPECT_THAT(values<int64_t>(op("addmm", ones, ones, ones, Scalar(1), Scalar(2.5))),
              ElementsAre(5, 5, 5, 5));
  // A factor the dtype cannot hold is refused as c10's checked conversion refuses it ("value
  // cannot be converted to type int64_t without overflow"); the kernel's cast of it would be
  // undefined (found by the op_call fuzzer under UBSan).
  for (const auto& [beta, alpha, arg] :
       {std::tuple{1.0, -9.3e18, "alpha"}, std::tuple{1e30, 1.0, "beta"},
        std::tuple{1.0, std::nan(""), "alpha"}}) {
    try {
      op("addmm", ones, ones, ones, Scalar(beta), Scalar(alpha));
      ADD_FAILURE() << "addmm with beta " << beta << ", alpha " << alpha << " on int64 succeeded";
    } catch (const sdk::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("addmm: argument '") + arg));
      EXPECT_THAT(e.what(), HasSubstr("cannot be converted to int64 without overflow"));
    }
  }
  const Tensor i32s = i32({1, 1, 1, 1}, {2, 2});
  try {
    op("addmm", i32s, i32s, i32s, Scalar(1), Scalar(int64_t{3000000000}));
    ADD_FAILURE() << "addmm with alpha 3e9 on int32 succeeded";
  } catch (const sdk::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("argument 'alpha' (3000000000) cannot be converted to int32"));
  }
}

TEST(PyTorchParity, ArangeComputesInt64LengthsInInt64) {
  EXPECT_THAT(values<int64_t>(arange(0.0, -8.000001, -4.0, TSR_DTYPE_INT64)), ElementsAre(0, -4));
  EXPECT_THAT(values<int64_t>(arange(1.0, 5.000001, 2.0, TSR_DTYPE_INT64)), ElementsAre(1, 3));
  // Other integral dtypes take their length from the float64 arguments, as PyTorch does.
  EXPECT_THAT(values<int32_t>(arange(1.0, 5.000001, 2.0, TSR_DTYPE_INT32)), ElementsAre(1, 3, 5));
  EXPECT_THAT(values<int32_t>(arange(0.0, -8.000001, -4.0, TSR_DTYPE_INT32)),
              ElementsAre(0, -4, -8));
  // Start and step are truncated before counting, in every integral dtype.
  EXPECT_THAT(values<int32_t>(arange(2.1, -2.9, -1.0, TSR_DTYPE_INT32)),
              ElementsAre(2, 1, 0, -1, -2));
  EXPECT_THAT(values<uint8_t>(arange(2.1, -2.9, -1.0, TSR_DTYPE_UINT8)),
              ElementsAre(2, 1, 0, 255, 254));
  EXPECT_THAT(values<int8_t>(arange(-0.9, 2.1, 2.0, TSR_DTYPE_INT8)), ElementsAre(0, 2));
  EXPECT_THAT(values<int64_t>(arange(0.1, -7.9, -4.0, TSR_DTYPE_INT64)), ElementsAre(0, -4));
  // A fractional step truncates to 0 in an integral dtype.
  try {
    arange(1.5, -2.5, -0.75, TSR_DTYPE_INT32);
    ADD_FAILURE() << "arange with a step that truncates to 0 succeeded";
  } catch (const sdk::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("step must be nonzero"));
  }
}

TEST(PyTorchParity, MaskedFillExpandsSelfToTheMask) {
  Tensor self = make<uint8_t>({0, 1, 2, 3, 4}, {5}, TSR_DTYPE_UINT8);
  Tensor mask = op("eye", int64_t{5}, TSR_DTYPE_BOOL, std::nullopt, std::nullopt, std::nullopt);
  Tensor r = op("masked_fill.Scalar", self, mask, Scalar(10));
  EXPECT_EQ(r.dtype(), TSR_DTYPE_UINT8);
  EXPECT_THAT(shape(r), ElementsAre(5, 5));
  const std::vector<uint8_t> v = values<uint8_t>(r);
  EXPECT_THAT(std::vector<uint8_t>(v.begin(), v.begin() + 5), ElementsAre(10, 1, 2, 3, 4));
  EXPECT_THAT(std::vector<uint8_t>(v.begin() + 5, v.begin() + 10), ElementsAre(0, 10, 2, 3, 4));
  // The in-place form cannot grow self.
  EXPECT_THAT(error_of("masked_fill_.Scalar", op("clone", self), mask, Scalar(3)),
              HasSubstr("[5, 5]"));
}

TEST(PyTorchParity, MaskedFillTakesAZeroDimValueTensor) {
  Tensor self = make<uint8_t>({0, 1, 2, 3, 4}, {5}, TSR_DTYPE_UINT8);
  Tensor mask = b8({1, 0}, {2, 1});
  // x.masked_fill(torch.tensor([[True], [False]]), torch.tensor(7)): a 0-dim int64 value.
  Tensor r = op("masked_fill.Tensor", self, mask, i64({7}, {}));
  EXPECT_THAT(shape(r), ElementsAre(2, 5));
  EXPECT_THAT(values<uint8_t>(r), ElementsAre(7, 7, 7, 7, 7, 0, 1, 2, 3, 4));
  // A float value into an int tensor truncates, as Tensor.item() and a Scalar would.
  Tensor ints = i32({1, 2, 3}, {3});
  EXPECT_THAT(values<int32_t>(op("masked_fill.Tensor", ints, b8({0, 1, 0}, {3}), f32({-2.7f}, {}))),
              ElementsAre(1, -2, 3));
  // In-place and out= forms.
  Tensor floats = f32({1, 2, 3}, {3});
  op("masked_fill_.Tensor", floats, b8({1, 0, 1}, {3}), f64({0.5}, {}));
  EXPECT_THAT(values<float>(floats), ElementsAre(0.5f, 2, 0.5f));
  Tensor out = f32({}, {0});
  op("masked_fill.Tensor_out", f32({4, 5}, {2}), b8({0, 1}, {2}), f32({9}, {}), out);
  EXPECT_THAT(values<float>(out), ElementsAre(4, 9));
  EXPECT_THAT(error_of("masked_fill.Tensor", floats, b8({1, 0, 1}, {3}), f32({1}, {1})),
              HasSubstr("only supports a 0-dimensional value tensor, but got tensor with 1 "
                        "dimension(s)"));
}

TEST(PyTorchParity, GatherAndScatterDoNotCheckAnEmptyIndex) {
  // torch.gather(torch.ones(5, dtype=torch.bool), 0, torch.zeros(0, dtype=torch.uint8))
  Tensor r =
      op("gather", b8({1, 1, 1, 1, 1}, {5}), int64_t{0}, make<uint8_t>({}, {0}, TSR_DTYPE_UINT8));
  EXPECT_EQ(r.dtype(), TSR_DTYPE_BOOL);
  EXPECT_THAT(shape(r), ElementsAre(0));
  // An empty index of another rank and dtype: the result has the index's shape.
  Tensor wide = op("full", Dims{5, 7}, Scalar(1.0));
  EXPECT_THAT(shape(op("gather", wide, int64_t{1}, make<int32_t>({}, {0, 3}, TSR_DTYPE_INT32))),
              ElementsAre(0, 3));
  Tensor s = op("scatter.src", f32({1, 1, 1}, {3}), int64_t{0},
                make<uint8_t>({}, {0}, TSR_DTYPE_UINT8), f32({}, {0}));
  EXPECT_THAT(values<float>(s), ElementsAre(1, 1, 1));
  // A non-empty index is still checked.
  EXPECT_THAT(
      error_of("gather", b8({1, 1}, {2}), int64_t{0}, make<uint8_t>({0}, {1}, TSR_DTYPE_UINT8)),
      HasSubstr("expected 'index' to be an int64 tensor, got uint8"));
}

TEST(PyTorchParity, RoundWithDecimals) {
  Tensor t = f32({1.2345f, -2.5f, 1234.5f, 0.125f, -0.0051f, 15.0f, 25.0f}, {7});
  // torch.round(t, decimals=2) and decimals=-1 (half to even, computed in float).
  EXPECT_THAT(values<float>(op("round.decimals", t, int64_t{2})),
              ElementsAre(1.23f, -2.5f, 1234.5f, 0.12f, -0.01f, 15.0f, 25.0f));
  std::vector<float> tens = values<float>(op("round.decimals", t, int64_t{-1}));
  EXPECT_THAT(tens, ElementsAre(0.0f, -0.0f, 1230.0f, 0.0f, -0.0f, 20.0f, 20.0f));
  EXPECT_TRUE(std::signbit(tens[1]));
  // 0.35f * 10 is 3.5 in float (PyTorch computes float32 in float), which rounds to even: 0.4.
  Tensor self = f32({0.25f, 0.35f}, {2});
  op("round_.decimals", self, int64_t{1});
  EXPECT_THAT(values<float>(self), ElementsAre(0.2f, 0.4f));
  // Integers are refused for every decimals, 0 included, as PyTorch's round.decimals does.
  EXPECT_THAT(error_of("round.decimals", i64({15, 25}, {2}), int64_t{0}),
              HasSubstr("not implemented for dtype int64"));
  EXPECT_THAT(error_of("round.decimals", i64({15, 25}, {2}), int64_t{1}),
              HasSubstr("not implemented for dtype int64"));
}

TEST(PyTorchParity, ScatterReducesWithAddOrMultiply) {
  Tensor index = i64({0, 1, 2, 0, 0, 1, 0, 0}, {2, 4});
  Tensor src = f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  Tensor base = op("full", Dims{3, 4}, Scalar(2.0));
  EXPECT_THAT(values<float>(
                  op("scatter.reduce", base, int64_t{0}, index, src, std::string_view("multiply"))),
              ElementsAre(10, 2, 14, 64, 2, 24, 2, 2, 2, 2, 6, 2));
  EXPECT_THAT(
      values<float>(op("scatter.reduce", base, int64_t{0}, index, src, std::string_view("add"))),
      ElementsAre(8, 2, 9, 14, 2, 10, 2, 2, 2, 2, 5, 2));
  // A Scalar value: torch.full((3,), 2).scatter(0, [0, 0, 2], 3, reduce='multiply').
  Tensor ints = op("full", Dims{3}, Scalar(2));
  EXPECT_THAT(values<int64_t>(op("scatter.value_reduce", ints, int64_t{0}, i64({0, 0, 2}, {3}),
                                 Scalar(3), std::string_view("multiply"))),
              ElementsAre(18, 2, 6));
  // bool: multiply is `and`, add is `or`.
  EXPECT_THAT(values<uint8_t>(op("scatter.reduce", b8({1, 0}, {2}), int64_t{0}, i64({0, 0}, {2}),
                                 b8({0, 1}, {2}), std::string_view("multiply"))),
              ElementsAre(0, 0));
  EXPECT_THAT(values<uint8_t>(op("scatter.reduce", b8({1, 0}, {2}), int64_t{0}, i64({1, 1}, {2}),
                                 b8({0, 1}, {2}), std::string_view("add"))),
              ElementsAre(1, 1));
  // In-place.
  Tensor self = f32({1, 1}, {2});
  op("scatter_.value_reduce", self, int64_t{0}, i64({1, 1}, {2}), Scalar(3.0),
     std::string_view("add"));
  EXPECT_THAT(values<float>(self), ElementsAre(1, 7));
  EXPECT_THAT(error_of("scatter.reduce", base, int64_t{0}, index, src, std::string_view("max")),
              HasSubstr("reduce argument must be either add or multiply"));
}

TEST(PyTorchParity, StableSortKeepsTiesInOrderAndNanLast) {
  const float nan = std::nanf("");
  Tensor v = f32({2, 1, 2, 0, 1, 2, nan, 0}, {8});
  std::vector<Tensor> up = ops("sort.stable", v, true, int64_t{0}, false);
  EXPECT_THAT(values<int64_t>(up[1]), ElementsAre(3, 7, 1, 4, 0, 2, 5, 6));
  std::vector<Tensor> down = ops("sort.stable", v, true, int64_t{-1}, true);
  EXPECT_THAT(values<int64_t>(down[1]), ElementsAre(6, 0, 2, 5, 1, 4, 3, 7));
  EXPECT_TRUE(std::isnan(values<float>(down[0])[0]));
  // stable=None is allowed (and is stable here too); the out= form.
  Tensor vals = b8({}, {0}), idx = i64({}, {0});
  ops("sort.values_stable", b8({1, 0, 1, 0}, {4}), std::nullopt, int64_t{0}, false, vals, idx);
  EXPECT_THAT(values<int64_t>(idx), ElementsAre(1, 3, 0, 2));
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera
