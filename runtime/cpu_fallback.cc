// The opt-in CPU fallback: run an op that a device lacks on the CPU, moving tensors across.
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "runtime/device_registry.h"
#include "runtime/handles.h"
#include "runtime/runtime_state.h"
#include "tessera/c/kernel.h"
#include "tessera/c/plugin.h"

namespace tessera {
namespace capi {
namespace {

absl::Mutex g_counts_mu;
absl::flat_hash_map<std::string, int64_t>* const g_counts ABSL_GUARDED_BY(g_counts_mu) =
    new absl::flat_hash_map<std::string, int64_t>();

void Count(const OperatorHandle& op, Device device) {
  bool first;
  {
    absl::MutexLock lock(&g_counts_mu);
    first = ++(*g_counts)[op.name()] == 1;
  }
  if (first) {
    const std::string message = absl::StrFormat(
        "%s has no kernel on %s: running it on the CPU fallback (logged once per op, counted "
        "by tsr_fallback_count)",
        op.name(), DeviceToString(device));
    RuntimeApi().log(TSR_LOG_INFO, tsr_string{message.data(), message.size()});
  }
}

absl::StatusOr<Tensor> ToCpu(const Tensor& t) {
  TSR_ASSIGN_OR_RETURN(Tensor cpu, Empty(t.sizes(), t.dtype(), Device(DeviceType::kCPU)));
  TSR_RETURN_IF_ERROR(CopyToHost(t, cpu.data_ptr()));
  return cpu;
}

absl::StatusOr<Tensor> ToDevice(const Tensor& cpu, Device device) {
  TSR_ASSIGN_OR_RETURN(Tensor t, Empty(cpu.sizes(), cpu.dtype(), device));
  Tensor dense = cpu;
  if (!cpu.is_contiguous()) {
    TSR_ASSIGN_OR_RETURN(dense, ToCpu(cpu));  // packs it
  }
  TSR_RETURN_IF_ERROR(CopyFromHost(dense.data_ptr(), t));
  return t;
}

// Note [CPU fallback]: tensor arguments on the device are copied to contiguous CPU tensors
// (0-dim CPU tensors stay), the op runs with the CPU key, tensors it returns are copied to the
// device, and arguments it writes (alias annotation `!`) get the CPU result copied back, and
// are returned as the caller's own tensors.
absl::Status CpuFallback(void*, const OperatorHandle& op, Stack* stack) {
  const FunctionSchema& schema = op.schema();
  std::optional<Device> device;
  std::vector<std::pair<size_t, Tensor>> originals;  // argument index -> the device tensor
  for (size_t i = 0; i < stack->size(); ++i) {
    Value& v = (*stack)[i];
    if (v.is_tensor() && v.tensor().device().type != DeviceType::kCPU) {
      if (!device) device = v.tensor().device();
      originals.emplace_back(i, v.tensor());
      TSR_ASSIGN_OR_RETURN(Tensor cpu, ToCpu(v.tensor()));
      v = Value(std::move(cpu));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> list = v.tensor_list();
      for (Tensor& t : list) {
        if (t.defined() && t.device().type != DeviceType::kCPU) {
          if (!device) device = t.device();
          TSR_ASSIGN_OR_RETURN(t, ToCpu(t));
        }
      }
      v = Value(std::move(list));
    }
  }
  if (!device) {
    return absl::InternalError(
        absl::StrFormat("%s: CPU fallback called without a device tensor", op.name()));
  }
  Count(op, *device);
  Stack cpu_args = *stack;  // written arguments are read back from here after the call
  if (absl::Status s = op.registry().CallWithKey(op, DispatchKey::kCPU, stack); !s.ok()) {
    return absl::Status(s.code(), absl::StrFormat("%s on %s ran on the CPU fallback: %s", op.name(),
                                                  DeviceToString(*device), s.message()));
  }
  // Copy written arguments back into the caller's device tensors.
  for (const auto& [index, original] : originals) {
    const Argument& arg = schema.arguments[index];
    if (arg.alias && arg.alias->is_write) {
      TSR_ASSIGN_OR_RETURN(Tensor dense, ToCpu(cpu_args[index].tensor()));
      // An out= argument the CPU kernel resized gets the same shape on the device.
      if (original.sizes() != dense.sizes()) {
        TSR_RETURN_IF_ERROR(original.impl()->ResizeOutput(op.name(), dense.sizes()));
      }
      TSR_RETURN_IF_ERROR(CopyFromHost(dense.data_ptr(), original));
    }
  }
  for (size_t r = 0; r < stack->size(); ++r) {
    Value& v = (*stack)[r];
    if (!v.is_tensor() || v.tensor().device().type != DeviceType::kCPU) continue;
    // A return aliasing a written argument is that argument, on its own device.
    const Argument& ret = schema.returns[r];
    bool replaced = false;
    if (ret.alias && ret.alias->is_write) {
      for (const auto& [index, original] : originals) {
        const Argument& arg = schema.arguments[index];
        if (arg.alias && arg.alias->set == ret.alias->set) {
          v = Value(original);
          replaced = true;
        }
      }
    }
    if (!replaced) {
      TSR_ASSIGN_OR_RETURN(Tensor moved, ToDevice(v.tensor(), *device));
      v = Value(std::move(moved));
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace capi
}  // namespace tessera

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

extern "C" {

tsr_error* tsr_fallback_register_cpu(int32_t device_type, tsr_registration** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out) *out = nullptr;
    if (device_type <= 0 || device_type >= kNumDispatchKeys ||
        device_type == static_cast<int32_t>(DeviceType::kMeta)) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       absl::StrFormat("tsr_fallback_register_cpu: expected a device type other "
                                       "than cpu and meta in [1, %d), got %d",
                                       kNumDispatchKeys, device_type));
    }
    if (absl::Status s =
            CheckOwnership(device_type, nullptr,
                           absl::StrFormat("the cpu fallback for %s",
                                           DeviceTypeName(static_cast<DeviceType>(device_type))));
        !s.ok()) {
      return ToError(s);
    }
    KernelFunction kernel;
    kernel.fn = &CpuFallback;
    kernel.name = "runtime::cpu_fallback";
    absl::StatusOr<RegistrationHandle> handle = OpRegistry::Global().RegisterFallback(
        static_cast<DispatchKey>(device_type), std::move(kernel));
    if (!handle.ok()) return ToError(handle.status());
    if (PluginRecord* plugin = LoadingPlugin()) ++plugin->kernels;
    return HandOut(*std::move(handle), out);
  });
}

int64_t tsr_fallback_count(tsr_string op_name) {
  absl::StatusOr<std::string_view> read = ReadString(op_name, __func__, "op_name");
  if (!read.ok()) return 0;  // no op has such a name: nothing ran for it
  absl::MutexLock lock(&g_counts_mu);
  const std::string_view name = *read;
  auto it = g_counts->find(absl::string_view(name.data(), name.size()));
  return it == g_counts->end() ? 0 : it->second;
}

const tsr_runtime_api* tsr_runtime_api_get(void) { return &RuntimeApi(); }

}  // extern "C"
