// A backend kernel's results are checked against the Meta function's (Note [Kernel results];
// issue 14, item 17): each misbehaving kernel below used to return OK.
#include <string>

#include "core/host_allocator.h"
#include "core/status_macros.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/op_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Device kCpu(DeviceType::kCPU);
constexpr DeviceType kFake = DeviceType::kPrivateUse2;

// Host memory under another device type, so a kernel can return a tensor on the wrong device.
class FakeDeviceAllocator : public Allocator {
 public:
  absl::StatusOr<DataPtr> Allocate(Device device, size_t nbytes) override {
    absl::StatusOr<DataPtr> p = HostAllocator::Global().Allocate(kCpu, nbytes);
    if (p.ok()) p->device = device;
    return p;
  }
};

Tensor Floats(std::initializer_list<int64_t> sizes) {
  return *Empty(sizes, ScalarType::kFloat32, kCpu);
}

// Functional kernels of exp(Tensor self) -> Tensor.
absl::Status ExpGood(void*, const OperatorHandle&, Stack* stack) {
  const Tensor self = (*stack)[0].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(self.sizes(), self.dtype(), self.device()));
  stack->clear();
  stack->push_back(out);
  return absl::OkStatus();
}
absl::Status ExpReturnsAnInt(void*, const OperatorHandle&, Stack* stack) {
  stack->clear();
  stack->push_back(Value(int64_t{7}));
  return absl::OkStatus();
}
absl::Status ExpReturnsWrongShape(void*, const OperatorHandle&, Stack* stack) {
  stack->clear();
  stack->push_back(Floats({1}));
  return absl::OkStatus();
}
absl::Status ExpReturnsWrongDtype(void*, const OperatorHandle&, Stack* stack) {
  const Tensor self = (*stack)[0].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(self.sizes(), ScalarType::kFloat64, kCpu));
  stack->clear();
  stack->push_back(out);
  return absl::OkStatus();
}
absl::Status ExpReturnsWrongDevice(void*, const OperatorHandle&, Stack* stack) {
  const Tensor self = (*stack)[0].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(self.sizes(), self.dtype(), Device(kFake)));
  stack->clear();
  stack->push_back(out);
  return absl::OkStatus();
}
absl::Status ExpReturnsItsInput(void*, const OperatorHandle&, Stack* stack) {
  stack->resize(1);
  return absl::OkStatus();
}

// out= and in-place kernels: exp.out(Tensor self, *, Tensor(a!) out), exp_(Tensor(a!) self).
absl::Status ExpOutGood(void*, const OperatorHandle&, Stack* stack) {
  const Tensor out = (*stack)[1].tensor();
  stack->clear();
  stack->push_back(out);
  return absl::OkStatus();
}
absl::Status ExpOutResizesOut(void*, const OperatorHandle&, Stack* stack) {
  const Tensor out = (*stack)[1].tensor();
  TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput("exp.out", {1}));
  stack->clear();
  stack->push_back(out);
  return absl::OkStatus();
}
absl::Status ReturnsAFreshTensor(void*, const OperatorHandle&, Stack* stack) {
  const Tensor self = (*stack)[0].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor fresh, Empty(self.sizes(), self.dtype(), self.device()));
  stack->clear();
  stack->push_back(fresh);
  return absl::OkStatus();
}
absl::Status InplaceGood(void*, const OperatorHandle&, Stack* stack) {
  stack->resize(1);
  return absl::OkStatus();
}

// A custom op returning an int, whose kernel returns a tensor.
absl::Status ReturnsATensor(void*, const OperatorHandle&, Stack* stack) {
  stack->resize(1);
  return absl::OkStatus();
}

class KernelResultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = SetAllocator(kFake, &fake_);
    ASSERT_TRUE(DefineCoreOps(registry_).ok());
  }
  void TearDown() override { SetAllocator(kFake, previous_); }

  RegistrationHandle Register(const char* op, BoxedKernelFn fn, const char* name,
                              const char* plugin = "") {
    KernelFunction k;
    k.fn = fn;
    k.name = name;
    k.plugin = plugin;
    absl::StatusOr<RegistrationHandle> h = registry_.Impl(op, DispatchKey::kCPU, std::move(k));
    EXPECT_TRUE(h.ok()) << h.status();
    return h.ok() ? *std::move(h) : RegistrationHandle();
  }
  absl::Status Call(std::string_view name, Stack args) {
    TSR_ASSIGN_OR_RETURN(OperatorHandle op, registry_.Find(name));
    return registry_.Call(op, &args);
  }

  FakeDeviceAllocator fake_;
  Allocator* previous_ = nullptr;
  OpRegistry registry_;
};

TEST_F(KernelResultsTest, AFunctionalKernelReturningTheWrongThingIsAnInternalError) {
  struct Case {
    BoxedKernelFn fn;
    const char* name;
    const char* message;
  };
  const Case kCases[] = {
      {&ExpReturnsAnInt, "bad::int", "left int as result 0, expected a Tensor"},
      {&ExpReturnsWrongShape, "bad::shape",
       "left a float32 tensor of shape [1] on cpu as result 0, expected a float32 tensor of "
       "shape [2, 3] (what the Meta function computed)"},
      {&ExpReturnsWrongDtype, "bad::dtype",
       "left a float64 tensor of shape [2, 3] on cpu as result 0, expected a float32 tensor of "
       "shape [2, 3] (what the Meta function computed)"},
      {&ExpReturnsWrongDevice, "bad::device",
       "left a float32 tensor of shape [2, 3] on privateusetwo:0 as result 0, expected a tensor "
       "on cpu (the call's device)"},
      {&ExpReturnsItsInput, "bad::input",
       "left its argument 'self' as result 0, expected a new tensor (the schema does not say "
       "the result aliases an argument)"},
  };
  for (const Case& c : kCases) {
    RegistrationHandle h = Register("exp", c.fn, c.name, "libbad.so");
    absl::Status s = Call("exp", {Floats({2, 3})});
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << c.name << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(std::string("exp: kernel '") + c.name +
                                       "' (plugin 'libbad.so') " + c.message))
        << c.name;
  }
  RegistrationHandle good = Register("exp", &ExpGood, "good::exp");
  EXPECT_TRUE(Call("exp", {Floats({2, 3})}).ok());
}

TEST_F(KernelResultsTest, AnOutKernelMustReturnTheCallersOutAtTheComputedShape) {
  {
    RegistrationHandle h = Register("exp.out", &ExpOutResizesOut, "bad::resizes");
    Tensor out = Floats({2, 3});
    absl::Status s = Call("exp.out", {Floats({2, 3}), out});
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
    EXPECT_THAT(s.message(),
                HasSubstr("exp.out: kernel 'bad::resizes' resized argument 'out' to [1], expected "
                          "[2, 3] (the shape the Meta function computed)"));
  }
  {
    RegistrationHandle h = Register("exp.out", &ReturnsAFreshTensor, "bad::fresh");
    absl::Status s = Call("exp.out", {Floats({2, 3}), Floats({2, 3})});
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
    EXPECT_THAT(s.message(),
                HasSubstr("exp.out: kernel 'bad::fresh' left another tensor (a float32 tensor of "
                          "shape [2, 3] on cpu) as result 0, expected argument 'out' itself"));
  }
  RegistrationHandle good = Register("exp.out", &ExpOutGood, "good::exp_out");
  Tensor out = Floats({0});
  EXPECT_TRUE(Call("exp.out", {Floats({2, 3}), out}).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(2, 3));  // the runtime's resize is not the kernel's
}

TEST_F(KernelResultsTest, AnInplaceKernelMustReturnSelf) {
  {
    RegistrationHandle h = Register("exp_", &ReturnsAFreshTensor, "bad::fresh");
    absl::Status s = Call("exp_", {Floats({2, 3})});
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
    EXPECT_THAT(s.message(), HasSubstr("exp_: kernel 'bad::fresh' left another tensor (a float32 "
                                       "tensor of shape [2, 3] on cpu) as result 0, expected "
                                       "argument 'self' itself"));
  }
  RegistrationHandle good = Register("exp_", &InplaceGood, "good::exp_");
  EXPECT_TRUE(Call("exp_", {Floats({2, 3})}).ok());
}

TEST_F(KernelResultsTest, NonTensorReturnsHaveTheirKindChecked) {
  absl::StatusOr<RegistrationHandle> def = registry_.Define("test::count(Tensor self) -> int");
  ASSERT_TRUE(def.ok()) << def.status();
  RegistrationHandle h = Register("test::count", &ReturnsATensor, "bad::count");
  absl::Status s = Call("test::count", {Floats({2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_THAT(s.message(),
              HasSubstr("test::count: kernel 'bad::count' left Tensor as result 0, expected int"));
}

absl::Status ReturnsTrue(void*, const OperatorHandle&, Stack* stack) {
  stack->clear();
  stack->push_back(Value(true));
  return absl::OkStatus();
}

// SymInt and SymBool returns (sym_size.int, sym_is_contiguous) are int and bool: a kernel must
// leave exactly that kind (no bool for an int, no int for a bool).
TEST_F(KernelResultsTest, SymIntAndSymBoolReturnsAreIntAndBool) {
  absl::StatusOr<RegistrationHandle> size = registry_.Define("test::size(Tensor self) -> SymInt");
  absl::StatusOr<RegistrationHandle> flag = registry_.Define("test::flag(Tensor self) -> SymBool");
  ASSERT_TRUE(size.ok() && flag.ok());
  struct Case {
    const char* op;
    BoxedKernelFn fn;
    const char* name;
    const char* message;  // "" for a kernel that returns the right kind
  };
  const Case kCases[] = {
      {"test::size", &ExpReturnsAnInt, "good::size", ""},
      {"test::size", &ReturnsTrue, "bad::size",
       "test::size: kernel 'bad::size' left bool as result 0, expected int"},
      {"test::flag", &ReturnsTrue, "good::flag", ""},
      {"test::flag", &ExpReturnsAnInt, "bad::flag",
       "test::flag: kernel 'bad::flag' left int as result 0, expected bool"},
  };
  for (const Case& c : kCases) {
    RegistrationHandle h = Register(c.op, c.fn, c.name);
    absl::Status s = Call(c.op, {Floats({2})});
    if (*c.message == '\0') {
      EXPECT_TRUE(s.ok()) << c.name << ": " << s;
      continue;
    }
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << c.name << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr(c.message)) << c.name;
  }
}

// Returns (None, self): a backward kernel whose output_mask asked for the second gradient only.
absl::Status ReturnsNoneThenSelf(void*, const OperatorHandle&, Stack* stack) {
  const Tensor self = (*stack)[0].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor grad, Empty(self.sizes(), self.dtype(), self.device()));
  stack->clear();
  stack->push_back(Value());
  stack->push_back(grad);
  return absl::OkStatus();
}

// ATen's backward ops return an undefined tensor for a gradient their output_mask did not ask
// for, though the return's type is Tensor: a kernel may leave None there, and only there.
TEST_F(KernelResultsTest, ABackwardOpsGradientNotAskedForMayBeNone) {
  absl::StatusOr<RegistrationHandle> with_mask =
      registry_.Define("test::grads(Tensor self, bool[2] output_mask) -> (Tensor, Tensor)");
  absl::StatusOr<RegistrationHandle> without =
      registry_.Define("test::pair(Tensor self) -> (Tensor, Tensor)");
  ASSERT_TRUE(with_mask.ok() && without.ok());
  RegistrationHandle grads = Register("test::grads", &ReturnsNoneThenSelf, "good::grads");
  EXPECT_TRUE(Call("test::grads", {Floats({2}), Value(BoolList{false, true})}).ok());
  // Asked for, it must be a tensor.
  absl::Status asked = Call("test::grads", {Floats({2}), Value(BoolList{true, true})});
  EXPECT_EQ(asked.code(), absl::StatusCode::kInternal) << asked;
  EXPECT_THAT(asked.message(), HasSubstr("test::grads: kernel 'good::grads' left None as result "
                                         "0, expected a Tensor"));
  RegistrationHandle pair = Register("test::pair", &ReturnsNoneThenSelf, "bad::pair");
  absl::Status s = Call("test::pair", {Floats({2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_THAT(s.message(),
              HasSubstr("test::pair: kernel 'bad::pair' left None as result 0, expected a Tensor"));
}

// A derivation runs a backend's kernel of a sibling form: that kernel is checked the same way.
TEST_F(KernelResultsTest, KernelsRunByDerivationsAreCheckedToo) {
  {
    // exp <- exp.out: the out= kernel must return the output the derivation allocated.
    RegistrationHandle h = Register("exp.out", &ReturnsAFreshTensor, "bad::fresh");
    absl::Status s = Call("exp", {Floats({2, 3})});
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
    EXPECT_THAT(s.message(), HasSubstr("exp: kernel 'bad::fresh' of exp.out left another tensor"));
  }
  {
    // exp.out <- exp: a wrong shape from the functional kernel must not resize the caller's out.
    RegistrationHandle h = Register("exp", &ExpReturnsWrongShape, "bad::shape");
    Tensor out = Floats({2, 3});
    absl::Status s = Call("exp.out", {Floats({2, 3}), out});
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
    EXPECT_THAT(s.message(),
                HasSubstr("exp.out: kernel 'bad::shape' of exp left a float32 tensor of shape [1] "
                          "on cpu as result 0, expected a float32 tensor of shape [2, 3]"));
    EXPECT_THAT(out.sizes(), ElementsAre(2, 3));
    // exp_ <- exp: returning self from the functional kernel.
    RegistrationHandle input = (h.Reset(), Register("exp", &ExpReturnsItsInput, "bad::input"));
    s = Call("exp_", {Floats({2, 3})});
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
    EXPECT_THAT(s.message(),
                HasSubstr("exp_: kernel 'bad::input' of exp left its argument 'self'"));
  }
}

}  // namespace
}  // namespace tessera
