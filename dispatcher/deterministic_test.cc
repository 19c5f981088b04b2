// Deterministic algorithms (Note [Deterministic algorithms] in dispatcher/deterministic.h): what
// each mode does to a call whose kernel is declared nondeterministic.
#include "dispatcher/deterministic.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "dispatcher/op_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

// Each kernel returns a tensor holding its own number, so a test sees which one ran.
template <int kWho>
absl::Status Returns(void*, const OperatorHandle&, Stack* stack) {
  absl::StatusOr<Tensor> out = Empty({}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  if (!out.ok()) return out.status();
  out->data<float>()[0] = kWho;
  stack->clear();
  stack->push_back(Value(*out));
  return absl::OkStatus();
}

KernelFunction Kernel(BoxedKernelFn fn, const char* name, const char* nondeterministic = "") {
  KernelFunction k;
  k.fn = fn;
  k.name = name;
  k.nondeterministic = *nondeterministic != '\0';
  k.nondeterministic_reason = nondeterministic;
  return k;
}

std::vector<std::string>& Warnings() {
  static std::vector<std::string> warnings;
  return warnings;
}

class DeterministicTest : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = static_cast<int>(GetDeterministicMode());
    SetDeterminismWarningSink([](std::string_view m) { Warnings().emplace_back(m); });
    Warnings().clear();
  }
  void TearDown() override {
    ASSERT_TRUE(SetDeterministicMode(previous_).ok());
    SetDeterminismWarningSink(nullptr);
  }

  OperatorHandle Define(const char* schema) {
    absl::StatusOr<RegistrationHandle> h = registry_.Define(schema);
    EXPECT_TRUE(h.ok()) << h.status();
    h->KeepForever();
    return *registry_.Find(std::string(schema).substr(0, std::string(schema).find('(')));
  }
  void Keep(absl::StatusOr<RegistrationHandle> h) {
    ASSERT_TRUE(h.ok()) << h.status();
    h->KeepForever();
  }
  // Which kernel ran (its number), or the call's error.
  absl::StatusOr<float> Run(const OperatorHandle& op) {
    absl::StatusOr<Tensor> x = Empty({2}, ScalarType::kFloat32, Device(DeviceType::kCPU));
    if (!x.ok()) return x.status();
    Stack stack;
    stack.push_back(Value(*x));
    absl::Status s = registry_.Call(op, &stack);
    if (!s.ok()) return s;
    return stack[0].tensor().data<float>()[0];
  }

  OpRegistry registry_;
  int previous_ = 0;
};

TEST_F(DeterministicTest, OffRunsTheKernelOnRunsWhatIsLeftOrRefuses) {
  const OperatorHandle op = Define("test::scatter_like(Tensor self) -> Tensor");
  Keep(registry_.Impl("test::scatter_like", DispatchKey::kCPU,
                      Kernel(&Returns<1>, "cpu::atomic", "atomic adds in scheduling order")));
  ASSERT_TRUE(SetDeterministicMode(0).ok());
  EXPECT_EQ(*Run(op), 1.0f);
  // On, with nothing else registered: refused, naming the kernel, the reason and the switch.
  ASSERT_TRUE(SetDeterministicMode(1).ok());
  absl::StatusOr<float> refused = Run(op);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("test::scatter_like on cpu has no deterministic implementation: its kernel "
                        "'cpu::atomic' is nondeterministic (atomic adds in scheduling order)"));
  EXPECT_THAT(refused.status().message(), HasSubstr("TESSERA_DETERMINISTIC=1"));
  // A fallback is the deterministic path; a composite comes before it.
  Keep(registry_.RegisterFallback(DispatchKey::kCPU, Kernel(&Returns<2>, "fallback")));
  EXPECT_EQ(*Run(op), 2.0f);
  Keep(registry_.ImplComposite("test::scatter_like", Kernel(&Returns<3>, "composite")));
  EXPECT_EQ(*Run(op), 3.0f);
  ASSERT_TRUE(SetDeterministicMode(0).ok());
  EXPECT_EQ(*Run(op), 1.0f);
  EXPECT_TRUE(Warnings().empty());
}

TEST_F(DeterministicTest, WarnRunsTheKernelAndWarnsOncePerOp) {
  const OperatorHandle op = Define("test::index_add_like(Tensor self) -> Tensor");
  Keep(registry_.Impl("test::index_add_like", DispatchKey::kCPU,
                      Kernel(&Returns<1>, "cpu::atomic", "atomic adds in scheduling order")));
  ASSERT_TRUE(SetDeterministicMode(2).ok());
  // A lookup that runs nothing (a model's compile step) does not warn, nor use up the warning.
  ASSERT_TRUE(registry_.Lookup(op, DispatchKey::kCPU).ok());
  EXPECT_TRUE(Warnings().empty());
  EXPECT_EQ(*Run(op), 1.0f);
  EXPECT_EQ(*Run(op), 1.0f);
  ASSERT_EQ(Warnings().size(), 1u);
  EXPECT_THAT(Warnings()[0], HasSubstr("test::index_add_like ran kernel 'cpu::atomic', which is "
                                       "nondeterministic (atomic adds in scheduling order)"));
}

TEST_F(DeterministicTest, DeterministicKernelsIgnoreTheMode) {
  const OperatorHandle op = Define("test::plain(Tensor self) -> Tensor");
  Keep(registry_.Impl("test::plain", DispatchKey::kCPU, Kernel(&Returns<1>, "cpu::plain")));
  for (int mode : {0, 1, 2}) {
    ASSERT_TRUE(SetDeterministicMode(mode).ok());
    EXPECT_EQ(*Run(op), 1.0f) << mode;
  }
  EXPECT_TRUE(Warnings().empty());
}

TEST_F(DeterministicTest, AnUnknownModeIsRefused) {
  const absl::Status s = SetDeterministicMode(3);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("mode 3 is not one of 0 (off), 1 (on) and 2 (warn)"));
}

// TESSERA_DETERMINISTIC gives the mode at start (ctest runs this again with it set to warn:
// tessera_dispatcher_test_deterministic_env).
TEST(DeterministicEnvironment, TheModeStartsAsTheVariableSays) {
  const char* env = std::getenv("TESSERA_DETERMINISTIC");
  const std::string v = env != nullptr ? env : "";
  const DeterministicMode expected = v == "1"      ? DeterministicMode::kOn
                                     : v == "warn" ? DeterministicMode::kWarn
                                                   : DeterministicMode::kOff;
  EXPECT_EQ(GetDeterministicMode(), expected) << "TESSERA_DETERMINISTIC='" << v << "'";
}

}  // namespace
}  // namespace tessera
