// The DLPack structs and enumerators that runtime/dlpack.cc reads and writes: a mirror,
// field for field, of DLPack 1.1's include/dlpack/dlpack.h (github.com/dmlc/dlpack).
//
// Why a mirror and not <dlpack/dlpack.h>: Debian 12 ships DLPack 0.6 (libdlpack-dev), which
// has neither DLManagedTensorVersioned nor DLPackVersion nor kDLBool, and the runtime must
// build on it. The mirror lives in namespace tessera::dlpack, so that it never defines the
// global `struct DLManagedTensor` / `struct DLManagedTensorVersioned` that the public header
// (tessera/c/dlpack.h) only declares: an application's own dlpack.h defines those. The layout
// is the spec's, checked below and, where Debian's 0.6 header is installed, field by field
// against it (runtime/tests/dlpack_layout_test.cc; 0.6 and 1.x share DLTensor and
// DLManagedTensor).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera {
namespace dlpack {

// The DLPack version this mirror follows. Tessera stamps it on what it exports, as producers
// stamp their header's; every value it writes exists since 1.0, so a 1.0 consumer reads all of
// it (the spec: a newer minor only adds enumerators).
inline constexpr uint32_t kMajorVersion = 1;
inline constexpr uint32_t kMinorVersion = 1;

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

// DLDeviceType (an int32_t enum in the spec). Only the values Tessera maps are named; the rest
// are listed for error messages (DeviceTypeName in dlpack.cc).
enum DLDeviceType : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11,
  kDLExtDev = 12,
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
  kDLTrn = 18,
};

struct DLDevice {
  int32_t device_type;  // a DLDeviceType
  int32_t device_id;
};

// DLDataTypeCode (stored as uint8_t in DLDataType). 7..17 are DLPack 1.1's float8/6/4 types,
// which Tessera has not.
enum DLDataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLOpaqueHandle = 3,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,  // since DLPack 0.8
};

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL: compact row-major (legacy; 1.x requires strides)
  uint64_t byte_offset;
};

// DLManagedTensor: the legacy (pre-1.0, unversioned) managed tensor; Python capsule name
// "dltensor", "used_dltensor" once consumed.
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// DLManagedTensorVersioned: DLPack 1.x; capsule name "dltensor_versioned".
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

// DLManagedTensorVersioned::flags bits.
inline constexpr uint64_t kFlagReadOnly = uint64_t{1} << 0;
inline constexpr uint64_t kFlagIsCopied = uint64_t{1} << 1;
inline constexpr uint64_t kFlagIsSubbyteTypePadded = uint64_t{1} << 2;  // since 1.1
inline constexpr uint64_t kKnownFlags = kFlagReadOnly | kFlagIsCopied | kFlagIsSubbyteTypePadded;

// The spec's layout on the LP64 targets Tessera builds for (the ABI lock's offsets are LP64's).
static_assert(sizeof(void*) == 8, "the offsets below are LP64's");
static_assert(sizeof(DLPackVersion) == 8, "DLPackVersion");
static_assert(sizeof(DLDevice) == 8 && sizeof(DLDataType) == 4, "DLDevice, DLDataType");
static_assert(offsetof(DLTensor, data) == 0 && offsetof(DLTensor, device) == 8 &&
                  offsetof(DLTensor, ndim) == 16 && offsetof(DLTensor, dtype) == 20 &&
                  offsetof(DLTensor, shape) == 24 && offsetof(DLTensor, strides) == 32 &&
                  offsetof(DLTensor, byte_offset) == 40 && sizeof(DLTensor) == 48,
              "DLTensor");
static_assert(offsetof(DLManagedTensor, manager_ctx) == 48 &&
                  offsetof(DLManagedTensor, deleter) == 56 && sizeof(DLManagedTensor) == 64,
              "DLManagedTensor");
static_assert(offsetof(DLManagedTensorVersioned, manager_ctx) == 8 &&
                  offsetof(DLManagedTensorVersioned, deleter) == 16 &&
                  offsetof(DLManagedTensorVersioned, flags) == 24 &&
                  offsetof(DLManagedTensorVersioned, dl_tensor) == 32 &&
                  sizeof(DLManagedTensorVersioned) == 80,
              "DLManagedTensorVersioned");

}  // namespace dlpack
}  // namespace tessera
