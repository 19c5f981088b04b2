#include "dispatcher/op_registry.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/host_allocator.h"
#include "core/views.h"
#include "dispatcher/internal/operator_entry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Counts heap allocations so a test can prove the boxed call path makes none. (gcc cannot see
// that the replaced new and delete pair malloc with free.)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<int64_t> g_heap_allocations{0};
}
void* operator new(size_t n) {
  g_heap_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace tessera {
namespace {

using ::testing::HasSubstr;

// An allocator that serves host memory under another device type, so tests can place tensors
// on a "device" without a plugin.
class FakeDeviceAllocator : public Allocator {
 public:
  absl::StatusOr<DataPtr> Allocate(Device device, size_t nbytes) override {
    absl::StatusOr<DataPtr> p = HostAllocator::Global().Allocate(Device(DeviceType::kCPU), nbytes);
    if (p.ok()) p->device = device;
    return p;
  }
};

class OpRegistryTest : public ::testing::Test {
 protected:
  static constexpr DeviceType kFake = DeviceType::kPrivateUse2;
  void SetUp() override { previous_ = SetAllocator(kFake, &fake_); }
  void TearDown() override { SetAllocator(kFake, previous_); }

  Tensor Make(std::initializer_list<int64_t> sizes, std::vector<float> values = {},
              Device device = Device(DeviceType::kCPU)) {
    Tensor t = *Empty(sizes, ScalarType::kFloat32, device);
    for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
    return t;
  }

  OperatorHandle Define(const char* schema) {
    absl::StatusOr<RegistrationHandle> h = registry_.Define(schema);
    EXPECT_TRUE(h.ok()) << h.status();
    h->KeepForever();
    return *registry_.Find(ParseSchema(schema)->FullName());
  }

  FakeDeviceAllocator fake_;
  Allocator* previous_ = nullptr;
  OpRegistry registry_;
};

// A float32 add for contiguous same-shape tensors: enough to see the call path work.
absl::Status AddKernel(void*, const OperatorHandle&, Stack* stack) {
  const Tensor a = (*stack)[0].tensor();
  const Tensor b = (*stack)[1].tensor();
  const double alpha = (*stack)[2].scalar().to_double();
  absl::StatusOr<Tensor> out = Empty(a.sizes(), a.dtype(), a.device());
  if (!out.ok()) return out.status();
  for (int64_t i = 0; i < a.numel(); ++i) {
    out->data<float>()[i] = a.data<float>()[i] + static_cast<float>(alpha) * b.data<float>()[i];
  }
  stack->clear();
  stack->push_back(*std::move(out));
  return absl::OkStatus();
}

// Returns its first argument: an op whose kernel allocates nothing.
absl::Status IdentityKernel(void*, const OperatorHandle&, Stack* stack) {
  stack->resize(1);
  return absl::OkStatus();
}

KernelFunction Kernel(BoxedKernelFn fn, const char* name) {
  KernelFunction k;
  k.fn = fn;
  k.name = name;
  return k;
}

constexpr const char* kAddSchema =
    "test::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";

TEST_F(OpRegistryTest, CallsTheKernelWithDefaultsFilledIn) {
  OperatorHandle add = Define(kAddSchema);
  auto impl = registry_.Impl("test::add.Tensor", DispatchKey::kCPU, Kernel(&AddKernel, "add_cpu"));
  ASSERT_TRUE(impl.ok()) << impl.status();
  Stack stack{Make({3}, {1, 2, 3}), Make({3}, {10, 20, 30})};
  ASSERT_TRUE(registry_.Call(add, &stack).ok());
  ASSERT_EQ(stack.size(), 1u);
  const float* out = stack[0].tensor().data<float>();
  EXPECT_EQ(out[0], 11);
  EXPECT_EQ(out[2], 33);
  Stack with_alpha{Make({1}, {1}), Make({1}, {2}), Value(int64_t{3})};  // int -> Scalar
  ASSERT_TRUE(registry_.Call(add, &with_alpha).ok());
  EXPECT_EQ(with_alpha[0].tensor().data<float>()[0], 7);
}

TEST_F(OpRegistryTest, RejectsArgumentsThatDoNotMatchTheSchema) {
  OperatorHandle add = Define(kAddSchema);
  auto impl = registry_.Impl("test::add.Tensor", DispatchKey::kCPU, Kernel(&AddKernel, "add"));
  ASSERT_TRUE(impl.ok());
  Stack too_many{Make({1}), Make({1}), Value(1), Value(2)};
  absl::Status s = registry_.Call(add, &too_many);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("test::add.Tensor: expected at most 3 arguments, got 4"));
  Stack missing{Make({1})};
  s = registry_.Call(add, &missing);
  EXPECT_THAT(s.message(),
              HasSubstr("missing value for argument 'other' (position 1), which has no default"));
  Stack wrong_type{Make({1}), Value(int64_t{2})};
  s = registry_.Call(add, &wrong_type);
  EXPECT_THAT(
      s.message(),
      HasSubstr("test::add.Tensor: argument 'other' (position 1): expected Tensor, got int"));
  Stack undefined{Make({1}), Value(Tensor())};
  s = registry_.Call(add, &undefined);
  EXPECT_THAT(s.message(), HasSubstr("expected Tensor, got an undefined tensor"));
}

TEST_F(OpRegistryTest, DeprecateMarksTheOpAndReplacesAnEarlierMark) {
  OperatorHandle op = Define("test::old(Tensor self) -> Tensor");
  EXPECT_EQ(op.entry()->deprecation.load(), nullptr);
  ASSERT_TRUE(registry_.Deprecate("test::old", OpDeprecation{"test::new", "2.0"}).ok());
  ASSERT_NE(op.entry()->deprecation.load(), nullptr);
  EXPECT_EQ(op.entry()->deprecation.load()->Message("test::old"),
            "test::old is deprecated: use test::new instead; op set 2.0 removes it");
  ASSERT_TRUE(registry_.Deprecate("test::old", OpDeprecation{"", "3.0"}).ok());
  EXPECT_EQ(op.entry()->deprecation.load()->Message("test::old"),
            "test::old is deprecated: it has no replacement; op set 3.0 removes it");
  const absl::Status unknown = registry_.Deprecate("test::nope", OpDeprecation{});
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(unknown.message()), ::testing::HasSubstr("unknown op 'test::nope'"));
  // The global registry applies the core op set's deprecations (docs/op_schema_policy.md).
  for (const CoreDeprecation& d : CoreDeprecations()) {
    absl::StatusOr<OperatorHandle> core = OpRegistry::Global().Find(d.op);
    ASSERT_TRUE(core.ok()) << d.op;
    EXPECT_NE(core->entry()->deprecation.load(), nullptr) << d.op;
  }
}

TEST_F(OpRegistryTest, UnknownOpsAndDoubleRegistrationAreErrors) {
  absl::StatusOr<OperatorHandle> unknown = registry_.Find("test::nope");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown op 'test::nope'"));
  EXPECT_EQ(
      registry_.Impl("test::nope", DispatchKey::kCPU, Kernel(&AddKernel, "k")).status().code(),
      absl::StatusCode::kNotFound);
  Define(kAddSchema);
  EXPECT_TRUE(registry_.Define(kAddSchema).ok()) << "an identical definition is a no-op";
  absl::StatusOr<RegistrationHandle> other =
      registry_.Define("test::add.Tensor(Tensor self, Tensor other) -> Tensor");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(other.status().message(), HasSubstr("different schema"));
  auto first = registry_.Impl("test::add.Tensor", DispatchKey::kCPU, Kernel(&AddKernel, "first"));
  ASSERT_TRUE(first.ok());
  auto second = registry_.Impl("test::add.Tensor", DispatchKey::kCPU, Kernel(&AddKernel, "second"));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(second.status().message(), HasSubstr("already has a kernel for cpu ('first')"));
  EXPECT_FALSE(registry_.Impl("test::add.Tensor", DispatchKey::kCUDA, KernelFunction()).ok())
      << "a NULL kernel function";
  EXPECT_FALSE(
      registry_.Impl("test::add.Tensor", static_cast<DispatchKey>(42), Kernel(&AddKernel, "k"))
          .ok());
  EXPECT_FALSE(registry_.Define("test::broken(Tensor self -> Tensor").ok());
}

TEST_F(OpRegistryTest, DefineTellsApartSchemasWhoseStringDefaultsHoldQuotes) {
  Define(R"(test::quoted(str s="a', str t='b") -> ())");
  absl::StatusOr<RegistrationHandle> two =
      registry_.Define("test::quoted(str s='a', str t='b') -> ()");
  EXPECT_EQ(two.status().code(), absl::StatusCode::kAlreadyExists)
      << "a two-argument op is not the one-argument op already defined";
}

// Checks that a bare int reached the kernel as a list of the declared size.
absl::Status ExpectFullListKernel(void*, const OperatorHandle&, Stack* stack) {
  const IntList& list = (*stack)[0].int_list();
  if (list.size() != kMaxFixedListSize || list.front() != 7 || list.back() != 7) {
    return absl::InternalError(absl::StrCat("got a list of ", list.size()));
  }
  stack->clear();
  return absl::OkStatus();
}

TEST_F(OpRegistryTest, DefineRefusesFixedSizeListsAboveTheCap) {
  // A bare int for `int[N]` builds N elements on every call: N is what a schema may not inflate.
  for (const char* schema :
       {"test::huge(int[300000000] x) -> ()", "test::huge(int[9223372036854775807] x=1) -> ()",
        "test::huge(int[1025] x) -> ()"}) {
    absl::StatusOr<RegistrationHandle> def = registry_.Define(schema);
    ASSERT_FALSE(def.ok()) << schema;
    EXPECT_EQ(def.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(def.status().message(),
                HasSubstr("argument 'x': expected a positive list size of at most 1024"))
        << schema;
    EXPECT_FALSE(registry_.Find("test::huge").ok());
  }
  OperatorHandle at_cap = Define("test::at_cap(int[1024] x) -> ()");
  auto impl = registry_.Impl("test::at_cap", DispatchKey::kCPU,
                             Kernel(&ExpectFullListKernel, "expect_full_list"));
  ASSERT_TRUE(impl.ok()) << impl.status();
  Stack stack{Value(int64_t{7})};
  absl::Status called = registry_.Call(at_cap, &stack);
  EXPECT_TRUE(called.ok()) << called;
}

TEST_F(OpRegistryTest, RegistrationHandlesDeregisterWhenDestroyed) {
  absl::StatusOr<RegistrationHandle> def = registry_.Define(kAddSchema);
  ASSERT_TRUE(def.ok());
  OperatorHandle add = *registry_.Find("test::add.Tensor");
  {
    auto impl = registry_.Impl("test::add.Tensor", DispatchKey::kCPU, Kernel(&AddKernel, "add"));
    ASSERT_TRUE(impl.ok());
    Stack stack{Make({1}, {1}), Make({1}, {1})};
    EXPECT_TRUE(registry_.Call(add, &stack).ok());
  }
  Stack stack{Make({1}, {1}), Make({1}, {1})};
  absl::Status s = registry_.Call(add, &stack);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("not implemented for test::add.Tensor on cpu"));
  // The kernel slot is free again.
  auto again = registry_.Impl("test::add.Tensor", DispatchKey::kCPU, Kernel(&AddKernel, "again"));
  EXPECT_TRUE(again.ok());
  again->Reset();
  def->Reset();
  EXPECT_EQ(registry_.Find("test::add.Tensor").status().code(), absl::StatusCode::kNotFound);
  Stack after{Make({1}), Make({1})};
  EXPECT_EQ(registry_.Call(add, &after).code(), absl::StatusCode::kFailedPrecondition)
      << "an old handle to an undefined op fails cleanly";
  EXPECT_TRUE(registry_.Define(kAddSchema).ok()) << "and it can be defined again";
}

// Note [Op definitions are reference-counted]
TEST_F(OpRegistryTest, AnOpLivesUntilItsLastDefinitionIsUndone) {
  absl::StatusOr<RegistrationHandle> first = registry_.Define(kAddSchema);
  absl::StatusOr<RegistrationHandle> second = registry_.Define(kAddSchema);
  ASSERT_TRUE(first.ok() && second.ok());
  OperatorHandle old = *registry_.Find("test::add.Tensor");
  first->Reset();
  EXPECT_TRUE(registry_.Find("test::add.Tensor").ok()) << "the second definition is live";
  absl::StatusOr<RegistrationHandle> changed =
      registry_.Define("test::add.Tensor(Tensor self, Tensor other, int n=1) -> Tensor");
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(changed.status().message(),
              HasSubstr("already defined with a different schema (1 live definition(s))"));
  second->Reset();
  EXPECT_EQ(registry_.Find("test::add.Tensor").status().code(), absl::StatusCode::kNotFound);
  // No live definition: a new schema replaces the old one; the old handle stays undefined.
  changed = registry_.Define("test::add.Tensor(Tensor self, Tensor other, int n=1) -> Tensor");
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(registry_.Find("test::add.Tensor")->schema().arguments.size(), 3u);
  Stack stack{Make({1}), Make({1})};
  EXPECT_EQ(registry_.Call(old, &stack).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(OpRegistryTest, LookupOrderIsKernelThenCompositeThenFallback) {
  OperatorHandle op = Define("test::f(Tensor self) -> Tensor");
  const DispatchKey fake = DispatchKeyFor(kFake);
  EXPECT_EQ(registry_.Lookup(op, fake).status().code(), absl::StatusCode::kUnimplemented);
  auto fallback = registry_.RegisterFallback(fake, Kernel(&IdentityKernel, "fallback"));
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(registry_.Lookup(op, fake)->source, KernelSource::kFallback);
  EXPECT_EQ(registry_.Lookup(op, DispatchKey::kCPU).status().code(),
            absl::StatusCode::kUnimplemented)
      << "a fallback serves only its key";
  auto composite = registry_.ImplComposite("test::f", Kernel(&IdentityKernel, "composite"));
  ASSERT_TRUE(composite.ok());
  EXPECT_EQ(registry_.Lookup(op, fake)->source, KernelSource::kComposite);
  EXPECT_EQ(registry_.Lookup(op, DispatchKey::kCPU)->source, KernelSource::kComposite);
  auto kernel = registry_.Impl("test::f", fake, Kernel(&IdentityKernel, "native"));
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ(registry_.Lookup(op, fake)->source, KernelSource::kKernel);
  EXPECT_EQ(registry_.Lookup(op, fake)->kernel->name, "native");
  EXPECT_FALSE(registry_.RegisterFallback(fake, Kernel(&IdentityKernel, "second")).ok());
}

TEST_F(OpRegistryTest, DispatchKeyFollowsDevicesWithTheZeroDimCpuException) {
  OperatorHandle op = Define("test::g(Tensor self, Tensor other) -> Tensor");
  const Device fake0(kFake, 0), fake1(kFake, 1);
  Stack same{Make({2}, {}, fake0), Make({2}, {}, fake0)};
  EXPECT_EQ(*registry_.ComputeDispatchKey(op, same), DispatchKeyFor(kFake));
  Stack cpu_scalar{Make({2}, {}, fake0), Make({}, {})};
  EXPECT_EQ(*registry_.ComputeDispatchKey(op, cpu_scalar), DispatchKeyFor(kFake));
  Stack scalar_first{Make({}, {}), Make({2}, {}, fake0)};
  EXPECT_EQ(*registry_.ComputeDispatchKey(op, scalar_first), DispatchKeyFor(kFake));
  Stack only_scalars{Make({}, {}), Make({}, {})};
  EXPECT_EQ(*registry_.ComputeDispatchKey(op, only_scalars), DispatchKey::kCPU);

  Stack mixed{Make({2}), Make({2}, {}, fake0)};
  absl::StatusOr<DispatchKey> key = registry_.ComputeDispatchKey(op, mixed);
  EXPECT_EQ(key.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(key.status().message(),
              HasSubstr("test::g: expected all tensors to be on the same device, but found at "
                        "least two devices, cpu (argument 'self') and privateusetwo:0 (argument "
                        "'other')"));
  Stack two_indices{Make({2}, {}, fake0), Make({2}, {}, fake1)};
  EXPECT_FALSE(registry_.ComputeDispatchKey(op, two_indices).ok());
  Stack fake_scalar_with_cpu{Make({2}), Make({}, {}, fake0)};
  EXPECT_FALSE(registry_.ComputeDispatchKey(op, fake_scalar_with_cpu).ok())
      << "only CPU 0-dim tensors join other devices";
  Stack meta_with_cpu_scalar{Make({2}, {}, Device(DeviceType::kMeta)), Make({}, {})};
  EXPECT_EQ(*registry_.ComputeDispatchKey(op, meta_with_cpu_scalar), DispatchKey::kMeta);
  // The mixed-device check runs on every call.
  auto impl = registry_.ImplComposite("test::g", Kernel(&IdentityKernel, "id"));
  ASSERT_TRUE(impl.ok());
  Stack call_same{Make({2}, {}, fake0), Make({}, {})};
  EXPECT_TRUE(registry_.Call(op, &call_same).ok());
  Stack call_mixed{Make({2}), Make({2}, {}, fake0)};
  EXPECT_EQ(registry_.Call(op, &call_mixed).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(OpRegistryTest, TensorsOnSeveralDevicesReachOnlyACrossDeviceKernel) {
  OperatorHandle op = Define("test::move(Tensor(a!) self, Tensor src) -> Tensor(a!)");
  auto native = registry_.ImplComposite("test::move", Kernel(&IdentityKernel, "one_device"));
  ASSERT_TRUE(native.ok());
  Stack mixed{Make({2}), Make({2}, {}, Device(kFake, 0))};
  EXPECT_THAT(registry_.Call(op, &mixed).message(),
              HasSubstr("expected all tensors to be on the same device"));
  auto across = registry_.ImplCrossDevice("test::move", Kernel(&IdentityKernel, "across"));
  ASSERT_TRUE(across.ok());
  EXPECT_THAT(
      registry_.ImplCrossDevice("test::move", Kernel(&IdentityKernel, "again")).status().message(),
      HasSubstr("impl_cross_device: 'test::move' already has a cross-device kernel "
                "('across')"));
  std::ostringstream log;
  registry_.SetTrace(true, &log);
  Stack call{Make({2}), Make({2}, {}, Device(kFake, 0))};
  ASSERT_TRUE(registry_.Call(op, &call).ok());
  Stack same{Make({2}), Make({2})};
  ASSERT_TRUE(registry_.Call(op, &same).ok());
  registry_.SetTrace(false);
  EXPECT_EQ(log.str(),
            "[tessera dispatch] op=test::move key=none kernel=across (cross_device)\n"
            "[tessera dispatch] op=test::move key=cpu kernel=one_device (composite)\n");
  // What it writes is still checked: an expanded self is refused before the kernel.
  Stack expanded{*Expand(Make({1}), {2}), Make({2}, {}, Device(kFake, 0))};
  EXPECT_THAT(registry_.Call(op, &expanded).message(),
              HasSubstr("more than one element of the written-to tensor 'self'"));
  across->Reset();
  Stack gone{Make({2}), Make({2}, {}, Device(kFake, 0))};
  EXPECT_FALSE(registry_.Call(op, &gone).ok());
}

TEST_F(OpRegistryTest, FactoriesDispatchOnTheirDeviceArgument) {
  OperatorHandle op = Define("test::make(int[] size, *, Device? device=None) -> Tensor");
  Stack cpu{Value(IntList{2})};
  ASSERT_TRUE(registry_.Call(op, &cpu).code() == absl::StatusCode::kUnimplemented);
  Stack on_fake{Value(IntList{2}), Value(Device(kFake, 0))};
  EXPECT_EQ(*registry_.ComputeDispatchKey(op, on_fake), DispatchKeyFor(kFake));
  Stack by_name{Value(IntList{2}), Value("privateusetwo:0")};
  absl::Status s = registry_.Call(op, &by_name);
  EXPECT_THAT(s.message(), HasSubstr("not implemented for test::make on privateusetwo"));
}

absl::Status FailingKernel(void*, const OperatorHandle& op, Stack*) {
  return absl::InvalidArgumentError("kernel says no");
}
absl::Status TwoReturnsKernel(void*, const OperatorHandle&, Stack* stack) {
  stack->resize(2);
  return absl::OkStatus();
}

TEST_F(OpRegistryTest, KernelErrorsAndWrongReturnCountsReachTheCaller) {
  OperatorHandle op = Define("test::h(Tensor self) -> Tensor");
  auto k = registry_.Impl("test::h", DispatchKey::kCPU, Kernel(&FailingKernel, "failing"));
  Stack stack{Make({1})};
  EXPECT_EQ(registry_.Call(op, &stack).message(), "kernel says no");
  k->Reset();
  k = registry_.Impl("test::h", DispatchKey::kCPU, Kernel(&TwoReturnsKernel, "two"));
  Stack stack2{Make({1})};
  absl::Status s = registry_.Call(op, &stack2);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("kernel 'two' left 2 values on the stack, but the schema "
                                     "returns 1"));
}

TEST_F(OpRegistryTest, BoxedCallAllocatesNothingForUpToEightArguments) {
  OperatorHandle op = Define(
      "test::eight(Tensor(a) a, Tensor b, Scalar c, int d, float e, bool f, ScalarType g, "
      "int[] h) -> Tensor(a)");
  auto impl = registry_.Impl("test::eight", DispatchKey::kCPU, Kernel(&IdentityKernel, "id"));
  ASSERT_TRUE(impl.ok());
  Tensor a = Make({2}), b = Make({2});
  // Warm up once (first use of thread-locals), then count.
  for (int round = 0; round < 2; ++round) {
    const int64_t before = g_heap_allocations.load();
    Stack stack{a,          b,           Value(Scalar(1.5)),       Value(int64_t{2}),
                Value(3.0), Value(true), Value(ScalarType::kInt8), Value(IntList{1, 2, 3})};
    absl::Status s = registry_.Call(op, &stack);
    const int64_t after = g_heap_allocations.load();
    ASSERT_TRUE(s.ok()) << s;
    if (round == 1) {
      EXPECT_EQ(after - before, 0) << "heap allocations during one boxed call";
    }
  }
}

TEST_F(OpRegistryTest, TraceLogsOpKeyAndChosenKernel) {
  OperatorHandle op = Define("test::traced(Tensor self) -> Tensor");
  auto impl = registry_.ImplComposite("test::traced", Kernel(&IdentityKernel, "traced_composite"));
  ASSERT_TRUE(impl.ok());
  std::ostringstream log;
  registry_.SetTrace(true, &log);
  Stack stack{Make({1})};
  ASSERT_TRUE(registry_.Call(op, &stack).ok());
  registry_.SetTrace(false);
  Stack quiet{Make({1})};
  ASSERT_TRUE(registry_.Call(op, &quiet).ok());
  EXPECT_EQ(log.str(),
            "[tessera dispatch] op=test::traced key=cpu kernel=traced_composite (composite)\n");
}

TEST(OpRegistryTraceEnv, DispatchTraceEnvironmentVariableTurnsTracingOn) {
  setenv("TESSERA_DISPATCH_TRACE", "1", 1);
  OpRegistry traced;
  unsetenv("TESSERA_DISPATCH_TRACE");
  absl::StatusOr<RegistrationHandle> def = traced.Define("test::x(Tensor self) -> Tensor");
  ASSERT_TRUE(def.ok());
  auto impl = traced.ImplComposite("test::x", Kernel(&IdentityKernel, "x_kernel"));
  ::testing::internal::CaptureStderr();
  Stack stack{*Empty({1}, ScalarType::kFloat32, Device(DeviceType::kCPU))};
  ASSERT_TRUE(traced.Call(*traced.Find("test::x"), &stack).ok());
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("op=test::x key=cpu kernel=x_kernel (composite)"));
}

// Registration must be safe while other threads call: readers never see a torn table and
// never block. A composite stays registered, so each call runs either the kernel or it.
TEST_F(OpRegistryTest, ConcurrentCallsWhileKernelsAreRegisteredAndRemoved) {
  // The kernels return self, which the schema must say (Note [Kernel results]).
  OperatorHandle op = Define("test::busy(Tensor(a) self) -> Tensor(a)");
  auto composite = registry_.ImplComposite("test::busy", Kernel(&IdentityKernel, "composite"));
  ASSERT_TRUE(composite.ok());
  std::atomic<bool> stop{false};
  std::atomic<int64_t> calls{0}, failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&] {
      Tensor x = *Empty({4}, ScalarType::kFloat32, Device(DeviceType::kCPU));
      while (!stop.load()) {
        Stack stack{x};
        if (!registry_.Call(op, &stack).ok()) ++failures;
        ++calls;
      }
    });
  }
  for (int i = 0; i < 2000; ++i) {
    auto k = registry_.Impl("test::busy", DispatchKey::kCPU, Kernel(&IdentityKernel, "kernel"));
    ASSERT_TRUE(k.ok()) << k.status();
    if (i % 100 == 0) std::this_thread::yield();
  }  // each handle deregisters at the end of its iteration
  while (calls.load() < 10000) std::this_thread::yield();
  stop = true;
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GE(calls.load(), 10000);
  // No call runs now: the next deregistration frees every retired kernel (only the composite
  // stays).
  registry_.Impl("test::busy", DispatchKey::kCPU, Kernel(&IdentityKernel, "last")).value().Reset();
  EXPECT_EQ(registry_.KernelRecords(), 1u);
}

// Note [Looking ops up without a lock]: lookups by name race with definitions that grow the
// index (from 1024 slots, past several doublings) and with a redefinition under a new schema,
// and always find a whole entry (TSan checks the publication in the tsan build).
TEST_F(OpRegistryTest, FindTakesNoLockAndSeesOpsDefinedMeanwhile) {
  constexpr int kOps = 3000;
  std::vector<RegistrationHandle> handles;
  std::atomic<int> defined{0};
  std::atomic<bool> stop{false};
  std::atomic<int64_t> wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        const int n = defined.load();
        for (int i = std::max(0, n - 16); i < n; ++i) {
          absl::StatusOr<OperatorHandle> op = registry_.Find(absl::StrCat("test::op", i));
          if (!op.ok() || op->name() != absl::StrCat("test::op", i)) ++wrong;
        }
        if (registry_.Find("test::never_defined").ok()) ++wrong;
      }
    });
  }
  for (int i = 0; i < kOps; ++i) {
    absl::StatusOr<RegistrationHandle> h =
        registry_.Define(absl::StrCat("test::op", i, "(Tensor self) -> Tensor"));
    ASSERT_TRUE(h.ok()) << h.status();
    handles.push_back(*std::move(h));
    defined.store(i + 1);
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  for (int i = 0; i < kOps; i += 97) {
    EXPECT_TRUE(registry_.Find(absl::StrCat("test::op", i)).ok()) << i;
  }
  // Undefined, the name stays unknown; redefined with another schema, the new entry is found.
  handles[5].Reset();
  EXPECT_EQ(registry_.Find("test::op5").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<RegistrationHandle> again =
      registry_.Define("test::op5(Tensor self, int n) -> Tensor");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(registry_.Find("test::op5")->schema().arguments.size(), 2u);
}

// Note [Reclaiming deregistered kernels]: registering and deregistering leaves nothing behind
// (it used to keep every kernel record ever published: 1000 here).
TEST_F(OpRegistryTest, DeregisteredKernelsAreFreedWhenNoCallRuns) {
  OperatorHandle op = Define("test::id(Tensor(a) self) -> Tensor(a)");
  const size_t before = registry_.KernelRecords();
  for (int i = 0; i < 1000; ++i) {
    auto k = registry_.Impl("test::id", DispatchKey::kCPU, Kernel(&IdentityKernel, "kernel"));
    ASSERT_TRUE(k.ok()) << k.status();
    Stack stack{Make({1})};
    ASSERT_TRUE(registry_.Call(op, &stack).ok());
  }
  EXPECT_EQ(registry_.KernelRecords(), before);
}

// A kernel blocked inside a call keeps its record (and every record retired after that call
// entered) until it returns, however many registrations come and go meanwhile; ASan would
// report the record's use after the kernel returns (its results are checked against it) if it
// were freed early.
std::atomic<int> g_blocked_state{0};  // 1: inside the kernel; 2: may return
absl::Status BlockingKernel(void*, const OperatorHandle&, Stack* stack) {
  g_blocked_state.store(1);
  while (g_blocked_state.load() != 2) std::this_thread::yield();
  stack->resize(1);
  return absl::OkStatus();
}

TEST_F(OpRegistryTest, AKernelStillRunningKeepsItsRecordAfterDeregistration) {
  OperatorHandle op = Define("test::slow(Tensor(a) self) -> Tensor(a)");
  Define("test::other(Tensor(a) self) -> Tensor(a)");
  const size_t before = registry_.KernelRecords();
  auto slow = registry_.Impl("test::slow", DispatchKey::kCPU, Kernel(&BlockingKernel, "slow"));
  ASSERT_TRUE(slow.ok());
  g_blocked_state.store(0);
  absl::Status result;
  std::thread caller([&] {
    Stack stack{Make({1})};
    result = registry_.Call(op, &stack);
  });
  while (g_blocked_state.load() != 1) std::this_thread::yield();
  slow->Reset();  // deregistered while it runs
  for (int i = 0; i < 100; ++i) {
    registry_.Impl("test::other", DispatchKey::kCPU, Kernel(&IdentityKernel, "other"))
        .value()
        .Reset();
  }
  // The running kernel's record and the 100 retired after its call entered are all kept.
  EXPECT_EQ(registry_.KernelRecords(), before + 101);
  g_blocked_state.store(2);
  caller.join();
  EXPECT_TRUE(result.ok()) << result;
  registry_.Impl("test::other", DispatchKey::kCPU, Kernel(&IdentityKernel, "other"))
      .value()
      .Reset();
  EXPECT_EQ(registry_.KernelRecords(), before);
}

}  // namespace
}  // namespace tessera
