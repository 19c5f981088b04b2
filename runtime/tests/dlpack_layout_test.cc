// The runtime's DLPack mirror (src/dlpack_spec.h) against Debian's <dlpack/dlpack.h>
// (libdlpack-dev, DLPack 0.6) where it is installed: the structs both have (DLTensor,
// DLManagedTensor) field by field, and the enumerators both have. The versioned struct is newer
// than that header; its layout is checked by the mirror's own static_asserts.
#include <cstddef>

#include "gtest/gtest.h"
#include "runtime/dlpack_spec.h"

#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>

namespace {

namespace ours = tessera::dlpack;

#define SAME_FIELD(T, f)                                                                          \
  static_assert(offsetof(::T, f) == offsetof(ours::T, f) && sizeof(::T::f) == sizeof(ours::T::f), \
                #T "." #f " differs from Debian's dlpack.h")
SAME_FIELD(DLTensor, data);
SAME_FIELD(DLTensor, device);
SAME_FIELD(DLTensor, ndim);
SAME_FIELD(DLTensor, dtype);
SAME_FIELD(DLTensor, shape);
SAME_FIELD(DLTensor, strides);
SAME_FIELD(DLTensor, byte_offset);
SAME_FIELD(DLManagedTensor, dl_tensor);
SAME_FIELD(DLManagedTensor, manager_ctx);
SAME_FIELD(DLManagedTensor, deleter);
SAME_FIELD(DLDevice, device_type);
SAME_FIELD(DLDevice, device_id);
SAME_FIELD(DLDataType, code);
SAME_FIELD(DLDataType, bits);
SAME_FIELD(DLDataType, lanes);
#undef SAME_FIELD
static_assert(sizeof(::DLTensor) == sizeof(ours::DLTensor), "DLTensor");
static_assert(sizeof(::DLManagedTensor) == sizeof(ours::DLManagedTensor), "DLManagedTensor");

#define SAME_ENUM(e) static_assert(static_cast<int>(::e) == static_cast<int>(ours::e), #e)
SAME_ENUM(kDLCPU);
SAME_ENUM(kDLCUDA);
SAME_ENUM(kDLCUDAHost);
SAME_ENUM(kDLOpenCL);
SAME_ENUM(kDLVulkan);
SAME_ENUM(kDLMetal);
SAME_ENUM(kDLVPI);
SAME_ENUM(kDLROCM);
SAME_ENUM(kDLROCMHost);
SAME_ENUM(kDLExtDev);
SAME_ENUM(kDLCUDAManaged);
SAME_ENUM(kDLInt);
SAME_ENUM(kDLUInt);
SAME_ENUM(kDLFloat);
SAME_ENUM(kDLOpaqueHandle);
SAME_ENUM(kDLBfloat);
SAME_ENUM(kDLComplex);
#undef SAME_ENUM

TEST(DLPackLayout, MatchesTheInstalledDlpackHeader) {
  SUCCEED() << "DLPack " << DLPACK_VERSION << ": checked at compile time";
}

}  // namespace
#else
TEST(DLPackLayout, MatchesTheInstalledDlpackHeader) {
  GTEST_SKIP() << "<dlpack/dlpack.h> is not installed (Debian: libdlpack-dev); the mirror's own "
                  "static_asserts still hold it to the spec's layout";
}
#endif
