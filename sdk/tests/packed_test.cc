// The two entries the SDK makes of one typed kernel (boxing.hpp): Boxed<&kernel> reads a
// stack, Packed<&kernel> a tsr_kernel_call (ABI 1.1). Both must compute the same, since the
// runtime picks whichever it can: each runs here through the dispatcher, and by hand for the
// packed wrapper's own checks. Runs without plugins: the kernel is the test's own, on the CPU.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "c_test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/sdk/boxing.hpp"

namespace {

using tessera_test::Consume;

namespace sdk = tessera::sdk;
using ::testing::HasSubstr;

// What the kernel saw of its context, and which entry ran it (Entry: 0 boxed, 1 packed).
int g_compute_dtype = -2;
int g_entry = -1;

// out = self * factor for contiguous float32 tensors of one shape.
template <int Entry>
sdk::TensorView scale_out(const sdk::KernelContext& ctx, sdk::TensorView self, sdk::Scalar factor,
                          sdk::TensorView out) {
  g_entry = Entry;
  tsr_dtype compute{};
  g_compute_dtype = ctx.compute_dtype(&compute) ? static_cast<int>(compute) : -1;
  if (self.dtype() != TSR_DTYPE_FLOAT32 || !self.same_shape(out)) {
    ctx.fail(TSR_INVALID_ARGUMENT, "float32 tensors of one shape only");
  }
  const float f = static_cast<float>(factor.to_double());
  for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = self.data<float>()[i] * f;
  return out;
}

class SdkPackedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sdk::api_slot() = tsr_runtime_api_get();
    ASSERT_EQ(Consume(tsr_op_find(sdk::to_c("mul.Scalar_out"), &op_)), "");
    self_ = sdk::Tensor::from_host<float>({1, 2, 3}, {3}, TSR_DTYPE_FLOAT32);
    out_ = sdk::Tensor::from_host<float>({0, 0, 0}, {3}, TSR_DTYPE_FLOAT32);
    ASSERT_EQ(Consume(tsr_stack_create(&stack_)), "");
    ASSERT_EQ(Consume(tsr_stack_push_tensor(stack_, self_.get())), "");
    tsr_scalar factor{};
    factor.kind = TSR_SCALAR_DOUBLE;
    factor.d = 2.5;
    ASSERT_EQ(Consume(tsr_stack_push_scalar(stack_, factor)), "");
    ASSERT_EQ(Consume(tsr_stack_push_tensor(stack_, out_.get())), "");
  }
  void TearDown() override { tsr_stack_release(stack_); }

  // The call the runtime would build from the stack (its views, values and a plan).
  tsr_kernel_call Call() {
    for (tsr_tensor_view& v : views_) v.struct_size = sizeof v;
    EXPECT_EQ(Consume(tsr_stack_get_tensor_views(stack_, 0, 3, views_)), "");
    std::memset(args_, 0, sizeof args_);
    args_[0].kind = TSR_VALUE_TENSOR;
    args_[0].u.tensor = self_.get();
    args_[1].kind = TSR_VALUE_SCALAR;
    EXPECT_EQ(Consume(tsr_stack_get_scalar(stack_, 1, &args_[1].u.scalar)), "");
    args_[2].kind = TSR_VALUE_TENSOR;
    args_[2].u.tensor = out_.get();
    view_ptrs_[0] = &views_[0];
    view_ptrs_[1] = nullptr;
    view_ptrs_[2] = &views_[2];
    plan_ = tsr_call_plan{sizeof(tsr_call_plan), TSR_DTYPE_FLOAT32, 1, {TSR_DEVICE_CPU, 0}, 0, 0};
    std::memset(returns_, 0, sizeof returns_);
    tsr_kernel_call call{};
    call.struct_size = sizeof call;
    call.op = op_;
    call.stack = stack_;
    call.args = args_;
    call.views = view_ptrs_;
    call.num_args = 3;
    call.plan = &plan_;
    call.returns = returns_;
    call.num_returns = 1;
    return call;
  }

  const tsr_op* op_ = nullptr;
  sdk::Tensor self_, out_;
  tsr_stack* stack_ = nullptr;
  tsr_tensor_view views_[3];
  const tsr_tensor_view* view_ptrs_[3];
  tsr_value args_[3];
  tsr_call_plan plan_{};
  tsr_value returns_[2];
};

// Through the runtime: registered with both entries, the dispatcher runs the packed one, or the
// boxed one under TESSERA_PACKED_KERNELS=0; each sees the same plan and computes the same.
TEST_F(SdkPackedTest, TheDispatcherRunsEitherEntryWithTheSameResult) {
  for (const char* knob : {"1", "0"}) {
    SCOPED_TRACE(std::string("TESSERA_PACKED_KERNELS=") + knob);
    setenv("TESSERA_PACKED_KERNELS", knob, 1);
    tsr_kernel_desc desc{};
    desc.struct_size = sizeof desc;
    desc.op_name = sdk::to_c("mul.Scalar_out");
    desc.device_type = TSR_DEVICE_CPU;
    desc.boxed = &sdk::Boxed<&scale_out<0>>;
    desc.packed = &sdk::Packed<&scale_out<1>>;
    desc.kernel_name = sdk::to_c("sdk_packed_test::scale_out");
    tsr_registration* registration = nullptr;
    ASSERT_EQ(Consume(tsr_kernel_register(&desc, &registration)), "");
    unsetenv("TESSERA_PACKED_KERNELS");
    out_.copy_from_host(std::vector<float>{0, 0, 0}.data(), 3 * sizeof(float));
    g_compute_dtype = -2;
    ASSERT_EQ(Consume(tsr_op_call(op_, stack_)), "");
    EXPECT_EQ(g_entry, knob[0] == '1' ? 1 : 0);
    EXPECT_EQ(g_compute_dtype, TSR_DTYPE_FLOAT32) << "the plan, as either entry reads it";
    EXPECT_EQ(out_.to_vector<float>(), (std::vector<float>{2.5f, 5.0f, 7.5f}));
    ASSERT_EQ(tsr_stack_size(stack_), 1u);
    tsr_tensor* returned = nullptr;
    ASSERT_EQ(Consume(tsr_stack_get_tensor(stack_, 0, &returned)), "");
    EXPECT_EQ(returned, out_.get());
    tsr_registration_release(registration);
    // The arguments again, for the next round.
    tsr_stack_clear(stack_);
    ASSERT_EQ(Consume(tsr_stack_push_tensor(stack_, self_.get())), "");
    ASSERT_EQ(Consume(tsr_stack_push_scalar(stack_, sdk::Scalar(2.5).c)), "");
    ASSERT_EQ(Consume(tsr_stack_push_tensor(stack_, out_.get())), "");
  }
}

// By hand, as the runtime calls each entry: the packed one leaves the stack alone.
TEST_F(SdkPackedTest, BothEntriesComputeTheSameAndReturnOut) {
  tsr_kernel_call call = Call();
  ASSERT_EQ(Consume(sdk::Packed<&scale_out<1>>(nullptr, &call)), "");
  EXPECT_EQ(returns_[0].kind, TSR_VALUE_TENSOR);
  EXPECT_EQ(returns_[0].u.tensor, out_.get());
  EXPECT_EQ(g_compute_dtype, TSR_DTYPE_FLOAT32) << "read from the call's plan";
  EXPECT_EQ(out_.to_vector<float>(), (std::vector<float>{2.5f, 5.0f, 7.5f}));
  EXPECT_EQ(tsr_stack_size(stack_), 3u) << "the packed entry leaves the stack alone";

  out_.copy_from_host(std::vector<float>{0, 0, 0}.data(), 3 * sizeof(float));
  ASSERT_EQ(Consume(sdk::Boxed<&scale_out<0>>(nullptr, op_, stack_)), "");
  EXPECT_EQ(g_compute_dtype, -1) << "a stack outside a dispatched call has no plan";
  EXPECT_EQ(out_.to_vector<float>(), (std::vector<float>{2.5f, 5.0f, 7.5f}));
  ASSERT_EQ(tsr_stack_size(stack_), 1u) << "the boxed entry leaves its returns";
  tsr_tensor* returned = nullptr;
  ASSERT_EQ(Consume(tsr_stack_get_tensor(stack_, 0, &returned)), "");
  EXPECT_EQ(returned, out_.get());
}

TEST_F(SdkPackedTest, TheKernelsOwnErrorsKeepTheirCode) {
  tsr_kernel_call call = Call();
  const int64_t two[] = {2};  // out's view says [2]: the kernel refuses, with its own code
  views_[2].sizes = two;
  views_[2].ndim = 1;
  EXPECT_THAT(Consume(sdk::Packed<&scale_out<1>>(nullptr, &call)),
              HasSubstr(std::to_string(TSR_INVALID_ARGUMENT) +
                        ": mul.Scalar_out: float32 tensors of one shape only"));
}

TEST_F(SdkPackedTest, ACallThatDoesNotFitTheKernelIsAnInternalError) {
  tsr_kernel_call call = Call();
  call.num_returns = 2;
  EXPECT_THAT(Consume(sdk::Packed<&scale_out<1>>(nullptr, &call)),
              HasSubstr("mul.Scalar_out: the kernel returns 1 values, the op 2"));
  call = Call();
  args_[1].kind = TSR_VALUE_INT;
  EXPECT_THAT(Consume(sdk::Packed<&scale_out<1>>(nullptr, &call)),
              HasSubstr("argument 1: a packed call passed kind 2, the kernel reads kind 10"));
  call = Call();
  view_ptrs_[2] = nullptr;
  EXPECT_THAT(Consume(sdk::Packed<&scale_out<1>>(nullptr, &call)),
              HasSubstr("argument 2: expected a tensor (the kernel takes sdk::TensorView)"));
  call = Call();
  call.num_args = 2;
  EXPECT_THAT(Consume(sdk::Packed<&scale_out<1>>(nullptr, &call)),
              HasSubstr("a packed call passed 2 arguments, the kernel takes 3"));
}

}  // namespace
