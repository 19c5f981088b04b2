#include "dispatcher/core_ops.h"

#include <cmath>
#include <cstring>

#include "core/views.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Device kMeta(DeviceType::kMeta);
const Device kCpu(DeviceType::kCPU);

Tensor MetaT(std::initializer_list<int64_t> sizes, ScalarType dtype = ScalarType::kFloat32) {
  return *Empty(sizes, dtype, kMeta);
}

// Calls `name` on the global registry and returns the stack or the error.
absl::StatusOr<Stack> CallGlobal(std::string_view name, Stack args) {
  absl::StatusOr<OperatorHandle> op = OpRegistry::Global().Find(name);
  if (!op.ok()) return op.status();
  absl::Status s = OpRegistry::Global().Call(*op, &args);
  if (!s.ok()) return s;
  return args;
}

Tensor RunOne(std::string_view name, Stack args) {
  absl::StatusOr<Stack> out = CallGlobal(name, std::move(args));
  EXPECT_TRUE(out.ok()) << name << ": " << out.status();
  return out.ok() ? (*out)[0].tensor() : Tensor();
}

std::string ErrorOf(std::string_view name, Stack args) {
  absl::StatusOr<Stack> out = CallGlobal(name, std::move(args));
  EXPECT_FALSE(out.ok()) << name << " unexpectedly succeeded";
  return out.ok() ? "" : std::string(out.status().message());
}

TEST(CoreOps, GlobalRegistryDefinesTheCoreLibrary) {
  std::vector<std::string> ops = OpRegistry::Global().ListOps();
  for (const char* name : {"view", "reshape", "transpose.int", "slice.Tensor", "flatten.using_ints",
                           "empty.memory_format", "clone", "copy_", "add.Tensor", "sum.dim_IntList",
                           "max.dim", "mm", "where.self", "_softmax"}) {
    EXPECT_THAT(ops, ::testing::Contains(name));
  }
}

TEST(CoreOps, ViewOpsRunOnAnyDeviceThroughTheDispatcher) {
  Tensor t = RunOne("transpose.int", {MetaT({2, 3}), Value(0), Value(1)});
  EXPECT_THAT(t.sizes(), ElementsAre(3, 2));
  EXPECT_THAT(t.strides(), ElementsAre(1, 3));
  Tensor cpu = *Empty({4, 5}, ScalarType::kInt32, kCpu);
  Tensor s = RunOne("slice.Tensor", {cpu, Value(1), Value(1), Value(std::nullopt), Value(2)});
  EXPECT_THAT(s.sizes(), ElementsAre(4, 2));
  EXPECT_EQ(s.storage_offset(), 1);
  EXPECT_TRUE(s.IsSameStorage(cpu));
  Tensor f = RunOne("flatten.using_ints", {cpu});
  EXPECT_THAT(f.sizes(), ElementsAre(20));
  EXPECT_TRUE(f.IsSameStorage(cpu)) << "contiguous input: flatten is a view";
  EXPECT_THAT(RunOne("flatten.using_ints", {MetaT({})}).sizes(), ElementsAre(1));
  EXPECT_THAT(ErrorOf("flatten.using_ints", {cpu, Value(1), Value(0)}),
              HasSubstr("start_dim (1) cannot come after end_dim (0)"));
  EXPECT_THAT(ErrorOf("view", {cpu, Value(IntList{3, -1})}),
              HasSubstr("shape '[3, -1]' is invalid for input of size 20"));
  EXPECT_THAT(RunOne("expand", {MetaT({3, 1}), Value(IntList{3, 4})}).strides(), ElementsAre(1, 0));
}

// reshape of a non-viewable tensor copies through the backend's `clone`; in a private
// registry with the core library and an in-process CPU clone, that path is observable.
absl::Status CloneCpuFloat(void*, const OperatorHandle&, Stack* stack) {
  const Tensor src = (*stack)[0].tensor();
  absl::StatusOr<Tensor> out = Empty(src.sizes(), src.dtype(), src.device());
  if (!out.ok()) return out.status();
  // 2-D strided copy, enough for the test.
  const float* in = static_cast<const float*>(src.data_ptr());
  float* dst = out->data<float>();
  for (int64_t i = 0; i < src.sizes()[0]; ++i) {
    for (int64_t j = 0; j < src.sizes()[1]; ++j) {
      *dst++ = in[i * src.strides()[0] + j * src.strides()[1]];
    }
  }
  stack->clear();
  stack->push_back(*std::move(out));
  return absl::OkStatus();
}

TEST(CoreOps, ReshapeViewsWhenItCanAndClonesWhenItMust) {
  OpRegistry registry;
  ASSERT_TRUE(DefineCoreOps(registry).ok());
  KernelFunction clone;
  clone.fn = &CloneCpuFloat;
  clone.name = "test_clone";
  auto impl = registry.Impl("clone", DispatchKey::kCPU, clone);
  ASSERT_TRUE(impl.ok());
  Tensor base = *Empty({2, 3}, ScalarType::kFloat32, kCpu);
  for (int i = 0; i < 6; ++i) base.data<float>()[i] = static_cast<float>(i);
  OperatorHandle reshape = *registry.Find("reshape");

  Stack viewable{base, Value(IntList{3, 2})};
  ASSERT_TRUE(registry.Call(reshape, &viewable).ok());
  EXPECT_TRUE(viewable[0].tensor().IsSameStorage(base));

  Tensor transposed = *Transpose(base, 0, 1);  // (3, 2), not viewable as (6)
  Stack copied{transposed, Value(IntList{6})};
  absl::Status s = registry.Call(reshape, &copied);
  ASSERT_TRUE(s.ok()) << s;
  const Tensor flat = copied[0].tensor();
  EXPECT_FALSE(flat.IsSameStorage(base));
  EXPECT_THAT(std::vector<float>(flat.data<float>(), flat.data<float>() + 6),
              ElementsAre(0, 3, 1, 4, 2, 5));
  Stack contiguous{transposed};
  ASSERT_TRUE(registry.Call(*registry.Find("contiguous"), &contiguous).ok());
  EXPECT_TRUE(contiguous[0].tensor().is_contiguous());
  Stack already{base};
  ASSERT_TRUE(registry.Call(*registry.Find("contiguous"), &already).ok());
  EXPECT_EQ(already[0].tensor().impl(), base.impl()) << "contiguous input is returned as is";
  // Without a CPU clone kernel the copy path reports what is missing.
  impl->Reset();
  Stack missing{transposed, Value(IntList{6})};
  EXPECT_THAT(registry.Call(reshape, &missing).message(),
              HasSubstr("not implemented for clone on cpu"));
}

TEST(CoreOps, EmptyFactoriesAllocateOnTheRequestedDevice) {
  Tensor cpu = RunOne("empty.memory_format",
                      {Value(IntList{2, 3}), Value(ScalarType::kInt16), Value(), Value(kCpu)});
  EXPECT_EQ(cpu.dtype(), ScalarType::kInt16);
  EXPECT_NE(cpu.data_ptr(), nullptr);
  Tensor meta = RunOne("empty.memory_format", {Value(IntList{4}), Value(), Value(), Value("meta")});
  EXPECT_EQ(meta.device(), kMeta);
  EXPECT_EQ(meta.dtype(), ScalarType::kFloat32) << "default dtype";
  Tensor strided = RunOne("empty_strided", {Value(IntList{2, 3}), Value(IntList{1, 2})});
  EXPECT_THAT(strided.strides(), ElementsAre(1, 2));
  EXPECT_THAT(ErrorOf("empty.memory_format", {Value(IntList{2, -1})}),
              HasSubstr("size -1 at dimension 1"));
  EXPECT_THAT(
      ErrorOf("empty.memory_format", {Value(IntList{2}), Value(), Value(), Value("cuda:0")}),
      HasSubstr("no backend has registered device type 'cuda'"));
  EXPECT_THAT(ErrorOf("empty_strided", {Value(IntList{2, 3}), Value(IntList{1})}),
              HasSubstr("expected as many strides as sizes"));
}

TEST(CoreOps, CloneAndCopyMeta) {
  Tensor permuted = *Permute(MetaT({2, 3, 4}), {2, 0, 1});
  Tensor kept = RunOne("clone", {permuted});
  EXPECT_THAT(kept.strides(), ElementsAre(1, 12, 4)) << "preserve_format keeps dense strides";
  Tensor dense = RunOne("clone", {permuted, Value(int64_t{kMemoryFormatContiguous})});
  EXPECT_TRUE(dense.is_contiguous());
  Tensor sliced = *Slice(MetaT({4, 4}), 1, 0, 4, 2);
  EXPECT_TRUE(RunOne("clone", {sliced}).is_contiguous()) << "non-dense: contiguous";
  Tensor dst = MetaT({3, 4});
  EXPECT_EQ(RunOne("copy_", {dst, MetaT({4})}).impl(), dst.impl());
  EXPECT_THAT(
      ErrorOf("copy_", {dst, MetaT({2, 4})}),
      HasSubstr("copy_: src of shape [2, 4] must broadcast to the destination's shape [3, 4]"));
}

struct PointwiseCase {
  const char* op;
  std::vector<Value> args;  // Meta tensors and scalars
  std::vector<int64_t> sizes;
  ScalarType dtype;
};

TEST(MetaFunctions, PointwiseShapesAndDtypesFollowBroadcastingAndPromotion) {
  using S = ScalarType;
  const PointwiseCase kCases[] = {
      {"add.Tensor", {MetaT({3, 1}, S::kInt32), MetaT({4}, S::kInt64)}, {3, 4}, S::kInt64},
      {"add.Tensor", {MetaT({3}, S::kInt32), MetaT({}, S::kFloat64)}, {3}, S::kFloat64},
      {"add.Tensor", {MetaT({3}, S::kFloat16), MetaT({}, S::kFloat64)}, {3}, S::kFloat16},
      {"add.Scalar", {MetaT({2}, S::kInt32), Value(Scalar(1.5))}, {2}, S::kFloat32},
      {"mul.Scalar", {MetaT({2}, S::kUInt8), Value(Scalar(int64_t{300}))}, {2}, S::kUInt8},
      {"mul.Tensor", {MetaT({2}, S::kBool), MetaT({2}, S::kBool)}, {2}, S::kBool},
      {"div.Tensor", {MetaT({2}, S::kInt64), MetaT({2}, S::kInt64)}, {2}, S::kFloat32},
      {"div.Tensor_mode",
       {MetaT({2}, S::kInt64), MetaT({2}, S::kInt64), Value("floor")},
       {2},
       S::kInt64},
      {"exp", {MetaT({0, 2}, S::kInt16)}, {0, 2}, S::kFloat32},
      {"exp", {MetaT({}, S::kBFloat16)}, {}, S::kBFloat16},
      {"neg", {MetaT({5}, S::kInt8)}, {5}, S::kInt8},
      {"isnan", {MetaT({5}, S::kFloat64)}, {5}, S::kBool},
      {"eq.Tensor", {MetaT({2, 1}, S::kFloat32), MetaT({3}, S::kInt32)}, {2, 3}, S::kBool},
      {"lt.Scalar", {MetaT({2}, S::kInt32), Value(Scalar(0.5))}, {2}, S::kBool},
      {"bitwise_and.Tensor", {MetaT({2}, S::kUInt8), MetaT({2}, S::kInt8)}, {2}, S::kInt16},
      {"where.self",
       {MetaT({2, 1}, S::kBool), MetaT({3}, S::kInt32), MetaT({}, S::kFloat32)},
       {2, 3},
       S::kFloat32},
      {"clamp", {MetaT({4}, S::kInt32), Value(Scalar(0.5)), Value()}, {4}, S::kFloat32},
      {"masked_fill.Scalar",
       {MetaT({2, 3}, S::kInt32), MetaT({3}, S::kBool), Value(Scalar(2.5))},
       {2, 3},
       S::kInt32},
      {"addcmul", {MetaT({3}), MetaT({2, 1}), MetaT({3})}, {2, 3}, S::kFloat32},
      {"atan2", {MetaT({2}, S::kInt32), MetaT({2}, S::kInt32)}, {2}, S::kFloat32},
  };
  for (const PointwiseCase& c : kCases) {
    Tensor out = RunOne(c.op, Stack(c.args.begin(), c.args.end()));
    if (!out.defined()) continue;
    EXPECT_THAT(out.sizes(), ::testing::ElementsAreArray(c.sizes)) << c.op;
    EXPECT_EQ(out.dtype(), c.dtype) << c.op << " gave " << ScalarTypeName(out.dtype());
    EXPECT_EQ(out.device(), kMeta);
  }
}

TEST(MetaFunctions, PointwiseErrorsMatchPyTorchChecks) {
  using S = ScalarType;
  EXPECT_THAT(ErrorOf("add.Tensor", {MetaT({2, 3}), MetaT({4, 3})}),
              HasSubstr("argument 'other' of shape [4, 3] does not broadcast"));
  EXPECT_THAT(ErrorOf("neg", {MetaT({2}, S::kBool)}),
              HasSubstr("neg: argument 'self' is bool, which negation does not support"));
  EXPECT_THAT(ErrorOf("sub.Tensor", {MetaT({2}, S::kBool), MetaT({2}, S::kBool)}),
              HasSubstr("sub.Tensor: argument 'self' is bool, which subtraction does not support"));
  // Each operand before promotion, as PyTorch's sub_check: these promote to int32 and float32.
  EXPECT_THAT(ErrorOf("sub.Tensor", {MetaT({2}, S::kInt32), MetaT({}, S::kBool)}),
              HasSubstr("argument 'other' is bool"));
  EXPECT_THAT(ErrorOf("sub.Scalar", {MetaT({2}), Value(Scalar(true))}),
              HasSubstr("sub.Scalar: argument 'other' is bool"));
  // A Scalar that overflows the dtype it converts to, named as the caller's op has it.
  EXPECT_THAT(
      ErrorOf("full", {Value(IntList{2}), Value(Scalar(int64_t{300})), Value(ScalarType::kUInt8),
                       Value(), Value(Device(DeviceType::kMeta))}),
      HasSubstr("full: argument 'fill_value' (300) cannot be converted to uint8"));
  EXPECT_THAT(ErrorOf("masked_fill.Scalar",
                      {MetaT({3}, S::kInt8), MetaT({3}, S::kBool), Value(Scalar(int64_t{200}))}),
              HasSubstr("masked_fill.Scalar: argument 'value' (200) cannot be converted to int8"));
  // clamp: both bounds with a NaN fill NaN without converting either (float16 cannot hold 1e5).
  EXPECT_TRUE(CallGlobal("clamp",
                         {MetaT({2}, S::kFloat16), Value(Scalar(std::nan(""))), Value(Scalar(1e5))})
                  .ok());
  EXPECT_THAT(ErrorOf("clamp", {MetaT({2}, S::kFloat16), Value(), Value(Scalar(1e5))}),
              HasSubstr("clamp: argument 'max' (100000) cannot be converted to float16"));
  EXPECT_THAT(ErrorOf("bitwise_or.Tensor", {MetaT({2}), MetaT({2}, S::kInt32)}),
              HasSubstr("expected integral or bool operands, got float32"));
  EXPECT_THAT(ErrorOf("where.self", {MetaT({2}, S::kInt32), MetaT({2}), MetaT({2})}),
              HasSubstr("expected argument 'condition' to be bool, got int32"));
  EXPECT_THAT(ErrorOf("div.Tensor_mode", {MetaT({2}), MetaT({2}), Value("round")}),
              HasSubstr("one of None, 'trunc' or 'floor', got 'round'"));
  // masked_fill's out-of-place form expands self to the mask (PyTorch's masked_fill); the
  // mask must be bool and a value tensor 0-dim.
  EXPECT_THAT(ErrorOf("masked_fill.Scalar", {MetaT({3}), MetaT({3}), Value(1)}),
              HasSubstr("expected argument 'mask' to be bool, got float32"));
  EXPECT_THAT(ErrorOf("masked_fill.Tensor", {MetaT({3}), MetaT({3}, S::kBool), MetaT({1})}),
              HasSubstr("only supports a 0-dimensional value tensor, but got tensor with 1 "
                        "dimension(s)"));
  EXPECT_THAT(ErrorOf("masked_fill.Scalar", {MetaT({3}), MetaT({2, 4}, S::kBool), Value(1)}),
              HasSubstr("does not broadcast"));
}

// The checks that are op semantics beyond shapes and dtypes are the plan's too, so that no
// backend repeats them (issue 29): on the meta device no kernel runs at all.
TEST(MetaFunctions, PointwiseArgumentChecksAreThePlans) {
  using S = ScalarType;
  EXPECT_THAT(
      ErrorOf("add.Tensor", {MetaT({2}, S::kInt32), MetaT({2}, S::kInt32), Value(Scalar(0.5))}),
      HasSubstr("add.Tensor: for integral input tensors, argument alpha must not be a "
                "floating point number"));
  EXPECT_THAT(
      ErrorOf("sub.Scalar", {MetaT({2}, S::kInt64), Value(Scalar(int64_t{1})), Value(Scalar(1.5))}),
      HasSubstr("alpha must not be a floating point number"));
  EXPECT_THAT(ErrorOf("add.Tensor", {MetaT({2}), MetaT({2}), Value(Scalar(true))}),
              HasSubstr("add.Tensor: boolean alpha only supported for boolean results"));
  EXPECT_TRUE(
      CallGlobal("add.Tensor", {MetaT({2}, S::kBool), MetaT({2}, S::kBool), Value(Scalar(true))})
          .ok());
  EXPECT_TRUE(
      CallGlobal("add.Tensor", {MetaT({2}), MetaT({2}, S::kInt32), Value(Scalar(0.5))}).ok());
  EXPECT_THAT(ErrorOf("gelu", {MetaT({2}), Value("exact")}),
              HasSubstr("gelu: expected approximate to be 'none' or 'tanh', got 'exact'"));
  EXPECT_THAT(ErrorOf("pow.Tensor_Scalar", {MetaT({2}, S::kInt64), Value(Scalar(int64_t{-1}))}),
              HasSubstr("pow.Tensor_Scalar: integers to negative integer powers are not allowed"));
  EXPECT_TRUE(CallGlobal("pow.Tensor_Scalar", {MetaT({2}, S::kInt64), Value(Scalar(-1.0))}).ok());
  EXPECT_TRUE(CallGlobal("pow.Tensor_Scalar", {MetaT({2}), Value(Scalar(int64_t{-1}))}).ok());
  EXPECT_THAT(
      ErrorOf("addcdiv", {MetaT({2}, S::kInt32), MetaT({2}, S::kInt32), MetaT({2}, S::kInt32)}),
      HasSubstr("addcdiv: integer division with addcdiv is not supported"));
  EXPECT_TRUE(CallGlobal("addcdiv", {MetaT({2}, S::kInt32), MetaT({2}), MetaT({2})}).ok());
}

TEST(MetaFunctions, ReductionsHandleDimsKeepdimAndDtypes) {
  using S = ScalarType;
  Tensor x = MetaT({2, 3, 4}, S::kInt32);
  Tensor s = RunOne("sum.dim_IntList", {x, Value(IntList{1, -1})});
  EXPECT_THAT(s.sizes(), ElementsAre(2));
  EXPECT_EQ(s.dtype(), S::kInt64) << "sum widens integers";
  Tensor kept = RunOne("sum.dim_IntList", {x, Value(IntList{1}), Value(true), Value(S::kInt16)});
  EXPECT_THAT(kept.sizes(), ElementsAre(2, 1, 4));
  EXPECT_EQ(kept.dtype(), S::kInt16);
  EXPECT_EQ(RunOne("sum", {x}).dim(), 0);
  EXPECT_EQ(RunOne("sum.dim_IntList", {x, Value()}).dim(), 0) << "dim=None reduces all";
  Tensor mx = RunOne("mean.dim", {MetaT({2, 3}, S::kFloat16), Value(IntList{0})});
  EXPECT_EQ(mx.dtype(), S::kFloat16);
  EXPECT_THAT(ErrorOf("mean", {x}),
              HasSubstr("expected a floating point input or dtype, got int32"));
  absl::StatusOr<Stack> max = CallGlobal("max.dim", {MetaT({2, 3}), Value(1), Value(true)});
  ASSERT_TRUE(max.ok());
  ASSERT_EQ(max->size(), 2u);
  EXPECT_THAT((*max)[0].tensor().sizes(), ElementsAre(2, 1));
  EXPECT_EQ((*max)[1].tensor().dtype(), S::kInt64);
  EXPECT_EQ(RunOne("argmax", {MetaT({2, 3})}).dim(), 0);
  EXPECT_EQ(RunOne("any", {MetaT({2}, S::kUInt8)}).dtype(), S::kUInt8);
  EXPECT_EQ(RunOne("all.dim", {MetaT({2, 2}, S::kFloat32), Value(0)}).dtype(), S::kBool);
  EXPECT_THAT(RunOne("cumsum", {MetaT({2, 3}, S::kBool), Value(1)}).sizes(), ElementsAre(2, 3));
  EXPECT_EQ(RunOne("cumsum", {MetaT({2, 3}, S::kBool), Value(1)}).dtype(), S::kInt64);
  EXPECT_EQ(RunOne("logsumexp", {MetaT({2, 3}, S::kInt32), Value(IntList{1})}).dtype(),
            S::kFloat32);
  EXPECT_THAT(ErrorOf("sum.dim_IntList", {x, Value(IntList{1, -2})}),
              HasSubstr("dim 1 appears multiple times"));
  EXPECT_THAT(ErrorOf("sum.dim_IntList", {x, Value(IntList{3})}),
              HasSubstr("Dimension out of range (expected to be in range of [-3, 2], but got 3)"));
  EXPECT_THAT(ErrorOf("amax", {MetaT({2, 0}), Value(IntList{1})}),
              HasSubstr("expected reduction dim 1 to have non-zero size"));
  EXPECT_EQ(RunOne("sum.dim_IntList", {MetaT({2, 0}), Value(IntList{1})}).numel(), 2)
      << "sum over an empty dim is fine";
  EXPECT_THAT(ErrorOf("_softmax", {x, Value(1), Value(false)}), HasSubstr("floating point"));
}

TEST(MetaFunctions, MatrixProductsCheckShapesAndDtypes) {
  using S = ScalarType;
  EXPECT_THAT(RunOne("mm", {MetaT({2, 3}), MetaT({3, 5})}).sizes(), ElementsAre(2, 5));
  EXPECT_THAT(RunOne("bmm", {MetaT({7, 2, 3}), MetaT({7, 3, 5})}).sizes(), ElementsAre(7, 2, 5));
  EXPECT_THAT(RunOne("addmm", {MetaT({5}), MetaT({2, 3}), MetaT({3, 5})}).sizes(),
              ElementsAre(2, 5));
  EXPECT_THAT(ErrorOf("mm", {MetaT({2, 3}), MetaT({4, 5})}),
              HasSubstr("shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)"));
  EXPECT_THAT(ErrorOf("mm", {MetaT({2, 3}), MetaT({3, 5}, S::kFloat64)}),
              HasSubstr("same dtype, but got float32 != float64"));
  EXPECT_THAT(ErrorOf("mm", {MetaT({2, 3, 1}), MetaT({3, 5})}),
              HasSubstr("expected 'self' to be a 2D tensor, got 3D"));
  EXPECT_THAT(ErrorOf("bmm", {MetaT({2, 2, 3}), MetaT({3, 3, 5})}),
              HasSubstr("batch sizes differ"));
  EXPECT_THAT(ErrorOf("addmm", {MetaT({3}), MetaT({2, 3}), MetaT({3, 5})}),
              HasSubstr("addmm: self of shape [3] must broadcast to the product's shape [2, 5]"));
}

TEST(CoreOps, OpsWithoutABackendKernelReportNotImplemented) {
  Tensor a = *Empty({2}, ScalarType::kFloat32, kCpu);
  std::string message = ErrorOf("add.Tensor", {a, a});
  EXPECT_THAT(message, HasSubstr("not implemented for add.Tensor on cpu"));
}

}  // namespace
}  // namespace tessera
