// The functional, out= and in-place forms derive from one another (Note [Variants]).
#include "core/status_macros.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/internal/operator_entry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Device kCpu(DeviceType::kCPU);

// A float32 add.out for contiguous operands whose shapes broadcast by repetition ([2, 3] with
// [3]); enough to observe what the dispatcher does around it.
absl::Status AddOutKernel(void* calls, const OperatorHandle&, Stack* stack) {
  ++*static_cast<int*>(calls);
  const Tensor& a = (*stack)[0].tensor();
  const Tensor& b = (*stack)[1].tensor();
  const double alpha = (*stack)[2].scalar().to_double();
  Tensor out = (*stack)[3].tensor();
  for (int64_t i = 0; i < out.numel(); ++i) {
    out.data<float>()[i] =
        a.data<float>()[i % a.numel()] + static_cast<float>(alpha) * b.data<float>()[i % b.numel()];
  }
  stack->clear();
  stack->push_back(out);
  return absl::OkStatus();
}

// A float32 mul.Tensor (functional only) and a float32 copy_.
absl::Status MulKernel(void*, const OperatorHandle&, Stack* stack) {
  const Tensor& a = (*stack)[0].tensor();
  const Tensor& b = (*stack)[1].tensor();
  Tensor out = *Empty(a.numel() >= b.numel() ? a.sizes() : b.sizes(), ScalarType::kFloat32, kCpu);
  for (int64_t i = 0; i < out.numel(); ++i) {
    out.data<float>()[i] = a.data<float>()[i % a.numel()] * b.data<float>()[i % b.numel()];
  }
  stack->clear();
  stack->push_back(out);
  return absl::OkStatus();
}

absl::Status CopyKernel(void*, const OperatorHandle&, Stack* stack) {
  Tensor dst = (*stack)[0].tensor();
  const Tensor& src = (*stack)[1].tensor();
  for (int64_t i = 0; i < dst.numel(); ++i) dst.data<float>()[i] = src.data<float>()[i];
  stack->resize(1);
  return absl::OkStatus();
}

Tensor Floats(std::initializer_list<int64_t> sizes, std::vector<float> values) {
  Tensor t = *Empty(sizes, ScalarType::kFloat32, kCpu);
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

class VariantsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(DefineCoreOps(registry_).ok());
    KernelFunction add;
    add.fn = &AddOutKernel;
    add.context = &add_calls_;
    add.name = "test::add_out";
    handles_.push_back(*registry_.Impl("add.out", DispatchKey::kCPU, std::move(add)));
    KernelFunction mul;
    mul.fn = &MulKernel;
    mul.name = "test::mul";
    handles_.push_back(*registry_.Impl("mul.Tensor", DispatchKey::kCPU, std::move(mul)));
    KernelFunction copy;
    copy.fn = &CopyKernel;
    copy.name = "test::copy_";
    handles_.push_back(*registry_.Impl("copy_", DispatchKey::kCPU, std::move(copy)));
  }

  absl::StatusOr<Stack> Call(std::string_view name, Stack args) {
    TSR_ASSIGN_OR_RETURN(OperatorHandle op, registry_.Find(name));
    TSR_RETURN_IF_ERROR(registry_.Call(op, &args));
    return args;
  }
  KernelSource SourceOf(std::string_view name) {
    return registry_.Lookup(*registry_.Find(name), DispatchKey::kCPU)->source;
  }

  OpRegistry registry_;
  std::vector<RegistrationHandle> handles_;
  int add_calls_ = 0;
};

TEST_F(VariantsTest, GeneratesPyTorchSchemasForTheOutAndInplaceForms) {
  EXPECT_EQ(registry_.Find("add.out")->schema().ToString(),
            "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  EXPECT_EQ(registry_.Find("add_.Tensor")->schema().ToString(),
            "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  EXPECT_EQ(registry_.Find("max.dim_max")->schema().ToString(),
            "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, "
            "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)");
  EXPECT_EQ(registry_.Find("abs_")->schema().ToString(), "abs_(Tensor(a!) self) -> Tensor(a!)");
  EXPECT_FALSE(registry_.Find("isnan_").ok());
  // Ops with unnamed returns take PyTorch's out argument names, given in full.
  EXPECT_EQ(registry_.Find("native_layer_norm.out")->schema().ToString(),
            "native_layer_norm.out(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? "
            "bias, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> "
            "(Tensor(a!), Tensor(b!), Tensor(c!))");
  EXPECT_EQ(registry_.Find("max_pool2d_with_indices")->entry()->variant, VariantKind::kFunctional);
}

TEST_F(VariantsTest, GivenOutSchemaMustBeTheGeneratedOneButForNamesAndAliasSets) {
  absl::StatusOr<RegistrationHandle> two =
      registry_.Define("test::two(Tensor(a!) self, int n) -> (Tensor, Tensor)");
  ASSERT_TRUE(two.ok()) << two.status();
  two->KeepForever();  // the out= form defined below links to it
  const absl::Status renamed = registry_.DefineVariants(
      "test::two",
      "test::two.out(Tensor(a!) self, int m, *, Tensor(b!) x, Tensor(c!) y) -> (Tensor(b!), "
      "Tensor(c!))",
      "", OutDtypeRule::kExact, OutputAliasing::kDisjoint);
  EXPECT_THAT(renamed.message(), HasSubstr("argument 1 is 'int m', the functional form's 'int n'"));
  const absl::Status shared = registry_.DefineVariants(
      "test::two",
      "test::two.out(Tensor(a!) self, int n, *, Tensor(a!) x, Tensor(c!) y) -> (Tensor(a!), "
      "Tensor(c!))",
      "", OutDtypeRule::kExact, OutputAliasing::kDisjoint);
  EXPECT_THAT(shared.message(), HasSubstr("out argument 'x' shares alias set 'a' with 'self'"));
  const absl::Status unaliased = registry_.DefineVariants(
      "test::two",
      "test::two.out(Tensor(a!) self, int n, *, Tensor(b!) x, Tensor(c!) y) -> (Tensor(b!), "
      "Tensor)",
      "", OutDtypeRule::kExact, OutputAliasing::kDisjoint);
  EXPECT_THAT(unaliased.message(), HasSubstr("out argument 'y' must be a keyword-only written"));
  EXPECT_FALSE(registry_.Find("test::two.out").ok());
  const std::string good =
      "test::two.out(Tensor(a!) self, int n, *, Tensor(b!) x, Tensor(c!) y) -> (Tensor(b!), "
      "Tensor(c!))";
  ASSERT_TRUE(
      registry_
          .DefineVariants("test::two", good, "", OutDtypeRule::kExact, OutputAliasing::kDisjoint)
          .ok());
  EXPECT_EQ(registry_.Find("test::two.out")->schema().ToString(), good);
  EXPECT_EQ(registry_.Find("test::two.out")->entry()->variant, VariantKind::kOut);
}

TEST_F(VariantsTest, FunctionalDerivesFromOut) {
  EXPECT_EQ(SourceOf("add.Tensor"), KernelSource::kDerived);
  absl::StatusOr<Stack> r =
      Call("add.Tensor", {Floats({2, 3}, {1, 2, 3, 4, 5, 6}), Floats({3}, {10, 20, 30})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0].tensor().sizes(), ElementsAre(2, 3));
  EXPECT_THAT(Values((*r)[0].tensor()), ElementsAre(11, 22, 33, 14, 25, 36));
  EXPECT_EQ(add_calls_, 1);
}

TEST_F(VariantsTest, InplaceDerivesFromOutAndChecksShapeAndDtype) {
  EXPECT_EQ(SourceOf("add_.Tensor"), KernelSource::kDerived);
  Tensor self = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  absl::StatusOr<Stack> r = Call("add_.Tensor", {self, Floats({3}, {1, 1, 1}), Value(2)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].tensor().impl(), self.impl());
  EXPECT_THAT(Values(self), ElementsAre(3, 4, 5, 6, 7, 8));

  absl::StatusOr<Stack> grow = Call("add_.Tensor", {Floats({3}, {1, 2, 3}), self});
  ASSERT_FALSE(grow.ok());
  EXPECT_THAT(grow.status().message(),
              HasSubstr("add_.Tensor: output with shape [3] doesn't match the broadcast shape "
                        "[2, 3]"));

  Tensor ints = *Empty({3}, ScalarType::kInt64, kCpu);
  absl::StatusOr<Stack> cast = Call("add_.Tensor", {ints, Floats({3}, {1, 2, 3})});
  ASSERT_FALSE(cast.ok());
  EXPECT_THAT(cast.status().message(),
              HasSubstr("result type float32 can't be cast to the desired output type int64"));
}

TEST_F(VariantsTest, OwnOutKernelGetsOutputsResizedAndChecked) {
  EXPECT_EQ(SourceOf("add.out"), KernelSource::kKernel);
  Tensor out = Floats({1}, {0});
  absl::StatusOr<Stack> r =
      Call("add.out", {Floats({2, 2}, {1, 2, 3, 4}), Floats({2}, {1, 1}), Value(1), out});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(out.sizes(), ElementsAre(2, 2));  // resized in place: the caller's handle sees it
  EXPECT_THAT(Values(out), ElementsAre(2, 3, 4, 5));

  Tensor ints = *Empty({2}, ScalarType::kInt32, kCpu);
  absl::StatusOr<Stack> bad =
      Call("add.out", {Floats({2}, {1, 2}), Floats({2}, {1, 1}), Value(1), ints});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("add.out: result type float32 can't be cast to the desired output type "
                        "int32 (argument 'out')"));
  EXPECT_EQ(add_calls_, 1);  // the refused call never reached the kernel
}

TEST_F(VariantsTest, OutAndInplaceDeriveFromFunctional) {
  EXPECT_EQ(SourceOf("mul.out"), KernelSource::kDerived);
  Tensor out = Floats({3}, {0, 0, 0});
  absl::StatusOr<Stack> r = Call("mul.out", {Floats({3}, {1, 2, 3}), Floats({3}, {2, 2, 2}), out});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].tensor().impl(), out.impl());
  EXPECT_THAT(Values(out), ElementsAre(2, 4, 6));

  Tensor self = Floats({3}, {1, 2, 3});
  ASSERT_TRUE(Call("mul_.Tensor", {self, Floats({3}, {3, 3, 3})}).ok());
  EXPECT_THAT(Values(self), ElementsAre(3, 6, 9));
}

// Only the forms derived from a functional kernel copy their result with copy_ (what the plugin
// loader's note on devices without a copy_ kernel lists).
TEST_F(VariantsTest, OnlyFormsDerivedFromAFunctionalKernelCopyThroughCopy) {
  auto through_copy = [&](std::string_view name) {
    return internal::DerivedThroughCopy(*registry_.Find(name)->entry(),
                                        static_cast<int>(DispatchKey::kCPU));
  };
  EXPECT_TRUE(through_copy("mul.out"));      // from mul.Tensor
  EXPECT_TRUE(through_copy("mul_.Tensor"));  // from mul.Tensor
  EXPECT_FALSE(through_copy("mul.Tensor"));  // its own kernel
  EXPECT_FALSE(through_copy("add.Tensor"));  // from add.out: no copy
  EXPECT_FALSE(through_copy("add_.Tensor"));
  EXPECT_FALSE(through_copy("add.out"));  // its own kernel
  EXPECT_FALSE(through_copy("sub.out"));  // nothing to derive from
}

TEST_F(VariantsTest, NoKernelForAnyFormIsNotImplemented) {
  absl::StatusOr<Stack> r = Call("sub.Tensor", {Floats({1}, {1}), Floats({1}, {1})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(registry_.Lookup(*registry_.Find("sub.out"), DispatchKey::kCPU).ok());
}

// A derivation runs its sibling form's kernel, so deterministic algorithms pass it over too when
// that kernel is declared nondeterministic (a GPU's scatter_add.out runs scatter_add).
TEST_F(VariantsTest, DeterministicAlgorithmsPassOverANondeterministicSiblingKernel) {
  handles_.erase(handles_.begin());  // the healthy add.out
  KernelFunction add;
  add.fn = &AddOutKernel;
  add.context = &add_calls_;
  add.name = "test::atomic_add_out";
  add.nondeterministic = true;
  add.nondeterministic_reason = "atomic adds in scheduling order";
  handles_.push_back(*registry_.Impl("add.out", DispatchKey::kCPU, std::move(add)));
  struct RestoreMode {
    int mode = static_cast<int>(GetDeterministicMode());
    ~RestoreMode() { (void)SetDeterministicMode(mode); }
  } restore;
  ASSERT_TRUE(SetDeterministicMode(1).ok());
  absl::StatusOr<Stack> r = Call("add.Tensor", {Floats({1}, {1}), Floats({1}, {2}), Value(1)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("add.Tensor on cpu has no deterministic "
                                              "implementation: its kernel "
                                              "'test::atomic_add_out' is nondeterministic"));
  EXPECT_EQ(add_calls_, 0);
  ASSERT_TRUE(SetDeterministicMode(0).ok());
  r = Call("add.Tensor", {Floats({1}, {1}), Floats({1}, {2}), Value(1)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(add_calls_, 1);
}

TEST_F(VariantsTest, MetaTensorsRunEveryForm) {
  const Device meta(DeviceType::kMeta);
  Tensor a = *Empty({4, 1}, ScalarType::kFloat32, meta);
  Tensor b = *Empty({3}, ScalarType::kFloat16, meta);
  Tensor out = *Empty({0}, ScalarType::kFloat64, meta);
  absl::StatusOr<Stack> r = Call("add.out", {a, b, Value(1), out});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(out.sizes(), ElementsAre(4, 3));
}

// Kernels that leave the wrong results: derived forms must check them before indexing them
// (item 9 of issue 14; they used to index the result stack unchecked and die).
absl::Status LeavesNothing(void*, const OperatorHandle&, Stack* stack) {
  stack->clear();
  return absl::OkStatus();
}
absl::Status LeavesTwoTensors(void*, const OperatorHandle&, Stack* stack) {
  Tensor self = (*stack)[0].tensor();
  stack->clear();
  stack->push_back(self);
  stack->push_back(self);
  return absl::OkStatus();
}
absl::Status LeavesAnInt(void*, const OperatorHandle&, Stack* stack) {
  stack->clear();
  stack->push_back(Value(int64_t{1}));
  return absl::OkStatus();
}

TEST_F(VariantsTest, DerivedFormsRefuseAKernelThatLeavesTheWrongResults) {
  struct Case {
    BoxedKernelFn fn;
    const char* name;
    const char* found;
  };
  const Case kCases[] = {
      {&LeavesNothing, "test::leaves_nothing", "left 0 values on the stack, but abs returns 1"},
      {&LeavesTwoTensors, "test::leaves_two", "left 2 values on the stack, but abs returns 1"},
      {&LeavesAnInt, "test::leaves_an_int", "left int as result 0, expected a Tensor"},
  };
  for (const Case& c : kCases) {
    KernelFunction kernel;
    kernel.fn = c.fn;
    kernel.name = c.name;
    RegistrationHandle handle = *registry_.Impl("abs", DispatchKey::kCPU, std::move(kernel));
    ASSERT_EQ(SourceOf("abs.out"), KernelSource::kDerived);
    ASSERT_EQ(SourceOf("abs_"), KernelSource::kDerived);
    for (const char* form : {"abs.out", "abs_"}) {
      Stack args{Floats({2}, {-1, 2})};
      if (std::string_view(form) == "abs.out") args.push_back(Floats({2}, {0, 0}));
      absl::StatusOr<Stack> r = Call(form, std::move(args));
      ASSERT_FALSE(r.ok()) << form << " with " << c.name;
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
      EXPECT_THAT(r.status().message(),
                  HasSubstr(std::string(form) + ": kernel '" + c.name + "' of abs " + c.found))
          << form;
    }
  }
}

}  // namespace
}  // namespace tessera
