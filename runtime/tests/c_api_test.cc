// The C ABI from C++: errors, tensor creation, wrapping, copies and bad input, through the
// exported tsr_* functions only (this test links libtessera.so, not the static layers).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
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

std::vector<int64_t> Sizes(const tsr_tensor* t) {
  return std::vector<int64_t>(tsr_tensor_sizes(t), tsr_tensor_sizes(t) + tsr_tensor_dim(t));
}
std::vector<int64_t> Strides(const tsr_tensor* t) {
  return std::vector<int64_t>(tsr_tensor_strides(t), tsr_tensor_strides(t) + tsr_tensor_dim(t));
}

TEST(CApiError, CreateReadRelease) {
  const char text[] = "bad thing";
  tsr_error* e = tsr_error_create(TSR_NOT_FOUND, tsr_string{text, 3});
  EXPECT_EQ(tsr_error_code(e), TSR_NOT_FOUND);
  tsr_string m = tsr_error_message(e);
  EXPECT_EQ(std::string(m.data, m.size), "bad");
  tsr_error_release(e);
  tsr_error* odd = tsr_error_create(static_cast<tsr_code>(999), tsr_string{nullptr, 0});
  EXPECT_EQ(tsr_error_code(odd), TSR_UNKNOWN) << "unknown codes are recorded as UNKNOWN";
  tsr_error_release(odd);
  tsr_error* ok_code = tsr_error_create(TSR_OK, tsr_string{"x", 1});
  EXPECT_EQ(tsr_error_code(ok_code), TSR_UNKNOWN) << "an error is never OK";
  tsr_error_release(ok_code);
  EXPECT_EQ(tsr_error_code(nullptr), TSR_OK);
  EXPECT_EQ(tsr_error_message(nullptr).size, 0u);
  tsr_error_release(nullptr);
}

TEST(CApiTensor, EmptyAndStridedCarryTheirMetadata) {
  const int64_t sizes[] = {2, 3};
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_INT16, kCpu, &t)), "");
  EXPECT_THAT(Sizes(t), ElementsAre(2, 3));
  EXPECT_THAT(Strides(t), ElementsAre(3, 1));
  EXPECT_EQ(tsr_tensor_dtype(t), TSR_DTYPE_INT16);
  EXPECT_EQ(tsr_tensor_device(t).type, TSR_DEVICE_CPU);
  EXPECT_EQ(tsr_tensor_numel(t), 6);
  EXPECT_NE(tsr_tensor_data_ptr(t), nullptr);
  tsr_tensor_release(t);

  const int64_t strides[] = {1, 2};
  ASSERT_EQ(Consume(tsr_tensor_empty_strided(sizes, strides, 2, TSR_DTYPE_FLOAT64, kCpu, &t)), "");
  EXPECT_THAT(Strides(t), ElementsAre(1, 2));
  EXPECT_FALSE(tsr_tensor_is_contiguous(t));
  tsr_tensor_release(t);

  ASSERT_EQ(Consume(tsr_tensor_empty(nullptr, 0, TSR_DTYPE_BOOL, kCpu, &t)), "");
  EXPECT_EQ(tsr_tensor_dim(t), 0);
  EXPECT_EQ(tsr_tensor_numel(t), 1);
  tsr_tensor_release(t);

  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, {TSR_DEVICE_META, 0}, &t)), "");
  EXPECT_EQ(tsr_tensor_data_ptr(t), nullptr);
  float buffer[6];
  EXPECT_THAT(Consume(tsr_tensor_copy_to_host(t, buffer, sizeof buffer)),
              HasSubstr("is a meta tensor and has no data to copy"));
  tsr_tensor_release(t);
}

TEST(CApiTensor, BadArgumentsAreErrorsNamingWhatWasExpected) {
  const int64_t sizes[] = {2, -3};
  tsr_tensor* t = reinterpret_cast<tsr_tensor*>(0x1);
  EXPECT_THAT(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, kCpu, &t)),
              HasSubstr("size -3 at dimension 1"));
  EXPECT_EQ(t, nullptr) << "the output is cleared on error";
  EXPECT_THAT(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, kCpu, nullptr)),
              HasSubstr("tsr_tensor_empty: expected an output pointer, got NULL"));
  EXPECT_THAT(Consume(tsr_tensor_empty(nullptr, 2, TSR_DTYPE_FLOAT32, kCpu, &t)),
              HasSubstr("expected 2 sizes, got NULL"));
  const int64_t ok_sizes[] = {2};
  EXPECT_THAT(Consume(tsr_tensor_empty(ok_sizes, 1, static_cast<tsr_dtype>(-1), kCpu, &t)),
              HasSubstr("expected a tsr_dtype in [0, 10), got -1"));
  EXPECT_THAT(Consume(tsr_tensor_empty(ok_sizes, 1, TSR_DTYPE_FLOAT32, {17, 0}, &t)),
              HasSubstr("got {type 17, index 0}"));
  EXPECT_THAT(Consume(tsr_tensor_empty(ok_sizes, 1, TSR_DTYPE_FLOAT32, {TSR_DEVICE_CPU, -2}, &t)),
              HasSubstr("index >= 0"));
  EXPECT_THAT(
      Consume(tsr_tensor_empty(ok_sizes, 1, TSR_DTYPE_FLOAT32, {TSR_DEVICE_PRIVATEUSE1, 0}, &t)),
      HasSubstr("no backend has registered device type"));
  const int64_t huge[] = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_THAT(Consume(tsr_tensor_empty(huge, 2, TSR_DTYPE_FLOAT32, kCpu, &t)),
              HasSubstr("overflows int64"));
}

TEST(CApiTensor, CopiesRoundTripThroughStridedTensors) {
  const int64_t sizes[] = {3, 2};
  const int64_t strides[] = {1, 3};  // a transposed (2, 3) layout
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty_strided(sizes, strides, 2, TSR_DTYPE_INT32, kCpu, &t)), "");
  const int32_t in[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_EQ(Consume(tsr_tensor_copy_from_host(t, in, sizeof in)), "");
  const int32_t* raw = static_cast<const int32_t*>(tsr_tensor_data_ptr(t));
  EXPECT_THAT(std::vector<int32_t>(raw, raw + 6), ElementsAre(1, 3, 5, 2, 4, 6))
      << "logical row-major order lands at the strided addresses";
  int32_t out[6] = {};
  ASSERT_EQ(Consume(tsr_tensor_copy_to_host(t, out, sizeof out)), "");
  EXPECT_THAT(out, ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(Consume(tsr_tensor_copy_to_host(t, out, sizeof out - 1)),
              HasSubstr("expected a buffer of 24 bytes (int32[3, 2] on cpu), got 23 bytes"));
  EXPECT_THAT(Consume(tsr_tensor_copy_from_host(t, nullptr, sizeof out)),
              HasSubstr("expected a host buffer, got NULL"));
  EXPECT_THAT(Consume(tsr_tensor_copy_from_host(nullptr, in, sizeof in)),
              HasSubstr("expected a tensor for 'dst', got NULL"));
  tsr_tensor_release(t);
}

struct DeleteLog {
  int calls = 0;
  void* last = nullptr;
};
void LogDelete(void* data, void* context) {
  auto* log = static_cast<DeleteLog*>(context);
  ++log->calls;
  log->last = data;
}

TEST(CApiTensor, WrappedHostMemoryIsDeletedOnceAndOnlyOnSuccess) {
  double memory[4] = {1, 2, 3, 4};
  const int64_t sizes[] = {2, 2};
  DeleteLog log;
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_from_host_memory(memory, sizeof memory, sizes, nullptr, 2,
                                                TSR_DTYPE_FLOAT64, &LogDelete, &log, &t)),
            "");
  EXPECT_EQ(tsr_tensor_data_ptr(t), memory) << "no copy";
  tsr_tensor_retain(t);
  tsr_tensor_release(t);
  EXPECT_EQ(log.calls, 0);
  tsr_tensor_release(t);
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.last, memory);

  // A view that does not fit: an error, and the deleter is not called.
  const int64_t too_big[] = {3, 2};
  EXPECT_THAT(Consume(tsr_tensor_from_host_memory(memory, sizeof memory, too_big, nullptr, 2,
                                                  TSR_DTYPE_FLOAT64, &LogDelete, &log, &t)),
              HasSubstr("needs 48 bytes, but 32 were given"));
  EXPECT_EQ(log.calls, 1);
  const int64_t negative_stride[] = {2, -1};
  EXPECT_THAT(Consume(tsr_tensor_from_host_memory(memory, sizeof memory, sizes, negative_stride, 2,
                                                  TSR_DTYPE_FLOAT64, &LogDelete, &log, &t)),
              HasSubstr("non-negative"));
  EXPECT_EQ(log.calls, 1);
  // Borrowed memory (no deleter).
  ASSERT_EQ(Consume(tsr_tensor_from_host_memory(memory, sizeof memory, sizes, nullptr, 2,
                                                TSR_DTYPE_FLOAT64, nullptr, nullptr, &t)),
            "");
  tsr_tensor_release(t);
}

TEST(CApiTensor, WrappedHostMemoryMustBeAlignedToItsElements) {
  alignas(8) unsigned char bytes[40] = {};
  const int64_t size = 4;
  int deleted = 0;
  auto count = [](void*, void* context) { ++*static_cast<int*>(context); };
  for (const auto& [dtype, offset] :
       std::vector<std::pair<tsr_dtype, int>>{{TSR_DTYPE_FLOAT64, 4},
                                              {TSR_DTYPE_INT64, 1},
                                              {TSR_DTYPE_FLOAT32, 2},
                                              {TSR_DTYPE_INT16, 1},
                                              {TSR_DTYPE_BFLOAT16, 3}}) {
    tsr_tensor* t = nullptr;
    tsr_error* error = tsr_tensor_from_host_memory(bytes + offset, 32, &size, nullptr, 1, dtype,
                                                   count, &deleted, &t);
    EXPECT_EQ(tsr_error_code(error), TSR_INVALID_ARGUMENT) << "dtype " << dtype;
    EXPECT_THAT(Consume(error),
                HasSubstr("tsr_tensor_from_host_memory: expected data aligned to " +
                          std::to_string(tsr_dtype_size(dtype)) + " bytes (the size of a"));
    EXPECT_EQ(t, nullptr);
  }
  EXPECT_EQ(deleted, 0) << "a refused wrap leaves the memory the caller's";
  // One-byte elements fit anywhere; the desc form checks the same.
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_from_host_memory(bytes + 1, 4, &size, nullptr, 1, TSR_DTYPE_UINT8,
                                                nullptr, nullptr, &t)),
            "");
  tsr_tensor_release(t);
  tsr_host_memory_desc desc{};
  desc.struct_size = sizeof desc;
  desc.data = bytes + 2;
  desc.nbytes = 32;
  desc.sizes = &size;
  desc.ndim = 1;
  desc.dtype = TSR_DTYPE_FLOAT32;
  EXPECT_THAT(Consume(tsr_tensor_from_host_memory_desc(&desc, &t)),
              HasSubstr("tsr_tensor_from_host_memory_desc: expected data aligned to 4 bytes (the "
                        "size of a float32 element)"));
}

TEST(CApiTensor, NullHandlesAreHarmless) {
  EXPECT_EQ(tsr_tensor_dim(nullptr), 0);
  EXPECT_EQ(tsr_tensor_sizes(nullptr), nullptr);
  EXPECT_EQ(tsr_tensor_numel(nullptr), 0);
  EXPECT_EQ(tsr_tensor_data_ptr(nullptr), nullptr);
  tsr_tensor_retain(nullptr);
  tsr_tensor_release(nullptr);
  EXPECT_EQ(tsr_dtype_size(TSR_DTYPE_BFLOAT16), 2u);
  EXPECT_EQ(tsr_dtype_size(static_cast<tsr_dtype>(12)), 0u);
}

}  // namespace

namespace {

TEST(CApiOp, FindsOpsAndCallsThemThroughAStack) {
  const tsr_op* op = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("transpose.int"), &op)), "");
  EXPECT_EQ(std::string(tsr_op_name(op).data, tsr_op_name(op).size), "transpose.int");
  const tsr_string schema = tsr_op_schema(op);
  EXPECT_EQ(std::string(schema.data, schema.size),
            "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)");
  const int64_t sizes[] = {2, 3};
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, kCpu, &t)), "");
  tsr_stack* stack = nullptr;
  ASSERT_EQ(Consume(tsr_stack_create(&stack)), "");
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, t)), "");
  ASSERT_EQ(Consume(tsr_stack_push_int(stack, 0)), "");
  ASSERT_EQ(Consume(tsr_stack_push_int(stack, 1)), "");
  ASSERT_EQ(Consume(tsr_op_call(op, stack)), "");
  ASSERT_EQ(tsr_stack_size(stack), 1u);
  EXPECT_EQ(tsr_stack_kind(stack, 0), TSR_VALUE_TENSOR);
  tsr_tensor* out = nullptr;
  ASSERT_EQ(Consume(tsr_stack_get_tensor(stack, 0, &out)), "");
  EXPECT_THAT(Sizes(out), ElementsAre(3, 2));
  EXPECT_THAT(Strides(out), ElementsAre(1, 3));
  EXPECT_EQ(tsr_tensor_data_ptr(out), tsr_tensor_data_ptr(t)) << "a view";
  tsr_stack_release(stack);
  tsr_tensor_release(t);

  EXPECT_THAT(Consume(tsr_op_find(S("no_such_op"), &op)), HasSubstr("unknown op 'no_such_op'"));
  // A name without its overload, or with a wrong one, lists the overloads there are.
  EXPECT_THAT(Consume(tsr_op_find(S("softmax"), &op)),
              HasSubstr("unknown op 'softmax' (not defined in this registry); did you mean "
                        "softmax.int?"));
  EXPECT_THAT(Consume(tsr_op_find(S("add.Tnsor"), &op)),
              HasSubstr("did you mean add.Scalar, add.Scalar_out, add.Tensor, add.out?"));
  EXPECT_THAT(Consume(tsr_op_call(nullptr, nullptr)), HasSubstr("expected an op, got NULL"));
}

// Calls `name` with the values pushed by `push` and returns its error as Consume does.
template <typename Push>
std::string CallError(const char* name, Push push) {
  const tsr_op* op = nullptr;
  std::string found = Consume(tsr_op_find(S(name), &op));
  if (!found.empty()) return found;
  tsr_stack* stack = nullptr;
  if (std::string e = Consume(tsr_stack_create(&stack)); !e.empty()) return e;
  push(stack);
  std::string error = Consume(tsr_op_call(op, stack));
  tsr_stack_release(stack);
  return error;
}

// Issue 14, A.1 and A.2 through the C ABI: a view whose last element index + 1 overflows int64,
// and an out= whose offset + new numel overflows, used to reach memory outside the storage.
std::string Str(tsr_string s) { return std::string(s.data, s.size); }

// The op listing (ABI 1.1): names, arguments and returns as data, no schema text to parse.
TEST(CApiOpListing, ListsEveryOpSortedAndDescribesItsArguments) {
  size_t count = 0;
  ASSERT_EQ(Consume(tsr_op_list(nullptr, 0, &count)), "");
  ASSERT_GT(count, 100u);
  std::vector<const tsr_op*> ops(count);
  size_t again = 0;
  ASSERT_EQ(Consume(tsr_op_list(ops.data(), ops.size(), &again)), "");
  ASSERT_GE(again, count);  // another test may have defined an op meanwhile
  for (size_t i = 1; i < count; ++i) {
    EXPECT_LT(Str(tsr_op_name(ops[i - 1])), Str(tsr_op_name(ops[i])));
  }

  const tsr_op* add_out = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("add.out"), &add_out)), "");
  tsr_op_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(Consume(tsr_op_describe(add_out, &info)), "");
  EXPECT_EQ(Str(info.name), "add.out");
  EXPECT_EQ(Str(info.schema), Str(tsr_op_schema(add_out)));
  ASSERT_EQ(info.num_arguments, 4u);
  EXPECT_EQ(info.num_returns, 1u);

  tsr_arg_info arg{};
  arg.struct_size = sizeof arg;
  ASSERT_EQ(Consume(tsr_op_argument(add_out, 2, &arg)), "");
  EXPECT_EQ(Str(arg.name), "alpha");
  EXPECT_EQ(Str(arg.type), "Scalar");
  EXPECT_EQ(arg.kind, TSR_VALUE_SCALAR);
  EXPECT_EQ(arg.kwarg_only, 1);
  EXPECT_EQ(arg.has_default, 1);
  EXPECT_EQ(Str(arg.default_value), "1");
  EXPECT_EQ(arg.writes, 0);
  ASSERT_EQ(Consume(tsr_op_argument(add_out, 3, &arg)), "");
  EXPECT_EQ(Str(arg.name), "out");
  EXPECT_EQ(Str(arg.type), "Tensor(a!)");
  EXPECT_EQ(arg.kind, TSR_VALUE_TENSOR);
  EXPECT_EQ(arg.writes, 1);
  EXPECT_EQ(arg.has_default, 0);
  EXPECT_EQ(Str(arg.default_value), "");
  ASSERT_EQ(Consume(tsr_op_return(add_out, 0, &arg)), "");
  EXPECT_EQ(Str(arg.name), "");
  EXPECT_EQ(Str(arg.type), "Tensor(a!)");

  const tsr_op* sum = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("sum.dim_IntList"), &sum)), "");
  ASSERT_EQ(Consume(tsr_op_argument(sum, 1, &arg)), "");
  EXPECT_EQ(arg.kind, TSR_VALUE_INT_LIST);
  EXPECT_EQ(arg.optional, 1);
  ASSERT_EQ(Consume(tsr_op_argument(sum, 3, &arg)), "");
  EXPECT_EQ(Str(arg.name), "dtype");
  EXPECT_EQ(arg.kind, TSR_VALUE_DTYPE);
  EXPECT_EQ(Str(arg.default_value), "None");
}

// A caller built against an older, smaller tsr_op_info gets only the fields it has: the
// runtime writes nothing past its struct_size.
TEST(CApiOpListing, FillsOnlyTheFieldsInTheCallersStructSize) {
  const tsr_op* add = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("add.Tensor"), &add)), "");
  unsigned char buffer[sizeof(tsr_op_info) + 16];
  std::memset(buffer, 0xab, sizeof buffer);
  const size_t small = offsetof(tsr_op_info, schema);  // struct_size and name only
  std::memcpy(buffer, &small, sizeof small);
  auto* info = reinterpret_cast<tsr_op_info*>(buffer);
  ASSERT_EQ(Consume(tsr_op_describe(add, info)), "");
  EXPECT_EQ(Str(info->name), "add.Tensor");
  for (size_t i = small; i < sizeof buffer; ++i) EXPECT_EQ(buffer[i], 0xab) << "byte " << i;
}

TEST(CApiOpListing, BadArgumentsAreErrors) {
  const tsr_op* add = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("add.Tensor"), &add)), "");
  const tsr_op* ops[1];
  EXPECT_THAT(Consume(tsr_op_list(ops, 1, nullptr)), HasSubstr("expected a count pointer"));
  size_t count = 0;
  EXPECT_THAT(Consume(tsr_op_list(nullptr, 3, &count)), HasSubstr("ops is NULL but capacity is 3"));
  tsr_op_info info{};
  EXPECT_THAT(Consume(tsr_op_describe(add, &info)),
              HasSubstr("out->struct_size is 0, expected at least"));
  info.struct_size = sizeof info;
  EXPECT_THAT(Consume(tsr_op_describe(nullptr, &info)), HasSubstr("expected an op, got NULL"));
  EXPECT_THAT(Consume(tsr_op_describe(add, nullptr)),
              HasSubstr("tsr_op_describe: expected an output struct"));
  tsr_arg_info arg{};
  arg.struct_size = sizeof arg;
  EXPECT_THAT(Consume(tsr_op_argument(add, 3, &arg)),
              HasSubstr("add.Tensor has 3 arguments; index 3 is out of range"));
  EXPECT_THAT(Consume(tsr_op_return(add, 1, &arg)),
              HasSubstr("add.Tensor has 1 returns; index 1 is out of range"));
}

// copy_ between a meta tensor and another device stages nothing: a meta tensor has no data,
// however large it claims to be (the op_call fuzzer found a 16 GB host staging buffer made for
// one before the copy found out). Into a meta tensor only the shapes count, as in PyTorch; out
// of one is an error.
TEST(CApiOp, CopiesWithMetaTensorsStageNoData) {
  const int64_t four[] = {4};
  tsr_tensor* meta = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(four, 1, TSR_DTYPE_FLOAT32, {TSR_DEVICE_META, 0}, &meta)), "");
  tsr_tensor* cpu = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(four, 1, TSR_DTYPE_FLOAT32, kCpu, &cpu)), "");
  EXPECT_THAT(CallError("copy_",
                        [&](tsr_stack* s) {
                          tsr_stack_push_tensor(s, cpu);
                          tsr_stack_push_tensor(s, meta);
                        }),
              HasSubstr("copy_: cannot copy out of a meta tensor into cpu: a meta tensor has no "
                        "data"));
  const tsr_op* copy = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("copy_"), &copy)), "");
  tsr_stack* stack = nullptr;
  ASSERT_EQ(Consume(tsr_stack_create(&stack)), "");
  tsr_stack_push_tensor(stack, meta);
  tsr_stack_push_tensor(stack, cpu);
  EXPECT_EQ(Consume(tsr_op_call(copy, stack)), "");
  tsr_stack_release(stack);
  tsr_tensor_release(cpu);
  tsr_tensor_release(meta);
}

TEST(CApiOp, ViewsAndOutResizesThatOverflowInt64AreRefused) {
  const int64_t one[] = {1}, three[] = {3};
  tsr_tensor* f = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(one, 1, TSR_DTYPE_FLOAT32, kCpu, &f)), "");
  EXPECT_THAT(CallError("as_strided",
                        [&](tsr_stack* s) {
                          const int64_t size[] = {2}, stride[] = {INT64_MAX};
                          tsr_stack_push_tensor(s, f);
                          tsr_stack_push_int_list(s, size, 1);
                          tsr_stack_push_int_list(s, stride, 1);
                        }),
              HasSubstr("as_strided: the storage for sizes [2] and strides "
                        "[9223372036854775807] overflows int64"));
  tsr_tensor_release(f);

  tsr_tensor* base = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(three, 1, TSR_DTYPE_INT64, kCpu, &base)), "");
  const int64_t zeros[] = {0, 0, 0};
  ASSERT_EQ(Consume(tsr_tensor_copy_from_host(base, zeros, sizeof(zeros))), "");
  // out = select(base, 0, 2): a 0-dim view at offset 2 of a 3-element storage.
  const tsr_op* select = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("select.int"), &select)), "");
  tsr_stack* stack = nullptr;
  ASSERT_EQ(Consume(tsr_stack_create(&stack)), "");
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, base)), "");
  ASSERT_EQ(Consume(tsr_stack_push_int(stack, 0)), "");
  ASSERT_EQ(Consume(tsr_stack_push_int(stack, 2)), "");
  ASSERT_EQ(Consume(tsr_op_call(select, stack)), "");
  tsr_tensor* out = nullptr;
  ASSERT_EQ(Consume(tsr_stack_get_tensor(stack, 0, &out)), "");
  tsr_tensor_retain(out);
  tsr_stack_release(stack);
  EXPECT_THAT(CallError("ones.out",
                        [&](tsr_stack* s) {
                          const int64_t size[] = {INT64_MAX};
                          tsr_stack_push_int_list(s, size, 1);
                          tsr_stack_push_tensor(s, out);
                        }),
              HasSubstr("ones.out: cannot resize the output int64[] on cpu to "
                        "[9223372036854775807]: a storage of 9223372036854775807 elements of "
                        "int64 overflows int64 bytes"));
  EXPECT_EQ(tsr_tensor_dim(out), 0) << "a refused resize leaves out as it was";
  tsr_tensor_release(out);
  tsr_tensor_release(base);
}

TEST(CApiOp, CallErrorsNameTheArgument) {
  const tsr_op* op = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("transpose.int"), &op)), "");
  tsr_stack* stack = nullptr;
  ASSERT_EQ(Consume(tsr_stack_create(&stack)), "");
  ASSERT_EQ(Consume(tsr_stack_push_double(stack, 1.5)), "");
  EXPECT_THAT(Consume(tsr_op_call(op, stack)),
              HasSubstr("transpose.int: argument 'self' (position 0): expected Tensor, got float"));
  tsr_stack_release(stack);
}

TEST(CApiStack, PushesAndGetsEveryKindAndRejectsMismatches) {
  tsr_stack* stack = nullptr;
  ASSERT_EQ(Consume(tsr_stack_create(&stack)), "");
  const int64_t ints[] = {1, 2, 3};
  const double doubles[] = {0.5};
  ASSERT_EQ(Consume(tsr_stack_push_none(stack)), "");
  ASSERT_EQ(Consume(tsr_stack_push_int(stack, -7)), "");
  ASSERT_EQ(Consume(tsr_stack_push_double(stack, 2.5)), "");
  ASSERT_EQ(Consume(tsr_stack_push_bool(stack, 5)), "");
  ASSERT_EQ(Consume(tsr_stack_push_string(stack, S("floor"))), "");
  ASSERT_EQ(Consume(tsr_stack_push_int_list(stack, ints, 3)), "");
  ASSERT_EQ(Consume(tsr_stack_push_double_list(stack, doubles, 1)), "");
  tsr_scalar scalar = {};
  scalar.kind = TSR_SCALAR_DOUBLE;
  scalar.d = 0.25;
  ASSERT_EQ(Consume(tsr_stack_push_scalar(stack, scalar)), "");
  ASSERT_EQ(Consume(tsr_stack_push_dtype(stack, TSR_DTYPE_BFLOAT16)), "");
  ASSERT_EQ(Consume(tsr_stack_push_device(stack, {TSR_DEVICE_META, 0})), "");
  tsr_tensor* list[] = {nullptr};
  ASSERT_EQ(Consume(tsr_stack_push_tensor_list(stack, list, 1)), "");
  ASSERT_EQ(tsr_stack_size(stack), 11u);

  EXPECT_EQ(tsr_stack_kind(stack, 0), TSR_VALUE_NONE);
  int64_t i = 0;
  ASSERT_EQ(Consume(tsr_stack_get_int(stack, 1, &i)), "");
  EXPECT_EQ(i, -7);
  double d = 0;
  ASSERT_EQ(Consume(tsr_stack_get_double(stack, 2, &d)), "");
  EXPECT_EQ(d, 2.5);
  int32_t b = 0;
  ASSERT_EQ(Consume(tsr_stack_get_bool(stack, 3, &b)), "");
  EXPECT_EQ(b, 1);
  tsr_string s{};
  ASSERT_EQ(Consume(tsr_stack_get_string(stack, 4, &s)), "");
  EXPECT_EQ(std::string(s.data, s.size), "floor");
  const int64_t* values = nullptr;
  size_t n = 0;
  ASSERT_EQ(Consume(tsr_stack_get_int_list(stack, 5, &values, &n)), "");
  EXPECT_EQ(std::vector<int64_t>(values, values + n), std::vector<int64_t>({1, 2, 3}));
  tsr_scalar got{};
  ASSERT_EQ(Consume(tsr_stack_get_scalar(stack, 7, &got)), "");
  EXPECT_EQ(got.kind, TSR_SCALAR_DOUBLE);
  EXPECT_EQ(got.d, 0.25);
  tsr_dtype dtype{};
  ASSERT_EQ(Consume(tsr_stack_get_dtype(stack, 8, &dtype)), "");
  EXPECT_EQ(dtype, TSR_DTYPE_BFLOAT16);
  tsr_device device{};
  ASSERT_EQ(Consume(tsr_stack_get_device(stack, 9, &device)), "");
  EXPECT_EQ(device.type, TSR_DEVICE_META);
  tsr_tensor* const* tensors = nullptr;
  ASSERT_EQ(Consume(tsr_stack_get_tensor_list(stack, 10, &tensors, &n)), "");
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(tensors[0], nullptr) << "None in a Tensor?[] list";

  EXPECT_THAT(Consume(tsr_stack_get_int(stack, 2, &i)),
              HasSubstr("value 2 is float, expected int"));
  EXPECT_THAT(Consume(tsr_stack_get_int(stack, 11, &i)),
              HasSubstr("index 11 is out of range for a stack of 11 values"));
  EXPECT_THAT(Consume(tsr_stack_push_tensor(stack, nullptr)), HasSubstr("got NULL"));
  scalar.kind = 9;
  EXPECT_THAT(Consume(tsr_stack_push_scalar(stack, scalar)), HasSubstr("got 9"));
  EXPECT_THAT(Consume(tsr_stack_push_dtype(stack, static_cast<tsr_dtype>(-3))),
              HasSubstr("got -3"));
  EXPECT_THAT(Consume(tsr_stack_push_device(stack, {TSR_DEVICE_CUDA, -1})),
              HasSubstr("index >= 0"));
  EXPECT_THAT(Consume(tsr_stack_push_int(nullptr, 1)), HasSubstr("expected a stack, got NULL"));
  tsr_stack_clear(stack);
  EXPECT_EQ(tsr_stack_size(stack), 0u);
  tsr_stack_release(stack);
  tsr_stack_release(nullptr);
}

TEST(CApiOp, DefinedOpsGoAwayWhenTheirRegistrationIsReleased) {
  tsr_registration* reg = nullptr;
  ASSERT_EQ(Consume(tsr_op_define(S("capi_test::op(Tensor self) -> Tensor"), &reg)), "");
  const tsr_op* op = nullptr;
  EXPECT_EQ(Consume(tsr_op_find(S("capi_test::op"), &op)), "");
  tsr_registration_release(reg);
  EXPECT_THAT(Consume(tsr_op_find(S("capi_test::op"), &op)), HasSubstr("unknown op"));
  EXPECT_THAT(Consume(tsr_op_define(S("capi_test::bad(Tensor self"), nullptr)),
              HasSubstr("schema parse error at column"));
  tsr_registration_release(nullptr);
}

TEST(CApiOp, DefineRefusesFixedSizeListsAboveTheCapWithAnInvalidArgument) {
  // `int[N] x` called with a bare int builds N elements per call; N is capped at definition.
  for (const char* schema : {"capi_test::huge(int[300000000] x) -> ()",
                             "capi_test::huge(int[9223372036854775807] x=1) -> ()"}) {
    tsr_registration* reg = nullptr;
    EXPECT_THAT(Consume(tsr_op_define(S(schema), &reg)),
                HasSubstr(std::to_string(TSR_INVALID_ARGUMENT) +
                          ": schema parse error at column 21: argument 'x': expected a positive "
                          "list size of at most 1024"))
        << schema;
    EXPECT_EQ(reg, nullptr);
  }
  const tsr_op* op = nullptr;
  EXPECT_THAT(Consume(tsr_op_find(S("capi_test::huge"), &op)), HasSubstr("unknown op"));
}

}  // namespace

namespace {

// A fake device for the C API: host memory that the device's copy functions XOR-scramble, so a
// runtime that read device memory directly would see garbage.
struct FakeDevice {
  int allocations = 0;
  int frees = 0;
  static constexpr unsigned char kKey = 0x5a;
};

tsr_error* FakeCount(void*, int32_t* out) {
  *out = 2;
  return nullptr;
}
tsr_error* FakeAllocate(void* context, int32_t, size_t nbytes, void** out) {
  static_cast<FakeDevice*>(context)->allocations++;
  *out = std::malloc(nbytes == 0 ? 1 : nbytes);
  return nullptr;
}
void FakeFree(void* context, int32_t, void* ptr) {
  static_cast<FakeDevice*>(context)->frees++;
  std::free(ptr);
}
void Scramble(void* dst, const void* src, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    static_cast<unsigned char*>(dst)[i] =
        static_cast<const unsigned char*>(src)[i] ^ FakeDevice::kKey;
  }
}
tsr_error* FakeH2D(void*, int32_t, void* dst, const void* src, size_t n) {
  Scramble(dst, src, n);
  return nullptr;
}
tsr_error* FakeD2H(void*, int32_t, void* dst, const void* src, size_t n) {
  Scramble(dst, src, n);
  return nullptr;
}
tsr_error* FakeD2D(void*, int32_t, void* dst, int32_t, const void* src, size_t n) {
  std::memcpy(dst, src, n);
  return nullptr;
}
tsr_error* FakeSync(void*, int32_t) { return nullptr; }

tsr_device_interface FakeInterface(FakeDevice* device) {
  tsr_device_interface iface = {};
  iface.struct_size = sizeof iface;
  iface.device_type = TSR_DEVICE_PRIVATEUSE2;
  iface.context = device;
  iface.device_count = &FakeCount;
  iface.allocate = &FakeAllocate;
  iface.free = &FakeFree;
  iface.copy_host_to_device = &FakeH2D;
  iface.copy_device_to_host = &FakeD2H;
  iface.copy_device_to_device = &FakeD2D;
  iface.synchronize = &FakeSync;
  return iface;
}

TEST(CApiDevice, RegisteredDevicesAllocateAndCopyOnlyThroughTheirInterface) {
  ASSERT_EQ(Consume(tsr_device_rename(TSR_DEVICE_PRIVATEUSE2, S("capidev"))), "");
  FakeDevice fake;
  tsr_device_interface iface = FakeInterface(&fake);
  tsr_registration* reg = nullptr;
  ASSERT_EQ(Consume(tsr_device_register(&iface, &reg)), "");
  int32_t count = 0;
  ASSERT_EQ(Consume(tsr_device_count(TSR_DEVICE_PRIVATEUSE2, &count)), "");
  EXPECT_EQ(count, 2);
  tsr_device dev{};
  ASSERT_EQ(Consume(tsr_device_parse(S("capidev:1"), &dev)), "");
  EXPECT_EQ(dev.type, TSR_DEVICE_PRIVATEUSE2);
  EXPECT_EQ(dev.index, 1);
  char name[32];
  tsr_device_format(dev, name, sizeof name);
  EXPECT_STREQ(name, "capidev:1");
  EXPECT_EQ(Consume(tsr_device_count(TSR_DEVICE_PRIVATEUSE2, nullptr)),
            "3: tsr_device_count: expected an output pointer, got NULL");
  EXPECT_EQ(Consume(tsr_device_parse(S("capidev:1"), nullptr)),
            "3: tsr_device_parse: expected an output pointer, got NULL");

  // Contiguous and strided tensors round-trip; device memory holds scrambled bytes.
  const int64_t sizes[] = {3, 2};
  const int64_t strides[] = {1, 3};
  for (const int64_t* st : {static_cast<const int64_t*>(nullptr), strides}) {
    tsr_tensor* t = nullptr;
    ASSERT_EQ(Consume(st ? tsr_tensor_empty_strided(sizes, st, 2, TSR_DTYPE_INT32, dev, &t)
                         : tsr_tensor_empty(sizes, 2, TSR_DTYPE_INT32, dev, &t)),
              "");
    const int32_t in[6] = {1, 2, 3, 4, 5, 6};
    ASSERT_EQ(Consume(tsr_tensor_copy_from_host(t, in, sizeof in)), "");
    int32_t raw[6];
    std::memcpy(raw, tsr_tensor_data_ptr(t), sizeof raw);  // what a direct read would see
    EXPECT_NE(raw[0], 1) << "device memory is scrambled";
    int32_t out[6] = {};
    ASSERT_EQ(Consume(tsr_tensor_copy_to_host(t, out, sizeof out)), "");
    EXPECT_THAT(out, ElementsAre(1, 2, 3, 4, 5, 6));
    tsr_tensor_release(t);
  }
  EXPECT_EQ(fake.allocations, 2);
  EXPECT_EQ(fake.frees, 2);
  EXPECT_EQ(Consume(tsr_device_synchronize(dev)), "");

  tsr_tensor* t = nullptr;
  EXPECT_THAT(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_INT32, {TSR_DEVICE_PRIVATEUSE2, 2}, &t)),
              HasSubstr("device capidev:2 does not exist: capidev has 2 device(s)"));
  EXPECT_THAT(Consume(tsr_device_register(&iface, nullptr)), HasSubstr("already has a device"));

  // After deregistration no new memory comes from it; memory still alive is freed through it.
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_INT32, dev, &t)), "");
  tsr_registration_release(reg);
  tsr_tensor* after = nullptr;
  EXPECT_THAT(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_INT32, dev, &after)),
              HasSubstr("no backend has registered device type 'capidev'"));
  tsr_tensor_release(t);
  EXPECT_EQ(fake.frees, 3);
}

TEST(CApiDevice, MalformedInterfacesAreRefused) {
  FakeDevice fake;
  tsr_device_interface iface = FakeInterface(&fake);
  iface.device_type = TSR_DEVICE_HIP;
  iface.copy_device_to_device = nullptr;
  EXPECT_THAT(Consume(tsr_device_register(&iface, nullptr)),
              HasSubstr("the required slot 'copy_device_to_device' is NULL"));
  iface = FakeInterface(&fake);
  iface.struct_size = 24;
  EXPECT_THAT(Consume(tsr_device_register(&iface, nullptr)), HasSubstr("struct_size is 24"));
  iface = FakeInterface(&fake);
  iface.device_type = TSR_DEVICE_CPU;
  EXPECT_THAT(Consume(tsr_device_register(&iface, nullptr)), HasSubstr("cpu memory"));
  EXPECT_THAT(Consume(tsr_device_register(nullptr, nullptr)), HasSubstr("iface is NULL"));
  int32_t count = -1;
  ASSERT_EQ(Consume(tsr_device_count(TSR_DEVICE_CUDA, &count)), "");
  EXPECT_EQ(count, 0);
  EXPECT_THAT(Consume(tsr_device_synchronize({TSR_DEVICE_CUDA, 0})),
              HasSubstr("no device interface"));
  EXPECT_THAT(Consume(tsr_device_rename(TSR_DEVICE_CPU, S("host"))),
              HasSubstr("only privateuseone/two/three can be renamed"));
}

}  // namespace

namespace {

// CPU kernels registered by the application, for the fallback to run.
tsr_error* PlusOneCpu(void*, const tsr_op*, tsr_stack* stack) {
  tsr_tensor* self = nullptr;
  if (tsr_error* e = tsr_stack_get_tensor(stack, 0, &self)) return e;
  tsr_tensor* out = nullptr;
  if (tsr_error* e = tsr_tensor_empty(tsr_tensor_sizes(self), tsr_tensor_dim(self),
                                      TSR_DTYPE_FLOAT32, tsr_tensor_device(self), &out)) {
    return e;
  }
  const float* in = static_cast<const float*>(tsr_tensor_data_ptr(self));
  float* o = static_cast<float*>(tsr_tensor_data_ptr(out));
  for (int64_t i = 0; i < tsr_tensor_numel(self); ++i) o[i] = in[i] + 1;
  tsr_stack_clear(stack);
  tsr_error* e = tsr_stack_push_tensor(stack, out);
  tsr_tensor_release(out);
  return e;
}

tsr_error* ScaleInPlaceCpu(void*, const tsr_op*, tsr_stack* stack) {
  tsr_tensor* self = nullptr;
  double factor = 0;
  if (tsr_error* e = tsr_stack_get_tensor(stack, 0, &self)) return e;
  if (tsr_error* e = tsr_stack_get_double(stack, 1, &factor)) return e;
  float* data = static_cast<float*>(tsr_tensor_data_ptr(self));
  for (int64_t i = 0; i < tsr_tensor_numel(self); ++i) data[i] *= static_cast<float>(factor);
  tsr_tensor_retain(self);  // keep it across the clear
  tsr_stack_clear(stack);
  tsr_error* e = tsr_stack_push_tensor(stack, self);
  tsr_tensor_release(self);
  return e;
}

tsr_registration* RegisterCpu(const char* op, tsr_boxed_kernel_fn fn) {
  tsr_kernel_desc desc = {};
  desc.struct_size = sizeof desc;
  desc.op_name = S(op);
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = fn;
  desc.kernel_name = S(op);
  tsr_registration* reg = nullptr;
  EXPECT_EQ(Consume(tsr_kernel_register(&desc, &reg)), "");
  return reg;
}

std::vector<float> Read(const tsr_tensor* t) {
  std::vector<float> out(tsr_tensor_numel(t));
  EXPECT_EQ(Consume(tsr_tensor_copy_to_host(t, out.data(), out.size() * sizeof(float))), "");
  return out;
}

// Deterministic algorithms through the C ABI (determinism.h, 1.2): a kernel registered with a
// reason is passed over when the switch is on, and the call says why.
TEST(CApiDeterminism, ADeclaredKernelIsRefusedWhileTheSwitchIsOn) {
  const int32_t before = tsr_deterministic_algorithms();
  EXPECT_EQ(before, TSR_DETERMINISTIC_OFF) << "TESSERA_DETERMINISTIC is unset here";
  struct RestoreMode {  // also when an assertion below ends the test
    int32_t mode;
    ~RestoreMode() { tsr_error_release(tsr_set_deterministic_algorithms(mode)); }
  } restore{before};
  tsr_registration* def = nullptr;
  ASSERT_EQ(Consume(tsr_op_define(S("nd::plus_one(Tensor self) -> Tensor"), &def)), "");
  tsr_kernel_desc desc = {};
  desc.struct_size = sizeof desc;
  desc.op_name = S("nd::plus_one");
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = &PlusOneCpu;
  desc.kernel_name = S("nd::atomic_plus_one");
  desc.nondeterministic = S("atomic adds in scheduling order");
  tsr_registration* reg = nullptr;
  ASSERT_EQ(Consume(tsr_kernel_register(&desc, &reg)), "");
  const tsr_op* op = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("nd::plus_one"), &op)), "");
  const int64_t n = 2;
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(&n, 1, TSR_DTYPE_FLOAT32, {TSR_DEVICE_CPU, 0}, &x)), "");
  auto call = [&]() {
    tsr_stack* stack = nullptr;
    Consume(tsr_stack_create(&stack));
    Consume(tsr_stack_push_tensor(stack, x));
    tsr_error* e = tsr_op_call(op, stack);
    const tsr_code code = tsr_error_code(e);
    const std::string text = Consume(e);
    tsr_stack_release(stack);
    return std::make_pair(code, text);
  };
  EXPECT_EQ(call().second, "");
  ASSERT_EQ(Consume(tsr_set_deterministic_algorithms(TSR_DETERMINISTIC_ON)), "");
  EXPECT_EQ(tsr_deterministic_algorithms(), TSR_DETERMINISTIC_ON);
  const auto [code, text] = call();
  EXPECT_EQ(code, TSR_FAILED_PRECONDITION);
  EXPECT_THAT(text, HasSubstr("nd::plus_one on cpu has no deterministic implementation: its "
                              "kernel 'nd::atomic_plus_one' is nondeterministic (atomic adds in "
                              "scheduling order)"));
  ASSERT_EQ(Consume(tsr_set_deterministic_algorithms(TSR_DETERMINISTIC_WARN)), "");
  EXPECT_EQ(call().second, "") << "warn runs it";
  EXPECT_THAT(Consume(tsr_set_deterministic_algorithms(7)),
              HasSubstr("tsr_set_deterministic_algorithms: deterministic algorithms: mode 7 is "
                        "not one of 0 (off), 1 (on) and 2 (warn)"));
  EXPECT_EQ(tsr_deterministic_algorithms(), TSR_DETERMINISTIC_WARN) << "unchanged by a refusal";
  ASSERT_EQ(Consume(tsr_set_deterministic_algorithms(before)), "");
  // The table has the mode too (for kernels with a deterministic path of their own).
  const tsr_runtime_api* api = tsr_runtime_api_get();
  ASSERT_TRUE(TSR_API_HAS(api, deterministic_algorithms));
  EXPECT_EQ(api->deterministic_algorithms(), before);
  tsr_tensor_release(x);
  tsr_registration_release(reg);
  tsr_registration_release(def);
}

TEST(CApiFallback, OpsWithoutADeviceKernelRunOnTheCpuAndAreCounted) {
  ASSERT_EQ(Consume(tsr_device_rename(TSR_DEVICE_PRIVATEUSE3, S("fbdev"))), "");
  FakeDevice fake;
  tsr_device_interface iface = FakeInterface(&fake);
  iface.device_type = TSR_DEVICE_PRIVATEUSE3;
  tsr_registration* device = nullptr;
  ASSERT_EQ(Consume(tsr_device_register(&iface, &device)), "");
  tsr_registration* defs[3] = {};
  ASSERT_EQ(Consume(tsr_op_define(S("fb::plus_one(Tensor self) -> Tensor"), &defs[0])), "");
  ASSERT_EQ(Consume(tsr_op_define(S("fb::scale_(Tensor(a!) self, float factor) -> Tensor(a!)"),
                                  &defs[1])),
            "");
  ASSERT_EQ(Consume(tsr_op_define(S("fb::nowhere(Tensor self) -> Tensor"), &defs[2])), "");
  tsr_registration* plus = RegisterCpu("fb::plus_one", &PlusOneCpu);
  tsr_registration* scale = RegisterCpu("fb::scale_", &ScaleInPlaceCpu);

  const int64_t n = 3;
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(&n, 1, TSR_DTYPE_FLOAT32, {TSR_DEVICE_PRIVATEUSE3, 0}, &x)),
            "");
  const float values[3] = {1, 2, 3};
  ASSERT_EQ(Consume(tsr_tensor_copy_from_host(x, values, sizeof values)), "");

  const tsr_op* plus_one = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("fb::plus_one"), &plus_one)), "");
  tsr_stack* stack = nullptr;
  Consume(tsr_stack_create(&stack));
  Consume(tsr_stack_push_tensor(stack, x));
  EXPECT_THAT(Consume(tsr_op_call(plus_one, stack)), HasSubstr("not implemented for fb::plus_one"))
      << "no fallback registered yet";

  tsr_registration* fallback = nullptr;
  ASSERT_EQ(Consume(tsr_fallback_register_cpu(TSR_DEVICE_PRIVATEUSE3, &fallback)), "");
  ASSERT_EQ(Consume(tsr_op_call(plus_one, stack)), "");
  tsr_tensor* y = nullptr;
  ASSERT_EQ(Consume(tsr_stack_get_tensor(stack, 0, &y)), "");
  EXPECT_EQ(tsr_tensor_device(y).type, TSR_DEVICE_PRIVATEUSE3) << "the result is on the device";
  EXPECT_THAT(Read(y), ElementsAre(2, 3, 4));
  EXPECT_EQ(tsr_fallback_count(S("fb::plus_one")), 1);

  // In-place: the caller's device tensor is updated and returned.
  const tsr_op* scale_op = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("fb::scale_"), &scale_op)), "");
  tsr_stack_clear(stack);
  Consume(tsr_stack_push_tensor(stack, x));
  Consume(tsr_stack_push_double(stack, 10.0));
  ASSERT_EQ(Consume(tsr_op_call(scale_op, stack)), "");
  tsr_tensor* returned = nullptr;
  ASSERT_EQ(Consume(tsr_stack_get_tensor(stack, 0, &returned)), "");
  EXPECT_EQ(returned, x) << "an in-place op returns its own argument";
  EXPECT_THAT(Read(x), ElementsAre(10, 20, 30));
  EXPECT_EQ(tsr_fallback_count(S("fb::scale_")), 1);

  // An op the CPU cannot run either: the error says it went through the fallback.
  const tsr_op* nowhere = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("fb::nowhere"), &nowhere)), "");
  tsr_stack_clear(stack);
  Consume(tsr_stack_push_tensor(stack, x));
  EXPECT_THAT(Consume(tsr_op_call(nowhere, stack)),
              HasSubstr("fb::nowhere on fbdev:0 ran on the CPU fallback: not implemented for "
                        "fb::nowhere on cpu"));
  tsr_stack_release(stack);
  tsr_tensor_release(x);
  for (tsr_registration* r : {fallback, plus, scale, defs[0], defs[1], defs[2], device}) {
    tsr_registration_release(r);
  }
  EXPECT_THAT(Consume(tsr_fallback_register_cpu(TSR_DEVICE_CPU, nullptr)), HasSubstr("got 0"));
}

}  // namespace

namespace {

// A typed C kernel: its parameters follow the schema
//   typed::mix(Tensor(a) x, Tensor? y, float a, int[] dims, Scalar s, int? k, str mode,
//              bool flag, ScalarType t) -> (Tensor(a), Tensor)
// Its first result is x itself, which the schema must say (Note [Kernel results]).
struct MixSeen {
  double a = 0;
  std::vector<int64_t> dims;
  tsr_scalar s{};
  bool has_k = false;
  int64_t k = 0;
  std::string mode;
  int32_t flag = 0;
  tsr_dtype t{};
  bool y_is_null = false;
};

tsr_error* Mix(void* context, tsr_tensor* x, tsr_tensor* y, double a, const int64_t* dims,
               size_t ndims, tsr_scalar s, const int64_t* k, tsr_string mode, int32_t flag,
               tsr_dtype t, tsr_tensor** out0, tsr_tensor** out1) {
  auto* seen = static_cast<MixSeen*>(context);
  seen->a = a;
  seen->dims.assign(dims, dims + ndims);
  seen->s = s;
  seen->has_k = k != nullptr;
  seen->k = k ? *k : 0;
  seen->mode.assign(mode.data, mode.size);
  seen->flag = flag;
  seen->t = t;
  seen->y_is_null = y == nullptr;
  if (mode.size == 4 && std::memcmp(mode.data, "fail", 4) == 0) {
    return tsr_error_create(TSR_OUT_OF_RANGE, S("mix: asked to fail"));
  }
  tsr_tensor_retain(x);
  *out0 = x;  // a new reference to x
  return tsr_tensor_empty(tsr_tensor_sizes(x), tsr_tensor_dim(x), t, tsr_tensor_device(x), out1);
}

TEST(CApiTypedKernel, ArgumentsArriveAsPlainCParameters) {
  tsr_registration* def = nullptr;
  ASSERT_EQ(Consume(tsr_op_define(
                S("typed::mix(Tensor(a) x, Tensor? y, float a, int[] dims, Scalar s, int? k, str "
                  "mode, bool flag, ScalarType t) -> (Tensor(a), Tensor)"),
                &def)),
            "");
  MixSeen seen;
  tsr_kernel_desc desc = {};
  desc.struct_size = sizeof desc;
  desc.op_name = S("typed::mix");
  desc.device_type = TSR_DEVICE_CPU;
  desc.typed = reinterpret_cast<tsr_typed_kernel_fn>(&Mix);
  desc.context = &seen;
  desc.kernel_name = S("typed_mix");
  tsr_registration* reg = nullptr;
  ASSERT_EQ(Consume(tsr_kernel_register(&desc, &reg)), "");

  const int64_t sizes[] = {2};
  tsr_tensor* x = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 1, TSR_DTYPE_FLOAT32, kCpu, &x)), "");
  const tsr_op* op = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("typed::mix"), &op)), "");
  tsr_stack* stack = nullptr;
  Consume(tsr_stack_create(&stack));
  const int64_t dims[] = {0, -1};
  tsr_scalar s = {};
  s.kind = TSR_SCALAR_INT;
  s.i = 7;
  auto push_all = [&](const char* mode, bool with_k) {
    tsr_stack_clear(stack);
    Consume(tsr_stack_push_tensor(stack, x));
    Consume(tsr_stack_push_none(stack));
    Consume(tsr_stack_push_int(stack, 3));  // an int for a float: converted by the dispatcher
    Consume(tsr_stack_push_int_list(stack, dims, 2));
    Consume(tsr_stack_push_scalar(stack, s));
    if (with_k) {
      Consume(tsr_stack_push_int(stack, 42));
    } else {
      Consume(tsr_stack_push_none(stack));
    }
    Consume(tsr_stack_push_string(stack, S(mode)));
    Consume(tsr_stack_push_bool(stack, 1));
    Consume(tsr_stack_push_dtype(stack, TSR_DTYPE_INT16));
  };
  push_all("go", true);
  ASSERT_EQ(Consume(tsr_op_call(op, stack)), "");
  EXPECT_EQ(seen.a, 3.0);
  EXPECT_THAT(seen.dims, ElementsAre(0, -1));
  EXPECT_EQ(seen.s.kind, TSR_SCALAR_INT);
  EXPECT_EQ(seen.s.i, 7);
  EXPECT_TRUE(seen.has_k);
  EXPECT_EQ(seen.k, 42);
  EXPECT_EQ(seen.mode, "go");
  EXPECT_EQ(seen.flag, 1);
  EXPECT_EQ(seen.t, TSR_DTYPE_INT16);
  EXPECT_TRUE(seen.y_is_null);
  ASSERT_EQ(tsr_stack_size(stack), 2u);
  tsr_tensor* r0 = nullptr;
  tsr_tensor* r1 = nullptr;
  ASSERT_EQ(Consume(tsr_stack_get_tensor(stack, 0, &r0)), "");
  ASSERT_EQ(Consume(tsr_stack_get_tensor(stack, 1, &r1)), "");
  EXPECT_EQ(r0, x);
  EXPECT_EQ(tsr_tensor_dtype(r1), TSR_DTYPE_INT16);

  push_all("fail", false);
  tsr_error* failed = tsr_op_call(op, stack);
  EXPECT_EQ(tsr_error_code(failed), TSR_OUT_OF_RANGE);
  EXPECT_EQ(Consume(failed), "11: mix: asked to fail") << "code (OUT_OF_RANGE) and message";
  EXPECT_FALSE(seen.has_k) << "None arrives as NULL";

  // Unsupported types are refused at registration, naming the argument.
  tsr_registration* def2 = nullptr;
  ASSERT_EQ(Consume(tsr_op_define(S("typed::cat(Tensor[] xs) -> Tensor"), &def2)), "");
  desc.op_name = S("typed::cat");
  EXPECT_THAT(Consume(tsr_kernel_register(&desc, nullptr)),
              HasSubstr("argument 'xs' of type Tensor[] has no C mapping"));
  desc.boxed = &PlusOneCpu;
  EXPECT_THAT(Consume(tsr_kernel_register(&desc, nullptr)),
              HasSubstr("set exactly one of desc->boxed and desc->typed"));
  tsr_stack_release(stack);
  tsr_tensor_release(x);
  for (tsr_registration* r : {reg, def, def2}) tsr_registration_release(r);
}

}  // namespace

namespace {

struct SumContext {
  const int64_t* values;
  std::atomic<int64_t> total{0};
};

tsr_error* SumChunk(void* context, int64_t begin, int64_t end) {
  auto* c = static_cast<SumContext*>(context);
  int64_t local = 0;
  for (int64_t i = begin; i < end; ++i) local += c->values[i];
  c->total += local;
  return begin == 13 ? tsr_error_create(TSR_ABORTED, S("chunk at 13 failed")) : nullptr;
}

TEST(CApiParallel, ParallelForRunsEveryIterationOnceAndReturnsErrors) {
  std::vector<int64_t> values(10000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i);
  SumContext c{values.data()};
  ASSERT_EQ(Consume(tsr_parallel_for(0, 10000, 64, &SumChunk, &c)), "");
  EXPECT_EQ(c.total.load(), 10000 * 9999 / 2);
  SumContext small{values.data()};
  EXPECT_THAT(Consume(tsr_parallel_for(13, 20, 64, &SumChunk, &small)),
              HasSubstr("chunk at 13 failed"));
  EXPECT_THAT(Consume(tsr_parallel_for(0, 10, 1, nullptr, nullptr)), HasSubstr("got NULL"));
  EXPECT_GE(tsr_num_threads(), 1);
}

// Issue 14, A.3: chunk arithmetic near INT64_MAX divided by zero (SIGFPE) or never finished.
TEST(CApiParallel, HugeRangesAndGrainsRunOnceWithoutOverflow) {
  struct Count {
    std::atomic<int64_t> iterations{0};
    std::atomic<int> chunks{0};
  };
  auto count = [](void* context, int64_t begin, int64_t end) -> tsr_error* {
    auto* c = static_cast<Count*>(context);
    c->iterations += end - begin;
    c->chunks++;
    return nullptr;
  };
  Count a;
  ASSERT_EQ(Consume(tsr_parallel_for(0, INT64_MAX, INT64_MAX - 1, count, &a)), "");
  EXPECT_EQ(a.iterations.load(), INT64_MAX);
  Count b;
  ASSERT_EQ(Consume(tsr_parallel_for(0, (int64_t{1} << 62) + 1, int64_t{1} << 62, count, &b)), "");
  EXPECT_EQ(b.iterations.load(), (int64_t{1} << 62) + 1);
  EXPECT_LE(b.chunks.load(), tsr_num_threads());
  Count c;
  EXPECT_THAT(Consume(tsr_parallel_for(INT64_MIN, INT64_MAX, 1, count, &c)),
              HasSubstr("parallel_for: expected at most 9223372036854775807 iterations"));
  EXPECT_EQ(c.chunks.load(), 0);
}

}  // namespace

namespace {

// What the kernel below saw of its call: the views of its four arguments and the call plan.
struct SeenCall {
  tsr_tensor_view args[4];
  std::vector<int64_t> arg_sizes[4];
  tsr_call_plan plan;
  tsr_tensor_view planned;
  std::vector<int64_t> planned_sizes, planned_strides;
  int calls = 0;
};
SeenCall seen;

// A binary out= kernel (self, other, [alpha,] out) that records what it is told, returns out.
tsr_error* RecordingOutKernel(void*, const tsr_op*, tsr_stack* stack) {
  ++seen.calls;
  const size_t n = tsr_stack_size(stack);
  for (tsr_tensor_view& v : seen.args) {
    v = tsr_tensor_view{};
    v.struct_size = sizeof v;
  }
  if (tsr_error* e = tsr_stack_get_tensor_views(stack, 0, n, seen.args)) return e;
  for (size_t k = 0; k < n; ++k) {
    const tsr_tensor_view& v = seen.args[k];
    seen.arg_sizes[k].assign(v.sizes, v.sizes + (v.ndim > 0 ? v.ndim : 0));
  }
  seen.plan = tsr_call_plan{};
  seen.plan.struct_size = sizeof seen.plan;
  seen.planned = tsr_tensor_view{};
  seen.planned.struct_size = sizeof seen.planned;
  if (tsr_error* e = tsr_stack_get_call_plan(stack, &seen.plan, &seen.planned, 1)) return e;
  seen.planned_sizes.assign(seen.planned.sizes, seen.planned.sizes + seen.planned.ndim);
  seen.planned_strides.assign(seen.planned.strides, seen.planned.strides + seen.planned.ndim);
  tsr_tensor* out = seen.args[n - 1].tensor;
  tsr_tensor_retain(out);  // keep it across the clear
  tsr_stack_clear(stack);
  tsr_error* e = tsr_stack_push_tensor(stack, out);
  tsr_tensor_release(out);
  return e;
}

tsr_tensor* OnDevice(std::vector<int64_t> sizes, tsr_dtype dtype, tsr_device device) {
  tsr_tensor* t = nullptr;
  EXPECT_EQ(Consume(tsr_tensor_empty(sizes.data(), sizes.size(), dtype, device, &t)), "");
  return t;
}

TEST(CApiCallPlan, KernelsGetEveryArgumentsViewAndThePlanInOneCallEach) {
  tsr_error* renamed = tsr_device_rename(TSR_DEVICE_PRIVATEUSE2, S("capidev"));
  tsr_error_release(renamed);  // already named so by an earlier test: fine
  FakeDevice fake;
  tsr_device_interface iface = FakeInterface(&fake);
  tsr_registration* device = nullptr;
  ASSERT_EQ(Consume(tsr_device_register(&iface, &device)), "");
  tsr_registration* add_out = nullptr;
  tsr_registration* eq_out = nullptr;
  for (auto [op, reg] : {std::pair{"add.out", &add_out}, std::pair{"eq.Tensor_out", &eq_out}}) {
    tsr_kernel_desc desc = {};
    desc.struct_size = sizeof desc;
    desc.op_name = S(op);
    desc.device_type = TSR_DEVICE_PRIVATEUSE2;
    desc.boxed = &RecordingOutKernel;
    desc.kernel_name = S("capi_test::recording_out");
    ASSERT_EQ(Consume(tsr_kernel_register(&desc, reg)), "") << op;
  }
  const tsr_device dev{TSR_DEVICE_PRIVATEUSE2, 1};
  // int32 [2, 3] + float32 [3] (a strided view is not needed: broadcasting differs already).
  tsr_tensor* a = OnDevice({2, 3}, TSR_DTYPE_INT32, dev);
  tsr_tensor* b = OnDevice({3}, TSR_DTYPE_FLOAT32, dev);

  const tsr_op* add = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("add.Tensor"), &add)), "");
  tsr_stack* stack = nullptr;
  ASSERT_EQ(Consume(tsr_stack_create(&stack)), "");
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, a)), "");
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, b)), "");
  ASSERT_EQ(Consume(tsr_op_call(add, stack)), "");  // functional, derived from the out= kernel
  ASSERT_EQ(seen.calls, 1);
  tsr_tensor* result = nullptr;
  ASSERT_EQ(Consume(tsr_stack_get_tensor(stack, 0, &result)), "");

  // The views: self and other as they are; alpha is no tensor; out as the plan allocated it.
  EXPECT_EQ(seen.args[0].tensor, a);
  EXPECT_EQ(seen.args[0].dtype, TSR_DTYPE_INT32);
  EXPECT_EQ(seen.arg_sizes[0], (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(seen.args[0].numel, 6);
  EXPECT_EQ(seen.args[0].device.type, TSR_DEVICE_PRIVATEUSE2);
  EXPECT_EQ(seen.args[0].device.index, 1);
  EXPECT_EQ(seen.args[0].data, tsr_tensor_data_ptr(a));
  EXPECT_EQ(seen.args[0].flags & TSR_VIEW_CONTIGUOUS, TSR_VIEW_CONTIGUOUS);
  EXPECT_EQ(seen.args[1].tensor, b);
  EXPECT_EQ(seen.arg_sizes[1], (std::vector<int64_t>{3}));
  EXPECT_EQ(seen.args[2].tensor, nullptr) << "alpha is a Scalar";
  EXPECT_EQ(seen.args[2].ndim, -1);
  EXPECT_EQ(seen.args[3].tensor, result);
  EXPECT_EQ(seen.args[3].dtype, TSR_DTYPE_FLOAT32);
  EXPECT_EQ(seen.arg_sizes[3], (std::vector<int64_t>{2, 3}));

  // The plan: float32 computed, one planned output of the broadcast shape on the call's device.
  EXPECT_EQ(seen.plan.compute_dtype, TSR_DTYPE_FLOAT32);
  EXPECT_EQ(seen.plan.num_outputs, 1);
  EXPECT_EQ(seen.plan.device.type, TSR_DEVICE_PRIVATEUSE2);
  EXPECT_EQ(seen.plan.device.index, 1);
  EXPECT_EQ(seen.planned.tensor, nullptr);
  EXPECT_EQ(seen.planned.data, nullptr);
  EXPECT_EQ(seen.planned.dtype, TSR_DTYPE_FLOAT32);
  EXPECT_EQ(seen.planned_sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(seen.planned_strides, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(seen.planned.numel, 6);
  EXPECT_EQ(seen.planned.flags & TSR_VIEW_CONTIGUOUS, TSR_VIEW_CONTIGUOUS);

  // A comparison computes in the promoted dtype and returns bool.
  const tsr_op* eq = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("eq.Tensor"), &eq)), "");
  tsr_stack_clear(stack);
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, a)), "");
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, b)), "");
  ASSERT_EQ(Consume(tsr_op_call(eq, stack)), "");
  EXPECT_EQ(seen.calls, 2);
  EXPECT_EQ(seen.plan.compute_dtype, TSR_DTYPE_FLOAT32);
  EXPECT_EQ(seen.planned.dtype, TSR_DTYPE_BOOL);

  // Outside a kernel a stack has no plan: no outputs, no compute dtype, not an error.
  tsr_call_plan none = {};
  none.struct_size = sizeof none;
  EXPECT_EQ(Consume(tsr_stack_get_call_plan(stack, &none, nullptr, 0)), "");
  EXPECT_EQ(none.num_outputs, 0);
  EXPECT_EQ(none.compute_dtype, -1);

  tsr_stack_release(stack);
  tsr_tensor_release(a);
  tsr_tensor_release(b);
  tsr_registration_release(add_out);
  tsr_registration_release(eq_out);
  tsr_registration_release(device);
}

TEST(CApiCallPlan, BadArgumentsAreErrorsNamingWhatWasExpected) {
  tsr_stack* stack = nullptr;
  ASSERT_EQ(Consume(tsr_stack_create(&stack)), "");
  const int64_t n = 2;
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(&n, 1, TSR_DTYPE_FLOAT32, kCpu, &t)), "");
  ASSERT_EQ(Consume(tsr_stack_push_tensor(stack, t)), "");
  ASSERT_EQ(Consume(tsr_stack_push_int(stack, 7)), "");
  tsr_tensor_view views[3] = {};
  for (tsr_tensor_view& v : views) v.struct_size = sizeof v;
  EXPECT_THAT(Consume(tsr_stack_get_tensor_views(stack, 1, 2, views)),
              HasSubstr("values [1, 3) are out of range for a stack of 2 values"));
  EXPECT_THAT(Consume(tsr_stack_get_tensor_views(stack, 0, 1, nullptr)),
              HasSubstr("views is NULL but count is 1"));
  views[0].struct_size = 8;
  EXPECT_THAT(Consume(tsr_stack_get_tensor_views(stack, 0, 1, views)),
              HasSubstr("views[0].struct_size is 8; expected sizeof(tsr_tensor_view)"));
  EXPECT_THAT(Consume(tsr_stack_get_tensor_views(nullptr, 0, 0, views)),
              HasSubstr("expected a stack, got NULL"));
  // A caller built against a later minor (a larger view) gets its extra bytes zeroed.
  struct Larger {
    tsr_tensor_view view;
    uint64_t later_field;
  } larger[2];
  std::memset(larger, 0xff, sizeof larger);
  larger[0].view.struct_size = sizeof(Larger);
  larger[1].view.struct_size = sizeof(Larger);
  ASSERT_EQ(Consume(tsr_stack_get_tensor_views(stack, 0, 2, &larger[0].view)), "");
  EXPECT_EQ(larger[0].view.tensor, t);
  EXPECT_EQ(larger[0].later_field, 0u);
  EXPECT_EQ(larger[1].view.tensor, nullptr) << "the int";
  EXPECT_EQ(larger[1].view.ndim, -1);
  EXPECT_EQ(larger[1].later_field, 0u);

  tsr_call_plan plan = {};
  plan.struct_size = 8;
  EXPECT_THAT(Consume(tsr_stack_get_call_plan(stack, &plan, nullptr, 0)),
              HasSubstr("plan->struct_size is 8; expected sizeof(tsr_call_plan)"));
  EXPECT_THAT(Consume(tsr_stack_get_call_plan(stack, nullptr, nullptr, 0)),
              HasSubstr("expected a plan pointer, got NULL"));
  tsr_stack_release(stack);
  tsr_tensor_release(t);
}

// An op on a tensor whose device's interface the application released says why that device
// type has nothing registered (Note [Why a key has nothing]).
TEST(CApiDevice, AnOpOnAReleasedApplicationDeviceSaysWhy) {
  ASSERT_EQ(Consume(tsr_device_rename(TSR_DEVICE_PRIVATEUSE2, S("capidev"))), "");
  FakeDevice fake;
  tsr_device_interface iface = FakeInterface(&fake);
  tsr_registration* reg = nullptr;
  ASSERT_EQ(Consume(tsr_device_register(&iface, &reg)), "");
  const int64_t size = 2;
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(&size, 1, TSR_DTYPE_INT32, {TSR_DEVICE_PRIVATEUSE2, 0}, &t)),
            "");
  tsr_registration_release(reg);
  const tsr_op* neg = nullptr;
  ASSERT_EQ(Consume(tsr_op_find(S("neg"), &neg)), "");
  tsr_value arg{};
  arg.kind = TSR_VALUE_TENSOR;
  arg.u.tensor = t;
  tsr_value result{};
  size_t results = 0;
  EXPECT_THAT(Consume(tsr_op_call_values(neg, &arg, 1, &result, 1, &results)),
              HasSubstr("registered for that device type (the application's device interface "
                        "for capidev was released)"));
  EXPECT_EQ(results, 0u);
  tsr_tensor_release(t);
  EXPECT_EQ(fake.frees, 1);
}

}  // namespace
