// Factories and copies. `empty` and `empty_strided` are composites over the device's
// allocator (core/allocator.h), so every backend that registers an allocator gets them;
// `clone` and `copy_` need the backend's kernel and get meta functions here; copy_ between
// devices is the runtime's own (through host memory).
#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/host_copy.h"
#include "core/memory_overlap.h"
#include "core/shape.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

ScalarType DtypeOr(const Value& v, ScalarType fallback) {
  return v.is_none() ? fallback : v.scalar_type();
}

Out EmptyK(const OperatorHandle&, const Stack& s) {
  // empty.memory_format(size, *, dtype, layout, device, pin_memory, memory_format)
  const Device device = s[3].is_none() ? Device(DeviceType::kCPU) : s[3].device();
  TSR_ASSIGN_OR_RETURN(Tensor t,
                       Empty(s[0].int_list(), DtypeOr(s[1], ScalarType::kFloat32), device));
  return std::vector<Tensor>{std::move(t)};
}

Out EmptyStridedK(const OperatorHandle&, const Stack& s) {
  // empty_strided(size, stride, *, dtype, layout, device, pin_memory)
  const Device device = s[4].is_none() ? Device(DeviceType::kCPU) : s[4].device();
  if (s[0].int_list().size() != s[1].int_list().size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "empty_strided: expected as many strides as sizes, got size %s and stride %s",
        ShapeToString(s[0].int_list()), ShapeToString(s[1].int_list())));
  }
  TSR_ASSIGN_OR_RETURN(Tensor t, EmptyStrided(s[0].int_list(), s[1].int_list(),
                                              DtypeOr(s[2], ScalarType::kFloat32), device));
  return std::vector<Tensor>{std::move(t)};
}

Out CloneMeta(const OperatorHandle&, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const int64_t format = s[1].is_none() ? kMemoryFormatPreserve : s[1].to_int();
  absl::StatusOr<Tensor> out =
      format == kMemoryFormatPreserve && IsNonOverlappingAndDense(self)
          ? EmptyStrided(self.sizes(), self.strides(), self.dtype(), Device(DeviceType::kMeta))
          : Empty(self.sizes(), self.dtype(), Device(DeviceType::kMeta));
  if (!out.ok()) return out.status();
  return std::vector<Tensor>{*std::move(out)};
}

// CheckCopy: copy_'s one check of its arguments, for its Meta function and its plan.
absl::Status CheckCopy(const OperatorHandle& op, const Stack& s) {
  return CheckBroadcastsTo(op, "src", s[1].tensor().sizes(), s[0].tensor().sizes(),
                           "the destination's shape");
}

Out CopyMeta(const OperatorHandle& op, const Stack& s) {
  TSR_RETURN_IF_ERROR(CheckCopy(op, s));
  return std::vector<Tensor>{s[0].tensor()};
}

// CopyPlan: copy_'s plan (Note [Call plans]), its Meta function's check without the meta call
// (PlanFromMeta cost ~1,000 instructions per copy_, the op every composite ends in): the output
// is self as it is. The Meta kernel stays CopyMeta, which returns self itself.
absl::Status CopyPlan(const void*, const OperatorHandle& op, const Stack& s, CallPlan* plan) {
  TSR_RETURN_IF_ERROR(CheckCopy(op, s));
  const Tensor& self = s[0].tensor();
  plan->outputs.clear();
  TensorSpec& out = plan->outputs.emplace_back();
  out.sizes.assign(self.sizes().begin(), self.sizes().end());
  out.strides.assign(self.strides().begin(), self.strides().end());
  out.dtype = self.dtype();
  return absl::OkStatus();
}
// Boxed only: copy_ has no functional form (its variant kind is none), which the unboxed path
// never takes.
constexpr PlanFunction kCopyPlan{&CopyPlan, nullptr, nullptr};

Out ContiguousK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (self.is_contiguous()) return std::vector<Tensor>{self};
  TSR_ASSIGN_OR_RETURN(OperatorHandle clone, op.registry().Find("clone"));
  Stack stack{Value(self), Value(int64_t{kMemoryFormatContiguous})};
  TSR_RETURN_IF_ERROR(op.registry().Call(clone, &stack));
  return std::vector<Tensor>{stack[0].tensor()};
}

// copy_(self, src) with self and src on different devices (OpRegistry::ImplCrossDevice): the
// data goes through host memory (core/host_copy.h), so a device backend never sees another
// device's tensor, except between two devices of one backend, which copy between themselves.
// Equal sizes and dtypes move as bytes and need no kernel at all; otherwise the CPU's copy_
// broadcasts src and converts its dtype on the host side (a device backend need not convert
// every dtype), as PyTorch's copy_ between devices does.
Out CopyAcrossDevicesK(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const Tensor& src = s[1].tensor();
  const Device cpu(DeviceType::kCPU);
  // A meta tensor has no data (PyTorch: copying into one only checks shapes, copying out of one
  // is an error), so nothing is staged for it, however large it claims to be.
  if (self.device().type == DeviceType::kMeta) return std::vector<Tensor>{self};
  if (src.device().type == DeviceType::kMeta) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: cannot copy out of a meta tensor into %s: a meta tensor has no data", op.name(),
        DeviceToString(self.device())));
  }
  const bool same_sizes =
      std::equal(self.sizes().begin(), self.sizes().end(), src.sizes().begin(), src.sizes().end());
  if (same_sizes && self.dtype() == src.dtype()) {
    // Two devices of one backend may copy between themselves (peer to peer), without the host.
    const bool non_blocking = s.size() > 2 && s[2].is_bool() && s[2].to_bool();
    TSR_ASSIGN_OR_RETURN(const bool copied, CopyDeviceToDevice(src, self, non_blocking));
    if (copied) return std::vector<Tensor>{self};
    std::vector<unsigned char> staging(self.impl()->nbytes());
    TSR_RETURN_IF_ERROR(CopyTensorToHost(src, staging.data()));
    TSR_RETURN_IF_ERROR(CopyHostToTensor(staging.data(), self));
    return std::vector<Tensor>{self};
  }
  Tensor host_src = src;
  if (src.device() != cpu) {
    TSR_ASSIGN_OR_RETURN(host_src, Empty(src.sizes(), src.dtype(), cpu));
    TSR_RETURN_IF_ERROR(CopyTensorToHost(src, host_src.data_ptr()));
  }
  OpRegistry& r = op.registry();
  if (self.device() == cpu) return One(CallOne(r, "copy_", {self, host_src}));
  TSR_ASSIGN_OR_RETURN(Tensor staged, Empty(self.sizes(), self.dtype(), cpu));
  TSR_RETURN_IF_ERROR(CallOne(r, "copy_", {staged, host_src}).status());
  TSR_RETURN_IF_ERROR(CopyHostToTensor(staged.data_ptr(), self));
  return std::vector<Tensor>{self};
}

}  // namespace

absl::Status DefineCopyOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(DefineAll(
      registry,
      {
          {"empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
           "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> "
           "Tensor",
           MakeKernel<EmptyK>("core::empty")},
          {"empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? "
           "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
           MakeKernel<EmptyStridedK>("core::empty_strided")},
          {"contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> "
           "Tensor(a)",
           MakeKernel<ContiguousK>("core::contiguous")},
      },
      KernelSlot::kComposite));
  TSR_RETURN_IF_ERROR(
      DefineAll(registry,
                {
                    {"clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
                     MakeKernel<CloneMeta>("meta::clone")},
                    {"copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
                     MakeKernel<CopyMeta>("meta::copy_")},
                },
                KernelSlot::kMeta));
  TSR_ASSIGN_OR_RETURN(RegistrationHandle across,
                       registry.ImplCrossDevice(
                           "copy_", MakeKernel<CopyAcrossDevicesK>("core::copy_across_devices")));
  across.KeepForever();
  TSR_RETURN_IF_ERROR(registry.SetPlanFunction("copy_", &kCopyPlan));
  // x.copy_(x) copies nothing; x.copy_(x.t()) is refused as a partial overlap.
  return registry.SetOutputAliasing("copy_", OutputAliasing::kElementwise);
}

}  // namespace ops
}  // namespace tessera
