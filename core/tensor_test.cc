#include "core/tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/allocator.h"
#include "core/host_allocator.h"
#include "core/views.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Tensor, EmptyAllocatesContiguousHostMemoryForEveryDtype) {
  for (ScalarType dtype : kAllScalarTypes) {
    absl::StatusOr<Tensor> t = Empty({2, 3}, dtype, Device(DeviceType::kCPU));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->dtype(), dtype);
    EXPECT_THAT(t->sizes(), ElementsAre(2, 3));
    EXPECT_THAT(t->strides(), ElementsAre(3, 1));
    EXPECT_EQ(t->numel(), 6);
    EXPECT_TRUE(t->is_contiguous());
    EXPECT_NE(t->data_ptr(), nullptr);
    EXPECT_EQ(t->impl()->storage()->nbytes(), 6 * ElementSize(dtype));
    EXPECT_EQ(t->impl()->storage()->allocator(), &HostAllocator::Global());
  }
}

TEST(Tensor, ZeroDimAndEmptyTensors) {
  Tensor scalar = *Empty({}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  Tensor empty = *Empty({3, 0}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.impl()->storage()->nbytes(), 0u);
  EXPECT_TRUE(empty.is_contiguous());
}

TEST(Tensor, BadSizesDtypesAndDevicesAreErrors) {
  absl::StatusOr<Tensor> t = Empty({2, -3}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("size -3 at dimension 1"));
  t = Empty({int64_t{1} << 62, 8}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kOutOfRange);
  t = Empty({int64_t{1} << 62}, ScalarType::kFloat64, Device(DeviceType::kCPU));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kOutOfRange) << "bytes overflow";
  t = Empty({2}, static_cast<ScalarType>(42), Device(DeviceType::kCPU));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("got 42"));
  t = Empty({2}, ScalarType::kFloat32, Device(DeviceType::kCUDA, 0));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(t.status().message(), HasSubstr("no backend has registered device type 'cuda'"));
  t = Empty({2}, ScalarType::kFloat32, Device(DeviceType::kCPU, 1));
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("expected device cpu, got cpu:1"));
}

TEST(Tensor, MetaTensorsHaveShapeButNoMemory) {
  Tensor m = *Empty({1024, 1024}, ScalarType::kFloat32, Device(DeviceType::kMeta));
  EXPECT_EQ(m.data_ptr(), nullptr);
  EXPECT_EQ(m.numel(), 1024 * 1024);
  EXPECT_EQ(m.device(), Device(DeviceType::kMeta));
}

TEST(Tensor, EmptyStridedSizesStorageForStrides) {
  Tensor t = *EmptyStrided({2, 3}, {1, 2}, ScalarType::kInt16, Device(DeviceType::kCPU));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.impl()->storage()->nbytes(), 6 * 2u);
  Tensor expanded = *EmptyStrided({4, 3}, {0, 1}, ScalarType::kInt16, Device(DeviceType::kCPU));
  EXPECT_EQ(expanded.impl()->storage()->nbytes(), 3 * 2u);
  EXPECT_FALSE(EmptyStrided({2}, {-1}, ScalarType::kInt16, Device(DeviceType::kCPU)).ok());
}

TEST(Tensor, FromStorageChecksBoundsAndOffsetsDataPointer) {
  Tensor base = *Empty({10}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  Tensor view = *FromStorage(base.impl()->storage(), ScalarType::kFloat32, {2, 2}, {4, 1}, 3);
  EXPECT_EQ(static_cast<char*>(view.data_ptr()) - static_cast<char*>(base.data_ptr()), 12);
  EXPECT_TRUE(view.IsSameStorage(base));
  absl::StatusOr<Tensor> out =
      FromStorage(base.impl()->storage(), ScalarType::kFloat32, {2, 2}, {4, 1}, 5);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(out.status().message(), HasSubstr("needs 11 elements of float32"));
  EXPECT_THAT(out.status().message(), HasSubstr("holds 10"));
  EXPECT_FALSE(FromStorage(base.impl()->storage(), ScalarType::kFloat32, {2}, {1}, -1).ok());
  // A view as float64 of the same 40 bytes holds 5 elements.
  EXPECT_TRUE(FromStorage(base.impl()->storage(), ScalarType::kFloat64, {5}, {1}, 0).ok());
  EXPECT_FALSE(FromStorage(base.impl()->storage(), ScalarType::kFloat64, {6}, {1}, 0).ok());
}

// ones.out(size=[INT64_MAX], out=select(int64[3], 0, 2)): offset 2 + INT64_MAX wrapped, so the
// 3-element storage was kept and "resized" to INT64_MAX elements.
TEST(Tensor, ResizeOutputRefusesWhenOffsetPlusNumelOverflows) {
  Tensor base = *Empty({3}, ScalarType::kInt64, Device(DeviceType::kCPU));
  Tensor out = *FromStorage(base.impl()->storage(), ScalarType::kInt64, {}, {}, 2);
  absl::Status s = out.impl()->ResizeOutput("ones.out", {INT64_MAX});
  ASSERT_FALSE(s.ok()) << "resized to " << out.ToString() << " over "
                       << out.impl()->storage()->nbytes() << " bytes";
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(),
              HasSubstr("ones.out: cannot resize the output int64[] on cpu to "
                        "[9223372036854775807]: a storage of 9223372036854775807 elements of "
                        "int64 overflows int64 bytes"));
  EXPECT_EQ(out.dim(), 0) << "a failed resize leaves the output as it was";
  EXPECT_EQ(out.numel(), 1);
  EXPECT_TRUE(out.IsSameStorage(base));
  // Offset + numel that fits but exceeds the storage still reallocates, as before.
  ASSERT_TRUE(out.impl()->ResizeOutput("ones.out", {2}).ok());
  EXPECT_FALSE(out.IsSameStorage(base));
  EXPECT_EQ(out.storage_offset(), 0);
}

// An out= of the result's shape keeps its strides (ATen's resize_output): a transposed output
// was restrided contiguous under its caller, so bernoulli.out and glu.out wrote its elements
// in the wrong order.
TEST(Tensor, ResizeOutputLeavesAnOutputOfTheShapeAsItIs) {
  Tensor base = *Empty({3, 2}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  Tensor out = *FromStorage(base.impl()->storage(), ScalarType::kFloat32, {2, 3}, {1, 2}, 0);
  ASSERT_TRUE(out.impl()->ResizeOutput("glu.out", {2, 3}).ok());
  EXPECT_EQ(std::vector<int64_t>(out.strides().begin(), out.strides().end()),
            (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(out.IsSameStorage(base));
  EXPECT_FALSE(out.is_contiguous());
  // Another shape restrides it contiguous, in the same storage where it fits.
  ASSERT_TRUE(out.impl()->ResizeOutput("glu.out", {3, 2}).ok());
  EXPECT_EQ(std::vector<int64_t>(out.strides().begin(), out.strides().end()),
            (std::vector<int64_t>{2, 1}));
  EXPECT_TRUE(out.IsSameStorage(base));
}

// SetShapeAndStorage is resize_'s half in the core (Note [Growing a storage]): self moves to a
// new storage the caller filled, keeping its offset; views of the old storage keep its memory.
TEST(Tensor, SetShapeAndStorageMovesSelfToANewStorageAndLeavesViewsTheOldOne) {
  const Device cpu(DeviceType::kCPU);
  Tensor base = *Empty({6}, ScalarType::kInt32, cpu);
  for (int i = 0; i < 6; ++i) base.data<int32_t>()[i] = i;
  Tensor self = *FromStorage(base.impl()->storage(), ScalarType::kInt32, {4}, {1}, 2);
  const void* old_memory = base.data_ptr();
  Tensor grown = *Empty({9}, ScalarType::kInt32, cpu);
  for (int i = 0; i < 6; ++i) grown.data<int32_t>()[i] = base.data<int32_t>()[i];
  ASSERT_TRUE(self.impl()->SetShapeAndStorage({7}, {1}, grown.impl()->storage()).ok());
  EXPECT_THAT(self.sizes(), ElementsAre(7));
  EXPECT_EQ(self.storage_offset(), 2) << "the offset stays";
  EXPECT_TRUE(self.IsSameStorage(grown));
  EXPECT_EQ(self.data<int32_t>()[0], 2);
  EXPECT_TRUE(self.is_contiguous());
  EXPECT_EQ(base.data_ptr(), old_memory) << "the old storage's memory is never swapped";
  self.data<int32_t>()[0] = 42;
  EXPECT_EQ(base.data<int32_t>()[2], 2);
  // Non-contiguous strides are taken as given; a view without elements may lie anywhere.
  ASSERT_TRUE(self.impl()->SetShapeAndStorage({3, 2}, {1, 3}, self.impl()->storage()).ok());
  EXPECT_FALSE(self.is_contiguous());
  ASSERT_TRUE(self.impl()->SetShapeAndStorage({0, 100}, {100, 1}, base.impl()->storage()).ok());
  EXPECT_EQ(self.numel(), 0);
}

TEST(Tensor, SetShapeAndStorageRefusesAViewOutsideTheStorageAndLeavesTheTensor) {
  const Device cpu(DeviceType::kCPU);
  Tensor t = *Empty({2, 2}, ScalarType::kFloat32, cpu);
  absl::Status s = t.impl()->SetShapeAndStorage({5}, {1}, t.impl()->storage());
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(s.message(), HasSubstr("need 5 elements of float32, but the storage holds 4"));
  EXPECT_THAT(t.sizes(), ElementsAre(2, 2));
  s = t.impl()->SetShapeAndStorage(
      {2}, {1}, Empty({2}, ScalarType::kFloat32, Device(DeviceType::kMeta))->impl()->storage());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("expected a storage on cpu"));
  s = t.impl()->SetShapeAndStorage({2, 2}, {1}, t.impl()->storage());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  Tensor immutable = *ImmutableAlias(t);
  s = immutable.impl()->SetShapeAndStorage({4}, {1}, t.impl()->storage());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(immutable.sizes(), ElementsAre(2, 2));
}

// Note [Immutable tensors]: a view of an immutable tensor has its id (a cache keyed on the id
// and the view's layout tells views apart); a view of any other tensor has none.
TEST(Tensor, ViewsOfAnImmutableTensorHaveItsId) {
  const Device cpu(DeviceType::kCPU);
  Tensor t = *Empty({2, 3}, ScalarType::kFloat32, cpu);
  Tensor immutable = *ImmutableAlias(t);
  ASSERT_NE(immutable.impl()->immutable_id(), 0u);
  const absl::StatusOr<Tensor> t_view = T(immutable);
  ASSERT_TRUE(t_view.ok()) << t_view.status();
  for (const absl::StatusOr<Tensor>& v :
       {t_view, View(immutable, {6}), Select(*t_view, 0, 1), AsStrided(immutable, {2}, {3}, 1)}) {
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->impl()->immutable_id(), immutable.impl()->immutable_id()) << v->ToString();
  }
  EXPECT_EQ(T(t)->impl()->immutable_id(), 0u);
  EXPECT_NE(ImmutableAlias(t)->impl()->immutable_id(), immutable.impl()->immutable_id());
}

// CheckLayout computes what EmptyStrided's checks do, with their errors; EmptyChecked of what it
// accepted makes the tensor EmptyStrided makes.
TEST(Tensor, EmptyCheckedMakesWhatEmptyStridedMakes) {
  const Device cpu(DeviceType::kCPU);
  const CheckedLayout layout = *CheckLayout({2, 3}, {1, 2}, ScalarType::kFloat32);
  EXPECT_EQ(layout.numel, 6);
  EXPECT_EQ(layout.storage_elements, 6);
  EXPECT_FALSE(layout.contiguous);
  Tensor checked = *EmptyChecked({2, 3}, {1, 2}, ScalarType::kFloat32, cpu, layout);
  Tensor strided = *EmptyStrided({2, 3}, {1, 2}, ScalarType::kFloat32, cpu);
  EXPECT_THAT(checked.sizes(), ElementsAre(2, 3));
  EXPECT_THAT(checked.strides(), ElementsAre(1, 2));
  EXPECT_EQ(checked.numel(), strided.numel());
  EXPECT_EQ(checked.is_contiguous(), strided.is_contiguous());
  EXPECT_EQ(checked.impl()->storage()->nbytes(), strided.impl()->storage()->nbytes());
  EXPECT_TRUE(CheckLayout({2, 3}, {3, 1}, ScalarType::kFloat32)->contiguous);
  EXPECT_EQ(CheckLayout({2, -1}, {1, 1}, ScalarType::kFloat32).status().code(),
            EmptyStrided({2, -1}, {1, 1}, ScalarType::kFloat32, cpu).status().code());
  EXPECT_EQ(CheckLayout({2}, {-1}, ScalarType::kFloat32).status().message(),
            EmptyStrided({2}, {-1}, ScalarType::kFloat32, cpu).status().message());
}

// CheckLayout (and EmptyStrided) compute a common layout's facts in one pass and every other
// layout through ComputeNumel, StorageElementsFor and IsContiguousLayout: both ways agree.
TEST(Tensor, CheckLayoutAgreesWithTheSeparateChecks) {
  const int64_t big = int64_t{1} << 62;
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> layouts = {
      {{}, {}},                  // 0-dim
      {{1}, {7}},                // a size-1 dim takes any stride
      {{2, 3}, {3, 1}},          // contiguous
      {{2, 3}, {1, 2}},          // transposed
      {{2, 1, 3}, {3, 99, 1}},   // contiguous around a size-1 dim
      {{4, 3}, {0, 1}},          // broadcast (stride 0)
      {{3, 3}, {1, 1}},          // overlapping
      {{2, 3}, {6, 2}},          // every other element
      {{0, 3}, {3, 1}},          // empty
      {{2, big}, {big, 1}},      // numel (2^63) overflows, and the storage
      {{big, 4}, {4, 1}},        // numel overflows
      {{3}, {big}},              // the storage alone overflows: (3 - 1) * 2^62
      {{2}, {INT64_MAX / 2 + 1}},  // the last index is 2^62: fits
      {{2}, {INT64_MAX}},          // the last index is INT64_MAX: the count overflows
      {{2, 2}, {1, -1}},           // a negative stride
      {{2, -1}, {1, 1}},           // a negative size
      {{2, 3}, {1}},               // fewer strides than sizes
  };
  for (const auto& [sizes, strides] : layouts) {
    SCOPED_TRACE(ShapeToString(sizes) + " strides " + ShapeToString(strides));
    const absl::StatusOr<CheckedLayout> layout =
        CheckLayout(sizes, strides, ScalarType::kFloat32);
    const absl::StatusOr<int64_t> numel = ComputeNumel(sizes);
    const absl::StatusOr<int64_t> elements = StorageElementsFor(sizes, strides);
    if (!numel.ok() || !elements.ok()) {
      ASSERT_FALSE(layout.ok());
      EXPECT_EQ(layout.status(), numel.ok() ? elements.status() : numel.status());
      continue;
    }
    ASSERT_TRUE(layout.ok()) << layout.status();
    EXPECT_EQ(layout->numel, *numel);
    EXPECT_EQ(layout->storage_elements, *elements);
    EXPECT_EQ(layout->contiguous, IsContiguousLayout(sizes, strides));
  }
}

// An empty tensor's element count is 0 however large its other dims, but its contiguous
// strides are products of those dims: [0, 2^32, 2^32, 2^32] used to wrap them silently.
TEST(Tensor, EmptyRefusesContiguousStridesThatOverflow) {
  const int64_t big = int64_t{1} << 32;
  absl::StatusOr<Tensor> t =
      Empty({0, big, big, big}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  ASSERT_FALSE(t.ok()) << t->ToString();
  EXPECT_EQ(t.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(t.status().message(),
              HasSubstr("the contiguous strides of shape [0, 4294967296, 4294967296, 4294967296] "
                        "overflow int64 (the stride of dimension 1)"));
  const int64_t half = int64_t{1} << 31;
  Tensor fits = *Empty({0, half, half}, ScalarType::kFloat32, Device(DeviceType::kCPU));
  EXPECT_THAT(fits.strides(), ElementsAre(half * half, half, 1));
}

// The provider of a storage's memory (its owner) must outlive the deleter call.
TEST(Storage, OwnerOutlivesDeleter) {
  std::vector<std::string> events;
  struct Provider {
    explicit Provider(std::vector<std::string>* e) : events(e) {}
    std::vector<std::string>* events;
    ~Provider() { events->push_back("owner released"); }
  };
  static std::vector<std::string>* log = nullptr;
  log = &events;
  {
    DataPtr data;
    static float buffer[4];
    data.data = buffer;
    data.device = Device(DeviceType::kCPU);
    data.deleter = [](void*, void*) { log->push_back("deleter ran"); };
    data.owner = std::make_shared<Provider>(&events);
    Ref<StorageImpl> storage = Ref<StorageImpl>::Make(std::move(data), sizeof buffer);
    Tensor t = *FromStorage(storage, ScalarType::kFloat32, {4}, {1}, 0);
    storage = nullptr;
    EXPECT_TRUE(events.empty()) << "the tensor keeps the storage alive";
  }
  EXPECT_THAT(events, ElementsAre("deleter ran", "owner released"));
}

TEST(Tensor, ReleasingTheLastTensorFreesItsMemory) {
  HostAllocator& alloc = HostAllocator::Global();
  const int64_t before = alloc.GetStats().live_bytes;
  {
    Tensor t = *Empty({1000}, ScalarType::kFloat64, Device(DeviceType::kCPU));
    Tensor alias = t;
    EXPECT_GE(alloc.GetStats().live_bytes, before + 8000);
  }
  EXPECT_EQ(alloc.GetStats().live_bytes, before);
}

// Note [Small storages inline]: up to 64 bytes on the CPU, the memory is inside the storage,
// aligned as the host allocator aligns; beyond, it is the host allocator's.
TEST(Tensor, SmallCpuStoragesKeepTheirMemoryInlineAndAligned) {
  HostAllocator& alloc = HostAllocator::Global();
  const int64_t before = alloc.GetStats().live_bytes;
  for (int64_t n : {0, 1, 16}) {  // 0, 4 and 64 bytes of float32
    Tensor t = *Empty({n}, ScalarType::kFloat32, Device(DeviceType::kCPU));
    const auto* storage = t.impl()->storage().get();
    const auto* data = static_cast<const unsigned char*>(t.data_ptr());
    const auto* self = reinterpret_cast<const unsigned char*>(storage);
    EXPECT_TRUE(data >= self && data < self + sizeof(StorageImpl)) << n << " elements";
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % HostAllocator::kAlignment, 0u);
    EXPECT_EQ(storage->allocator(), &alloc) << "resizing reallocates through the host allocator";
    EXPECT_EQ(alloc.GetStats().live_bytes, before);
  }
  Tensor big = *Empty({17}, ScalarType::kFloat32, Device(DeviceType::kCPU));  // 68 bytes
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data_ptr()) % HostAllocator::kAlignment, 0u);
  EXPECT_GT(alloc.GetStats().live_bytes, before);
}

// Another CPU allocator, installed by an embedder, still sees every allocation.
TEST(Tensor, AnInstalledCpuAllocatorSeesSmallAllocationsToo) {
  struct Counting : Allocator {
    int calls = 0;
    absl::StatusOr<DataPtr> Allocate(Device device, size_t nbytes) override {
      ++calls;
      return HostAllocator::Global().Allocate(device, nbytes);
    }
  } counting;
  Allocator* previous = SetAllocator(DeviceType::kCPU, &counting);
  {
    Tensor t = *Empty({1}, ScalarType::kFloat32, Device(DeviceType::kCPU));
    t.data<float>()[0] = 2;
    EXPECT_EQ(t.data<float>()[0], 2);
  }
  SetAllocator(DeviceType::kCPU, previous);
  EXPECT_EQ(counting.calls, 1);
}

}  // namespace
}  // namespace tessera
