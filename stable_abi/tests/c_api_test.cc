// The C ABI from C++: errors, tensor creation, wrapping, copies and bad input, through the
// exported tsr_* functions only (this test links libtessera.so, not the static layers).
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/c/tessera.h"

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr tsr_device kCpu{TSR_DEVICE_CPU, 0};

// Takes ownership of an error and returns "CODE: message" ("" for success).
std::string Consume(tsr_error* error) {
  if (error == nullptr) return "";
  tsr_string m = tsr_error_message(error);
  std::string text = std::to_string(tsr_error_code(error)) + ": " + std::string(m.data, m.size);
  tsr_error_release(error);
  return text;
}

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
