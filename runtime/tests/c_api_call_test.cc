// Calling ops generically through the C ABI (1.1 additions): named and skipped arguments,
// bool[] values, views and tensors over host memory at a storage offset, and the Layout and
// MemoryFormat values. Runs without any plugin: the ops used are the core's (views, meta
// kernels) or the test's own.
#include <cstdint>
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

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr tsr_device kCpu{TSR_DEVICE_CPU, 0};
constexpr tsr_device kMeta{TSR_DEVICE_META, 0};

std::vector<int64_t> Sizes(const tsr_tensor* t) {
  return std::vector<int64_t>(tsr_tensor_sizes(t), tsr_tensor_sizes(t) + tsr_tensor_dim(t));
}
std::vector<int64_t> Strides(const tsr_tensor* t) {
  return std::vector<int64_t>(tsr_tensor_strides(t), tsr_tensor_strides(t) + tsr_tensor_dim(t));
}
std::vector<float> Floats(const tsr_tensor* t) {
  std::vector<float> out(static_cast<size_t>(tsr_tensor_numel(t)));
  EXPECT_EQ(Consume(tsr_tensor_copy_to_host(t, out.data(), out.size() * sizeof(float))), "");
  return out;
}

const tsr_op* Find(const char* name) {
  const tsr_op* op = nullptr;
  EXPECT_EQ(Consume(tsr_op_find(S(name), &op)), "") << name;
  return op;
}

// Stack: a tsr_stack released at scope exit.
class Stack {
 public:
  Stack() { EXPECT_EQ(Consume(tsr_stack_create(&s_)), ""); }
  ~Stack() { tsr_stack_release(s_); }
  operator tsr_stack*() const { return s_; }  // NOLINT: implicit, for the C calls
  // Call runs `op` and returns its error as Consume does ("" for success).
  std::string Call(const tsr_op* op) { return Consume(tsr_op_call(op, s_)); }
  // Result: the first return, a new reference.
  tsr_tensor* Result() {
    tsr_tensor* t = nullptr;
    EXPECT_EQ(Consume(tsr_stack_get_tensor(s_, 0, &t)), "");
    tsr_tensor_retain(t);
    return t;
  }

 private:
  tsr_stack* s_ = nullptr;
};

// A meta tensor of sizes [2, 3] laid out transposed (strides [1, 2]): what memory_format
// decides about is visible in its copies' strides, and no plugin is needed.
tsr_tensor* TransposedMeta() {
  const int64_t sizes[] = {2, 3}, strides[] = {1, 2};
  tsr_tensor* t = nullptr;
  EXPECT_EQ(Consume(tsr_tensor_empty_strided(sizes, strides, 2, TSR_DTYPE_FLOAT32, kMeta, &t)), "");
  return t;
}

// --- named and skipped arguments ---------------------------------------------------------

TEST(CApiKeywordArguments, ToCopyTakesMemoryFormatByName) {
  const tsr_op* to_copy = Find("_to_copy");
  tsr_tensor* self = TransposedMeta();
  for (const tsr_memory_format format :
       {TSR_MEMORY_FORMAT_CONTIGUOUS, TSR_MEMORY_FORMAT_PRESERVE}) {
    Stack stack;
    ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, self)), "");
    ASSERT_EQ(Consume(tsr_stack_name_next(stack, S("memory_format"))), "");
    ASSERT_EQ(Consume(tsr_stack_push_int(stack, format)), "");
    ASSERT_EQ(tsr_stack_size(stack), 3u);
    EXPECT_EQ(tsr_stack_kind(stack, 1), TSR_VALUE_NAME);
    ASSERT_EQ(stack.Call(to_copy), "");
    ASSERT_EQ(tsr_stack_size(stack), 1u);
    tsr_tensor* out = stack.Result();
    EXPECT_THAT(Sizes(out), ElementsAre(2, 3));
    if (format == TSR_MEMORY_FORMAT_CONTIGUOUS) {
      EXPECT_THAT(Strides(out), ElementsAre(3, 1));
    } else {
      EXPECT_THAT(Strides(out), ElementsAre(1, 2)) << "preserve keeps a dense layout";
    }
    tsr_tensor_release(out);
  }
  // The same call with the five arguments in between skipped by placeholders.
  Stack stack;
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, self)), "");
  for (int i = 0; i < 5; ++i) ASSERT_EQ(Consume(tsr_stack_push_default(stack)), "");
  EXPECT_EQ(tsr_stack_kind(stack, 1), TSR_VALUE_DEFAULT);
  ASSERT_EQ(Consume(tsr_stack_push_int(stack, TSR_MEMORY_FORMAT_CONTIGUOUS)), "");
  ASSERT_EQ(stack.Call(to_copy), "");
  tsr_tensor* out = stack.Result();
  EXPECT_THAT(Strides(out), ElementsAre(3, 1));
  tsr_tensor_release(out);
  tsr_tensor_release(self);
}

TEST(CApiKeywordArguments, SliceSkipsToTheStepOnRealData) {
  // slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1)
  const float data[] = {0, 1, 2, 3, 4, 5, 6, 7};
  const int64_t sizes[] = {2, 4};
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, kCpu, &t)), "");
  ASSERT_EQ(Consume(tsr_tensor_copy_from_host(t, data, sizeof data)), "");
  Stack stack;
  tsr_stack_push_tensor(stack, t);
  tsr_stack_push_int(stack, 1);
  tsr_stack_name_next(stack, S("step"));
  tsr_stack_push_int(stack, 2);
  ASSERT_EQ(stack.Call(Find("slice.Tensor")), "");
  tsr_tensor* out = stack.Result();
  EXPECT_THAT(Sizes(out), ElementsAre(2, 2));
  EXPECT_THAT(Strides(out), ElementsAre(4, 2));
  EXPECT_THAT(Floats(out), ElementsAre(0, 2, 4, 6));
  tsr_tensor_release(out);
  tsr_tensor_release(t);
}

// Every refusal names the op and what is wrong.
TEST(CApiKeywordArguments, BadBindingsAreRefusedNamingTheOp) {
  const tsr_op* to_copy = Find("_to_copy");
  tsr_tensor* self = TransposedMeta();
  struct Case {
    const char* what;
    void (*push)(tsr_stack*, tsr_tensor*);
    const char* message;
  };
  const Case cases[] = {
      {"unknown name",
       [](tsr_stack* s, tsr_tensor* t) {
         tsr_stack_push_tensor(s, t);
         tsr_stack_name_next(s, S("memory_fromat"));
         tsr_stack_push_int(s, 0);
       },
       "_to_copy: unknown argument name 'memory_fromat' (the op's arguments: self, dtype, "
       "layout, device, pin_memory, non_blocking, memory_format)"},
      {"given twice",
       [](tsr_stack* s, tsr_tensor* t) {
         tsr_stack_push_tensor(s, t);
         tsr_stack_push_dtype(s, TSR_DTYPE_INT32);
         tsr_stack_name_next(s, S("dtype"));
         tsr_stack_push_dtype(s, TSR_DTYPE_INT64);
       },
       "_to_copy: argument 'dtype' given twice (at position 1 and by name)"},
      {"positional after named",
       [](tsr_stack* s, tsr_tensor* t) {
         tsr_stack_name_next(s, S("self"));
         tsr_stack_push_tensor(s, t);
         tsr_stack_push_dtype(s, TSR_DTYPE_INT32);
       },
       "_to_copy: expected only named arguments after the named argument 'self', got a "
       "positional value (ScalarType, stack index 2)"},
      {"required argument missing",
       [](tsr_stack* s, tsr_tensor*) {
         tsr_stack_name_next(s, S("non_blocking"));
         tsr_stack_push_bool(s, 1);
       },
       "_to_copy: missing value for argument 'self' (position 0), which has no default"},
      {"placeholder without a default",
       [](tsr_stack* s, tsr_tensor*) { tsr_stack_push_default(s); },
       "_to_copy: argument 'self' (position 0) has no default, but a default placeholder was "
       "pushed for it (tsr_stack_push_default)"},
      {"name without a value",
       [](tsr_stack* s, tsr_tensor* t) {
         tsr_stack_push_tensor(s, t);
         tsr_stack_name_next(s, S("dtype"));
       },
       "_to_copy: argument name 'dtype' (stack index 1) has no value after it"},
      {"a named value of the wrong type",
       [](tsr_stack* s, tsr_tensor* t) {
         tsr_stack_push_tensor(s, t);
         tsr_stack_name_next(s, S("non_blocking"));
         tsr_stack_push_int(s, 1);
       },
       "_to_copy: argument 'non_blocking' (position 5): expected bool, got int"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Stack stack;
    c.push(stack, self);
    tsr_error* error = tsr_op_call(to_copy, stack);
    EXPECT_EQ(tsr_error_code(error), TSR_INVALID_ARGUMENT);
    EXPECT_THAT(Consume(error), HasSubstr(c.message));
  }
  // Refused when pushed: an empty name, a name right after a name, no stack.
  Stack stack;
  EXPECT_THAT(Consume(tsr_stack_name_next(stack, S(""))),
              HasSubstr("tsr_stack_name_next: expected an argument name, got an empty string"));
  EXPECT_THAT(Consume(tsr_stack_name_next(stack, tsr_string{nullptr, 3})),
              HasSubstr("expected an argument name"));
  ASSERT_EQ(Consume(tsr_stack_name_next(stack, S("dtype"))), "");
  EXPECT_THAT(Consume(tsr_stack_name_next(stack, S("layout"))),
              HasSubstr("tsr_stack_name_next: expected a value for argument 'dtype' before the "
                        "next name ('layout'), got a name right after it"));
  EXPECT_EQ(tsr_stack_size(stack), 1u);
  EXPECT_THAT(Consume(tsr_stack_name_next(nullptr, S("dtype"))),
              HasSubstr("expected a stack, got NULL"));
  EXPECT_THAT(Consume(tsr_stack_push_default(nullptr)), HasSubstr("expected a stack, got NULL"));
  tsr_tensor_release(self);
}

// kinds::record(Tensor self, int a=1, int b=2, *, int c=3) -> Tensor: its kernel writes down
// what it found on its stack.
struct Record {
  std::vector<int32_t> kinds;
  std::vector<int64_t> ints;
};

tsr_error* RecordKinds(void* context, const tsr_op*, tsr_stack* stack) {
  auto* record = static_cast<Record*>(context);
  record->kinds.clear();
  record->ints.clear();
  for (size_t i = 0; i < tsr_stack_size(stack); ++i) {
    record->kinds.push_back(tsr_stack_kind(stack, i));
    int64_t v = 0;
    if (tsr_stack_kind(stack, i) != TSR_VALUE_INT) continue;
    if (tsr_error* e = tsr_stack_get_int(stack, i, &v)) return e;
    record->ints.push_back(v);
  }
  tsr_tensor* self = nullptr;
  if (tsr_error* e = tsr_stack_get_tensor(stack, 0, &self)) return e;
  tsr_tensor_retain(self);
  tsr_stack_clear(stack);
  tsr_error* e = tsr_stack_push_tensor(stack, self);
  tsr_tensor_release(self);
  return e;
}

TEST(CApiKeywordArguments, KernelsSeeOnlyAPlainPositionalStack) {
  tsr_registration* def = nullptr;
  ASSERT_EQ(
      Consume(tsr_op_define(
          S("kinds::record(Tensor(a) self, int a=1, int b=2, *, int c=3) -> Tensor(a)"), &def)),
      "");
  Record record;
  tsr_kernel_desc desc = {};
  desc.struct_size = sizeof desc;
  desc.op_name = S("kinds::record");
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = &RecordKinds;
  desc.context = &record;
  desc.kernel_name = S("record_kinds");
  tsr_registration* reg = nullptr;
  ASSERT_EQ(Consume(tsr_kernel_register(&desc, &reg)), "");
  const int64_t one[] = {1};
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(one, 1, TSR_DTYPE_FLOAT32, kCpu, &t)), "");
  const tsr_op* op = Find("kinds::record");
  {
    Stack stack;
    tsr_stack_push_tensor(stack, t);
    tsr_stack_push_default(stack);
    tsr_stack_push_int(stack, 20);
    tsr_stack_name_next(stack, S("c"));
    tsr_stack_push_int(stack, 30);
    ASSERT_EQ(stack.Call(op), "");
    EXPECT_THAT(record.kinds,
                ElementsAre(TSR_VALUE_TENSOR, TSR_VALUE_INT, TSR_VALUE_INT, TSR_VALUE_INT));
    EXPECT_THAT(record.ints, ElementsAre(1, 20, 30));
  }
  {
    Stack stack;  // plain positional, trailing defaults left out: as before 1.1
    tsr_stack_push_tensor(stack, t);
    tsr_stack_push_int(stack, 10);
    ASSERT_EQ(stack.Call(op), "");
    EXPECT_THAT(record.ints, ElementsAre(10, 2, 3));
  }
  tsr_tensor_release(t);
  tsr_registration_release(reg);
  tsr_registration_release(def);
}

// --- Layout and MemoryFormat ---------------------------------------------------------------

TEST(CApiEnums, LayoutAndMemoryFormatHavePyTorchsValuesAndOthersAreRefused) {
  static_assert(TSR_LAYOUT_STRIDED == 0);
  static_assert(TSR_MEMORY_FORMAT_CONTIGUOUS == 0 && TSR_MEMORY_FORMAT_PRESERVE == 1 &&
                TSR_MEMORY_FORMAT_CHANNELS_LAST == 2 && TSR_MEMORY_FORMAT_CHANNELS_LAST_3D == 3);
  static_assert(sizeof(tsr_layout) == 4 && sizeof(tsr_memory_format) == 4);
  const tsr_op* to_copy = Find("_to_copy");
  tsr_tensor* self = TransposedMeta();
  {
    Stack stack;
    tsr_stack_push_tensor(stack, self);
    tsr_stack_name_next(stack, S("layout"));
    tsr_stack_push_int(stack, TSR_LAYOUT_STRIDED);
    EXPECT_EQ(stack.Call(to_copy), "");
  }
  {
    Stack stack;
    tsr_stack_push_tensor(stack, self);
    tsr_stack_name_next(stack, S("layout"));
    tsr_stack_push_int(stack, 1);  // PyTorch's sparse_coo
    EXPECT_THAT(stack.Call(to_copy),
                HasSubstr("_to_copy: argument 'layout' (position 2): expected a Layout (0: "
                          "strided, the only layout of Tessera's tensors), got 1"));
  }
  {
    Stack stack;
    tsr_stack_push_tensor(stack, self);
    tsr_stack_name_next(stack, S("memory_format"));
    tsr_stack_push_int(stack, 7);
    EXPECT_THAT(stack.Call(to_copy),
                HasSubstr("_to_copy: argument 'memory_format' (position 6): expected a "
                          "MemoryFormat in [0, 4)"));
  }
  // The op listing states the defaults in the same numbers.
  tsr_arg_info arg{};
  arg.struct_size = sizeof arg;
  ASSERT_EQ(Consume(tsr_op_argument(Find("contiguous"), 1, &arg)), "");
  EXPECT_EQ(std::string(arg.default_value.data, arg.default_value.size),
            std::to_string(TSR_MEMORY_FORMAT_CONTIGUOUS));
  tsr_tensor_release(self);
}

// --- bool[] ---------------------------------------------------------------------------------

TEST(CApiBoolList, PushesAndGetsBytesAndRejectsMismatches) {
  Stack stack;
  const uint8_t values[] = {1, 0, 7};
  ASSERT_EQ(Consume(tsr_stack_push_bool_list(stack, values, 3)), "");
  ASSERT_EQ(Consume(tsr_stack_push_bool_list(stack, nullptr, 0)), "");
  ASSERT_EQ(Consume(tsr_stack_push_int(stack, 1)), "");
  EXPECT_EQ(tsr_stack_kind(stack, 0), TSR_VALUE_BOOL_LIST);
  const uint8_t* got = nullptr;
  size_t n = 0;
  ASSERT_EQ(Consume(tsr_stack_get_bool_list(stack, 0, &got, &n)), "");
  EXPECT_THAT(std::vector<uint8_t>(got, got + n), ElementsAre(1, 0, 1)) << "7 reads back as 1";
  ASSERT_EQ(Consume(tsr_stack_get_bool_list(stack, 1, &got, &n)), "");
  EXPECT_EQ(n, 0u);
  EXPECT_THAT(Consume(tsr_stack_get_bool_list(stack, 2, &got, &n)),
              HasSubstr("tsr_stack_get_bool_list: value 2 is int, expected bool[]"));
  EXPECT_THAT(Consume(tsr_stack_get_bool_list(stack, 3, &got, &n)),
              HasSubstr("index 3 is out of range"));
  EXPECT_THAT(Consume(tsr_stack_get_bool_list(stack, 0, &got, nullptr)),
              HasSubstr("expected a count pointer, got NULL"));
  EXPECT_THAT(Consume(tsr_stack_get_bool_list(stack, 0, nullptr, &n)),
              HasSubstr("expected an output pointer, got NULL"));
  EXPECT_THAT(Consume(tsr_stack_push_bool_list(stack, nullptr, 2)),
              HasSubstr("tsr_stack_push_bool_list: got NULL values"));
  EXPECT_THAT(Consume(tsr_stack_push_bool_list(nullptr, values, 1)),
              HasSubstr("expected a stack, got NULL"));
  // Plugins reach both through the table.
  const tsr_runtime_api* api = tsr_runtime_api_get();
  EXPECT_TRUE(TSR_API_HAS(api, stack_push_bool_list));
  EXPECT_TRUE(TSR_API_HAS(api, stack_get_bool_list));
}

// bools::count(Tensor self, bool[] mask, bool[3] fixed=[True, False, True]) -> Tensor, as a
// typed C kernel: each bool[] arrives as (const uint8_t* values, size_t count).
struct CountSeen {
  std::vector<uint8_t> mask, fixed;
};

tsr_error* CountTyped(void* context, tsr_tensor* self, const uint8_t* mask, size_t nmask,
                      const uint8_t* fixed, size_t nfixed, tsr_tensor** out) {
  auto* seen = static_cast<CountSeen*>(context);
  seen->mask.assign(mask, mask + nmask);
  seen->fixed.assign(fixed, fixed + nfixed);
  tsr_tensor_retain(self);
  *out = self;
  return nullptr;
}

TEST(CApiBoolList, ReachesTypedCKernelsWithTheSchemaDefaults) {
  tsr_registration* def = nullptr;
  ASSERT_EQ(Consume(tsr_op_define(
                S("bools::count(Tensor(a) self, bool[] mask, bool[3] fixed=[True, False, True]) -> "
                  "Tensor(a)"),
                &def)),
            "");
  CountSeen seen;
  tsr_kernel_desc desc = {};
  desc.struct_size = sizeof desc;
  desc.op_name = S("bools::count");
  desc.device_type = TSR_DEVICE_CPU;
  desc.typed = reinterpret_cast<tsr_typed_kernel_fn>(&CountTyped);
  desc.context = &seen;
  desc.kernel_name = S("count_typed");
  tsr_registration* reg = nullptr;
  ASSERT_EQ(Consume(tsr_kernel_register(&desc, &reg)), "");
  const int64_t one[] = {1};
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(one, 1, TSR_DTYPE_FLOAT32, kCpu, &t)), "");
  const uint8_t mask[] = {0, 1, 1, 0, 1};
  {
    Stack stack;
    tsr_stack_push_tensor(stack, t);
    tsr_stack_push_bool_list(stack, mask, 5);
    ASSERT_EQ(stack.Call(Find("bools::count")), "");
    EXPECT_THAT(seen.mask, ElementsAre(0, 1, 1, 0, 1));
    EXPECT_THAT(seen.fixed, ElementsAre(1, 0, 1)) << "the schema's default";
  }
  {
    Stack stack;  // by name, the default skipped
    tsr_stack_push_tensor(stack, t);
    tsr_stack_name_next(stack, S("fixed"));
    tsr_stack_push_bool_list(stack, mask, 3);
    tsr_stack_name_next(stack, S("mask"));
    tsr_stack_push_bool_list(stack, nullptr, 0);
    ASSERT_EQ(stack.Call(Find("bools::count")), "");
    EXPECT_TRUE(seen.mask.empty());
    EXPECT_THAT(seen.fixed, ElementsAre(0, 1, 1));
  }
  {
    Stack stack;  // an int list is no bool list
    tsr_stack_push_tensor(stack, t);
    const int64_t ints[] = {1, 0};
    tsr_stack_push_int_list(stack, ints, 2);
    EXPECT_THAT(
        stack.Call(Find("bools::count")),
        HasSubstr("bools::count: argument 'mask' (position 1): expected bool[], got int[]"));
  }
  tsr_tensor_release(t);
  tsr_registration_release(reg);
  tsr_registration_release(def);
}

// --- views ----------------------------------------------------------------------------------

tsr_tensor* Iota(int64_t n) {
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = static_cast<float>(i);
  tsr_tensor* t = nullptr;
  EXPECT_EQ(Consume(tsr_tensor_empty(&n, 1, TSR_DTYPE_FLOAT32, kCpu, &t)), "");
  EXPECT_EQ(Consume(tsr_tensor_copy_from_host(t, values.data(), values.size() * sizeof(float))),
            "");
  return t;
}

TEST(CApiAsStrided, ViewsShareTheStorage) {
  tsr_tensor* base = Iota(12);
  const int64_t sizes[] = {2, 2}, strides[] = {3, 1};
  tsr_tensor* view = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_as_strided(base, sizes, strides, 2, 1, &view)), "");
  EXPECT_THAT(Sizes(view), ElementsAre(2, 2));
  EXPECT_THAT(Strides(view), ElementsAre(3, 1));
  EXPECT_EQ(tsr_tensor_storage_offset(view), 1);
  EXPECT_EQ(tsr_tensor_data_ptr(view), static_cast<float*>(tsr_tensor_data_ptr(base)) + 1);
  EXPECT_THAT(Floats(view), ElementsAre(1, 2, 4, 5));
  const float writes[] = {-1, -2, -4, -5};
  ASSERT_EQ(Consume(tsr_tensor_copy_from_host(view, writes, sizeof writes)), "");
  EXPECT_THAT(Floats(base), ElementsAre(0, -1, -2, 3, -4, -5, 6, 7, 8, 9, 10, 11));
  // A view of a view: the offset counts from the storage, not from the view.
  tsr_tensor* last = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_as_strided(view, nullptr, nullptr, 0, 11, &last)), "");
  EXPECT_EQ(tsr_tensor_dim(last), 0);
  EXPECT_THAT(Floats(last), ElementsAre(11));
  // Stride 0 (broadcast) and an empty view anywhere are fine.
  const int64_t three[] = {3}, zero[] = {0}, empty[] = {0};
  tsr_tensor* broadcast = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_as_strided(base, three, zero, 1, 4, &broadcast)), "");
  EXPECT_THAT(Floats(broadcast), ElementsAre(-4, -4, -4));
  tsr_tensor* nothing = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_as_strided(base, empty, three, 1, 12, &nothing)), "");
  EXPECT_EQ(tsr_tensor_numel(nothing), 0);
  tsr_tensor_release(base);  // the views keep the storage alive
  EXPECT_THAT(Floats(view), ElementsAre(-1, -2, -4, -5));
  for (tsr_tensor* t : {view, last, broadcast, nothing}) tsr_tensor_release(t);
}

TEST(CApiAsStrided, WorksOnEveryDeviceWithoutTouchingMemory) {
  tsr_tensor* meta = TransposedMeta();
  const int64_t sizes[] = {3, 2}, strides[] = {2, 1};
  tsr_tensor* view = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_as_strided(meta, sizes, strides, 2, 0, &view)), "");
  EXPECT_EQ(tsr_tensor_device(view).type, TSR_DEVICE_META);
  EXPECT_THAT(Strides(view), ElementsAre(2, 1));
  tsr_tensor_release(view);
  tsr_tensor_release(meta);
}

TEST(CApiAsStrided, RefusesViewsOutsideTheStorageAndNegativeValues) {
  tsr_tensor* base = Iota(12);
  const int64_t sizes[] = {2, 2}, strides[] = {3, 1};
  tsr_tensor* view = nullptr;
  tsr_error* error = tsr_tensor_as_strided(base, sizes, strides, 2, 8, &view);
  EXPECT_EQ(tsr_error_code(error), TSR_OUT_OF_RANGE);
  EXPECT_THAT(Consume(error),
              HasSubstr("tsr_tensor_as_strided: a view with sizes [2, 2], strides [3, 1] and "
                        "offset 8 needs 13 elements of float32, but the storage holds 12"));
  EXPECT_EQ(view, nullptr);
  const int64_t negative_size[] = {-1, 2}, negative_stride[] = {3, -1};
  error = tsr_tensor_as_strided(base, negative_size, strides, 2, 0, &view);
  EXPECT_EQ(tsr_error_code(error), TSR_INVALID_ARGUMENT);
  EXPECT_THAT(Consume(error), HasSubstr("tsr_tensor_as_strided: expected all sizes to be "
                                        "non-negative, but got size -1 at dimension 0"));
  EXPECT_THAT(Consume(tsr_tensor_as_strided(base, sizes, negative_stride, 2, 0, &view)),
              HasSubstr("tsr_tensor_as_strided: expected all strides to be non-negative, but got "
                        "stride -1 at dimension 1"));
  EXPECT_THAT(Consume(tsr_tensor_as_strided(base, sizes, strides, 2, -1, &view)),
              HasSubstr("tsr_tensor_as_strided: expected a non-negative storage offset, got -1"));
  const int64_t huge[] = {2}, huge_stride[] = {INT64_MAX};
  EXPECT_THAT(Consume(tsr_tensor_as_strided(base, huge, huge_stride, 1, 0, &view)),
              HasSubstr("overflows int64"));
  EXPECT_THAT(Consume(tsr_tensor_as_strided(nullptr, sizes, strides, 2, 0, &view)),
              HasSubstr("tsr_tensor_as_strided: expected a tensor for 'tensor', got NULL"));
  EXPECT_THAT(Consume(tsr_tensor_as_strided(base, nullptr, strides, 2, 0, &view)),
              HasSubstr("tsr_tensor_as_strided: expected 2 sizes, got NULL"));
  EXPECT_THAT(Consume(tsr_tensor_as_strided(base, sizes, strides, 2, 0, nullptr)),
              HasSubstr("expected an output pointer, got NULL"));
  tsr_tensor_release(base);
}

// --- host memory at a storage offset --------------------------------------------------------

void CountDelete(void*, void* context) { ++*static_cast<int*>(context); }

tsr_host_memory_desc HostDesc(float* data, size_t n, const int64_t* sizes, size_t ndim,
                              int64_t offset, int* deleted) {
  tsr_host_memory_desc desc = {};
  desc.struct_size = sizeof desc;
  desc.data = data;
  desc.nbytes = n * sizeof(float);
  desc.sizes = sizes;
  desc.ndim = ndim;
  desc.dtype = TSR_DTYPE_FLOAT32;
  desc.storage_offset = offset;
  desc.deleter = deleted ? &CountDelete : nullptr;
  desc.deleter_context = deleted;
  return desc;
}

TEST(CApiHostMemoryDesc, WrapsMemoryFromAnOffsetAndDeletesItOnce) {
  float buffer[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const int64_t sizes[] = {2, 3};
  int deleted = 0;
  const tsr_host_memory_desc desc = HostDesc(buffer, 10, sizes, 2, 4, &deleted);
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_from_host_memory_desc(&desc, &t)), "");
  EXPECT_EQ(tsr_tensor_storage_offset(t), 4);
  EXPECT_EQ(tsr_tensor_data_ptr(t), buffer + 4);
  EXPECT_THAT(Strides(t), ElementsAre(3, 1));
  EXPECT_THAT(Floats(t), ElementsAre(4, 5, 6, 7, 8, 9));
  // The storage is the whole buffer: a later view may reach before the offset.
  const int64_t two[] = {2}, one[] = {1};
  tsr_tensor* head = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_as_strided(t, two, one, 1, 0, &head)), "");
  EXPECT_THAT(Floats(head), ElementsAre(0, 1));
  tsr_tensor_release(t);
  EXPECT_EQ(deleted, 0) << "the view keeps the memory";
  tsr_tensor_release(head);
  EXPECT_EQ(deleted, 1);

  // Strided, with a zero offset: the same as tsr_tensor_from_host_memory.
  const int64_t strides[] = {1, 2};
  tsr_host_memory_desc strided = HostDesc(buffer, 6, sizes, 2, 0, nullptr);
  strided.strides = strides;
  ASSERT_EQ(Consume(tsr_tensor_from_host_memory_desc(&strided, &t)), "");
  EXPECT_THAT(Floats(t), ElementsAre(0, 2, 4, 1, 3, 5));
  tsr_tensor_release(t);
}

TEST(CApiHostMemoryDesc, RefusesWhatDoesNotFitWithoutCallingTheDeleter) {
  float buffer[10] = {};
  const int64_t sizes[] = {2, 3};
  int deleted = 0;
  tsr_tensor* t = nullptr;
  tsr_host_memory_desc desc = HostDesc(buffer, 10, sizes, 2, 5, &deleted);
  tsr_error* error = tsr_tensor_from_host_memory_desc(&desc, &t);
  EXPECT_EQ(tsr_error_code(error), TSR_INVALID_ARGUMENT);
  EXPECT_THAT(Consume(error),
              HasSubstr("tsr_tensor_from_host_memory_desc: a float32 view with sizes [2, 3] and "
                        "strides [3, 1] at storage offset 5 needs 44 bytes, but 40 were given"));
  EXPECT_EQ(t, nullptr);
  desc.storage_offset = -1;
  EXPECT_THAT(Consume(tsr_tensor_from_host_memory_desc(&desc, &t)),
              HasSubstr("expected a non-negative storage offset, got -1"));
  desc.storage_offset = INT64_MAX;
  EXPECT_THAT(Consume(tsr_tensor_from_host_memory_desc(&desc, &t)),
              HasSubstr("at storage offset 9223372036854775807 needs"));
  desc.storage_offset = 0;
  desc.dtype = 99;
  EXPECT_THAT(Consume(tsr_tensor_from_host_memory_desc(&desc, &t)),
              HasSubstr("expected a tsr_dtype in [0, 10), got 99"));
  desc.dtype = TSR_DTYPE_FLOAT32;
  desc.struct_size = sizeof(size_t);
  EXPECT_THAT(Consume(tsr_tensor_from_host_memory_desc(&desc, &t)),
              HasSubstr("expected desc->struct_size >= 80 (sizeof(tsr_host_memory_desc) of ABI "
                        "1.1), got 8"));
  EXPECT_THAT(Consume(tsr_tensor_from_host_memory_desc(nullptr, &t)),
              HasSubstr("expected a tsr_host_memory_desc, got NULL"));
  desc.struct_size = sizeof desc;
  EXPECT_THAT(Consume(tsr_tensor_from_host_memory_desc(&desc, nullptr)),
              HasSubstr("expected an output pointer, got NULL"));
  // An empty view needs no memory at any offset.
  const int64_t empty[] = {0};
  tsr_host_memory_desc none = HostDesc(nullptr, 0, empty, 1, 3, nullptr);
  ASSERT_EQ(Consume(tsr_tensor_from_host_memory_desc(&none, &t)), "");
  EXPECT_EQ(tsr_tensor_numel(t), 0);
  tsr_tensor_release(t);
  EXPECT_EQ(deleted, 0) << "refused memory stays the caller's";
}

}  // namespace
