// Prepared calls (Note [Prepared calls] in prepared_call.cc): add.Tensor prepared from one call
// runs later calls of the same arguments' metadata through its plan, on the out= kernel
// CallUnboxed would run; a call that differs in anything the plan read, or whose kernels
// changed, is not taken and leaves its arguments as they were. The kernel here is a test one:
// add.out on the CPU that counts its calls.
#include "dispatcher/prepared_call.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/storage.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/op_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;

const Device kCpu(DeviceType::kCPU);

std::atomic<int> g_calls{0};

// add.out(self, other, *, alpha, out) for float32 and float64, any strides: out = self +
// alpha * other, element by element in logical order (the test's tensors do not broadcast).
template <typename T>
void AddInto(const Tensor& self, const Tensor& other, double alpha, const Tensor& out) {
  const int64_t n = out.numel();
  std::vector<int64_t> index(out.dim(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t at_self = 0, at_other = 0, at_out = 0;
    for (int64_t d = 0; d < out.dim(); ++d) {
      at_self += index[d] * self.strides()[d];
      at_other += index[d] * other.strides()[d];
      at_out += index[d] * out.strides()[d];
    }
    out.data<T>()[at_out] =
        self.data<T>()[at_self] + static_cast<T>(alpha) * other.data<T>()[at_other];
    for (int64_t d = out.dim(); d-- > 0;) {
      if (++index[d] < out.sizes()[d]) break;
      index[d] = 0;
    }
  }
}

absl::Status AddOutUnboxed(void*, const OperatorHandle&, const UnboxedArgs& args, Stack*,
                           const CallPlan*, absl::Span<const TensorImpl*> returned) {
  ++g_calls;
  const Tensor& out = args[3].tensor();
  if (out.dtype() == ScalarType::kFloat64) {
    AddInto<double>(args[0].tensor(), args[1].tensor(), args[2].scalar().to_double(), out);
  } else {
    AddInto<float>(args[0].tensor(), args[1].tensor(), args[2].scalar().to_double(), out);
  }
  returned[0] = out.impl();
  return absl::OkStatus();
}

absl::Status NotCalled(void*, const OperatorHandle& op, Stack*) {
  return absl::InternalError(op.name() + ": the boxed entry of the test's kernel was called");
}
absl::Status NotCalledPacked(void*, const OperatorHandle& op, Stack*, const CallPlan*,
                             absl::Span<const TensorImpl*>) {
  return absl::InternalError(op.name() + ": the packed entry of the test's kernel was called");
}

Tensor Filled(std::vector<float> values, std::initializer_list<int64_t> sizes) {
  Tensor t = *Empty(sizes, ScalarType::kFloat32, kCpu);
  std::memcpy(t.data_ptr(), values.data(), values.size() * sizeof(float));
  return t;
}

// Values: a contiguous float32 tensor's elements.
std::vector<float> Values(const Tensor& t) {
  EXPECT_TRUE(t.is_contiguous());
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

class PreparedCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(DefineCoreOps(registry_).ok());
    out_kernel_ = RegisterAddOut();
    g_calls = 0;
  }

  RegistrationHandle RegisterAddOut() {
    KernelFunction k;
    k.fn = &NotCalled;
    k.packed = &NotCalledPacked;
    k.unboxed = &AddOutUnboxed;
    k.name = "test::add_out";
    absl::StatusOr<RegistrationHandle> h = registry_.Impl("add.out", DispatchKey::kCPU, k);
    EXPECT_TRUE(h.ok()) << h.status();
    return h.ok() ? *std::move(h) : RegistrationHandle();
  }

  // Call: add.Tensor's arguments (self, other, alpha), borrowed.
  struct Call {
    Tensor self, other;
    Scalar alpha;
    void Into(UnboxedArgs* a) const {
      a->AddTensor(self.impl());
      a->AddTensor(other.impl());
      a->AddScalar(alpha);
    }
  };

  std::unique_ptr<PreparedCall> Prepare(const Call& c, bool* never) {
    UnboxedArgs args;
    c.Into(&args);
    return registry_.PrepareUnboxed(*registry_.Find("add.Tensor"), args, never);
  }
  bool Matches(const PreparedCall& p, const Call& c) {
    UnboxedArgs args;
    c.Into(&args);
    return p.Matches(args);
  }

  // Run: CallPrepared on `c` (with `spare`, when given); whether it was taken (its status must
  // be OK when it was).
  bool Run(const PreparedCall& p, const Call& c, Tensor* result = nullptr,
           Tensor* spare = nullptr) {
    UnboxedArgs args;
    c.Into(&args);
    const size_t before = args.size();
    UnboxedReturns returns;
    bool taken = false;
    const absl::Status s = registry_.CallPrepared(p, &args, &returns, &taken, spare);
    EXPECT_TRUE(s.ok()) << s;
    if (!taken) {
      EXPECT_EQ(args.size(), before) << "a call not taken added to its arguments";
      EXPECT_EQ(returns.size, 0u);
    } else if (result != nullptr) {
      *result = returns.tensors[0];
    }
    return taken;
  }

  OpRegistry registry_;
  RegistrationHandle out_kernel_;
};

TEST_F(PreparedCallTest, ALaterCallOfTheSameMetadataRunsOnThePlan) {
  const Tensor x = Filled({1, 2, 3, 4, 5, 6}, {2, 3}), y = Filled({6, 5, 4, 3, 2, 1}, {2, 3});
  bool never = true;
  std::unique_ptr<PreparedCall> p = Prepare(Call{x, y, Scalar(int64_t{2})}, &never);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(never);
  EXPECT_TRUE(Matches(*p, Call{x, y, Scalar(int64_t{2})}));

  // Other tensors (other data) of the same metadata.
  const Tensor a = Filled({0, 1, 0, 1, 0, 1}, {2, 3}), b = Filled({1, 1, 1, 1, 1, 1}, {2, 3});
  Tensor out;
  ASSERT_TRUE(Run(*p, Call{a, b, Scalar(int64_t{2})}, &out));
  EXPECT_EQ(g_calls, 1);
  EXPECT_THAT(out.sizes(), ElementsAre(2, 3));
  EXPECT_EQ(out.dtype(), ScalarType::kFloat32);
  EXPECT_THAT(Values(out), ElementsAre(2, 3, 2, 3, 2, 3));
}

// Each thing the plan read, changed: the call is not taken (CallUnboxed plans it afresh).
TEST_F(PreparedCallTest, ACallThatDiffersInWhatThePlanReadIsNotTaken) {
  const Tensor x = Filled({1, 2, 3, 4, 5, 6}, {2, 3}), y = Filled({6, 5, 4, 3, 2, 1}, {2, 3});
  bool never = false;
  std::unique_ptr<PreparedCall> p = Prepare(Call{x, y, Scalar(0.0)}, &never);
  ASSERT_NE(p, nullptr);

  const Tensor f64 = *Empty({2, 3}, ScalarType::kFloat64, kCpu);
  const Tensor other_sizes = Filled({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor transposed = *T(Filled({1, 2, 3, 4, 5, 6}, {3, 2}));  // [2, 3], strides [1, 2]
  const Tensor one_dim = Filled({1, 2, 3, 4, 5, 6}, {6});
  struct Case {
    const char* what;
    Call call;
  };
  const Case cases[] = {
      {"a float64 self", {f64, y, Scalar(0.0)}},
      {"other sizes", {other_sizes, other_sizes, Scalar(0.0)}},
      {"other strides", {transposed, y, Scalar(0.0)}},
      {"another dim count", {one_dim, one_dim, Scalar(0.0)}},
      {"an int alpha of the same value", {x, y, Scalar(int64_t{0})}},
      {"alpha -0.0 for 0.0", {x, y, Scalar(-0.0)}},
      {"alpha 1.0", {x, y, Scalar(1.0)}},
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(Matches(*p, c.call)) << c.what;
    EXPECT_FALSE(Run(*p, c.call)) << c.what;
  }
  EXPECT_EQ(g_calls, 0);
  EXPECT_TRUE(Run(*p, Call{x, y, Scalar(0.0)}));
  EXPECT_EQ(g_calls, 1);
}

// The kernel is looked up on every call: gone, the call is not taken; back, it is; a kernel of
// the functional form's own (which CallUnboxed runs instead of the derivation) is not taken
// either.
TEST_F(PreparedCallTest, ACallAfterTheKernelsChangedFollowsThem) {
  const Tensor x = Filled({1, 2}, {2}), y = Filled({3, 4}, {2});
  bool never = false;
  std::unique_ptr<PreparedCall> p = Prepare(Call{x, y, Scalar(int64_t{1})}, &never);
  ASSERT_NE(p, nullptr);
  out_kernel_ = RegistrationHandle();  // deregistered
  EXPECT_FALSE(Run(*p, Call{x, y, Scalar(int64_t{1})}));
  out_kernel_ = RegisterAddOut();
  EXPECT_TRUE(Run(*p, Call{x, y, Scalar(int64_t{1})}));

  KernelFunction own;
  own.fn = &NotCalled;
  own.name = "test::add_own";
  absl::StatusOr<RegistrationHandle> h = registry_.Impl("add.Tensor", DispatchKey::kCPU, own);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_FALSE(Run(*p, Call{x, y, Scalar(int64_t{1})}));
  EXPECT_EQ(g_calls, 1);
}

// Note [Spare outputs]: a spare that nothing else holds, of the planned layout, becomes the
// output (its memory written, no allocation); one held elsewhere (another handle, a view of its
// storage), of another layout, or immutable is left to its holder and the output allocated.
TEST_F(PreparedCallTest, ASpareNothingElseHoldsBecomesTheOutput) {
  const Tensor x = Filled({1, 2, 3, 4, 5, 6}, {2, 3}), y = Filled({6, 5, 4, 3, 2, 1}, {2, 3});
  bool never = true;
  std::unique_ptr<PreparedCall> p = Prepare(Call{x, y, Scalar(int64_t{1})}, &never);
  ASSERT_NE(p, nullptr);
  Tensor spare = Filled({0, 0, 0, 0, 0, 0}, {2, 3});
  const void* memory = spare.data_ptr();
  Tensor out;
  ASSERT_TRUE(Run(*p, Call{x, y, Scalar(int64_t{1})}, &out, &spare));
  EXPECT_FALSE(spare.defined());  // moved into the output
  EXPECT_EQ(out.data_ptr(), memory);
  EXPECT_THAT(Values(out), ElementsAre(7, 7, 7, 7, 7, 7));

  // Each of these is left as it was, and the output has memory of its own.
  Tensor held = Filled({0, 0, 0, 0, 0, 0}, {2, 3});
  const Tensor other_handle = held;
  Tensor viewed = Filled({0, 0, 0, 0, 0, 0}, {2, 3});
  const Tensor view = *Transpose(viewed, 0, 1);  // shares the storage only
  Tensor transposed = *Transpose(Filled({0, 0, 0, 0, 0, 0}, {3, 2}), 0, 1);
  Tensor wider = Filled({0, 0, 0, 0, 0, 0, 0, 0}, {2, 4});
  Tensor frozen = *ImmutableAlias(Filled({0, 0, 0, 0, 0, 0}, {2, 3}));
  for (Tensor* s : {&held, &viewed, &transposed, &wider, &frozen}) {
    const void* its = s->data_ptr();
    ASSERT_TRUE(Run(*p, Call{x, y, Scalar(int64_t{1})}, &out, s));
    EXPECT_TRUE(s->defined());
    EXPECT_NE(out.data_ptr(), its);
    EXPECT_THAT(Values(out), ElementsAre(7, 7, 7, 7, 7, 7));
  }
  EXPECT_THAT(Values(held), ElementsAre(0, 0, 0, 0, 0, 0));  // another handle still sees it
  // MaySpare's other rules: at most kMaxSpareBytes of storage, from the CPU allocator.
  EXPECT_TRUE(MaySpare(*Filled(std::vector<float>(1024), {1024}).impl()));
  EXPECT_FALSE(MaySpare(*Filled(std::vector<float>(1025), {1025}).impl()));
  alignas(64) static float lent[6];  // an application's memory, borrowed by a tensor
  DataPtr borrowed;
  borrowed.data = lent;
  borrowed.device = kCpu;
  const Tensor on_lent = *FromStorage(Ref<StorageImpl>::Make(std::move(borrowed), sizeof lent),
                                      ScalarType::kFloat32, {2, 3}, {3, 1}, 0);
  EXPECT_FALSE(MaySpare(*on_lent.impl()));
  // A call not taken leaves its spare too.
  Tensor unused = Filled({0, 0, 0, 0, 0, 0}, {2, 3});
  const Tensor longer = Filled({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  EXPECT_FALSE(Run(*p, Call{longer, longer, Scalar(int64_t{1})}, nullptr, &unused));
  EXPECT_TRUE(unused.defined());
}

// Not prepared: a call whose plan fails (these arguments: another call may be), and the forms
// and ops whose calls never are.
TEST_F(PreparedCallTest, WhatIsNotPrepared) {
  const Tensor two = Filled({1, 2}, {2}), three = Filled({1, 2, 3}, {3});
  bool never = true;
  EXPECT_EQ(Prepare(Call{two, three, Scalar(int64_t{1})}, &never), nullptr)
      << "[2] + [3] does not broadcast";
  EXPECT_FALSE(never);

  const Tensor x = Filled({1, 2}, {2});
  UnboxedArgs inplace;
  Call{x, x, Scalar(int64_t{1})}.Into(&inplace);
  never = false;
  EXPECT_EQ(registry_.PrepareUnboxed(*registry_.Find("add_.Tensor"), inplace, &never), nullptr);
  EXPECT_TRUE(never) << "an in-place form";
  const Tensor m = Filled({1, 2, 3, 4}, {2, 2});  // outlives the arguments that borrow it
  UnboxedArgs linear;  // linear has functional and out= forms, and a Meta kernel, no plan
  linear.AddTensor(m.impl());
  linear.AddTensor(m.impl());
  linear.AddNone();
  never = false;
  EXPECT_EQ(registry_.PrepareUnboxed(*registry_.Find("linear"), linear, &never), nullptr);
  EXPECT_TRUE(never) << "an op without an unboxed plan function";
}

// The matrix products and the reductions have unboxed plan functions: their calls are prepared,
// and a prepared call matches only arguments of the same shapes and Scalars.
TEST_F(PreparedCallTest, MatrixProductsAndReductionsArePrepared) {
  const Tensor m = Filled({1, 2, 3, 4}, {2, 2}), row = Filled({1, 2}, {1, 2});
  auto args_of = [](std::initializer_list<const Tensor*> tensors, UnboxedArgs* a) {
    for (const Tensor* t : tensors) a->AddTensor(t->impl());
  };
  bool never = true;
  UnboxedArgs mm;
  args_of({&m, &m}, &mm);
  std::unique_ptr<PreparedCall> p = registry_.PrepareUnboxed(*registry_.Find("mm"), mm, &never);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(never);
  EXPECT_TRUE(p->Matches(mm));
  UnboxedArgs other;
  args_of({&row, &m}, &other);
  EXPECT_FALSE(p->Matches(other)) << "another shape is planned afresh";

  UnboxedArgs addmm;
  args_of({&m, &m, &m}, &addmm);
  addmm.AddScalar(Scalar(int64_t{1}));
  addmm.AddScalar(Scalar(int64_t{1}));
  p = registry_.PrepareUnboxed(*registry_.Find("addmm"), addmm, &never);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->Matches(addmm));
  UnboxedArgs beta2;
  args_of({&m, &m, &m}, &beta2);
  beta2.AddScalar(Scalar(int64_t{2}));
  beta2.AddScalar(Scalar(int64_t{1}));
  EXPECT_FALSE(p->Matches(beta2)) << "another beta";

  UnboxedArgs sum;
  args_of({&m}, &sum);
  sum.AddNone();  // dtype
  p = registry_.PrepareUnboxed(*registry_.Find("sum"), sum, &never);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->Matches(sum));

  UnboxedArgs bad;  // [1, 2] @ [1, 2] does not multiply: not prepared, but another call may be
  args_of({&row, &row}, &bad);
  never = true;
  EXPECT_EQ(registry_.PrepareUnboxed(*registry_.Find("mm"), bad, &never), nullptr);
  EXPECT_FALSE(never);
}

// SpareStack (a compiled model's run, Note [Run states] in runtime/model/compiled_model.h):
// Take gives the most recent spare of exactly the asked dtype, sizes and strides, and nothing
// else; Keep refuses what MaySpare refuses and, when full, lets the oldest go.
TEST(SpareStackTest, TakesTheNewestOfTheLayoutAndNothingElse) {
  SpareStack spares;
  Tensor older = Filled({0, 0, 0, 0}, {2, 2});
  Tensor newer = Filled({0, 0, 0, 0}, {2, 2});
  Tensor flat = Filled({0, 0, 0, 0}, {4});  // the same bytes, another shape
  const TensorImpl* older_impl = older.impl();
  const TensorImpl* newer_impl = newer.impl();
  const TensorImpl* flat_impl = flat.impl();
  spares.Keep(older);
  spares.Keep(newer);
  spares.Keep(flat);
  EXPECT_FALSE(older.defined());  // moved into the stack
  EXPECT_EQ(spares.size(), 3u);

  const TensorSpec square{{2, 2}, {2, 1}, ScalarType::kFloat32};
  const TensorSpec transposed{{2, 2}, {1, 2}, ScalarType::kFloat32};
  const TensorSpec doubles{{2, 2}, {2, 1}, ScalarType::kFloat64};
  EXPECT_FALSE(spares.Take(transposed).defined()) << "other strides";
  EXPECT_FALSE(spares.Take(doubles).defined()) << "another dtype";
  EXPECT_FALSE(spares.Take(TensorSpec{{3}, {1}, ScalarType::kFloat32}).defined()) << "other sizes";
  EXPECT_EQ(spares.Take(square).impl(), newer_impl) << "the newest of the layout first";
  EXPECT_EQ(spares.Take(square).impl(), older_impl);
  EXPECT_FALSE(spares.Take(square).defined());
  EXPECT_EQ(spares.Take(TensorSpec{{4}, {1}, ScalarType::kFloat32}).impl(), flat_impl);
  EXPECT_EQ(spares.size(), 0u);

  // Refused as MaySpare refuses them: held elsewhere, immutable; and an undefined tensor.
  Tensor held = Filled({0, 0, 0, 0}, {2, 2});
  const Tensor other_handle = held;
  Tensor frozen = *ImmutableAlias(Filled({0, 0, 0, 0}, {2, 2}));
  Tensor none;
  spares.Keep(held);
  spares.Keep(frozen);
  spares.Keep(none);
  EXPECT_TRUE(held.defined());
  EXPECT_TRUE(frozen.defined());
  EXPECT_EQ(spares.size(), 0u);
}

TEST(SpareStackTest, AFullStackLetsTheOldestGo) {
  SpareStack spares;
  std::vector<const TensorImpl*> kept;
  for (size_t i = 0; i < SpareStack::kSpares + 2; ++i) {
    Tensor t = Filled({static_cast<float>(i)}, {1});
    kept.push_back(t.impl());
    spares.Keep(t);
  }
  EXPECT_EQ(spares.size(), SpareStack::kSpares);
  const TensorSpec one{{1}, {1}, ScalarType::kFloat32};
  for (size_t i = kept.size(); i-- > 2;) {
    EXPECT_EQ(spares.Take(one).impl(), kept[i]) << "spare " << i;
  }
  EXPECT_FALSE(spares.Take(one).defined()) << "the two oldest went";
}

}  // namespace
}  // namespace tessera
