// tessera/sdk/ops.hpp, the generated C++ functions of the op set, on the CPU plugin: calls read
// as ATen's C++ API does (defaults in place, brace lists, {} and undefined tensors for None,
// overloads chosen by argument types, tuples for several returns, None elements of a Tensor?[],
// bool, int and Scalar returns as C++ values), and give what the same op called through find_op
// gives.
#include <cmath>

#include "cpu_test_util.hpp"
#include "gmock/gmock.h"
#include "tessera/sdk/ops.hpp"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::HasSubstr;

TEST(OpsHpp, DefaultsBraceListsAndNone) {
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  // softmax.int(self, dim, dtype=None): the default in place.
  EXPECT_EQ(values<float>(ops::softmax(x, 1)),
            values<float>(op("softmax.int", x, int64_t{1}, std::nullopt)));
  // conv2d(input, weight, bias=None, stride, padding, ...): {} for None, brace lists.
  const Tensor image = f32(std::vector<float>(16, 1), {1, 1, 4, 4});
  const Tensor kernel = f32({1, 1, 1, 1}, {1, 1, 2, 2});
  const Tensor y = ops::conv2d(image, kernel, {}, {2, 2}, {0, 0});
  EXPECT_EQ(shape(y), (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(values<float>(y), std::vector<float>(4, 4));
  // conv2d.padding's string padding needs its stride: the overloads never collide.
  EXPECT_EQ(shape(ops::conv2d(image, kernel, {}, {1, 1}, "same")),
            (std::vector<int64_t>{1, 1, 4, 4}));
  // An undefined Tensor for a Tensor? argument is None, as libtorch takes it.
  EXPECT_EQ(values<float>(ops::conv2d(image, kernel, Tensor())), std::vector<float>(9, 4));
  // sum(self, dtype=None) and sum.dim_IntList(self, dim, keepdim=False, dtype=None).
  EXPECT_EQ(values<float>(ops::sum(x)), (std::vector<float>{21}));
  EXPECT_EQ(values<float>(ops::sum(x, {1})), (std::vector<float>{6, 15}));
  EXPECT_EQ(shape(ops::sum(x, {1}, true)), (std::vector<int64_t>{2, 1}));
}

TEST(OpsHpp, OverloadsByArgumentType) {
  const Tensor x = f32({1, 2, 3}, {3});
  EXPECT_EQ(values<float>(ops::add(x, 1.5)), (std::vector<float>{2.5, 3.5, 4.5}));  // .Scalar
  EXPECT_EQ(values<float>(ops::add(x, x, 2)), (std::vector<float>{3, 6, 9}));       // .Tensor
  EXPECT_EQ(values<float>(ops::clamp(x, 1.5, 2.5)), (std::vector<float>{1.5, 2, 2.5}));
  EXPECT_EQ(values<float>(ops::clamp(x, f32({2}, {1}))), (std::vector<float>{2, 2, 3}));
  EXPECT_EQ(values<float>(ops::div(x, x, "floor")), (std::vector<float>{1, 1, 1}));
  // In place: self, changed, returned.
  const Tensor y = op("clone", x, std::nullopt);
  ops::relu_(ops::neg_(y));
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 0, 0}));
  // Operators beside Tensor: a Scalar on either side.
  EXPECT_EQ(values<float>(x / 2), (std::vector<float>{0.5, 1, 1.5}));
  EXPECT_EQ(values<float>(2 * x + 1), (std::vector<float>{3, 5, 7}));
  EXPECT_EQ(values<float>(x / x), (std::vector<float>{1, 1, 1}));
}

// A later overload keeps its defaults where the earlier one cannot take the shorter call: op
// set 1.11's bernoulli_.Tensor needs its p, so bernoulli_.float's p = 0.5 stays and a call
// written against op set 1.10's header still compiles (embedding_guide.md's promise).
TEST(OpsHpp, ANewOverloadLeavesOlderCallsCompiling) {
  const Tensor x = f32({0, 0, 0, 0}, {4});
  for (float v : values<float>(ops::bernoulli_(x))) EXPECT_TRUE(v == 0 || v == 1);
  for (float v : values<float>(ops::bernoulli_(x, f32({1}, {1})))) EXPECT_EQ(v, 1);  // .Tensor
  EXPECT_EQ(shape(ops::normal(f32({0, 0}, {2}))), (std::vector<int64_t>{2}));  // .Tensor_float
  EXPECT_EQ(shape(ops::random_(op("clone", x, std::nullopt), 5)), (std::vector<int64_t>{4}));
}

TEST(OpsHpp, WhatATypicalCallerWritesCompilesAndRuns) {
  // Found by trying the header as a new application developer would.
  const Tensor x = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  // One integer for an int[] (ATen's IntArrayRef): max_pool2d(x, 2) is a 2x2 window.
  EXPECT_EQ(values<float>(ops::max_pool2d(x, 2)), (std::vector<float>{4}));
  EXPECT_EQ(values<float>(ops::sum(x, 3)), (std::vector<float>{3, 7}));
  // An enum is not a Scalar: arange(end, dtype) is not ambiguous with arange(start, end).
  EXPECT_EQ(values<double>(ops::arange(3, TSR_DTYPE_FLOAT64)), (std::vector<double>{0, 1, 2}));
  // Any integer type is a Scalar.
  const std::vector<float> v{1, 2};
  EXPECT_EQ(values<float>(ops::mul(f32(v, {2}), v.size())), (std::vector<float>{2, 4}));
  EXPECT_EQ(values<float>(ops::mul(f32(v, {2}), 3LL)), (std::vector<float>{3, 6}));
  // A Scalar on the left of - and / (PyTorch's __rsub__, __rtruediv__), and in place.
  Tensor y = f32({1, 2, 4}, {3});
  EXPECT_EQ(values<float>(1 - y), (std::vector<float>{0, -1, -3}));
  EXPECT_EQ(values<float>(1 / y), (std::vector<float>{1, 0.5, 0.25}));
  y += 1;
  y *= y;
  EXPECT_EQ(values<float>(y), (std::vector<float>{4, 9, 25}));
}

TEST(OpsHpp, SeveralReturnsAsATupleWithNoneUndefined) {
  const Tensor x = f32({3, 1, 2}, {3});
  const auto [values_, indices] = ops::sort(x);
  EXPECT_EQ(values<float>(values_), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(values<int64_t>(indices), (std::vector<int64_t>{1, 2, 0}));
  const Tensor image = f32(std::vector<float>(16, 1), {1, 1, 4, 4});
  const Tensor kernel = f32({1, 1, 1, 1}, {1, 1, 2, 2});
  const Tensor g = f32(std::vector<float>(9, 1), {1, 1, 3, 3});
  const auto [gx, gw, gb] = ops::convolution_backward(g, image, kernel, std::nullopt, {1}, {0}, {1},
                                                      false, {0}, 1, {false, true, false});
  EXPECT_FALSE(gx.defined());
  EXPECT_EQ(values<float>(gw), std::vector<float>(4, 9));
  EXPECT_FALSE(gb.defined());
}

TEST(OpsHpp, ListReturnsAsAVectorOfViews) {
  const Tensor x = f32({0, 1, 2, 3, 4, 5, 6}, {7});
  // split.Tensor: pieces of 3, the last shorter; each a view of x.
  const std::vector<Tensor> pieces = ops::split(x, 3);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(values<float>(pieces[1]), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(values<float>(pieces[2]), (std::vector<float>{6}));
  EXPECT_EQ(pieces[2].data_ptr(), static_cast<float*>(x.data_ptr()) + 6);
  // tessera::call gives a Tensor[] return's elements in order, as ops:: does.
  const std::vector<Tensor> chunks = call(find_op("chunk"), x, int64_t{2}, int64_t{0});
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(values<float>(chunks[0]), (std::vector<float>{0, 1, 2, 3}));
  // No pieces at all: unbind along a dim of size 0.
  EXPECT_TRUE(ops::unbind(f32({}, {2, 0}), 1).empty());
  // call1's packed entry has no room for a list: it says so.
  try {
    call1(find_op("split.Tensor"), x, int64_t{3});
    ADD_FAILURE() << "call1 of split.Tensor succeeded";
  } catch (const sdk::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("returns Tensor[]"));
  }
}

TEST(OpsHpp, OptionalTensorListsFloatListsAndOneIntegerForAnIntList) {
  // index(self, Tensor?[] indices): x[:, [2, 0]], None as std::nullopt or an undefined Tensor.
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor columns = i64({2, 0}, {2});
  EXPECT_EQ(values<float>(ops::index(x, {std::nullopt, columns})),
            (std::vector<float>{3, 1, 6, 4}));
  EXPECT_EQ(values<float>(ops::index(x, {Tensor(), columns})), (std::vector<float>{3, 1, 6, 4}));
  // One integer for an int[2] is two of it, as PyTorch's Python API takes it; {1} as written.
  const Tensor image = f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2});
  EXPECT_EQ(shape(ops::adaptive_avg_pool2d(image, 1)), (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_EQ(values<float>(ops::adaptive_avg_pool2d(image, 1)), (std::vector<float>{2.5, 6.5}));
  EXPECT_THROW(ops::adaptive_avg_pool2d(image, {1}), sdk::Error);
  // upsample_nearest1d.vec(input, output_size, scale_factors): a float[]? brace list.
  const Tensor row = f32({1, 2}, {1, 1, 2});
  EXPECT_EQ(values<float>(ops::upsample_nearest1d(row, std::nullopt, {2.0})),
            (std::vector<float>{1, 1, 2, 2}));
}

TEST(OpsHpp, HostValuesAsBoolAndScalar) {
  // equal, allclose, is_nonzero return a bool; item a Scalar of the tensor's kind.
  const Tensor x = f32({1, 2, 3}, {3});
  EXPECT_TRUE(ops::equal(x, f32({1, 2, 3}, {3})));
  EXPECT_FALSE(ops::equal(x, f32({1, 2, 4}, {3})));
  EXPECT_FALSE(ops::equal(x, f32({1, 2, 3}, {1, 3})));  // another shape
  EXPECT_TRUE(ops::equal(x, i64({1, 2, 3}, {3})));      // compared after promotion
  EXPECT_TRUE(ops::allclose(x, f32({1, 2, 3.00001f}, {3})));
  EXPECT_FALSE(ops::allclose(x, f32({1, 2, 3.1f}, {3})));
  EXPECT_TRUE(ops::allclose(x, f32({1, 2, 3.1f}, {3}), 0, 0.2));
  EXPECT_TRUE(ops::is_nonzero(f32({NAN}, {1})));
  const sdk::Scalar f = ops::item(f32({2.5}, {1, 1}));
  EXPECT_TRUE(f.is_floating_point());
  EXPECT_EQ(f.to_double(), 2.5);
  const sdk::Scalar i = ops::item(i64({-7}, {}));
  EXPECT_FALSE(i.is_floating_point());
  EXPECT_EQ(i.to_int(), -7);
  EXPECT_EQ(ops::item(b8({1}, {})).c.kind, TSR_SCALAR_BOOL);
  EXPECT_EQ(ops::_local_scalar_dense(f32({4, 5}, {2})).to_double(), 4);  // the first element
  try {
    ops::item(x);
    ADD_FAILURE() << "item of 3 elements succeeded";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("a Tensor with 3 elements cannot be converted to Scalar"));
  }
}

TEST(OpsHpp, MetadataQueriesAsInt64AndBool) {
  // sym_size.int, sym_stride.int, sym_numel, sym_storage_offset return an int64_t (SymInt),
  // sym_is_contiguous a bool (SymBool), memory_format defaulted to contiguous_format.
  const Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  const int64_t size = ops::sym_size(x, -1);
  EXPECT_EQ(size, 3);
  EXPECT_EQ(ops::sym_stride(x, 0), 3);
  EXPECT_EQ(ops::sym_numel(x), 6);
  EXPECT_TRUE(ops::sym_is_contiguous(x));
  const Tensor view = ops::narrow(ops::transpose(x, 0, 1), 0, 1, 2);  // [2, 2], strides [1, 3]
  EXPECT_EQ(ops::sym_stride(view, 1), 3);
  EXPECT_EQ(ops::sym_storage_offset(view), 1);
  EXPECT_FALSE(ops::sym_is_contiguous(view));
  // [N, H, W, C] viewed as [N, C, H, W]: channels-last strides.
  const Tensor nhwc = ops::permute(f32(std::vector<float>(48, 0), {2, 3, 4, 2}), {0, 3, 1, 2});
  EXPECT_TRUE(ops::sym_is_contiguous(nhwc, TSR_MEMORY_FORMAT_CHANNELS_LAST));
  EXPECT_FALSE(ops::sym_is_contiguous(nhwc));
  try {
    ops::sym_size(x, 2);
    ADD_FAILURE() << "sym_size of dim 2 of a 2-D tensor succeeded";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), TSR_OUT_OF_RANGE);
    EXPECT_THAT(
        e.what(),
        HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)"));
  }
}

TEST(OpsHpp, ErrorsAreTheOpsOwn) {
  const Tensor x = f32({1, 2, 3}, {3});
  try {
    ops::softmax(x, 5);
    ADD_FAILURE() << "softmax over dim 5 of a 1-D tensor succeeded";
  } catch (const sdk::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("Dimension out of range"));
  }
}

// Tensor methods (tensor_methods.inc, defined in ops.hpp): ATen's method ops on the tensor as
// `self`, with the functions' defaults, overloads and returns, chained as libtorch code is.
TEST(OpsHpp, TensorMethodsAsATenHasThem) {
  const Tensor x = f32({1, -2, 3, -4, 5, -6}, {2, 3});
  EXPECT_EQ(shape(x.view({3, 2})), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(shape(x.view({-1})), (std::vector<int64_t>{6}));
  EXPECT_EQ(values<float>(x.transpose(0, 1).contiguous()),
            (std::vector<float>{1, -4, -2, 5, 3, -6}));
  EXPECT_EQ(values<float>(x.sum()), (std::vector<float>{-3}));  // sum(self, dtype=None)
  EXPECT_EQ(shape(x.sum({1}, true)), (std::vector<int64_t>{2, 1}));  // sum.dim_IntList
  EXPECT_EQ(values<float>(x.softmax(1)), values<float>(ops::softmax(x, 1)));
  EXPECT_EQ(values<float>(x.add(x, 2)), (std::vector<float>{3, -6, 9, -12, 15, -18}));
  EXPECT_EQ(values<double>(x.to(TSR_DTYPE_FLOAT64)),
            (std::vector<double>{1, -2, 3, -4, 5, -6}));
  EXPECT_EQ(values<float>(x.abs().reshape({6}).mul(2)),
            (std::vector<float>{2, 4, 6, 8, 10, 12}));
  // In place: the elements change, and the method returns the same tensor, so calls chain.
  const Tensor y = x.clone();
  const Tensor r = y.relu_().mul_(3);
  EXPECT_EQ(values<float>(y), (std::vector<float>{3, 0, 9, 0, 15, 0}));
  EXPECT_EQ(r.get(), y.get());
  // Several returns as a tuple, a list as a vector, a host value as a C++ value.
  auto [values_, indices] = x.max(1);
  EXPECT_EQ(values<float>(values_), (std::vector<float>{3, 5}));
  EXPECT_EQ(values<int64_t>(indices), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(x.split(1).size(), 2u);
  EXPECT_EQ(x.sum().item().to_double(), -3.0);
  EXPECT_TRUE(x.equal(x));
  // where.self's self is its second argument: x.where(condition, other) keeps x where true.
  const Tensor keep = op("gt.Scalar", x, Scalar(0));
  EXPECT_EQ(values<float>(x.where(keep, ops::zeros_like(x))),
            (std::vector<float>{1, 0, 3, 0, 5, 0}));
  // Errors are the op's own, as for the functions.
  try {
    x.view({4, 2});
    ADD_FAILURE() << "expected an error";
  } catch (const sdk::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("shape '[4, 2]' is invalid for input of size 6"));
  }
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera
