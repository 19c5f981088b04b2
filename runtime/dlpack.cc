// tsr_tensor_to_dlpack*, tsr_tensor_from_dlpack*: DLPack exchange without copies.
//
// Note [DLPack ownership]
// Export: the managed tensor is one allocation holding the DLPack struct, the tensor's shape and
// strides, and a reference to the tensor's storage (not to the tsr_tensor handle: an out= op may
// resize a handle and replace its storage, which must not free memory a consumer still reads).
// Its deleter drops that reference and frees the allocation; the storage keeps device memory's
// plugin loaded, as every tensor does.
// Import: the managed tensor becomes the deleter context of a storage wrapped around its memory,
// so its DLPack deleter runs exactly once, when the storage dies (the last view of it released,
// or the tensor resized away from it). The storage exists only after every check passed, and a
// failure after that (an allocation failing under FromStorage) must still leave the managed
// tensor the caller's: while the storage is being put into a tensor, its deleter is disarmed for
// that managed tensor on this thread (t_disarmed).
#include "tessera/c/dlpack.h"

#include <cstdint>
#include <iterator>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/allocator.h"
#include "core/status_macros.h"
#include "runtime/device_registry.h"
#include "runtime/dlpack_spec.h"
#include "runtime/handles.h"
#include "runtime/runtime_state.h"
#include "tessera/c/device.h"
#include "tessera/c/tensor.h"

namespace tessera {
namespace capi {
namespace {

using dlpack::DLDataType;
using dlpack::DLDevice;
using dlpack::DLManagedTensor;
using dlpack::DLManagedTensorVersioned;
using dlpack::DLTensor;

// ---- Names for messages ----

std::string DLDeviceName(int32_t type) {
  static constexpr const char* kNames[] = {
      nullptr,     "kDLCPU",      "kDLCUDA",   "kDLCUDAHost",    "kDLOpenCL",
      nullptr,     nullptr,       "kDLVulkan", "kDLMetal",       "kDLVPI",
      "kDLROCM",   "kDLROCMHost", "kDLExtDev", "kDLCUDAManaged", "kDLOneAPI",
      "kDLWebGPU", "kDLHexagon",  "kDLMAIA",   "kDLTrn"};
  if (type >= 0 && type < static_cast<int32_t>(std::size(kNames)) && kNames[type] != nullptr) {
    return absl::StrFormat("%s (%d)", kNames[type], type);
  }
  return absl::StrFormat("unknown device type %d", type);
}

std::string DLCodeName(uint8_t code) {
  static constexpr const char* kNames[] = {"kDLInt",
                                           "kDLUInt",
                                           "kDLFloat",
                                           "kDLOpaqueHandle",
                                           "kDLBfloat",
                                           "kDLComplex",
                                           "kDLBool",
                                           "kDLFloat8_e3m4",
                                           "kDLFloat8_e4m3",
                                           "kDLFloat8_e4m3b11fnuz",
                                           "kDLFloat8_e4m3fn",
                                           "kDLFloat8_e4m3fnuz",
                                           "kDLFloat8_e5m2",
                                           "kDLFloat8_e5m2fnuz",
                                           "kDLFloat8_e8m0fnu",
                                           "kDLFloat6_e2m3fn",
                                           "kDLFloat6_e3m2fn",
                                           "kDLFloat4_e2m1fn"};
  if (code < std::size(kNames)) return absl::StrFormat("%s (%d)", kNames[code], code);
  return absl::StrFormat("unknown type code %d", code);
}

// ---- Options ----

struct Options {
  int32_t ext_device_type = 0;
  uint64_t flags = 0;
};

// ReadOptions reads the fields inside options->struct_size (the rest keep their defaults).
absl::StatusOr<Options> ReadOptions(const tsr_dlpack_options* options, bool exporting,
                                    bool versioned, const char* fn) {
  Options o;
  if (options == nullptr) return o;
  const size_t size = options->struct_size;
  if (TSR_FIELD_FITS(tsr_dlpack_options, ext_device_type, size)) {
    o.ext_device_type = options->ext_device_type;
  }
  if (TSR_FIELD_FITS(tsr_dlpack_options, reserved, size) && options->reserved != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected options->reserved 0, found %d", fn, options->reserved));
  }
  if (TSR_FIELD_FITS(tsr_dlpack_options, flags, size)) o.flags = options->flags;
  if (exporting && o.ext_device_type != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected options->ext_device_type 0 for an export (it chooses where an imported "
        "kDLExtDev tensor lands), found %d",
        fn, o.ext_device_type));
  }
  if (!(exporting && versioned) && o.flags != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected options->flags 0 (%s), found 0x%x", fn,
        exporting ? "an unversioned DLManagedTensor has no flags"
                  : "flags are set on exports only; an import reads the managed tensor's own",
        o.flags));
  }
  if (exporting && (o.flags & ~dlpack::kFlagReadOnly) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected options->flags to hold at most DLPACK_FLAG_BITMASK_READ_ONLY (0x1), "
        "found 0x%x (IS_COPIED is never true of an export: it does not copy)",
        fn, o.flags));
  }
  return o;
}

// ---- dtypes ----

DLDataType ToDLDataType(ScalarType t) {
  const auto bits = static_cast<uint8_t>(ElementSize(t) * 8);
  switch (t) {
    case ScalarType::kBool:
      return DLDataType{dlpack::kDLBool, 8, 1};
    case ScalarType::kUInt8:
      return DLDataType{dlpack::kDLUInt, 8, 1};
    case ScalarType::kInt8:
    case ScalarType::kInt16:
    case ScalarType::kInt32:
    case ScalarType::kInt64:
      return DLDataType{dlpack::kDLInt, bits, 1};
    case ScalarType::kBFloat16:
      return DLDataType{dlpack::kDLBfloat, 16, 1};
    case ScalarType::kFloat16:
    case ScalarType::kFloat32:
    case ScalarType::kFloat64:
      return DLDataType{dlpack::kDLFloat, bits, 1};
  }
  return DLDataType{dlpack::kDLOpaqueHandle, 0, 0};  // unreachable: every dtype is listed
}

absl::StatusOr<ScalarType> FromDLDataType(DLDataType d, const char* fn) {
  if (d.lanes != 1) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s: expected dl_tensor.dtype.lanes 1, found %d (Tessera has no vector dtypes)", fn,
        d.lanes));
  }
  for (ScalarType t : kAllScalarTypes) {
    const DLDataType ours = ToDLDataType(t);
    if (ours.code == d.code && ours.bits == d.bits) return t;
  }
  const char* expected;
  switch (d.code) {
    case dlpack::kDLInt:
      expected = "8, 16, 32 or 64";
      break;
    case dlpack::kDLUInt:
    case dlpack::kDLBool:
      expected = "8";
      break;
    case dlpack::kDLFloat:
      expected = "16, 32 or 64";
      break;
    case dlpack::kDLBfloat:
      expected = "16";
      break;
    default:
      return absl::UnimplementedError(absl::StrFormat(
          "%s: expected a dl_tensor.dtype.code Tessera has (kDLBool, kDLInt, kDLUInt, kDLFloat, "
          "kDLBfloat), found %s with %d bits",
          fn, DLCodeName(d.code), d.bits));
  }
  return absl::UnimplementedError(
      absl::StrFormat("%s: expected %s bits for dtype code %s, found %d", fn, expected,
                      DLCodeName(d.code), d.bits));
}

// ---- devices ----

absl::StatusOr<DLDevice> ToDLDevice(const Tensor& t, const char* fn) {
  const Device d = t.device();
  switch (d.type) {
    case DeviceType::kCPU:
      return DLDevice{dlpack::kDLCPU, 0};
    case DeviceType::kCUDA:
      return DLDevice{dlpack::kDLCUDA, d.index};
    case DeviceType::kHIP:
      return DLDevice{dlpack::kDLROCM, d.index};
    case DeviceType::kPrivateUse1:
    case DeviceType::kPrivateUse2:
    case DeviceType::kPrivateUse3:
      return DLDevice{dlpack::kDLExtDev, d.index};
    case DeviceType::kMeta:
      break;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: expected a tensor with memory (on cpu, cuda, hip or a privateuse device), found %s: "
      "a meta tensor has no data, and DLPack has no device type for one",
      fn, t.ToString()));
}

int32_t DeviceCount(DeviceType type) {
  int32_t count = 0;
  tsr_error* error = tsr_device_count(static_cast<int32_t>(type), &count);
  if (error != nullptr) {
    ReleaseError(error);
    return 0;
  }
  return count;
}

// ExtDevType: the PrivateUse type a kDLExtDev tensor lands on (see tsr_dlpack_options).
absl::StatusOr<DeviceType> ExtDevType(int32_t requested, int32_t device_id, const char* fn) {
  if (requested != 0) {
    if (requested < static_cast<int32_t>(DeviceType::kPrivateUse1) ||
        requested > static_cast<int32_t>(DeviceType::kPrivateUse3)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: expected options->ext_device_type 0 or a privateuse device type (%d..%d), found %d",
          fn, static_cast<int>(DeviceType::kPrivateUse1),
          static_cast<int>(DeviceType::kPrivateUse3), requested));
    }
    return static_cast<DeviceType>(requested);
  }
  std::vector<DeviceType> registered;
  for (DeviceType t :
       {DeviceType::kPrivateUse1, DeviceType::kPrivateUse2, DeviceType::kPrivateUse3}) {
    if (DeviceCount(t) > 0) registered.push_back(t);
  }
  if (registered.size() == 1) return registered[0];
  if (registered.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: the DLPack tensor is on kDLExtDev device %d, but no plugin provides a privateuse "
        "device (loaded plugins: %s)",
        fn, device_id, LoadedPluginNames()));
  }
  std::string names;
  for (DeviceType t : registered) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", DeviceTypeName(t));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: the DLPack tensor is on kDLExtDev device %d, and several privateuse device types "
      "are registered (%s): set options->ext_device_type to the one it belongs to",
      fn, device_id, names));
}

// FromDLDevice maps a DLPack device to a Tessera device that exists, and gives its allocator
// (NULL for cpu): device memory remembers the plugin instance that provided its device (Note
// [Device memory belongs to its plugin instance] in device.cc).
absl::StatusOr<Device> FromDLDevice(DLDevice d, const Options& options, Allocator** allocator,
                                    const char* fn) {
  *allocator = nullptr;
  DeviceType type;
  switch (d.device_type) {
    case dlpack::kDLCPU:
    case dlpack::kDLCUDAHost:
    case dlpack::kDLROCMHost:
      if (d.device_id != 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: expected device_id 0 for host memory (%s), found %d", fn,
                            DLDeviceName(d.device_type), d.device_id));
      }
      return Device(DeviceType::kCPU, 0);
    case dlpack::kDLCUDA:
      type = DeviceType::kCUDA;
      break;
    case dlpack::kDLROCM:
      type = DeviceType::kHIP;
      break;
    case dlpack::kDLExtDev: {
      TSR_ASSIGN_OR_RETURN(type, ExtDevType(options.ext_device_type, d.device_id, fn));
      break;
    }
    default:
      return absl::UnimplementedError(absl::StrFormat(
          "%s: expected a DLPack device type Tessera has (kDLCPU, kDLCUDA, kDLROCM, kDLExtDev, "
          "or pinned host memory: kDLCUDAHost, kDLROCMHost), found %s",
          fn, DLDeviceName(d.device_type)));
  }
  if (d.device_id < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a non-negative device_id, found %s device %d", fn,
                        DLDeviceName(d.device_type), d.device_id));
  }
  const Device device(type, d.device_id);
  const int32_t count = DeviceCount(type);
  Allocator* registered = GetAllocator(type);
  if (registered == nullptr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: the DLPack tensor is on %s device %d, which is Tessera's %s, but no plugin provides "
        "%s devices (loaded plugins: %s)",
        fn, DLDeviceName(d.device_type), d.device_id, DeviceToString(device), DeviceTypeName(type),
        LoadedPluginNames()));
  }
  if (count == 0) {  // a plugin provides the type, and sees no device of it on this machine
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: the DLPack tensor is on %s device %d, which is Tessera's %s, but %s has 0 devices "
        "on this machine",
        fn, DLDeviceName(d.device_type), d.device_id, DeviceToString(device),
        DeviceTypeName(type)));
  }
  if (d.device_id >= count) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the DLPack tensor is on %s device %d, which is Tessera's %s, but %s has %d "
        "device(s)",
        fn, DLDeviceName(d.device_type), d.device_id, DeviceToString(device), DeviceTypeName(type),
        count));
  }
  *allocator = registered;
  return device;
}

// ---- Export ----

// Exported: one allocation per exported tensor (Note [DLPack ownership]), followed by
// shape[ndim] and strides[ndim].
template <typename Managed>
struct Exported {
  Managed managed;
  Ref<StorageImpl> storage;

  int64_t* dims() { return reinterpret_cast<int64_t*>(this + 1); }

  static void Delete(Managed* self) {
    if (self == nullptr) return;
    auto* e = static_cast<Exported*>(self->manager_ctx);
    e->~Exported();
    ::operator delete(e);
  }
};
static_assert(alignof(Exported<DLManagedTensor>) >= alignof(int64_t), "dims follow the header");

template <typename Managed>
absl::StatusOr<Managed*> Export(tsr_tensor* tensor, uint64_t flags, const char* fn) {
  if (tensor == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a tensor for 'tensor', got NULL", fn));
  }
  Tensor t = Borrow(tensor);
  TSR_ASSIGN_OR_RETURN(const DLDevice device, ToDLDevice(t, fn));
  if (Orphaned(t)) return OrphanedError(t, absl::StrFormat("%s: exporting", fn));
  const int64_t ndim = t.dim();
  if (ndim > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: DLPack's ndim is an int32, and %s has %d dimensions", fn, t.ToString(), ndim));
  }
  using Block = Exported<Managed>;
  void* raw = ::operator new(sizeof(Block) + 2 * static_cast<size_t>(ndim) * sizeof(int64_t));
  auto* e = new (raw) Block();
  e->storage = t.impl()->storage();
  int64_t* shape = e->dims();
  int64_t* strides = shape + ndim;
  for (int64_t i = 0; i < ndim; ++i) {
    shape[i] = t.sizes()[i];
    strides[i] = t.strides()[i];
  }
  DLTensor& dl = e->managed.dl_tensor;
  // Element 0 and byte_offset 0, as NumPy, PyTorch and CuPy export on every device (PyTorch
  // 1.13's importer ignores byte_offset); the spec wants NULL data for a tensor of no elements.
  dl.data = t.numel() > 0 ? t.data_ptr() : nullptr;
  dl.device = device;
  dl.ndim = static_cast<int32_t>(ndim);
  dl.dtype = ToDLDataType(t.dtype());
  // Never NULL, also for 0-dim tensors: a consumer may test the pointer before ndim.
  dl.shape = shape;
  dl.strides = strides;
  dl.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = &Block::Delete;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    e->managed.version = dlpack::DLPackVersion{dlpack::kMajorVersion, dlpack::kMinorVersion};
    e->managed.flags = flags;
  }
  return &e->managed;
}

// ---- Import ----

thread_local const void* t_disarmed = nullptr;

template <typename Managed>
void DeleteImported(void* /*data*/, void* context) {
  if (context == t_disarmed) return;  // FromStorage failed: the caller keeps it
  auto* managed = static_cast<Managed*>(context);
  managed->deleter(managed);
}

template <typename Managed>
absl::StatusOr<Tensor> Import(Managed* managed, const Options& options, const char* fn) {
  const DLTensor& dl = managed->dl_tensor;
  TSR_ASSIGN_OR_RETURN(const ScalarType dtype, FromDLDataType(dl.dtype, fn));
  if (dl.ndim < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected dl_tensor.ndim >= 0, found %d", fn, dl.ndim));
  }
  if (dl.ndim > 0 && dl.shape == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected dl_tensor.shape to point at %d sizes, found NULL", fn, dl.ndim));
  }
  const IntArrayRef sizes(dl.shape, static_cast<size_t>(dl.ndim));
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: expected non-negative sizes, found shape %s (size %d at dimension %d)", fn,
          ShapeToString(sizes), sizes[i], i));
    }
  }
  absl::StatusOr<int64_t> numel = ComputeNumel(sizes);
  if (!numel.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a shape whose element count fits in int64, found %s", fn,
                        ShapeToString(sizes)));
  }
  DimVector strides;
  if (dl.strides != nullptr) {
    strides.assign(dl.strides, dl.strides + dl.ndim);
    for (size_t i = 0; i < strides.size(); ++i) {
      if (strides[i] < 0) {
        return absl::UnimplementedError(absl::StrFormat(
            "%s: expected non-negative strides (Tessera's views have them), found strides %s "
            "(stride %d at dimension %d); make a copy on the producer's side first",
            fn, ShapeToString(strides), strides[i], i));
      }
    }
  } else {
    TSR_ASSIGN_OR_RETURN(strides, ContiguousStrides(sizes));
  }
  absl::StatusOr<int64_t> elements = StorageElementsFor(sizes, strides);
  const size_t item = ElementSize(dtype);
  uint64_t view_bytes = 0;
  if (!elements.ok() ||
      __builtin_mul_overflow(static_cast<uint64_t>(*elements), item, &view_bytes) ||
      view_bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected sizes and strides whose memory span fits in int64 bytes, found shape %s "
        "and strides %s of %s",
        fn, ShapeToString(sizes), ShapeToString(strides), ScalarTypeName(dtype)));
  }
  Allocator* allocator = nullptr;
  TSR_ASSIGN_OR_RETURN(const Device device, FromDLDevice(dl.device, options, &allocator, fn));

  // Where the memory is: the storage starts at `data` and the view at byte_offset when that is a
  // whole number of elements (the tensor's storage_offset then says where the view starts), else
  // the storage starts at the view.
  char* base = static_cast<char*>(dl.data);
  uint64_t offset_bytes = dl.byte_offset;
  uint64_t storage_bytes = 0;
  int64_t storage_offset = 0;
  if (*numel > 0) {
    if (dl.data == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: expected dl_tensor.data to point at %d elements of %s, found NULL",
                          fn, *numel, ScalarTypeName(dtype)));
    }
    const auto address = reinterpret_cast<uintptr_t>(dl.data);
    uintptr_t first = 0, end = 0;
    if (__builtin_add_overflow(address, offset_bytes, &first) ||
        __builtin_add_overflow(first, view_bytes, &end) ||
        offset_bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - view_bytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: expected data + byte_offset + %d bytes within the address space, found data %p "
          "and byte_offset %d",
          fn, view_bytes, dl.data, offset_bytes));
    }
    if (first % item != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: expected element 0 (data + byte_offset) aligned to %d bytes for %s, found data %p "
          "and byte_offset %d",
          fn, item, ScalarTypeName(dtype), dl.data, offset_bytes));
    }
    if (offset_bytes % item == 0) {
      storage_offset = static_cast<int64_t>(offset_bytes / item);
      storage_bytes = offset_bytes + view_bytes;
    } else {
      base += offset_bytes;
      storage_bytes = view_bytes;
    }
  }

  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    if ((managed->flags & dlpack::kFlagReadOnly) != 0) {
      return absl::UnimplementedError(absl::StrFormat(
          "%s: expected a writable DLPack tensor, found flags 0x%x with "
          "DLPACK_FLAG_BITMASK_READ_ONLY set: Tessera has no read-only tensors (copy it on the "
          "producer's side first)",
          fn, managed->flags));
    }
    if ((managed->flags & ~dlpack::kKnownFlags) != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: expected only the flags of DLPack %d.%d (READ_ONLY 0x1, IS_COPIED 0x2, "
          "IS_SUBBYTE_TYPE_PADDED 0x4), found flags 0x%x",
          fn, dlpack::kMajorVersion, dlpack::kMinorVersion, managed->flags));
    }
  }

  DataPtr ptr;
  ptr.data = base;
  ptr.device = device;
  if (managed->deleter != nullptr) {
    ptr.deleter = &DeleteImported<Managed>;
    ptr.deleter_context = managed;
    // The producer's deleter may be a plugin's code: the plugin stays mapped until it ran.
    ptr.owner = PluginOwning(reinterpret_cast<const void*>(managed->deleter));
  }
  // The disarm covers only this thread and this managed tensor (Note [DLPack ownership]).
  t_disarmed = managed;
  struct Rearm {
    ~Rearm() { t_disarmed = nullptr; }
  } rearm;
  return FromStorage(Ref<StorageImpl>::Make(std::move(ptr), storage_bytes, allocator), dtype, sizes,
                     strides, storage_offset);
}

absl::Status CheckVersion(const DLManagedTensorVersioned* managed, const char* fn) {
  if (managed->version.major != dlpack::kMajorVersion) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected a DLPack %d.x managed tensor (this runtime implements DLPack %d.%d), found "
        "version %d.%d; the managed tensor stays the caller's (its deleter is safe to call)",
        fn, dlpack::kMajorVersion, dlpack::kMajorVersion, dlpack::kMinorVersion,
        managed->version.major, managed->version.minor));
  }
  return absl::OkStatus();
}

template <typename Managed>
tsr_error* FromDLPack(Managed* managed, const tsr_dlpack_options* options, tsr_tensor** out,
                      const char* fn) {
  if (out == nullptr) {
    return ToError(absl::InvalidArgumentError(
        absl::StrFormat("%s: expected an output pointer, got NULL", fn)));
  }
  *out = nullptr;
  if (managed == nullptr) {
    return ToError(absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a managed tensor for 'managed', got NULL", fn)));
  }
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    if (absl::Status s = CheckVersion(managed, fn); !s.ok()) return ToError(s);
  }
  absl::StatusOr<Options> o = ReadOptions(options, /*exporting=*/false, false, fn);
  if (!o.ok()) return ToError(o.status());
  absl::StatusOr<Tensor> t = Import(managed, *o, fn);
  if (!t.ok()) return ToError(t.status());
  *out = Wrap(*std::move(t));
  return nullptr;
}

template <typename Managed, typename CManaged>
tsr_error* ToDLPack(tsr_tensor* tensor, const tsr_dlpack_options* options, CManaged** out,
                    const char* fn) {
  if (out == nullptr) {
    return ToError(absl::InvalidArgumentError(
        absl::StrFormat("%s: expected an output pointer, got NULL", fn)));
  }
  *out = nullptr;
  constexpr bool kVersioned = std::is_same_v<Managed, DLManagedTensorVersioned>;
  absl::StatusOr<Options> o = ReadOptions(options, /*exporting=*/true, kVersioned, fn);
  if (!o.ok()) return ToError(o.status());
  absl::StatusOr<Managed*> managed = Export<Managed>(tensor, o->flags, fn);
  if (!managed.ok()) return ToError(managed.status());
  *out = reinterpret_cast<CManaged*>(*managed);
  return nullptr;
}

}  // namespace
}  // namespace capi
}  // namespace tessera

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

extern "C" {

tsr_error* tsr_tensor_to_dlpack_versioned(tsr_tensor* tensor, const tsr_dlpack_options* options,
                                          ::DLManagedTensorVersioned** out) {
  return Guard(__func__, [&] {
    return ToDLPack<dlpack::DLManagedTensorVersioned>(tensor, options, out,
                                                      "tsr_tensor_to_dlpack_versioned");
  });
}

tsr_error* tsr_tensor_to_dlpack(tsr_tensor* tensor, const tsr_dlpack_options* options,
                                ::DLManagedTensor** out) {
  return Guard(__func__, [&] {
    return ToDLPack<dlpack::DLManagedTensor>(tensor, options, out, "tsr_tensor_to_dlpack");
  });
}

tsr_error* tsr_tensor_from_dlpack_versioned(::DLManagedTensorVersioned* managed,
                                            const tsr_dlpack_options* options, tsr_tensor** out) {
  return Guard(__func__, [&] {
    return FromDLPack(reinterpret_cast<dlpack::DLManagedTensorVersioned*>(managed), options, out,
                      "tsr_tensor_from_dlpack_versioned");
  });
}

tsr_error* tsr_tensor_from_dlpack(::DLManagedTensor* managed, const tsr_dlpack_options* options,
                                  tsr_tensor** out) {
  return Guard(__func__, [&] {
    return FromDLPack(reinterpret_cast<dlpack::DLManagedTensor*>(managed), options, out,
                      "tsr_tensor_from_dlpack");
  });
}

}  // extern "C"
