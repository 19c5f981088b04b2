// Kernels built against another schema than their op's (Note [Kernels built against another
// schema] in kernel_schema.cc): which schema a kernel was built against, whether and how it can
// be called under the op's schema in this runtime.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dispatcher/dispatch_key.h"
#include "dispatcher/kernel.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/schema.h"

namespace tessera {
namespace capi {

struct PluginRecord;

// KernelBinding: how a kernel built against `built` is called under the op's schema.
struct KernelBinding {
  enum class Kind {
    kSame,   // the op's schema: called as it is
    kOlder,  // lacks trailing defaulted arguments of the op's: `positions` index the op's
    kNewer,  // has trailing defaulted arguments the op's lacks: `positions` index the kernel's
  };
  Kind kind = Kind::kSame;
  FunctionSchema built;
  std::vector<size_t> positions;
  // For the load report: the kernel's schema, the op's and the differences (kOlder, kNewer).
  std::string note;
};

// BindKernel decides how a kernel for `op`, registered with `stated_schema` (the desc's
// schema; empty: not stated) by `plugin` (NULL: the application), is called. A kernel that
// cannot be called under the op's schema is a FAILED_PRECONDITION error naming both schemas and
// each difference; a stated schema that does not parse is an INVALID_ARGUMENT error.
absl::StatusOr<KernelBinding> BindKernel(const OperatorHandle& op, std::string_view stated_schema,
                                         const PluginRecord* plugin);

// AdaptKernel wraps `kernel` (registered for `op` on `key`) so that it is called as `binding`
// says; the kernel itself for kSame.
KernelFunction AdaptKernel(KernelFunction kernel, const OperatorHandle& op, DispatchKey key,
                           KernelBinding binding);

}  // namespace capi
}  // namespace tessera
