// KernelFunction: a boxed kernel, the calling convention every kernel has, and optionally its
// packed entry.
//
// A kernel reads the op's arguments from the stack (schema order, defaults filled in, types
// checked) and leaves exactly the op's returns on it. It reports failure through the Status;
// it must not throw (kernels that may throw are wrapped at registration, see the SDK).
//
// The packed entry (Note [Packed kernel calls] in dispatcher/kernel_results.cc) is the same
// kernel for an op whose returns are all arguments it writes (out= and in-place forms): it
// reads the arguments without changing the stack, and says which tensor it returns for each
// return in `returned` instead of rebuilding the stack, so the dispatcher can check that
// without holding references.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "dispatcher/value.h"

namespace tessera {

class OperatorHandle;
struct CallPlan;

using BoxedKernelFn = absl::Status (*)(void* context, const OperatorHandle& op, Stack* stack);
// returned[r]: the tensor the kernel returns as return r (NULL: none), filled by the kernel.
using PackedKernelFn = absl::Status (*)(void* context, const OperatorHandle& op, Stack* stack,
                                        const CallPlan* plan,
                                        absl::Span<const TensorImpl*> returned);
class UnboxedArgs;
// The packed entry over an unboxed call's arguments (Note [The unboxed fast path] in
// dispatcher/unboxed_call.cc): the same kernel, reading `args` instead of a stack.
// `stack` is the call's stack as the kernel may read it (empty until read: UnboxedStack).
using UnboxedKernelFn = absl::Status (*)(void* context, const OperatorHandle& op,
                                         const UnboxedArgs& args, Stack* stack,
                                         const CallPlan* plan,
                                         absl::Span<const TensorImpl*> returned);

struct KernelFunction {
  BoxedKernelFn fn = nullptr;
  PackedKernelFn packed = nullptr;    // optional: set only for ops that return written arguments
  UnboxedKernelFn unboxed = nullptr;  // optional: with `packed`, for the unboxed fast path
  void* context = nullptr;            // passed back to fn and packed
  // Two identical calls may give different bits (Note [Deterministic algorithms] in
  // dispatcher/deterministic.h): next to `fn`, on the cache line every call reads.
  bool nondeterministic = false;
  std::shared_ptr<const void> owner;    // keeps `context` (and its provider) alive
  std::string name;                     // for traces and reports, e.g. "cpu::add_kernel"
  std::string plugin;                   // the plugin that registered it, for errors; "" if none
  std::string nondeterministic_reason;  // why, when nondeterministic ("atomic adds ...")

  absl::Status Call(const OperatorHandle& op, Stack* stack) const { return fn(context, op, stack); }
};

}  // namespace tessera
