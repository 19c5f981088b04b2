// Typed C kernels: a plain C function whose parameters follow the op's schema, called through a
// libffi call interface prepared once at registration (see tsr_typed_kernel_fn in kernel.h).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "dispatcher/kernel.h"
#include "dispatcher/op_registry.h"
#include "runtime/plugin_gate.h"
#include "tessera/c/kernel.h"

namespace tessera {
namespace capi {

// MakeTypedKernel checks that every argument and return of `schema` (the schema the kernel was
// built against; Note [Kernels built against another schema]) has a C mapping and builds the
// boxed KernelFunction that unboxes the stack into the C call. `gate` may be NULL.
absl::StatusOr<KernelFunction> MakeTypedKernel(const OperatorHandle& op,
                                               const FunctionSchema& schema,
                                               tsr_typed_kernel_fn fn,
                                               void* context, std::string name,
                                               std::shared_ptr<PluginGate> gate);

}  // namespace capi
}  // namespace tessera
