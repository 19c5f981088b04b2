// Packed calls through the C ABI (1.1): tsr_op_call_values, the application's one-call entry,
// and packed kernels (tsr_kernel_desc.packed, tsr_kernel_call), the kernel's (Note [Packed
// calls] in runtime/op.cc, Note [Packed kernel calls] in dispatcher/kernel_results.cc).
// Runs without plugins (TESSERA_NO_DEFAULT_PLUGINS): the CPU kernels are the test's own, and
// the other ops used are the core's meta kernels.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "c_test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/c/tessera.h"

namespace {

using tessera_test::Consume;
using tessera_test::S;

using ::testing::HasSubstr;

constexpr tsr_device kCpu{TSR_DEVICE_CPU, 0};
constexpr tsr_device kMeta{TSR_DEVICE_META, 0};

const tsr_op* Find(const char* name) {
  const tsr_op* op = nullptr;
  EXPECT_EQ(Consume(tsr_op_find(S(name), &op)), "") << name;
  return op;
}

tsr_tensor* Floats(std::vector<float> values, tsr_device device = kCpu) {
  const int64_t n = static_cast<int64_t>(values.size());
  tsr_tensor* t = nullptr;
  EXPECT_EQ(Consume(tsr_tensor_empty(&n, 1, TSR_DTYPE_FLOAT32, device, &t)), "");
  if (device.type == TSR_DEVICE_CPU) {
    EXPECT_EQ(Consume(tsr_tensor_copy_from_host(t, values.data(), values.size() * sizeof(float))),
              "");
  }
  return t;
}

std::vector<float> Values(const tsr_tensor* t) {
  std::vector<float> out(static_cast<size_t>(tsr_tensor_numel(t)));
  EXPECT_EQ(Consume(tsr_tensor_copy_to_host(t, out.data(), out.size() * sizeof(float))), "");
  return out;
}

tsr_value TensorValue(tsr_tensor* t) {
  tsr_value v;
  std::memset(&v, 0, sizeof v);
  v.kind = TSR_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}
tsr_value ScalarValue(double d) {
  tsr_value v;
  std::memset(&v, 0, sizeof v);
  v.kind = TSR_VALUE_SCALAR;
  v.u.scalar.kind = TSR_SCALAR_DOUBLE;
  v.u.scalar.d = d;
  return v;
}
tsr_value Kind(tsr_value_kind kind) {
  tsr_value v;
  std::memset(&v, 0, sizeof v);
  v.kind = kind;
  return v;
}

// --- the test's add.out kernel on the CPU: float32, contiguous, same shapes --------------

// What the kernel does and what it saw of its last call.
enum class Mode { kAdd, kReturnSelf, kReturnNothing, kFail };
struct Seen {
  Mode mode = Mode::kAdd;
  int boxed_calls = 0;
  int packed_calls = 0;
  size_t num_args = 0;
  size_t num_returns = 0;
  tsr_value_kind alpha_kind = TSR_VALUE_NONE;
  double alpha = 0;
  tsr_tensor* out = nullptr;
  bool views_match = false;
  int32_t compute_dtype = -2;
  int32_t stack_compute_dtype = -2;
};
Seen seen;

void AddFloats(const tsr_tensor_view& a, const tsr_tensor_view& b, double alpha,
               const tsr_tensor_view& out) {
  const float* pa = static_cast<const float*>(a.data);
  const float* pb = static_cast<const float*>(b.data);
  float* po = static_cast<float*>(out.data);
  for (int64_t i = 0; i < out.numel; ++i) po[i] = pa[i] + static_cast<float>(alpha) * pb[i];
}

tsr_error* PackedAdd(void*, const tsr_kernel_call* call) {
  ++seen.packed_calls;
  seen.num_args = call->num_args;
  seen.num_returns = call->num_returns;
  seen.alpha_kind = static_cast<tsr_value_kind>(call->args[2].kind);
  seen.alpha = call->args[2].u.scalar.kind == TSR_SCALAR_DOUBLE
                   ? call->args[2].u.scalar.d
                   : static_cast<double>(call->args[2].u.scalar.i);
  seen.out = call->args[3].u.tensor;
  seen.views_match = call->views[0] != nullptr &&
                     call->views[0]->tensor == call->args[0].u.tensor &&
                     call->views[1] != nullptr && call->views[2] == nullptr &&
                     call->views[3] != nullptr && call->views[3]->tensor == seen.out;
  seen.compute_dtype = call->plan->compute_dtype;
  tsr_call_plan on_stack{};
  on_stack.struct_size = sizeof on_stack;
  if (tsr_error* e = tsr_stack_get_call_plan(call->stack, &on_stack, nullptr, 0)) return e;
  seen.stack_compute_dtype = on_stack.compute_dtype;
  switch (seen.mode) {
    case Mode::kAdd:
      AddFloats(*call->views[0], *call->views[1], seen.alpha, *call->views[3]);
      call->returns[0] = call->args[3];
      return nullptr;
    case Mode::kReturnSelf:
      call->returns[0] = call->args[0];
      return nullptr;
    case Mode::kReturnNothing:
      return nullptr;
    case Mode::kFail:
      return tsr_error_create(TSR_INVALID_ARGUMENT, S("packed_test: told to fail"));
  }
  return nullptr;
}

tsr_error* BoxedAdd(void*, const tsr_op*, tsr_stack* stack) {
  ++seen.boxed_calls;
  tsr_tensor_view v[4];
  for (tsr_tensor_view& x : v) x.struct_size = sizeof x;
  if (tsr_error* e = tsr_stack_get_tensor_views(stack, 0, 4, v)) return e;
  tsr_scalar alpha{};
  if (tsr_error* e = tsr_stack_get_scalar(stack, 2, &alpha)) return e;
  AddFloats(v[0], v[1], alpha.kind == TSR_SCALAR_DOUBLE ? alpha.d : static_cast<double>(alpha.i),
            v[3]);
  tsr_tensor* out = v[3].tensor;
  tsr_tensor_retain(out);
  tsr_stack_clear(stack);
  tsr_error* e = tsr_stack_push_tensor(stack, out);
  tsr_tensor_release(out);
  return e;
}

// Registration: the test's add.out (boxed + packed) on the CPU, released at scope exit.
class AddOutKernel {
 public:
  explicit AddOutKernel(const char* op = "add.out", bool with_boxed = true,
                        const char* nondeterministic = "") {
    seen = Seen();
    tsr_kernel_desc desc{};
    desc.struct_size = sizeof desc;
    desc.op_name = S(op);
    desc.device_type = TSR_DEVICE_CPU;
    desc.boxed = with_boxed ? &BoxedAdd : nullptr;
    desc.packed = &PackedAdd;
    desc.kernel_name = S("packed_test::add_out");
    desc.nondeterministic = S(nondeterministic);
    error_ = Consume(tsr_kernel_register(&desc, &registration_));
  }
  ~AddOutKernel() { tsr_registration_release(registration_); }
  const std::string& error() const { return error_; }

 private:
  tsr_registration* registration_ = nullptr;
  std::string error_;
};

TEST(CApiPackedKernel, OutFormsRunThePackedEntryWithViewsAndThePlan) {
  AddOutKernel kernel;
  ASSERT_EQ(kernel.error(), "");
  tsr_tensor* a = Floats({1, 2, 3});
  tsr_tensor* b = Floats({10, 20, 30});
  tsr_tensor* out = Floats({0, 0, 0});
  tsr_stack* stack = nullptr;
  ASSERT_EQ(Consume(tsr_stack_create(&stack)), "");
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, a)), "");
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, b)), "");
  tsr_scalar half{};
  half.kind = TSR_SCALAR_DOUBLE;
  half.d = 0.5;
  ASSERT_EQ(Consume(tsr_stack_push_scalar(stack, half)), "");
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, out)), "");
  ASSERT_EQ(Consume(tsr_op_call(Find("add.out"), stack)), "");
  EXPECT_EQ(seen.packed_calls, 1);
  EXPECT_EQ(seen.boxed_calls, 0);
  EXPECT_EQ(seen.num_args, 4u);
  EXPECT_EQ(seen.num_returns, 1u);
  EXPECT_EQ(seen.alpha_kind, TSR_VALUE_SCALAR);
  EXPECT_EQ(seen.alpha, 0.5);
  EXPECT_EQ(seen.out, out);
  EXPECT_TRUE(seen.views_match);
  EXPECT_EQ(seen.compute_dtype, TSR_DTYPE_FLOAT32);
  EXPECT_EQ(seen.stack_compute_dtype, TSR_DTYPE_FLOAT32) << "call->stack carries the plan";
  ASSERT_EQ(tsr_stack_size(stack), 1u);
  tsr_tensor* returned = nullptr;
  ASSERT_EQ(Consume(tsr_stack_get_tensor(stack, 0, &returned)), "");
  EXPECT_EQ(returned, out);
  EXPECT_EQ(Values(out), (std::vector<float>{6, 12, 18}));
  tsr_stack_release(stack);
  tsr_tensor_release(a);
  tsr_tensor_release(b);
  tsr_tensor_release(out);
}

// The unboxed fast path leaves a nondeterministic kernel to the boxed path, where deterministic
// algorithms pass it over: with the mode on, nothing else runs add here, so the call is refused
// and the packed entry never runs.
TEST(CApiPackedKernel, DeterministicAlgorithmsReachTheFastPath) {
  AddOutKernel kernel("add.out", true, "atomic adds in scheduling order");
  ASSERT_EQ(kernel.error(), "");
  tsr_tensor* a = Floats({1, 2});
  tsr_tensor* b = Floats({3, 4});
  const tsr_value args[] = {TensorValue(a), TensorValue(b)};
  tsr_value ret = Kind(TSR_VALUE_NONE);
  size_t n = 0;
  const int32_t before = tsr_deterministic_algorithms();
  ASSERT_EQ(Consume(tsr_set_deterministic_algorithms(TSR_DETERMINISTIC_ON)), "");
  const std::string refused = Consume(tsr_op_call_values(Find("add.Tensor"), args, 2, &ret, 1, &n));
  const std::string refused_inplace =
      Consume(tsr_op_call_values(Find("add_.Tensor"), args, 2, &ret, 1, &n));
  ASSERT_EQ(Consume(tsr_set_deterministic_algorithms(before)), "");
  EXPECT_THAT(refused, HasSubstr("add.Tensor on cpu has no deterministic implementation: its "
                                 "kernel 'packed_test::add_out' is nondeterministic"));
  EXPECT_THAT(refused_inplace, HasSubstr("add_.Tensor on cpu has no deterministic"));
  EXPECT_EQ(seen.packed_calls + seen.boxed_calls, 0);
  ASSERT_EQ(Consume(tsr_op_call_values(Find("add.Tensor"), args, 2, &ret, 1, &n)), "");
  EXPECT_EQ(seen.packed_calls, 1) << "mode off: the fast path runs it";
  tsr_tensor_release(ret.u.tensor);
  tsr_tensor_release(a);
  tsr_tensor_release(b);
}

TEST(CApiPackedKernel, DerivedFunctionalAndInplaceFormsRunItToo) {
  AddOutKernel kernel;
  ASSERT_EQ(kernel.error(), "");
  tsr_tensor* a = Floats({1, 2});
  tsr_tensor* b = Floats({3, 4});
  // Functional, derived: a new tensor, returned as a new reference.
  const tsr_value args[] = {TensorValue(a), TensorValue(b)};  // alpha left to its default
  tsr_value ret = Kind(TSR_VALUE_NONE);
  size_t n = 9;
  ASSERT_EQ(Consume(tsr_op_call_values(Find("add.Tensor"), args, 2, &ret, 1, &n)), "");
  ASSERT_EQ(n, 1u);
  ASSERT_EQ(ret.kind, TSR_VALUE_TENSOR);
  EXPECT_NE(ret.u.tensor, a);
  EXPECT_EQ(Values(ret.u.tensor), (std::vector<float>{4, 6}));
  EXPECT_EQ(seen.packed_calls, 1);
  EXPECT_EQ(seen.alpha, 1.0) << "the default alpha";
  tsr_tensor_release(ret.u.tensor);
  // In place, derived from out=: self is the output and the return.
  ASSERT_EQ(Consume(tsr_op_call_values(Find("add_.Tensor"), args, 2, &ret, 1, &n)), "");
  ASSERT_EQ(ret.kind, TSR_VALUE_TENSOR);
  EXPECT_EQ(ret.u.tensor, a);
  EXPECT_EQ(seen.out, a);
  EXPECT_EQ(Values(a), (std::vector<float>{4, 6}));
  EXPECT_EQ(seen.packed_calls, 2);
  EXPECT_EQ(seen.boxed_calls, 0);
  tsr_tensor_release(ret.u.tensor);
  tsr_tensor_release(a);
  tsr_tensor_release(b);
}

TEST(CApiPackedKernel, WrongReturnsAreInternalErrorsNamingTheKernel) {
  AddOutKernel kernel;
  ASSERT_EQ(kernel.error(), "");
  tsr_tensor* a = Floats({1});
  tsr_tensor* b = Floats({2});
  const tsr_value args[] = {TensorValue(a), TensorValue(b)};
  tsr_value ret;
  seen.mode = Mode::kReturnSelf;
  EXPECT_THAT(Consume(tsr_op_call_values(Find("add.Tensor"), args, 2, &ret, 1, nullptr)),
              HasSubstr("kernel 'packed_test::add_out' of add.out left another tensor as result "
                        "0, expected argument 'out' itself"));
  seen.mode = Mode::kReturnNothing;
  EXPECT_THAT(Consume(tsr_op_call_values(Find("add.Tensor"), args, 2, &ret, 1, nullptr)),
              HasSubstr("left no tensor as result 0"));
  seen.mode = Mode::kFail;
  EXPECT_THAT(Consume(tsr_op_call_values(Find("add.Tensor"), args, 2, &ret, 1, nullptr)),
              HasSubstr("packed_test: told to fail"));
  tsr_tensor_release(a);
  tsr_tensor_release(b);
}

TEST(CApiPackedKernel, RegistrationRules) {
  {
    AddOutKernel without_boxed("add.out", /*with_boxed=*/false);
    EXPECT_THAT(without_boxed.error(),
                HasSubstr("desc->packed is set for add.out without desc->boxed"));
  }
  // On an op whose returns are fresh tensors the packed entry is never called: boxed runs.
  AddOutKernel functional("mul.Tensor");
  ASSERT_EQ(functional.error(), "");
  tsr_tensor* a = Floats({1, 2, 3, 4});
  const tsr_value args[] = {TensorValue(a), TensorValue(a)};
  tsr_value ret;
  // mul.Tensor takes two arguments; the boxed kernel above reads four, so it fails, but the
  // point is which entry ran.
  (void)Consume(tsr_op_call_values(Find("mul.Tensor"), args, 2, &ret, 1, nullptr));
  EXPECT_EQ(seen.packed_calls, 0);
  EXPECT_EQ(seen.boxed_calls, 1);
  tsr_tensor_release(a);
}

TEST(CApiPackedKernel, TheKnobLeavesTheBoxedEntryAlone) {
  setenv("TESSERA_PACKED_KERNELS", "0", 1);
  AddOutKernel kernel;
  unsetenv("TESSERA_PACKED_KERNELS");
  ASSERT_EQ(kernel.error(), "");
  tsr_tensor* a = Floats({1, 2});
  const tsr_value args[] = {TensorValue(a), TensorValue(a)};
  tsr_value ret;
  ASSERT_EQ(Consume(tsr_op_call_values(Find("add.Tensor"), args, 2, &ret, 1, nullptr)), "");
  EXPECT_EQ(Values(ret.u.tensor), (std::vector<float>{2, 4}));
  EXPECT_EQ(seen.packed_calls, 0);
  EXPECT_EQ(seen.boxed_calls, 1);
  tsr_tensor_release(ret.u.tensor);
  tsr_tensor_release(a);
}

// Kernels with several returns, a list argument, or one that breaks the packed contract.
enum class Other { kInOrder, kSwapped, kClearsStack };
Other other_mode = Other::kInOrder;
tsr_value_kind seen_list_kind = TSR_VALUE_NONE;
size_t seen_list_size = 0;

tsr_error* PackedMaxDim(void*, const tsr_kernel_call* call) {
  ++seen.packed_calls;
  static_cast<float*>(call->views[3]->data)[0] = 7;    // values: the max
  static_cast<int64_t*>(call->views[4]->data)[0] = 1;  // indices: where it is
  const bool swap = other_mode == Other::kSwapped;
  call->returns[0] = call->args[swap ? 4 : 3];
  call->returns[1] = call->args[swap ? 3 : 4];
  return nullptr;
}

tsr_error* PackedCat(void*, const tsr_kernel_call* call) {
  ++seen.packed_calls;
  seen_list_kind = static_cast<tsr_value_kind>(call->args[0].kind);
  seen_list_size = call->args[0].u.list.size;
  if (other_mode == Other::kClearsStack) {
    tsr_stack_clear(const_cast<tsr_stack*>(call->stack));  // what the contract forbids
    return nullptr;
  }
  call->returns[0] = call->args[2];
  return nullptr;
}

tsr_error* Unused(void*, const tsr_op*, tsr_stack*) {
  return tsr_error_create(TSR_INTERNAL, S("packed_test: the boxed entry ran"));
}

tsr_registration* RegisterPacked(const char* op, tsr_packed_kernel_fn packed,
                                 tsr_boxed_kernel_fn boxed = &Unused,
                                 const char* name = "packed_test::other") {
  tsr_kernel_desc desc{};
  desc.struct_size = sizeof desc;
  desc.op_name = S(op);
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = boxed;
  desc.packed = packed;
  desc.kernel_name = S(name);
  tsr_registration* registration = nullptr;
  EXPECT_EQ(Consume(tsr_kernel_register(&desc, &registration)), "") << op;
  return registration;
}

TEST(CApiPackedKernel, SeveralReturnsComeBackInTheSchemasOrder) {
  seen = Seen();
  other_mode = Other::kInOrder;
  tsr_registration* kernel = RegisterPacked("max.dim_max", &PackedMaxDim);
  tsr_tensor* a = Floats({3, 7});
  tsr_value args[2] = {TensorValue(a), Kind(TSR_VALUE_INT)};
  args[1].u.i = 0;
  tsr_value ret[2];
  size_t n = 0;
  ASSERT_EQ(Consume(tsr_op_call_values(Find("max.dim"), args, 2, ret, 2, &n)), "");
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(seen.packed_calls, 1);
  EXPECT_EQ(tsr_tensor_dtype(ret[0].u.tensor), TSR_DTYPE_FLOAT32);
  EXPECT_EQ(Values(ret[0].u.tensor), (std::vector<float>{7}));
  EXPECT_EQ(tsr_tensor_dtype(ret[1].u.tensor), TSR_DTYPE_INT64);
  tsr_tensor_release(ret[0].u.tensor);
  tsr_tensor_release(ret[1].u.tensor);
  other_mode = Other::kSwapped;
  EXPECT_THAT(Consume(tsr_op_call_values(Find("max.dim"), args, 2, ret, 2, &n)),
              HasSubstr("left another tensor as result 0, expected argument 'values' itself"));
  EXPECT_EQ(n, 0u) << "nothing is handed back on error";
  tsr_registration_release(kernel);
  tsr_tensor_release(a);
}

TEST(CApiPackedKernel, ListArgumentsArriveAsListsAndTheStackMustStayAsItWas) {
  seen = Seen();
  other_mode = Other::kInOrder;
  tsr_registration* kernel = RegisterPacked("cat.out", &PackedCat);
  tsr_tensor* a = Floats({1, 2});
  tsr_tensor* out = Floats({0, 0, 0, 0});
  tsr_tensor* list[] = {a, a};
  tsr_value args[3] = {Kind(TSR_VALUE_TENSOR_LIST), Kind(TSR_VALUE_INT), TensorValue(out)};
  args[0].u.list.data = list;
  args[0].u.list.size = 2;
  tsr_value ret;
  ASSERT_EQ(Consume(tsr_op_call_values(Find("cat.out"), args, 3, &ret, 1, nullptr)), "");
  EXPECT_EQ(seen_list_kind, TSR_VALUE_TENSOR_LIST);
  EXPECT_EQ(seen_list_size, 2u);
  EXPECT_EQ(ret.u.tensor, out);
  tsr_tensor_release(ret.u.tensor);
  other_mode = Other::kClearsStack;
  EXPECT_THAT(Consume(tsr_op_call_values(Find("cat.out"), args, 3, &ret, 1, nullptr)),
              HasSubstr("changed its stack from 3 to 0 values (a packed kernel reads the stack "
                        "only)"));
  other_mode = Other::kInOrder;
  tsr_registration_release(kernel);
  tsr_tensor_release(a);
  tsr_tensor_release(out);
}

// --- tsr_op_call_values --------------------------------------------------------------------

TEST(CApiCallValues, SeveralReturnsComeBackAsNewReferences) {
  const int64_t sizes[] = {2, 3};
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, kMeta, &t)), "");
  tsr_value args[3];
  args[0] = TensorValue(t);
  args[1] = Kind(TSR_VALUE_INT);
  args[1].u.i = 1;
  args[2] = Kind(TSR_VALUE_BOOL);
  args[2].u.b = 1;
  tsr_value ret[3];
  size_t n = 0;
  ASSERT_EQ(Consume(tsr_op_call_values(Find("max.dim"), args, 3, ret, 3, &n)), "");
  ASSERT_EQ(n, 2u);
  ASSERT_EQ(ret[0].kind, TSR_VALUE_TENSOR);
  ASSERT_EQ(ret[1].kind, TSR_VALUE_TENSOR);
  EXPECT_EQ(tsr_tensor_dtype(ret[1].u.tensor), TSR_DTYPE_INT64);
  EXPECT_EQ(tsr_tensor_sizes(ret[0].u.tensor)[1], 1) << "keepdim";
  tsr_tensor_release(ret[0].u.tensor);
  tsr_tensor_release(ret[1].u.tensor);
  // A skipped defaulted argument in the middle: keepdim stays false.
  args[2] = Kind(TSR_VALUE_DEFAULT);
  ASSERT_EQ(Consume(tsr_op_call_values(Find("max.dim"), args, 3, ret, 2, &n)), "");
  EXPECT_EQ(tsr_tensor_dim(ret[0].u.tensor), 1);
  tsr_tensor_release(ret[0].u.tensor);
  tsr_tensor_release(ret[1].u.tensor);
  tsr_tensor_release(t);
}

TEST(CApiCallValues, HostValuesComeBackAsIntsAndBools) {
  // sym_size.int and sym_numel return ATen's SymInt (an int), sym_is_contiguous its SymBool (a
  // bool); they read only the tensor's metadata, so a meta tensor answers too.
  const int64_t sizes[] = {2, 3};
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, kMeta, &t)), "");
  tsr_value args[2] = {TensorValue(t), Kind(TSR_VALUE_INT)};
  args[1].u.i = -1;
  tsr_value ret = Kind(TSR_VALUE_NONE);
  size_t n = 0;
  ASSERT_EQ(Consume(tsr_op_call_values(Find("sym_size.int"), args, 2, &ret, 1, &n)), "");
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(ret.kind, TSR_VALUE_INT);
  EXPECT_EQ(ret.u.i, 3);
  ASSERT_EQ(Consume(tsr_op_call_values(Find("sym_numel"), args, 1, &ret, 1, &n)), "");
  EXPECT_EQ(ret.kind, TSR_VALUE_INT);
  EXPECT_EQ(ret.u.i, 6);
  ASSERT_EQ(Consume(tsr_op_call_values(Find("sym_is_contiguous"), args, 1, &ret, 1, &n)), "");
  EXPECT_EQ(ret.kind, TSR_VALUE_BOOL);
  EXPECT_EQ(ret.u.b, 1);
  args[1].u.i = 2;  // PyTorch's IndexError
  EXPECT_EQ(Consume(tsr_op_call_values(Find("sym_size.int"), args, 2, &ret, 1, &n)),
            std::to_string(TSR_OUT_OF_RANGE) +
                ": sym_size.int: Dimension out of range (expected to be in range of [-2, 1], but "
                "got 2)");
  tsr_tensor_release(t);
}

TEST(CApiCallValues, BadInputIsAnErrorNamingWhatWasExpected) {
  const int64_t sizes[] = {2};
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 1, TSR_DTYPE_FLOAT32, kMeta, &t)), "");
  const tsr_op* neg = Find("neg");
  tsr_value ret;
  tsr_value args[2] = {TensorValue(t), Kind(TSR_VALUE_NONE)};
  EXPECT_THAT(Consume(tsr_op_call_values(nullptr, args, 1, &ret, 1, nullptr)),
              HasSubstr("tsr_op_call_values: expected an op, got NULL"));
  EXPECT_THAT(Consume(tsr_op_call_values(neg, nullptr, 1, &ret, 1, nullptr)),
              HasSubstr("expected an array of 1 argument values, got NULL"));
  EXPECT_THAT(Consume(tsr_op_call_values(neg, args, 1, nullptr, 1, nullptr)),
              HasSubstr("expected room for 1 returns, got NULL returns"));
  // Returns that do not fit are refused before the op runs.
  tsr_value two[2];
  EXPECT_THAT(Consume(tsr_op_call_values(Find("max.dim"), args, 1, two, 1, nullptr)),
              HasSubstr("max.dim returns 2 values, expected room for them, got a capacity of 1"));
  tsr_registration* parts = nullptr;
  ASSERT_EQ(Consume(tsr_op_define(S("packed_test::parts(Tensor self) -> Tensor[]"), &parts)), "");
  EXPECT_THAT(Consume(tsr_op_call_values(Find("packed_test::parts"), args, 1, two, 2, nullptr)),
              HasSubstr("packed_test::parts returns Tensor[] (return 0), which a tsr_value "
                        "cannot hand back; call it through tsr_op_call"));
  tsr_registration_release(parts);
  // Bad values name their argument.
  args[0] = Kind(TSR_VALUE_TENSOR);
  EXPECT_THAT(Consume(tsr_op_call_values(neg, args, 1, &ret, 1, nullptr)),
              HasSubstr("argument 0: expected a tensor, got NULL (pass None as TSR_VALUE_NONE)"));
  args[0] = Kind(static_cast<tsr_value_kind>(99));
  EXPECT_THAT(Consume(tsr_op_call_values(neg, args, 1, &ret, 1, nullptr)),
              HasSubstr("argument 0: expected a tsr_value_kind in [0, 16), got 99"));
  args[0] = Kind(TSR_VALUE_NAME);
  EXPECT_THAT(Consume(tsr_op_call_values(neg, args, 1, &ret, 1, nullptr)),
              HasSubstr("TSR_VALUE_NAME is not a value of a packed call"));
  args[0] = TensorValue(t);
  args[1] = Kind(TSR_VALUE_DTYPE);
  args[1].u.dtype = 99;
  EXPECT_THAT(Consume(tsr_op_call_values(Find("sum"), args, 2, &ret, 1, nullptr)),
              HasSubstr("argument 1: expected a tsr_dtype in [0, 10), got 99 (sum takes "
                        "'ScalarType? dtype=None' there)"));
  args[1] = Kind(TSR_VALUE_INT_LIST);
  args[1].u.list.size = 2;
  EXPECT_THAT(Consume(tsr_op_call_values(Find("sum.dim_IntList"), args, 2, &ret, 1, nullptr)),
              HasSubstr("argument 1: got NULL values for a list of 2"));
  // The dispatcher's own checks apply as to tsr_op_call.
  args[1] = ScalarValue(1);
  EXPECT_THAT(Consume(tsr_op_call_values(neg, args, 2, &ret, 1, nullptr)), HasSubstr("neg"));
  tsr_tensor_release(t);
}

}  // namespace

namespace {

// --- the unboxed fast path (Note [The unboxed fast path] in dispatcher/unboxed_call.cc) -----

// A packed add.out that reads its arguments through call->stack instead of call->args: on the
// fast path that stack fills itself at the first read, and must hold the same values.
int stack_reads_matching = 0;
tsr_error* PackedAddFromStack(void*, const tsr_kernel_call* call) {
  if (tsr_stack_size(call->stack) != call->num_args) {
    return tsr_error_create(TSR_INTERNAL, S("packed_test: the stack's size is not num_args"));
  }
  for (size_t i : {0u, 1u, 3u}) {
    tsr_tensor* t = nullptr;
    if (tsr_error* e = tsr_stack_get_tensor(call->stack, i, &t)) return e;
    if (t != call->args[i].u.tensor) {
      return tsr_error_create(TSR_INTERNAL, S("packed_test: the stack holds another tensor"));
    }
  }
  tsr_scalar alpha{};
  if (tsr_error* e = tsr_stack_get_scalar(call->stack, 2, &alpha)) return e;
  if (alpha.kind != call->args[2].u.scalar.kind || alpha.d != call->args[2].u.scalar.d ||
      alpha.i != call->args[2].u.scalar.i) {
    return tsr_error_create(TSR_INTERNAL, S("packed_test: the stack holds another alpha"));
  }
  ++stack_reads_matching;
  AddFloats(*call->views[0], *call->views[1],
            alpha.kind == TSR_SCALAR_DOUBLE ? alpha.d : static_cast<double>(alpha.i),
            *call->views[3]);
  call->returns[0] = call->args[3];
  return nullptr;
}

TEST(CApiUnboxedPath, AKernelThatReadsItsStackFindsTheCallsArguments) {
  tsr_registration* registration =
      RegisterPacked("add.out", &PackedAddFromStack, &BoxedAdd, "packed_test::add_out_from_stack");
  ASSERT_NE(registration, nullptr);
  stack_reads_matching = 0;
  tsr_tensor* a = Floats({1, 2});
  tsr_tensor* b = Floats({3, 4});
  const tsr_value args[] = {TensorValue(a), TensorValue(b), ScalarValue(2)};
  tsr_value ret = Kind(TSR_VALUE_NONE);
  size_t n = 0;
  // Functional (derived: the output made by the call) and in place (self as the output).
  ASSERT_EQ(Consume(tsr_op_call_values(Find("add.Tensor"), args, 3, &ret, 1, &n)), "");
  EXPECT_EQ(Values(ret.u.tensor), (std::vector<float>{7, 10}));
  tsr_tensor_release(ret.u.tensor);
  ASSERT_EQ(Consume(tsr_op_call_values(Find("add_.Tensor"), args, 3, &ret, 1, &n)), "");
  EXPECT_EQ(ret.u.tensor, a);
  EXPECT_EQ(Values(a), (std::vector<float>{7, 10}));
  tsr_tensor_release(ret.u.tensor);
  EXPECT_EQ(stack_reads_matching, 2);
  tsr_registration_release(registration);
  tsr_tensor_release(a);
  tsr_tensor_release(b);
}

// A packed kernel that breaks the contract and clears its stack (through a cast): refused the
// same way on both paths, though the fast path's stack is empty until the kernel touches it.
tsr_error* PackedAddClearingStack(void*, const tsr_kernel_call* call) {
  tsr_stack_clear(const_cast<tsr_stack*>(call->stack));
  call->returns[0] = call->args[3];
  return nullptr;
}

TEST(CApiUnboxedPath, AKernelThatChangesItsStackIsRefused) {
  tsr_registration* registration = RegisterPacked("add.out", &PackedAddClearingStack, &BoxedAdd,
                                                  "packed_test::add_out_clearing");
  ASSERT_NE(registration, nullptr);
  tsr_tensor* a = Floats({1, 2});
  tsr_tensor* b = Floats({3, 4});
  tsr_value double_alpha = Kind(TSR_VALUE_DOUBLE);
  double_alpha.u.d = 1;
  for (const tsr_value& alpha : {ScalarValue(1), double_alpha}) {  // fast, then boxed
    const tsr_value args[] = {TensorValue(a), TensorValue(b), alpha};
    tsr_value ret = Kind(TSR_VALUE_NONE);
    EXPECT_THAT(Consume(tsr_op_call_values(Find("add.Tensor"), args, 3, &ret, 1, nullptr)),
                HasSubstr("add.Tensor: kernel 'packed_test::add_out_clearing' of add.out changed "
                          "its stack from 4 to 0 values (a packed kernel reads the stack only)"));
  }
  tsr_registration_release(registration);
  tsr_tensor_release(a);
  tsr_tensor_release(b);
}

// Calls the fast path takes (alpha as a tsr_scalar) and calls it leaves to the boxed path (the
// same alpha as a plain double, which the boxed path converts) give the same results and the
// same errors.
TEST(CApiUnboxedPath, TakenAndBoxedCallsAgree) {
  AddOutKernel kernel;
  ASSERT_EQ(kernel.error(), "");
  tsr_value double_alpha = Kind(TSR_VALUE_DOUBLE);
  double_alpha.u.d = 0.5;
  struct Shapes {
    std::vector<float> a, b;
  };
  for (const Shapes& s : {Shapes{{1, 2, 3}, {10, 20, 30}}, Shapes{{1, 2, 3}, {10, 20}}}) {
    std::vector<std::string> outcomes;
    for (const tsr_value& alpha : {ScalarValue(0.5), double_alpha}) {
      for (const char* op : {"add.Tensor", "add_.Tensor"}) {
        tsr_tensor* a = Floats(s.a);
        tsr_tensor* b = Floats(s.b);
        const tsr_value args[] = {TensorValue(a), TensorValue(b), alpha};
        tsr_value ret = Kind(TSR_VALUE_NONE);
        size_t n = 0;
        std::string outcome = Consume(tsr_op_call_values(Find(op), args, 3, &ret, 1, &n));
        if (outcome.empty()) {
          for (float v : Values(ret.u.tensor)) outcome += std::to_string(v) + " ";
          tsr_tensor_release(ret.u.tensor);
        }
        outcomes.push_back(std::string(op) + ": " + outcome);
        tsr_tensor_release(a);
        tsr_tensor_release(b);
      }
    }
    ASSERT_EQ(outcomes.size(), 4u);
    EXPECT_EQ(outcomes[0], outcomes[2]);
    EXPECT_EQ(outcomes[1], outcomes[3]);
  }
  EXPECT_EQ(seen.packed_calls, 4) << "the two calls of the same shapes ran the kernel";
}

}  // namespace
