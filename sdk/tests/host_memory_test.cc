// Zero-copy host memory in the C++ SDK (Tensor::from_host_memory, Tensor::from_vector): the
// tensor is the caller's memory, the release runs once when the last reference goes (and never
// on a refused call), and a throwing release stays on the C++ side.
#include <atomic>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/sdk/runtime.hpp"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Runtime& TheRuntime() {
  static Runtime* runtime = new Runtime();
  return *runtime;
}

TEST(HostMemory, ATensorIsTheCallersMemoryUntilItsLastReferenceGoes) {
  TheRuntime();
  float data[6] = {1, 2, 3, 4, 5, 6};
  int released = 0;
  {
    Tensor t = Tensor::from_host_memory(data, sizeof data, {2, 3}, TSR_DTYPE_FLOAT32, [&](void* p) {
      EXPECT_EQ(p, data);
      ++released;
    });
    EXPECT_EQ(t.data_ptr(), data);  // no copy
    data[4] = 50;                   // seen through the tensor
    EXPECT_THAT(t.to_vector<float>(), ElementsAre(1, 2, 3, 4, 50, 6));
    Tensor copy = t;
    t = Tensor();
    EXPECT_EQ(released, 0);  // a reference is left
  }
  EXPECT_EQ(released, 1);
  // Borrowed (no release), with strides: a transposed view of the same memory.
  Tensor view = Tensor::from_host_memory(data, sizeof data, {3, 2}, TSR_DTYPE_FLOAT32, {}, {1, 3});
  EXPECT_THAT(view.to_vector<float>(), ElementsAre(1, 4, 2, 50, 3, 6));
}

TEST(HostMemory, ARefusedCallLeavesTheMemoryToTheCaller) {
  TheRuntime();
  float data[2] = {1, 2};
  int released = 0;
  try {
    Tensor::from_host_memory(data, sizeof data, {3}, TSR_DTYPE_FLOAT32, [&](void*) { ++released; });
    ADD_FAILURE() << "a view larger than the memory was accepted";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
  }
  EXPECT_EQ(released, 0);
  try {
    Tensor::from_host_memory(data, sizeof data, {2}, TSR_DTYPE_FLOAT32, {}, {1, 1});
    ADD_FAILURE() << "two strides for one size were accepted";
  } catch (const sdk::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("from_host_memory: expected 1 strides (one per size), got 2"));
  }
}

TEST(HostMemory, AVectorMovesInAndLivesAsLongAsTheTensor) {
  TheRuntime();
  std::vector<double> values = {0.5, 1.5, 2.5, 3.5};
  const double* where = values.data();
  Tensor t = Tensor::from_vector(std::move(values), {2, 2}, TSR_DTYPE_FLOAT64);
  EXPECT_EQ(t.data<double>(), where);  // the vector's own buffer
  EXPECT_THAT(t.to_vector<double>(), ElementsAre(0.5, 1.5, 2.5, 3.5));
  try {
    Tensor::from_vector(std::vector<float>{1, 2}, {2}, TSR_DTYPE_FLOAT64);
    ADD_FAILURE() << "float elements for a float64 tensor were accepted";
  } catch (const sdk::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("from_vector"));
  }
}

TEST(HostMemory, AThrowingReleaseDoesNotCrossTheCAbi) {
  TheRuntime();
  static float data[1] = {7};
  std::atomic<int> calls{0};
  {
    Tensor t = Tensor::from_host_memory(data, sizeof data, {1}, TSR_DTYPE_FLOAT32, [&](void*) {
      ++calls;
      throw std::runtime_error("release failed");
    });
  }
  EXPECT_EQ(calls.load(), 1);
}

}  // namespace
}  // namespace tessera
