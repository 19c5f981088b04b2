// Written tensors may not overlap themselves or the inputs (Note [Memory overlap]): refused
// calls never reach a kernel, on any form (kernel, derived, composite).
#include "core/status_macros.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

const Device kCpu(DeviceType::kCPU);

// A kernel that computes nothing: it counts its calls and returns its `result` argument.
struct Counting {
  int calls = 0;
  size_t result = 0;
};
absl::Status CountingKernel(void* context, const OperatorHandle&, Stack* stack) {
  Counting& c = *static_cast<Counting*>(context);
  ++c.calls;
  Value result = (*stack)[c.result];
  stack->clear();
  stack->push_back(std::move(result));
  return absl::OkStatus();
}

// clone's stand-in: a new tensor of self's shape (its values are not looked at).
absl::Status CloneKernel(void* context, const OperatorHandle&, Stack* stack) {
  ++static_cast<Counting*>(context)->calls;
  const Tensor& self = (*stack)[0].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor fresh, Empty(self.sizes(), self.dtype(), self.device()));
  stack->clear();
  stack->push_back(std::move(fresh));
  return absl::OkStatus();
}

Tensor Floats(std::initializer_list<int64_t> sizes) {
  return *Empty(sizes, ScalarType::kFloat32, kCpu);
}

constexpr char kInternal[] =
    "more than one element of the written-to tensor 'out' refers to a single memory location";

class MemoryOverlapCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(DefineCoreOps(registry_).ok());
    Impl("add.out", &add_, 3);
    Impl("mm.out", &mm_, 2);
    Impl("addmm.out", &addmm_, 5);
    Impl("copy_", &copy_, 0);
    Impl("clamp.Tensor_out", &clamp_, 3);
    KernelFunction clone;
    clone.fn = &CloneKernel;
    clone.context = &clone_;
    clone.name = "clone";
    handles_.push_back(*registry_.Impl("clone", DispatchKey::kCPU, std::move(clone)));
  }
  void Impl(const char* op, Counting* counting, size_t result) {
    counting->result = result;
    KernelFunction k;
    k.fn = &CountingKernel;
    k.context = counting;
    k.name = op;
    handles_.push_back(*registry_.Impl(op, DispatchKey::kCPU, std::move(k)));
  }
  absl::Status Call(std::string_view name, Stack args) {
    TSR_ASSIGN_OR_RETURN(OperatorHandle op, registry_.Find(name));
    return registry_.Call(op, &args);
  }

  OpRegistry registry_;
  std::vector<RegistrationHandle> handles_;
  Counting add_, mm_, addmm_, copy_, clamp_, clone_;
};

TEST_F(MemoryOverlapCheckTest, ElementwiseOpsMayWriteOverAnInput) {
  Tensor a = Floats({4}), b = Floats({4});
  EXPECT_TRUE(Call("add.out", {a, b, Value(1), a}).ok());
  EXPECT_TRUE(Call("add.out", {a, b, Value(1), b}).ok());
  EXPECT_TRUE(Call("add.out", {a, a, Value(1), *View(a, {4})}).ok());  // same view, other impl
  EXPECT_TRUE(Call("add_.Tensor", {a, a}).ok());                       // derived from add.out
  EXPECT_TRUE(Call("copy_", {a, a}).ok());
  EXPECT_EQ(add_.calls, 4);
  EXPECT_EQ(copy_.calls, 1);
}

TEST_F(MemoryOverlapCheckTest, PartialOverlapIsRefusedEverywhere) {
  Tensor base = Floats({5});
  Tensor lo = *Slice(base, 0, 0, 4, 1), hi = *Slice(base, 0, 1, 5, 1);
  absl::Status s = Call("add.out", {lo, Floats({4}), Value(1), hi});
  EXPECT_THAT(s.message(),
              HasSubstr("add.out: unsupported operation: some elements of the input tensor 'self' "
                        "and the written-to tensor 'out' refer to a single memory location (they "
                        "partially overlap). Please clone() the tensor before performing the "
                        "operation."));
  s = Call("add_.Tensor", {hi, lo});
  EXPECT_THAT(s.message(), HasSubstr("add_.Tensor: unsupported operation: some elements of the "
                                     "input tensor 'other' and the written-to tensor 'self'"));
  Tensor square = Floats({3, 3});
  s = Call("copy_", {square, *T(square)});
  EXPECT_THAT(s.message(), HasSubstr("copy_: unsupported operation: some elements of the input "
                                     "tensor 'src' and the written-to tensor 'self'"));
  EXPECT_EQ(add_.calls, 0);
  EXPECT_EQ(copy_.calls, 0);
}

// An op declared to read its inputs first may write over any of them: fill_.Tensor of an
// element of self (the composite copies the value before it writes; here it reaches copy_).
TEST_F(MemoryOverlapCheckTest, OpsThatReadFirstMayOverlapTheirInputs) {
  Tensor x = Floats({4});
  Tensor third = *Select(x, 0, 2);
  EXPECT_TRUE(Call("fill_.Tensor", {x, third}).ok());
  EXPECT_EQ(clone_.calls, 1);  // the value copied first
  EXPECT_EQ(copy_.calls, 1);   // then spread over self
  // Its self still may not repeat a location.
  Tensor spread = *Expand(*View(Floats({1}), {1}), {4});
  EXPECT_THAT(Call("fill_.Tensor", {spread, third}).message(),
              HasSubstr("more than one element of the written-to tensor 'self'"));
}

// Optional tensor inputs (Tensor?) are inputs too: clamp's min and max.
TEST_F(MemoryOverlapCheckTest, OptionalTensorInputsAreChecked) {
  Tensor base = Floats({5});
  Tensor lo = *Slice(base, 0, 0, 4, 1), hi = *Slice(base, 0, 1, 5, 1);
  absl::Status s = Call("clamp.Tensor_out", {Floats({4}), lo, Value(std::nullopt), hi});
  EXPECT_THAT(s.message(), HasSubstr("clamp.Tensor_out: unsupported operation: some elements of "
                                     "the input tensor 'min' and the written-to tensor 'out'"));
  s = Call("clamp.Tensor_out", {Floats({4}), Value(std::nullopt), hi, lo});
  EXPECT_THAT(s.message(), HasSubstr("input tensor 'max'"));
  EXPECT_EQ(clamp_.calls, 0);
  // None, and the same memory (an elementwise op), are fine.
  EXPECT_TRUE(Call("clamp.Tensor_out", {lo, Value(std::nullopt), lo, lo}).ok());
  EXPECT_EQ(clamp_.calls, 1);
}

TEST_F(MemoryOverlapCheckTest, WrittenTensorsMustNotRepeatALocation) {
  Tensor row = *Expand(Floats({1, 3}), {2, 3});
  absl::Status s = Call("add.out", {Floats({2, 3}), Floats({2, 3}), Value(1), row});
  EXPECT_THAT(s.message(), HasSubstr(kInternal));
  EXPECT_THAT(s.message(), HasSubstr("(sizes [2, 3], strides [0, 1])"));
  s = Call("add_.Tensor", {row, Floats({3})});
  EXPECT_THAT(
      s.message(),
      HasSubstr("more than one element of the written-to tensor 'self' refers to a single"));
  s = Call("zero_", {row});
  EXPECT_THAT(s.message(), HasSubstr("zero_: unsupported operation"));
  EXPECT_EQ(add_.calls, 0);
  // Expanded inputs are fine, and so is an expansion over a size-1 dimension.
  EXPECT_TRUE(Call("add.out", {row, row, Value(1), Floats({2, 3})}).ok());
  EXPECT_TRUE(Call("add_.Tensor", {*Expand(Floats({1, 3}), {1, 3}), Floats({3})}).ok());
}

TEST_F(MemoryOverlapCheckTest, OtherOpsMayNotWriteOverTheirInputs) {
  Tensor a = Floats({3, 3}), b = Floats({3, 3});
  absl::Status s = Call("mm.out", {a, b, a});
  EXPECT_THAT(s.message(),
              HasSubstr("mm.out: unsupported operation: some elements of the input tensor 'self' "
                        "and the written-to tensor 'out' refer to a single memory location (they "
                        "are the same memory, and the op is not elementwise)"));
  EXPECT_FALSE(Call("mm.out", {a, b, b}).ok());
  EXPECT_FALSE(Call("addmm.out", {Floats({3, 3}), a, b, Value(1), Value(1), b}).ok());
  EXPECT_FALSE(Call("addmm_", {a, a, b}).ok());
  s = Call("cat.out", {std::vector<Tensor>{a, b}, Value(0), *View(a, {9})});
  EXPECT_THAT(s.message(), HasSubstr("cat.out: unsupported operation"));
  EXPECT_THAT(s.message(), HasSubstr("input tensor 'tensors'"));
  EXPECT_EQ(mm_.calls + addmm_.calls, 0);
  // The self of an op with an in-place form: its out= kernel is the in-place kernel.
  EXPECT_TRUE(Call("addmm.out", {a, b, b, Value(1), Value(1), a}).ok());
  EXPECT_TRUE(Call("addmm_", {a, b, b}).ok());
  EXPECT_EQ(addmm_.calls, 2);
}

TEST_F(MemoryOverlapCheckTest, DisjointOrUndecidableLayoutsAreAllowed) {
  Tensor m = Floats({4, 2});
  Tensor col0 = *Select(m, 1, 0), col1 = *Select(m, 1, 1);  // interleaved, disjoint
  EXPECT_TRUE(Call("add.out", {col0, col0, Value(1), col1}).ok());
  Tensor top = *Slice(m, 0, 0, 2, 1), bottom = *Slice(m, 0, 2, 4, 1);
  EXPECT_TRUE(Call("mm.out", {*Slice(top, 1, 0, 2, 1), Floats({2, 2}), bottom}).ok());
  EXPECT_TRUE(Call("add.out", {Floats({0}), Floats({0}), Value(1), *Slice(m, 0, 0, 0, 1)}).ok());
  EXPECT_EQ(add_.calls, 2);
  EXPECT_EQ(mm_.calls, 1);
}

}  // namespace
}  // namespace tessera
