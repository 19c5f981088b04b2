// How the C handles map onto the runtime's C++ objects. Internal to runtime/.
//
// tsr_tensor* is a TensorImpl* (its intrusive count is the handle's count); tsr_error is a
// small struct owning a code and a message.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/layout.h"
#include "core/tensor.h"
#include "dispatcher/op_registry.h"
#include "tessera/c/common.h"
#include "tessera/c/op.h"

struct tsr_error {
  tsr_code code;
  std::string message;
};

// A registration handed to C: releasing it undoes the registration. Shared with the plugin
// record when a plugin registered it, so that unloading the plugin undoes it too.
struct tsr_registration {
  std::shared_ptr<tessera::RegistrationHandle> handle;
};

namespace tessera {
namespace capi {

static_assert(sizeof(Tensor) == sizeof(tsr_tensor*), "a Tensor is one pointer (lists are shared)");

// The C enums are the core's values, so entry points cast between them without a table.
// tsr_dtype and ScalarType are both generated from the one dtype list, TSR_FOR_EACH_DTYPE
// (core/dtype.h static_asserts each value); the device types are restated in the C header,
// which may include nothing.
template <typename C, typename Core>
constexpr bool Same(C c, Core core) {
  return static_cast<int64_t>(c) == static_cast<int64_t>(core);
}
static_assert(Same(TSR_DEVICE_CPU, DeviceType::kCPU) && Same(TSR_DEVICE_CUDA, DeviceType::kCUDA) &&
                  Same(TSR_DEVICE_HIP, DeviceType::kHIP) &&
                  Same(TSR_DEVICE_PRIVATEUSE1, DeviceType::kPrivateUse1) &&
                  Same(TSR_DEVICE_PRIVATEUSE2, DeviceType::kPrivateUse2) &&
                  Same(TSR_DEVICE_PRIVATEUSE3, DeviceType::kPrivateUse3) &&
                  Same(TSR_DEVICE_META, DeviceType::kMeta) && kNumDeviceTypes == 7,
              "tsr_device_type must equal DeviceType (core/device.h)");
static_assert(Same(TSR_LAYOUT_STRIDED, Layout::kStrided) && kNumLayouts == 1,
              "tsr_layout must equal Layout (core/layout.h)");
static_assert(Same(TSR_MEMORY_FORMAT_CONTIGUOUS, MemoryFormat::kContiguous) &&
                  Same(TSR_MEMORY_FORMAT_PRESERVE, MemoryFormat::kPreserve) &&
                  Same(TSR_MEMORY_FORMAT_CHANNELS_LAST, MemoryFormat::kChannelsLast) &&
                  Same(TSR_MEMORY_FORMAT_CHANNELS_LAST_3D, MemoryFormat::kChannelsLast3d) &&
                  kNumMemoryFormats == 4,
              "tsr_memory_format must equal MemoryFormat (core/layout.h)");

inline Stack* Unwrap(tsr_stack* s) {
  return s == nullptr ? nullptr : &reinterpret_cast<Stack*>(s)->Materialized();
}
// A stack read or written through the ABI is a kernel's or a caller's: an unboxed call's kernel
// stack fills itself here, at its first use (Stack::Materialized).
inline const Stack* Unwrap(const tsr_stack* s) {
  return s == nullptr ? nullptr : &reinterpret_cast<const Stack*>(s)->Materialized();
}
inline tsr_stack* Wrap(Stack* s) { return reinterpret_cast<tsr_stack*>(s); }
inline OperatorHandle Unwrap(const tsr_op* op) {
  return OperatorHandle::FromEntry(
      reinterpret_cast<internal::OperatorEntry*>(const_cast<tsr_op*>(op)));
}
inline const tsr_op* Wrap(const OperatorHandle& op) {
  return reinterpret_cast<const tsr_op*>(op.entry());
}

// View reads a C string (NULL data is the empty string); valid as long as the C string. For
// strings the runtime made itself or has checked: a caller's string goes through ReadString.
inline std::string_view View(tsr_string s) {
  return s.data ? std::string_view(s.data, s.size) : std::string_view();
}

// The longest string the runtime reads from a caller (a name, a schema, a path, a message, a
// string argument): 1 MiB. A larger size is taken for a wrong one (an uninitialised length, -1
// cast to size_t): reading it would copy or scan far past the caller's text, or ask for
// terabytes, so nothing of it is read.
inline constexpr size_t kMaxCallerString = size_t{1} << 20;

// ReadString reads a string a caller passed to `fn` as `what` (NULL data is the empty string,
// as View), or refuses a size beyond kMaxCallerString with INVALID_ARGUMENT naming both.
absl::StatusOr<std::string_view> ReadString(tsr_string s, const char* fn, const char* what);

// ToDeviceType / ToDevice validate device arguments; `fn` names the entry point in the error.
absl::StatusOr<DeviceType> ToDeviceType(int32_t type, const char* fn);
absl::StatusOr<Device> ToDevice(tsr_device device, const char* fn);

// ToC converts a Scalar to its C form. Inline: every packed call converts its Scalars, and a
// struct returned through memory and copied on with wider loads than its fields were stored
// with stalls the copy (a store that cannot be forwarded).
inline tsr_scalar ToC(const Scalar& s) {
  tsr_scalar out{};
  if (s.is_floating_point()) {
    out.kind = TSR_SCALAR_DOUBLE;
    out.d = s.to_double();
  } else {
    out.kind = s.is_bool() ? TSR_SCALAR_BOOL : TSR_SCALAR_INT;
    out.i = s.to_int();
  }
  return out;
}

// CopyToBuffer writes `text` into buf (NUL-terminated, truncated to size) and returns the
// length of the whole text, as the *_format functions promise.
size_t CopyToBuffer(const std::string& text, char* buf, size_t size);

// StatusFrom takes ownership of a C error and turns it into a Status.
absl::Status StatusFrom(tsr_error* error);

inline TensorImpl* Unwrap(tsr_tensor* t) { return reinterpret_cast<TensorImpl*>(t); }
inline const TensorImpl* Unwrap(const tsr_tensor* t) {
  return reinterpret_cast<const TensorImpl*>(t);
}
// Wrap hands the tensor's reference to the C caller.
inline tsr_tensor* Wrap(Tensor t) {
  return reinterpret_cast<tsr_tensor*>(std::move(t).TakeImpl().Leak());
}
// Borrow views a handle as a Tensor that holds its own (extra) reference.
inline Tensor Borrow(const tsr_tensor* t) {
  return Tensor(Ref<TensorImpl>::Share(const_cast<TensorImpl*>(Unwrap(t))));
}

// RawEnum reads a C enum argument as the 32-bit integer a C caller may have put there. Using
// the enum value directly would be undefined behaviour in C++ when it is outside the
// enumerators' range (e.g. -1), and bad input must get an error, not UB.
template <typename E>
int32_t RawEnum(const E& value) {
  static_assert(std::is_enum_v<E> && sizeof(E) == sizeof(int32_t), "32-bit C enums only");
  int32_t raw;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}

tsr_error* MakeError(absl::StatusCode code, std::string message);
void ReleaseError(tsr_error* error);
inline tsr_error* ToError(const absl::Status& status) {
  return status.ok() ? nullptr : MakeError(status.code(), std::string(status.message()));
}

// Guard runs the body of a C entry point: an exception never crosses the ABI, it becomes an
// INTERNAL error naming the function.
template <typename F>
tsr_error* Guard(const char* function, F&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    return MakeError(absl::StatusCode::kInternal,
                     std::string(function) + ": unexpected exception: " + e.what());
  } catch (...) {
    return MakeError(absl::StatusCode::kInternal,
                     std::string(function) + ": unexpected non-standard exception");
  }
}

}  // namespace capi
}  // namespace tessera
