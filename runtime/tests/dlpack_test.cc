// DLPack import and export through the C ABI (tessera/c/dlpack.h): every dtype both ways without
// a copy, strided views, 0-dim and empty tensors, storage offsets and byte offsets, the deleter
// exactly once (also with views outliving the imported tensor), every refusal, and device
// tensors on a registered privateuse device (kDLExtDev) and, where a GPU plugin finds a GPU, on
// cuda/hip. The DLPack structs come from the runtime's spec mirror (src/dlpack_spec.h);
// dlpack_layout_test.cc checks that mirror against Debian's dlpack.h where it is installed.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "c_test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/dlpack_spec.h"
#include "tessera/c/tessera.h"

namespace {

using tessera_test::Consume;
using tessera_test::S;

namespace dl = tessera::dlpack;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr tsr_device kCpu{TSR_DEVICE_CPU, 0};

std::vector<int64_t> Sizes(const tsr_tensor* t) {
  return std::vector<int64_t>(tsr_tensor_sizes(t), tsr_tensor_sizes(t) + tsr_tensor_dim(t));
}
std::vector<int64_t> Strides(const tsr_tensor* t) {
  return std::vector<int64_t>(tsr_tensor_strides(t), tsr_tensor_strides(t) + tsr_tensor_dim(t));
}

// The public functions take DLPack's own (incomplete here) structs; the test builds them with
// the mirror, which has the same layout.
::DLManagedTensor* C(dl::DLManagedTensor* m) { return reinterpret_cast<::DLManagedTensor*>(m); }
::DLManagedTensorVersioned* C(dl::DLManagedTensorVersioned* m) {
  return reinterpret_cast<::DLManagedTensorVersioned*>(m);
}

dl::DLManagedTensorVersioned* ExportV(tsr_tensor* t, const tsr_dlpack_options* options = nullptr) {
  ::DLManagedTensorVersioned* out = nullptr;
  EXPECT_EQ(Consume(tsr_tensor_to_dlpack_versioned(t, options, &out)), "");
  return reinterpret_cast<dl::DLManagedTensorVersioned*>(out);
}
dl::DLManagedTensor* ExportL(tsr_tensor* t) {
  ::DLManagedTensor* out = nullptr;
  EXPECT_EQ(Consume(tsr_tensor_to_dlpack(t, nullptr, &out)), "");
  return reinterpret_cast<dl::DLManagedTensor*>(out);
}

// Calls an op on a stack of arguments and returns its first return (a new reference).
tsr_tensor* CallView(const char* name, tsr_tensor* self, std::vector<std::vector<int64_t>> lists,
                     std::vector<int64_t> ints = {}) {
  const tsr_op* op = nullptr;
  EXPECT_EQ(Consume(tsr_op_find(S(name), &op)), "");
  tsr_stack* stack = nullptr;
  EXPECT_EQ(Consume(tsr_stack_create(&stack)), "");
  EXPECT_EQ(Consume(tsr_stack_push_tensor(stack, self)), "");
  for (const auto& list : lists) {
    EXPECT_EQ(Consume(tsr_stack_push_int_list(stack, list.data(), list.size())), "");
  }
  for (int64_t i : ints) EXPECT_EQ(Consume(tsr_stack_push_int(stack, i)), "");
  EXPECT_EQ(Consume(tsr_op_call(op, stack)), "") << name;
  tsr_tensor* out = nullptr;
  EXPECT_EQ(Consume(tsr_stack_get_tensor(stack, 0, &out)), "");
  tsr_tensor_retain(out);
  tsr_stack_release(stack);
  return out;
}
tsr_tensor* AsStrided(tsr_tensor* t, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                      int64_t offset) {
  return CallView("as_strided", t, {std::move(sizes), std::move(strides)}, {offset});
}
tsr_tensor* Transpose(tsr_tensor* t) { return CallView("transpose.int", t, {}, {0, 1}); }

// A CPU tensor over `buffer` whose deleter counts its calls.
tsr_tensor* Wrap(std::vector<float>& buffer, std::vector<int64_t> sizes, int* deleted) {
  tsr_tensor* t = nullptr;
  EXPECT_EQ(Consume(tsr_tensor_from_host_memory(
                buffer.data(), buffer.size() * sizeof(float), sizes.data(), nullptr, sizes.size(),
                TSR_DTYPE_FLOAT32, [](void*, void* n) { ++*static_cast<int*>(n); }, deleted, &t)),
            "");
  return t;
}

// ---- Export ----

struct DtypeCase {
  tsr_dtype dtype;
  uint8_t code, bits;
};
constexpr DtypeCase kDtypes[] = {
    {TSR_DTYPE_BOOL, dl::kDLBool, 8},      {TSR_DTYPE_UINT8, dl::kDLUInt, 8},
    {TSR_DTYPE_INT8, dl::kDLInt, 8},       {TSR_DTYPE_INT16, dl::kDLInt, 16},
    {TSR_DTYPE_INT32, dl::kDLInt, 32},     {TSR_DTYPE_INT64, dl::kDLInt, 64},
    {TSR_DTYPE_FLOAT16, dl::kDLFloat, 16}, {TSR_DTYPE_BFLOAT16, dl::kDLBfloat, 16},
    {TSR_DTYPE_FLOAT32, dl::kDLFloat, 32}, {TSR_DTYPE_FLOAT64, dl::kDLFloat, 64},
};

TEST(DLPack, EveryDtypeRoundTripsBothFormsWithoutACopy) {
  for (const DtypeCase& c : kDtypes) {
    SCOPED_TRACE(testing::Message() << "dtype " << c.dtype);
    const int64_t sizes[] = {2, 3};
    tsr_tensor* t = nullptr;
    ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, c.dtype, kCpu, &t)), "");
    const size_t nbytes = 6 * tsr_dtype_size(c.dtype);
    std::vector<unsigned char> bytes(nbytes);
    for (size_t i = 0; i < nbytes; ++i) bytes[i] = static_cast<unsigned char>(i % 2);  // bool-safe
    ASSERT_EQ(Consume(tsr_tensor_copy_from_host(t, bytes.data(), nbytes)), "");

    for (bool versioned : {true, false}) {
      SCOPED_TRACE(versioned ? "versioned" : "legacy");
      dl::DLManagedTensorVersioned* v = versioned ? ExportV(t) : nullptr;
      dl::DLManagedTensor* l = versioned ? nullptr : ExportL(t);
      ASSERT_TRUE(v != nullptr || l != nullptr);
      const dl::DLTensor& d = versioned ? v->dl_tensor : l->dl_tensor;
      if (versioned) {
        EXPECT_EQ(v->version.major, 1u);
        EXPECT_EQ(v->version.minor, 1u);
        EXPECT_EQ(v->flags, 0u);
      }
      EXPECT_EQ(d.data, tsr_tensor_data_ptr(t)) << "no copy";
      EXPECT_EQ(d.device.device_type, dl::kDLCPU);
      EXPECT_EQ(d.device.device_id, 0);
      EXPECT_EQ(d.ndim, 2);
      EXPECT_EQ(d.dtype.code, c.code);
      EXPECT_EQ(d.dtype.bits, c.bits);
      EXPECT_EQ(d.dtype.lanes, 1);
      EXPECT_THAT(std::vector<int64_t>(d.shape, d.shape + 2), ElementsAre(2, 3));
      EXPECT_THAT(std::vector<int64_t>(d.strides, d.strides + 2), ElementsAre(3, 1));
      EXPECT_EQ(d.byte_offset, 0u);

      tsr_tensor* back = nullptr;
      ASSERT_EQ(Consume(versioned ? tsr_tensor_from_dlpack_versioned(C(v), nullptr, &back)
                                  : tsr_tensor_from_dlpack(C(l), nullptr, &back)),
                "");
      EXPECT_EQ(tsr_tensor_data_ptr(back), tsr_tensor_data_ptr(t)) << "no copy";
      EXPECT_EQ(tsr_tensor_dtype(back), c.dtype);
      EXPECT_THAT(Sizes(back), ElementsAre(2, 3));
      EXPECT_THAT(Strides(back), ElementsAre(3, 1));
      EXPECT_EQ(tsr_tensor_device(back).type, TSR_DEVICE_CPU);
      // A write on one side is seen on the other.
      std::vector<unsigned char> ones(nbytes, 0);
      for (size_t i = 0; i < nbytes; i += tsr_dtype_size(c.dtype)) ones[i] = 1;
      ASSERT_EQ(Consume(tsr_tensor_copy_from_host(back, ones.data(), nbytes)), "");
      std::vector<unsigned char> seen(nbytes);
      ASSERT_EQ(Consume(tsr_tensor_copy_to_host(t, seen.data(), nbytes)), "");
      EXPECT_EQ(seen, ones);
      ASSERT_EQ(Consume(tsr_tensor_copy_from_host(t, bytes.data(), nbytes)), "");
      tsr_tensor_release(back);  // runs the export's deleter
    }
    tsr_tensor_release(t);
  }
}

TEST(DLPack, StridedViewsExportElementZeroAndTheirStrides) {
  int deleted = 0;
  std::vector<float> buffer = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  tsr_tensor* base = Wrap(buffer, {3, 4}, &deleted);
  tsr_tensor* transposed = Transpose(base);                 // [4, 3], strides [1, 4]
  tsr_tensor* offset = AsStrided(base, {2, 2}, {4, 2}, 5);  // storage offset 5
  tsr_tensor_release(base);

  dl::DLManagedTensorVersioned* t = ExportV(transposed);
  EXPECT_EQ(t->dl_tensor.data, buffer.data());
  EXPECT_THAT(std::vector<int64_t>(t->dl_tensor.strides, t->dl_tensor.strides + 2),
              ElementsAre(1, 4));
  dl::DLManagedTensor* o = ExportL(offset);
  EXPECT_EQ(o->dl_tensor.data, buffer.data() + 5) << "data points at element 0";
  EXPECT_EQ(o->dl_tensor.byte_offset, 0u);
  EXPECT_THAT(std::vector<int64_t>(o->dl_tensor.shape, o->dl_tensor.shape + 2), ElementsAre(2, 2));
  EXPECT_THAT(std::vector<int64_t>(o->dl_tensor.strides, o->dl_tensor.strides + 2),
              ElementsAre(4, 2));

  tsr_tensor* back = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_from_dlpack(C(o), nullptr, &back)), "");
  EXPECT_EQ(tsr_tensor_data_ptr(back), buffer.data() + 5);
  EXPECT_THAT(Strides(back), ElementsAre(4, 2));
  float values[4];
  ASSERT_EQ(Consume(tsr_tensor_copy_to_host(back, values, sizeof values)), "");
  EXPECT_THAT(values, ElementsAre(5, 7, 9, 11));
  buffer[7] = 70;  // a write to the memory is seen through the import
  ASSERT_EQ(Consume(tsr_tensor_copy_to_host(back, values, sizeof values)), "");
  EXPECT_THAT(values, ElementsAre(5, 70, 9, 11));

  tsr_tensor_release(transposed);
  tsr_tensor_release(offset);
  tsr_tensor_release(back);
  EXPECT_EQ(deleted, 0) << "the versioned export still holds the memory";
  t->deleter(t);
  EXPECT_EQ(deleted, 1);
}

TEST(DLPack, ZeroDimAndEmptyTensorsRoundTrip) {
  tsr_tensor* scalar = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(nullptr, 0, TSR_DTYPE_INT64, kCpu, &scalar)), "");
  const int64_t seven = 7;
  ASSERT_EQ(Consume(tsr_tensor_copy_from_host(scalar, &seven, sizeof seven)), "");
  dl::DLManagedTensorVersioned* s = ExportV(scalar);
  EXPECT_EQ(s->dl_tensor.ndim, 0);
  EXPECT_NE(s->dl_tensor.shape, nullptr) << "never NULL, for consumers that test it first";
  EXPECT_NE(s->dl_tensor.strides, nullptr);
  EXPECT_EQ(s->dl_tensor.data, tsr_tensor_data_ptr(scalar));
  tsr_tensor* back = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_from_dlpack_versioned(C(s), nullptr, &back)), "");
  EXPECT_EQ(tsr_tensor_dim(back), 0);
  EXPECT_EQ(tsr_tensor_numel(back), 1);
  EXPECT_EQ(*static_cast<int64_t*>(tsr_tensor_data_ptr(back)), 7);
  tsr_tensor_release(back);
  tsr_tensor_release(scalar);

  const int64_t sizes[] = {0, 3};
  tsr_tensor* empty = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, kCpu, &empty)), "");
  dl::DLManagedTensor* e = ExportL(empty);
  EXPECT_EQ(e->dl_tensor.data, nullptr) << "the spec: NULL data for a tensor of no elements";
  EXPECT_THAT(std::vector<int64_t>(e->dl_tensor.shape, e->dl_tensor.shape + 2), ElementsAre(0, 3));
  ASSERT_EQ(Consume(tsr_tensor_from_dlpack(C(e), nullptr, &back)), "");
  EXPECT_THAT(Sizes(back), ElementsAre(0, 3));
  EXPECT_EQ(tsr_tensor_numel(back), 0);
  tsr_tensor_release(back);
  tsr_tensor_release(empty);
}

TEST(DLPack, AnExportOutlivesItsHandleAndItsDeleterRunsOnAnyThread) {
  int deleted = 0;
  std::vector<float> buffer(6, 1.0f);
  tsr_tensor* t = Wrap(buffer, {2, 3}, &deleted);
  dl::DLManagedTensorVersioned* v = ExportV(t);
  dl::DLManagedTensor* l = ExportL(t);
  tsr_tensor_release(t);
  EXPECT_EQ(deleted, 0);
  static_cast<float*>(v->dl_tensor.data)[0] = 2.0f;  // still valid memory
  l->deleter(l);
  EXPECT_EQ(deleted, 0);
  std::thread([v] { v->deleter(v); }).join();
  EXPECT_EQ(deleted, 1);
}

TEST(DLPack, ExportReadOnlyFlagIsCarriedAndRefusedByTesseraItself) {
  std::vector<float> buffer(2);
  int deleted = 0;
  tsr_tensor* t = Wrap(buffer, {2}, &deleted);
  tsr_dlpack_options options = {};
  options.struct_size = sizeof options;
  options.flags = 1;  // DLPACK_FLAG_BITMASK_READ_ONLY
  dl::DLManagedTensorVersioned* v = ExportV(t, &options);
  EXPECT_EQ(v->flags, dl::kFlagReadOnly);
  tsr_tensor* back = nullptr;
  EXPECT_THAT(Consume(tsr_tensor_from_dlpack_versioned(C(v), nullptr, &back)),
              HasSubstr("Tessera has no read-only tensors"));
  EXPECT_EQ(back, nullptr);
  v->deleter(v);
  tsr_tensor_release(t);
  EXPECT_EQ(deleted, 1);
}

TEST(DLPack, ExportRefusals) {
  ::DLManagedTensorVersioned* v = nullptr;
  ::DLManagedTensor* l = nullptr;
  const int64_t sizes[] = {2};
  tsr_tensor* meta = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 1, TSR_DTYPE_FLOAT32, {TSR_DEVICE_META, 0}, &meta)),
            "");
  EXPECT_THAT(Consume(tsr_tensor_to_dlpack_versioned(meta, nullptr, &v)),
              HasSubstr("tsr_tensor_to_dlpack_versioned: expected a tensor with memory (on cpu, "
                        "cuda, hip or a privateuse device), found float32[2] on meta"));
  EXPECT_THAT(Consume(tsr_tensor_to_dlpack(meta, nullptr, &l)), HasSubstr("a meta tensor"));
  tsr_tensor_release(meta);
  EXPECT_EQ(v, nullptr);
  EXPECT_EQ(l, nullptr);

  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 1, TSR_DTYPE_FLOAT32, kCpu, &t)), "");
  EXPECT_THAT(Consume(tsr_tensor_to_dlpack_versioned(nullptr, nullptr, &v)),
              HasSubstr("expected a tensor for 'tensor', got NULL"));
  EXPECT_THAT(Consume(tsr_tensor_to_dlpack_versioned(t, nullptr, nullptr)),
              HasSubstr("expected an output pointer, got NULL"));
  EXPECT_THAT(Consume(tsr_tensor_to_dlpack(t, nullptr, nullptr)),
              HasSubstr("expected an output pointer, got NULL"));
  tsr_dlpack_options options = {};
  options.struct_size = sizeof options;
  options.flags = 1;
  EXPECT_THAT(Consume(tsr_tensor_to_dlpack(t, &options, &l)),
              HasSubstr("expected options->flags 0 (an unversioned DLManagedTensor has no flags), "
                        "found 0x1"));
  options.flags = 2;
  EXPECT_THAT(Consume(tsr_tensor_to_dlpack_versioned(t, &options, &v)),
              HasSubstr("at most DLPACK_FLAG_BITMASK_READ_ONLY (0x1), found 0x2"));
  options.flags = 0;
  options.ext_device_type = TSR_DEVICE_PRIVATEUSE1;
  EXPECT_THAT(Consume(tsr_tensor_to_dlpack_versioned(t, &options, &v)),
              HasSubstr("expected options->ext_device_type 0 for an export"));
  options.ext_device_type = 0;
  options.reserved = 3;
  EXPECT_THAT(Consume(tsr_tensor_to_dlpack_versioned(t, &options, &v)),
              HasSubstr("expected options->reserved 0, found 3"));
  // A struct_size that ends before a field leaves it at its default.
  options.reserved = 0;
  options.flags = 7;
  options.struct_size = offsetof(tsr_dlpack_options, flags);
  EXPECT_EQ(Consume(tsr_tensor_to_dlpack(t, &options, &l)), "");
  reinterpret_cast<dl::DLManagedTensor*>(l)->deleter(reinterpret_cast<dl::DLManagedTensor*>(l));
  tsr_tensor_release(t);
}

// ---- Import ----

// Producer: a DLPack tensor over a float buffer of its own, counting its deleter's calls.
struct Producer {
  std::vector<float> buffer = std::vector<float>(12);
  std::vector<int64_t> shape = {3, 4};
  std::vector<int64_t> strides = {4, 1};
  int deleted = 0;
  dl::DLManagedTensorVersioned v = {};
  dl::DLManagedTensor l = {};

  Producer() {
    for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
    dl::DLTensor d = {};
    d.data = buffer.data();
    d.device = {dl::kDLCPU, 0};
    d.ndim = 2;
    d.dtype = {dl::kDLFloat, 32, 1};
    d.shape = shape.data();
    d.strides = strides.data();
    v.version = {1, 0};
    v.manager_ctx = this;
    v.deleter = [](dl::DLManagedTensorVersioned* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deleted;
    };
    v.dl_tensor = d;
    l.manager_ctx = this;
    l.deleter = [](dl::DLManagedTensor* self) {
      ++static_cast<Producer*>(self->manager_ctx)->deleted;
    };
    l.dl_tensor = d;
  }
  // Both forms get the same change to their DLTensor.
  template <typename F>
  void Edit(F f) {
    f(v.dl_tensor);
    f(l.dl_tensor);
  }
};

TEST(DLPack, ImportedDeleterRunsOnceWhenTheLastViewGoes) {
  for (bool tensor_first : {true, false}) {
    Producer p;
    tsr_tensor* t = nullptr;
    ASSERT_EQ(Consume(tsr_tensor_from_dlpack_versioned(C(&p.v), nullptr, &t)), "");
    EXPECT_EQ(tsr_tensor_data_ptr(t), p.buffer.data());
    tsr_tensor* view = Transpose(t);
    tsr_tensor* narrow = AsStrided(t, {2}, {1}, 3);
    tsr_tensor_release(tensor_first ? t : view);
    tsr_tensor_release(narrow);
    EXPECT_EQ(p.deleted, 0);
    tsr_tensor_release(tensor_first ? view : t);
    EXPECT_EQ(p.deleted, 1);
  }
  Producer p;
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_from_dlpack(C(&p.l), nullptr, &t)), "");
  // Writes both ways.
  p.buffer[5] = 50;
  float values[12];
  ASSERT_EQ(Consume(tsr_tensor_copy_to_host(t, values, sizeof values)), "");
  EXPECT_EQ(values[5], 50);
  values[0] = -1;
  ASSERT_EQ(Consume(tsr_tensor_copy_from_host(t, values, sizeof values)), "");
  EXPECT_EQ(p.buffer[0], -1);
  tsr_tensor_release(t);
  EXPECT_EQ(p.deleted, 1);
}

TEST(DLPack, ImportHonoursByteOffsetNullStridesAndANullDeleter) {
  {
    Producer p;  // byte_offset of whole elements: it becomes the storage offset
    p.Edit([](dl::DLTensor& d) {
      d.byte_offset = 2 * sizeof(float);
      d.shape[0] = 2;
    });
    tsr_tensor* t = nullptr;
    ASSERT_EQ(Consume(tsr_tensor_from_dlpack_versioned(C(&p.v), nullptr, &t)), "");
    EXPECT_EQ(tsr_tensor_data_ptr(t), p.buffer.data() + 2);
    EXPECT_EQ(tsr_tensor_storage_offset(t), 2);
    tsr_tensor_release(t);
    EXPECT_EQ(p.deleted, 1);
  }
  {
    // A byte_offset that is not a whole number of elements from data (data itself misaligned):
    // the view starts at data + byte_offset, which is aligned.
    std::vector<double> storage(4);
    char* base = reinterpret_cast<char*>(storage.data()) + 2;
    Producer p;
    p.Edit([&](dl::DLTensor& d) {
      d.data = base;
      d.byte_offset = 6;
      d.shape[0] = 1;
      d.shape[1] = 2;
      d.strides = nullptr;  // compact row-major
    });
    tsr_tensor* t = nullptr;
    ASSERT_EQ(Consume(tsr_tensor_from_dlpack(C(&p.l), nullptr, &t)), "");
    EXPECT_EQ(tsr_tensor_data_ptr(t), base + 6);
    EXPECT_EQ(tsr_tensor_storage_offset(t), 0);
    EXPECT_THAT(Strides(t), ElementsAre(2, 1));
    tsr_tensor_release(t);
    EXPECT_EQ(p.deleted, 1);
  }
  {
    Producer p;  // the spec allows a NULL deleter: nothing to call
    p.v.deleter = nullptr;
    p.v.flags = dl::kFlagIsCopied;  // accepted: the memory is then Tessera's alone
    tsr_tensor* t = nullptr;
    ASSERT_EQ(Consume(tsr_tensor_from_dlpack_versioned(C(&p.v), nullptr, &t)), "");
    tsr_tensor_release(t);
    EXPECT_EQ(p.deleted, 0);
  }
  {
    Producer p;  // empty: data may be NULL
    p.Edit([](dl::DLTensor& d) {
      d.data = nullptr;
      d.shape[1] = 0;
    });
    tsr_tensor* t = nullptr;
    ASSERT_EQ(Consume(tsr_tensor_from_dlpack_versioned(C(&p.v), nullptr, &t)), "");
    EXPECT_EQ(tsr_tensor_numel(t), 0);
    tsr_tensor_release(t);
    EXPECT_EQ(p.deleted, 1);
  }
  {
    Producer p;  // newer minor versions are read (they only add enumerators)
    p.v.version = {1, 7};
    p.Edit([](dl::DLTensor& d) { d.device = {dl::kDLCUDAHost, 0}; });  // pinned host memory
    tsr_tensor* t = nullptr;
    ASSERT_EQ(Consume(tsr_tensor_from_dlpack_versioned(C(&p.v), nullptr, &t)), "");
    EXPECT_EQ(tsr_tensor_device(t).type, TSR_DEVICE_CPU);
    tsr_tensor_release(t);
  }
}

struct Refusal {
  const char* what;
  void (*edit)(Producer&);
  const char* message;
  bool versioned_only = false;
};

const Refusal kRefusals[] = {
    {"major version",
     [](Producer& p) {
       p.v.version = {2, 3};
     },
     "expected a DLPack 1.x managed tensor (this runtime implements DLPack 1.1), found version "
     "2.3",
     true},
    {"read-only", [](Producer& p) { p.v.flags = dl::kFlagReadOnly | dl::kFlagIsCopied; },
     "expected a writable DLPack tensor, found flags 0x3 with DLPACK_FLAG_BITMASK_READ_ONLY set",
     true},
    {"unknown flag", [](Producer& p) { p.v.flags = 0x10; },
     "expected only the flags of DLPack 1.1 (READ_ONLY 0x1, IS_COPIED 0x2, "
     "IS_SUBBYTE_TYPE_PADDED 0x4), found flags 0x10",
     true},
    {"lanes", [](Producer& p) { p.Edit([](dl::DLTensor& d) { d.dtype.lanes = 4; }); },
     "expected dl_tensor.dtype.lanes 1, found 4"},
    {"complex", [](Producer& p) { p.Edit([](dl::DLTensor& d) {
                                    d.dtype = {5, 64, 1};
                                  }); },
     "expected a dl_tensor.dtype.code Tessera has (kDLBool, kDLInt, kDLUInt, kDLFloat, "
     "kDLBfloat), found kDLComplex (5) with 64 bits"},
    {"float8", [](Producer& p) { p.Edit([](dl::DLTensor& d) {
                                   d.dtype = {10, 8, 1};
                                 }); },
     "found kDLFloat8_e4m3fn (10) with 8 bits"},
    {"unknown code", [](Producer& p) { p.Edit([](dl::DLTensor& d) {
                                         d.dtype = {99, 8, 1};
                                       }); },
     "found unknown type code 99 with 8 bits"},
    {"float bits", [](Producer& p) { p.Edit([](dl::DLTensor& d) {
                                       d.dtype = {2, 8, 1};
                                     }); },
     "expected 16, 32 or 64 bits for dtype code kDLFloat (2), found 8"},
    {"int bits", [](Producer& p) { p.Edit([](dl::DLTensor& d) {
                                     d.dtype = {0, 128, 1};
                                   }); },
     "expected 8, 16, 32 or 64 bits for dtype code kDLInt (0), found 128"},
    {"bool bits", [](Producer& p) { p.Edit([](dl::DLTensor& d) {
                                      d.dtype = {6, 1, 1};
                                    }); },
     "expected 8 bits for dtype code kDLBool (6), found 1"},
    {"negative ndim", [](Producer& p) { p.Edit([](dl::DLTensor& d) { d.ndim = -1; }); },
     "expected dl_tensor.ndim >= 0, found -1"},
    {"NULL shape", [](Producer& p) { p.Edit([](dl::DLTensor& d) { d.shape = nullptr; }); },
     "expected dl_tensor.shape to point at 2 sizes, found NULL"},
    {"negative size", [](Producer& p) { p.shape[1] = -4; },
     "expected non-negative sizes, found shape [3, -4] (size -4 at dimension 1)"},
    {"numel overflow",
     [](Producer& p) {
       p.shape[0] = std::numeric_limits<int64_t>::max();
       p.shape[1] = 2;
     },
     "expected a shape whose element count fits in int64, found [9223372036854775807, 2]"},
    {"span overflow",
     [](Producer& p) {
       p.shape[0] = int64_t{1} << 40;
       p.strides[0] = int64_t{1} << 40;
     },
     "expected sizes and strides whose memory span fits in int64 bytes, found shape "
     "[1099511627776, 4] and strides [1099511627776, 1] of float32"},
    {"negative stride", [](Producer& p) { p.strides[0] = -4; },
     "expected non-negative strides (Tessera's views have them), found strides [-4, 1] (stride "
     "-4 at dimension 0)"},
    {"NULL data", [](Producer& p) { p.Edit([](dl::DLTensor& d) { d.data = nullptr; }); },
     "expected dl_tensor.data to point at 12 elements of float32, found NULL"},
    {"misaligned", [](Producer& p) { p.Edit([](dl::DLTensor& d) { d.byte_offset = 2; }); },
     "expected element 0 (data + byte_offset) aligned to 4 bytes for float32"},
    {"byte_offset overflow",
     [](Producer& p) {
       p.Edit([](dl::DLTensor& d) { d.byte_offset = std::numeric_limits<uint64_t>::max() - 3; });
     },
     "expected data + byte_offset + 48 bytes within the address space"},
    {"cpu device_id",
     [](Producer& p) { p.Edit([](dl::DLTensor& d) {
                         d.device = {dl::kDLCPU, 1};
                       }); },
     "expected device_id 0 for host memory (kDLCPU (1)), found 1"},
    {"opencl", [](Producer& p) { p.Edit([](dl::DLTensor& d) {
                                   d.device = {dl::kDLOpenCL, 0};
                                 }); },
     "expected a DLPack device type Tessera has (kDLCPU, kDLCUDA, kDLROCM, kDLExtDev, or pinned "
     "host memory: kDLCUDAHost, kDLROCMHost), found kDLOpenCL (4)"},
    {"unknown device", [](Producer& p) { p.Edit([](dl::DLTensor& d) {
                                           d.device = {42, 0};
                                         }); },
     "found unknown device type 42"},
    {"negative device_id",
     [](Producer& p) { p.Edit([](dl::DLTensor& d) {
                         d.device = {dl::kDLROCM, -1};
                       }); },
     "expected a non-negative device_id, found kDLROCM (10) device -1"},
};

TEST(DLPack, ImportRefusalsNameExpectedAndFoundAndLeaveTheTensorTheCallers) {
  for (const Refusal& r : kRefusals) {
    for (bool versioned : {true, false}) {
      if (r.versioned_only && !versioned) continue;
      SCOPED_TRACE(testing::Message() << r.what << (versioned ? " (versioned)" : " (legacy)"));
      Producer p;
      r.edit(p);
      tsr_tensor* t = reinterpret_cast<tsr_tensor*>(&p);  // overwritten with NULL on error
      const std::string error =
          Consume(versioned ? tsr_tensor_from_dlpack_versioned(C(&p.v), nullptr, &t)
                            : tsr_tensor_from_dlpack(C(&p.l), nullptr, &t));
      EXPECT_THAT(error, HasSubstr(r.message));
      EXPECT_THAT(error, HasSubstr(versioned ? "tsr_tensor_from_dlpack_versioned: "
                                             : "tsr_tensor_from_dlpack: "));
      EXPECT_EQ(t, nullptr);
      EXPECT_EQ(p.deleted, 0) << "on error the managed tensor stays the caller's";
    }
  }
}

TEST(DLPack, ImportArgumentRefusals) {
  Producer p;
  tsr_tensor* t = nullptr;
  EXPECT_THAT(Consume(tsr_tensor_from_dlpack_versioned(nullptr, nullptr, &t)),
              HasSubstr("expected a managed tensor for 'managed', got NULL"));
  EXPECT_THAT(Consume(tsr_tensor_from_dlpack(C(&p.l), nullptr, nullptr)),
              HasSubstr("expected an output pointer, got NULL"));
  tsr_dlpack_options options = {};
  options.struct_size = sizeof options;
  options.flags = 1;
  EXPECT_THAT(Consume(tsr_tensor_from_dlpack(C(&p.l), &options, &t)),
              HasSubstr("expected options->flags 0 (flags are set on exports only"));
  options.flags = 0;
  options.ext_device_type = TSR_DEVICE_CUDA;
  p.Edit([](dl::DLTensor& d) { d.device = {dl::kDLExtDev, 0}; });
  EXPECT_THAT(Consume(tsr_tensor_from_dlpack(C(&p.l), &options, &t)),
              HasSubstr("expected options->ext_device_type 0 or a privateuse device type (3..5), "
                        "found 1"));
  EXPECT_EQ(p.deleted, 0);
}

// ---- Devices ----

// A privateuse device whose memory is host memory (so the test can look at it), two devices.
struct FakeDevice {
  int allocations = 0;
  int frees = 0;
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
tsr_error* FakeCopy(void*, int32_t, void* dst, const void* src, size_t n) {
  std::memcpy(dst, src, n);
  return nullptr;
}
tsr_error* FakeD2D(void*, int32_t, void* dst, int32_t, const void* src, size_t n) {
  std::memcpy(dst, src, n);
  return nullptr;
}
tsr_error* FakeSync(void*, int32_t) { return nullptr; }

tsr_registration* RegisterFake(FakeDevice* fake, int32_t type) {
  tsr_device_interface iface = {};
  iface.struct_size = sizeof iface;
  iface.device_type = type;
  iface.context = fake;
  iface.device_count = &FakeCount;
  iface.allocate = &FakeAllocate;
  iface.free = &FakeFree;
  iface.copy_host_to_device = &FakeCopy;
  iface.copy_device_to_host = &FakeCopy;
  iface.copy_device_to_device = &FakeD2D;
  iface.synchronize = &FakeSync;
  tsr_registration* reg = nullptr;
  EXPECT_EQ(Consume(tsr_device_register(&iface, &reg)), "");
  return reg;
}

TEST(DLPackDevice, PrivateUseTensorsTravelAsExtDevWithTheirIndex) {
  ASSERT_EQ(Consume(tsr_device_rename(TSR_DEVICE_PRIVATEUSE1, S("dlpdev"))), "");
  FakeDevice fake;
  tsr_registration* reg = RegisterFake(&fake, TSR_DEVICE_PRIVATEUSE1);
  const int64_t sizes[] = {2, 2};
  tsr_tensor* t = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, {TSR_DEVICE_PRIVATEUSE1, 1}, &t)),
            "");
  const float in[4] = {1, 2, 3, 4};
  ASSERT_EQ(Consume(tsr_tensor_copy_from_host(t, in, sizeof in)), "");

  dl::DLManagedTensorVersioned* v = ExportV(t);
  EXPECT_EQ(v->dl_tensor.device.device_type, dl::kDLExtDev);
  EXPECT_EQ(v->dl_tensor.device.device_id, 1);
  EXPECT_EQ(v->dl_tensor.data, tsr_tensor_data_ptr(t));
  tsr_tensor* back = nullptr;
  ASSERT_EQ(Consume(tsr_tensor_from_dlpack_versioned(C(v), nullptr, &back)), "");
  EXPECT_EQ(tsr_tensor_device(back).type, TSR_DEVICE_PRIVATEUSE1);
  EXPECT_EQ(tsr_tensor_device(back).index, 1);
  EXPECT_EQ(tsr_tensor_data_ptr(back), tsr_tensor_data_ptr(t));
  float out[4] = {};
  ASSERT_EQ(Consume(tsr_tensor_copy_to_host(back, out, sizeof out)), "");  // through the plugin
  EXPECT_THAT(out, ElementsAre(1, 2, 3, 4));
  tsr_tensor_release(t);
  EXPECT_EQ(fake.frees, 0) << "the import holds the export, which holds the memory";
  tsr_tensor_release(back);
  EXPECT_EQ(fake.frees, 1);

  // An index the device does not have, and a second privateuse type (ambiguous without the
  // option).
  Producer p;
  p.Edit([](dl::DLTensor& d) { d.device = {dl::kDLExtDev, 2}; });
  EXPECT_THAT(Consume(tsr_tensor_from_dlpack(C(&p.l), nullptr, &back)),
              HasSubstr("the DLPack tensor is on kDLExtDev (12) device 2, which is Tessera's "
                        "dlpdev:2, but dlpdev has 2 device(s)"));
  p.Edit([](dl::DLTensor& d) { d.device = {dl::kDLExtDev, 0}; });
  FakeDevice other;
  tsr_registration* reg3 = RegisterFake(&other, TSR_DEVICE_PRIVATEUSE3);
  EXPECT_THAT(Consume(tsr_tensor_from_dlpack(C(&p.l), nullptr, &back)),
              HasSubstr("several privateuse device types are registered (dlpdev, "));
  tsr_dlpack_options options = {};
  options.struct_size = sizeof options;
  options.ext_device_type = TSR_DEVICE_PRIVATEUSE3;
  ASSERT_EQ(Consume(tsr_tensor_from_dlpack(C(&p.l), &options, &back)), "");
  EXPECT_EQ(tsr_tensor_device(back).type, TSR_DEVICE_PRIVATEUSE3);
  EXPECT_EQ(tsr_tensor_data_ptr(back), p.buffer.data());
  tsr_tensor_release(back);
  EXPECT_EQ(p.deleted, 1);
  EXPECT_EQ(other.frees, 0) << "imported memory is the producer's to free, not the plugin's";
  tsr_registration_release(reg3);

  // Device memory of an unregistered device: no new imports, and no export of what remains.
  ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, {TSR_DEVICE_PRIVATEUSE1, 0}, &t)),
            "");
  tsr_registration_release(reg);
  Producer q;
  q.Edit([](dl::DLTensor& d) { d.device = {dl::kDLExtDev, 0}; });
  EXPECT_THAT(Consume(tsr_tensor_from_dlpack(C(&q.l), nullptr, &back)),
              HasSubstr("the DLPack tensor is on kDLExtDev device 0, but no plugin provides a "
                        "privateuse device"));
  options.ext_device_type = TSR_DEVICE_PRIVATEUSE1;
  EXPECT_THAT(Consume(tsr_tensor_from_dlpack(C(&q.l), &options, &back)),
              HasSubstr("which is Tessera's dlpdev:0, but no plugin provides dlpdev devices"));
  ::DLManagedTensor* l = nullptr;
  EXPECT_THAT(Consume(tsr_tensor_to_dlpack(t, nullptr, &l)),
              HasSubstr("tsr_tensor_to_dlpack: exporting: the dlpdev:0 tensor belongs to"));
  EXPECT_EQ(q.deleted, 0);
  tsr_tensor_release(t);
  EXPECT_EQ(fake.frees, 2);
}

TEST(DLPackDevice, GpuTensorsTravelAsCudaOrRocm) {
  ASSERT_EQ(Consume(tsr_plugin_load_default()), "");
  bool ran = false;
  for (auto [type, code] :
       {std::pair{TSR_DEVICE_CUDA, dl::kDLCUDA}, std::pair{TSR_DEVICE_HIP, dl::kDLROCM}}) {
    int32_t count = 0;
    ASSERT_EQ(Consume(tsr_device_count(type, &count)), "");
    Producer p;
    p.Edit([code = code](dl::DLTensor& d) { d.device = {code, 0}; });
    tsr_tensor* t = nullptr;
    if (count == 0) {
      // Without its plugin, or with its plugin on a machine without the device (CI), an
      // import names the device and which of the two it is.
      bool plugin_loaded = false;
      const tsr_load_report* const* reports = nullptr;
      size_t n = 0;
      tsr_load_reports(&reports, &n);
      for (size_t i = 0; i < n; ++i) {
        plugin_loaded |= reports[i]->loaded && reports[i]->device_type == type;
      }
      const std::string name = type == TSR_DEVICE_CUDA ? "cuda" : "hip";
      EXPECT_THAT(Consume(tsr_tensor_from_dlpack(C(&p.l), nullptr, &t)),
                  HasSubstr(std::string(type == TSR_DEVICE_CUDA ? "kDLCUDA (2)" : "kDLROCM (10)") +
                            " device 0, which is Tessera's " + name + ":0, but " +
                            (plugin_loaded ? name + " has 0 devices on this machine"
                                           : "no plugin provides " + name + " devices")));
      continue;
    }
    ran = true;
    const tsr_device dev{static_cast<int32_t>(type), count - 1};
    const int64_t sizes[] = {3, 2};
    ASSERT_EQ(Consume(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, dev, &t)), "");
    const float in[6] = {1, 2, 3, 4, 5, 6};
    ASSERT_EQ(Consume(tsr_tensor_copy_from_host(t, in, sizeof in)), "");
    tsr_tensor* tt = Transpose(t);
    dl::DLManagedTensor* l = ExportL(tt);
    EXPECT_EQ(l->dl_tensor.device.device_type, code);
    EXPECT_EQ(l->dl_tensor.device.device_id, count - 1);
    EXPECT_EQ(l->dl_tensor.data, tsr_tensor_data_ptr(t));
    tsr_tensor* back = nullptr;
    ASSERT_EQ(Consume(tsr_tensor_from_dlpack(C(l), nullptr, &back)), "");
    EXPECT_EQ(tsr_tensor_device(back).type, type);
    EXPECT_EQ(tsr_tensor_data_ptr(back), tsr_tensor_data_ptr(t));
    float out[6] = {};
    ASSERT_EQ(Consume(tsr_tensor_copy_to_host(back, out, sizeof out)), "");
    EXPECT_THAT(out, ElementsAre(1, 3, 5, 2, 4, 6));
    tsr_tensor_release(back);
    tsr_tensor_release(tt);
    tsr_tensor_release(t);
  }
  if (!ran) GTEST_SKIP() << "no cuda or hip device (the import refusals without one were checked)";
}

}  // namespace
