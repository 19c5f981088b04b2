// KernelFunction: a boxed kernel, the one calling convention the dispatcher knows.
//
// A kernel reads the op's arguments from the stack (schema order, defaults filled in, types
// checked) and leaves exactly the op's returns on it. It reports failure through the Status;
// it must not throw (kernels that may throw are wrapped at registration, see the SDK).
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "dispatcher/value.h"

namespace tessera {

class OperatorHandle;

using BoxedKernelFn = absl::Status (*)(void* context, const OperatorHandle& op, Stack* stack);

struct KernelFunction {
  BoxedKernelFn fn = nullptr;
  void* context = nullptr;            // passed back to fn
  std::shared_ptr<const void> owner;  // keeps `context` (and its provider) alive
  std::string name;                   // for traces and reports, e.g. "cpu::add_kernel"
  std::string plugin;                 // the plugin that registered it, for errors; "" if none

  absl::Status Call(const OperatorHandle& op, Stack* stack) const { return fn(context, op, stack); }
};

}  // namespace tessera
