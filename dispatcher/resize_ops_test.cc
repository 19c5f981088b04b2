// resize_ and resize_as_ (dispatcher/ops/resize_ops.cc) in a private registry with the core
// library, a CPU copy_ of bytes and a fill_ of zero bytes: a growing resize_ keeps the old
// contents in a new storage (the rest zeros) while views taken before keep the old memory (Note [Growing a storage] in core/tensor.cc), a
// fitting one keeps the storage and offset, strides are ATen's, and ATen's refusals hold.
#include <cstring>
#include <vector>

#include "core/layout.h"
#include "core/status_macros.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Device kCpu(DeviceType::kCPU);
const Device kMeta(DeviceType::kMeta);
constexpr int64_t kChannelsLast = static_cast<int64_t>(MemoryFormat::kChannelsLast);
constexpr int64_t kChannelsLast3d = static_cast<int64_t>(MemoryFormat::kChannelsLast3d);
constexpr int64_t kPreserve = static_cast<int64_t>(MemoryFormat::kPreserve);

// copy_ of two contiguous tensors of one dtype and shape (all resize_ asks of it): their bytes.
absl::Status CopyBytes(void*, const OperatorHandle&, Stack* stack) {
  const Tensor self = (*stack)[0].tensor();
  const Tensor& src = (*stack)[1].tensor();
  if (!self.is_contiguous() || !src.is_contiguous() || self.dtype() != src.dtype() ||
      self.numel() != src.numel()) {
    return absl::UnimplementedError("the test's copy_ copies contiguous bytes only");
  }
  std::memcpy(self.data_ptr(), src.data_ptr(), self.impl()->nbytes());
  stack->clear();
  stack->push_back(self);
  return absl::OkStatus();
}

// fill_.Scalar of a contiguous uint8 tensor with 0 (all resize_ asks of it: a grown storage's
// new bytes).
absl::Status ZeroBytes(void*, const OperatorHandle&, Stack* stack) {
  const Tensor self = (*stack)[0].tensor();
  if (!self.is_contiguous() || self.dtype() != ScalarType::kUInt8 ||
      (*stack)[1].scalar().to_int() != 0) {
    return absl::UnimplementedError("the test's fill_ writes zero bytes only");
  }
  std::memset(self.data_ptr(), 0, self.impl()->nbytes());
  stack->clear();
  stack->push_back(self);
  return absl::OkStatus();
}

// Iota: float32 0, 1, 2, ... of `sizes`.
Tensor Iota(std::initializer_list<int64_t> sizes) {
  Tensor t = *Empty(sizes, ScalarType::kFloat32, kCpu);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

std::vector<float> FirstValues(const Tensor& t, int64_t n) {
  return std::vector<float>(t.data<float>(), t.data<float>() + n);
}

class ResizeOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(DefineCoreOps(registry_).ok());
    KernelFunction copy;
    copy.fn = &CopyBytes;
    copy.name = "test_copy_bytes";
    handles_.push_back(*registry_.Impl("copy_", DispatchKey::kCPU, std::move(copy)));
    KernelFunction zero;
    zero.fn = &ZeroBytes;
    zero.name = "test_zero_bytes";
    handles_.push_back(*registry_.Impl("fill_.Scalar", DispatchKey::kCPU, std::move(zero)));
  }
  absl::StatusOr<Tensor> Call(std::string_view name, Stack args) {
    TSR_ASSIGN_OR_RETURN(OperatorHandle op, registry_.Find(name));
    TSR_RETURN_IF_ERROR(registry_.Call(op, &args));
    return args[0].tensor();
  }
  Tensor Resize(const Tensor& self, IntList size, Value format = Value(std::nullopt)) {
    absl::StatusOr<Tensor> out = Call("resize_", {self, Value(std::move(size)), format});
    EXPECT_TRUE(out.ok()) << out.status();
    if (out.ok()) {
      EXPECT_EQ(out->impl(), self.impl()) << "resize_ returns self itself";
    }
    return self;
  }
  std::string ResizeError(const Tensor& self, IntList size, Value format = Value(std::nullopt)) {
    absl::StatusOr<Tensor> out = Call("resize_", {self, Value(std::move(size)), format});
    EXPECT_FALSE(out.ok()) << "resize_ unexpectedly succeeded";
    return out.ok() ? "" : std::string(out.status().message());
  }

  OpRegistry registry_;
  std::vector<RegistrationHandle> handles_;
};

TEST_F(ResizeOpsTest, GrowingKeepsTheOldContentsInANewStorage) {
  Tensor x = Iota({2, 3});
  Tensor before = *Narrow(x, 0, 0, 2);  // a view of the old storage, taken before
  const void* old_memory = before.data_ptr();
  Resize(x, {4, 4});
  EXPECT_THAT(x.sizes(), ElementsAre(4, 4));
  EXPECT_THAT(x.strides(), ElementsAre(4, 1));
  EXPECT_EQ(x.storage_offset(), 0);
  EXPECT_EQ(x.dtype(), ScalarType::kFloat32);
  EXPECT_FALSE(x.IsSameStorage(before)) << "Tessera gives self a new storage";
  EXPECT_GE(x.impl()->storage()->nbytes(), 16 * sizeof(float));
  EXPECT_THAT(FirstValues(x, 6), ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_THAT(std::vector<float>(x.data<float>() + 6, x.data<float>() + 16), Each(0))
      << "the new elements are zeros, not raw memory";
  // The view taken before keeps the old memory, which no longer sees self's writes (PyTorch
  // would move it along).
  EXPECT_EQ(before.data_ptr(), old_memory);
  x.data<float>()[0] = 42;
  EXPECT_EQ(before.data<float>()[0], 0);
}

TEST_F(ResizeOpsTest, FittingKeepsTheStorageAndOffset) {
  Tensor base = Iota({8});
  Tensor x = *Narrow(base, 0, 2, 4);  // offset 2
  const void* data = x.data_ptr();
  Resize(x, {2, 3});  // 2 + 6 <= 8: fits
  EXPECT_TRUE(x.IsSameStorage(base));
  EXPECT_EQ(x.storage_offset(), 2);
  EXPECT_EQ(x.data_ptr(), data);
  EXPECT_THAT(FirstValues(x, 6), ElementsAre(2, 3, 4, 5, 6, 7));
  Resize(x, {0});  // no elements: the offset stays, the storage too
  EXPECT_EQ(x.storage_offset(), 2);
  EXPECT_TRUE(x.IsSameStorage(base));
  // Growing past the storage keeps the offset in the new one, and the old bytes before it.
  Resize(x, {7});
  EXPECT_FALSE(x.IsSameStorage(base));
  EXPECT_EQ(x.storage_offset(), 2);
  EXPECT_THAT(FirstValues(x, 6), ElementsAre(2, 3, 4, 5, 6, 7));
}

TEST_F(ResizeOpsTest, ANonContiguousSelfIsRestridedContiguousUnlessItsShapeStays) {
  Tensor base = Iota({2, 3});
  Tensor t = *Transpose(base, 0, 1);  // [3, 2], strides [1, 3]
  Resize(t, {3, 2});                  // the same shape: nothing changes
  EXPECT_THAT(t.strides(), ElementsAre(1, 3));
  Resize(t, {6});  // memory order
  EXPECT_THAT(t.strides(), ElementsAre(1));
  EXPECT_TRUE(t.IsSameStorage(base));
  EXPECT_THAT(FirstValues(t, 6), ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST_F(ResizeOpsTest, ChannelsLastStridesAreC10s) {
  Tensor x = Iota({4});
  Resize(x, {2, 3, 4, 5}, Value(kChannelsLast));
  EXPECT_THAT(x.strides(), ElementsAre(60, 1, 15, 3));
  EXPECT_THAT(FirstValues(x, 4), ElementsAre(0, 1, 2, 3));
  Resize(x, {2, 3, 4, 5, 6}, Value(kChannelsLast3d));
  EXPECT_THAT(x.strides(), ElementsAre(360, 1, 90, 18, 3));
  Resize(x, {2, 0, 4, 5}, Value(kChannelsLast));
  EXPECT_THAT(x.strides(), ElementsAre(0, 1, 0, 0));
  // The same shape with a memory format given is restrided.
  Tensor y = Iota({1, 2, 2, 2});
  Resize(y, {1, 2, 2, 2}, Value(kChannelsLast));
  EXPECT_THAT(y.strides(), ElementsAre(8, 1, 4, 2));
}

TEST_F(ResizeOpsTest, ResizeAsTakesTheTemplatesShapeAndSuggestedFormat) {
  Tensor like = *Empty({2, 3, 4, 5}, ScalarType::kInt64, kCpu);
  Tensor cl = *Permute(*Empty({2, 4, 5, 3}, ScalarType::kInt64, kCpu), {0, 3, 1, 2});
  ASSERT_THAT(cl.strides(), ElementsAre(60, 1, 15, 3));
  Tensor x = Iota({6});
  ASSERT_TRUE(Call("resize_as_", {x, cl, Value(std::nullopt)}).ok());
  EXPECT_THAT(x.strides(), ElementsAre(60, 20, 5, 1)) << "None: contiguous";
  ASSERT_TRUE(Call("resize_as_", {x, cl, Value(kPreserve)}).ok());
  EXPECT_THAT(x.strides(), ElementsAre(60, 1, 15, 3)) << "Preserve: the template's format";
  ASSERT_TRUE(Call("resize_as_", {x, like, Value(kPreserve)}).ok());
  EXPECT_THAT(x.strides(), ElementsAre(60, 20, 5, 1));
  ASSERT_TRUE(Call("resize_as_", {x, x, Value(std::nullopt)}).ok()) << "self as its template";
  absl::StatusOr<Tensor> rank = Call("resize_as_", {x, Iota({2, 3}), Value(kChannelsLast)});
  EXPECT_THAT(rank.status().message(),
              HasSubstr("required rank 4 tensor to use channels_last format"));
}

TEST_F(ResizeOpsTest, RefusesAsATenDoesAndLeavesSelfUnchanged) {
  Tensor x = Iota({2, 3});
  EXPECT_THAT(ResizeError(x, {2, -1}), HasSubstr("numel: integer multiplication overflow"));
  EXPECT_THAT(ResizeError(x, {2, 3}, Value(kPreserve)),
              HasSubstr("resize_: Unsupported memory formatPreserve"));
  EXPECT_THAT(ResizeError(x, {4, 4, 4}, Value(kChannelsLast)),
              HasSubstr("required rank 4 tensor to use channels_last format"));
  EXPECT_THAT(x.sizes(), ElementsAre(2, 3));
  // Memory Tessera did not allocate cannot grow; it may shrink.
  float buffer[4] = {1, 2, 3, 4};
  DataPtr borrowed;
  borrowed.data = buffer;
  borrowed.device = kCpu;
  Tensor wrapped = *FromStorage(Ref<StorageImpl>::Make(std::move(borrowed), sizeof buffer),
                                ScalarType::kFloat32, {4}, {1}, 0);
  EXPECT_THAT(ResizeError(wrapped, {5}),
              HasSubstr("Trying to resize storage that is not resizable"));
  Resize(wrapped, {2, 2});
  EXPECT_EQ(wrapped.data_ptr(), static_cast<void*>(buffer));
  // An expanded self is refused as every write into it is (Note [Memory overlap]).
  Tensor expanded = *Expand(Iota({1}), {3});
  EXPECT_THAT(ResizeError(expanded, {2}), HasSubstr("more than one element"));
}

TEST_F(ResizeOpsTest, MetaTensorsChangeShapeOnly) {
  Tensor m = *Empty({2}, ScalarType::kFloat16, kMeta);
  Resize(m, {100, 3});
  EXPECT_THAT(m.sizes(), ElementsAre(100, 3));
  EXPECT_EQ(m.device(), kMeta);
  EXPECT_EQ(m.data_ptr(), nullptr);
  EXPECT_GE(m.impl()->storage()->nbytes(), 300 * 2u);
}

}  // namespace
}  // namespace tessera
