#include "runtime/kernel_schema.h"

#include <atomic>
#include <memory>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dispatcher/op_set.h"
#include "dispatcher/schema_compat.h"
#include "runtime/runtime_state.h"
#include "tessera/opset/opset.h"
#include "tessera/opset/v1_0.h"
#include "tessera/opset/v1_1.h"
#include "tessera/opset/v1_2.h"
#include "tessera/opset/v1_3.h"
#include "tessera/opset/v1_4.h"
#include "tessera/opset/v1_5.h"
#include "tessera/opset/v1_6.h"
#include "tessera/opset/v1_7.h"
#include "tessera/opset/v1_8.h"
#include "tessera/opset/v1_9.h"
#include "tessera/opset/v1_10.h"

namespace tessera {
namespace capi {

// Note [Kernels built against another schema]
// A kernel is bound to its op's schema by position (a boxed kernel reads stack slot i, a typed
// C kernel takes one C parameter per argument), so it must be called with the arguments of the
// schema it was compiled against. A plugin built once outlives runtime releases, and ops change
// between op sets in the ways dispatcher/ops.lock allows: an argument with a default is added
// before the out arguments (Note [Schema compatibility]). So each kernel carries the schema it
// was built against: tsr_kernel_desc.schema (1.1; the SDK fills it from its op-set header), or,
// when not stated, the op's schema in the op set its plugin states (1.0 when unstated, the only
// thing a 1.0 plugin can mean), or the op's own schema for an op no op set has (a plugin's).
// BindKernel compares it with the op's schema in this runtime (CompareSchemas):
//   - kOlder, the runtime's schema added defaulted arguments: the kernel runs when each holds
//     its default, and they are dropped from its stack; any other value is something the kernel
//     cannot honour, so the call goes on to what would run without the kernel (derived form,
//     composite, fallback; OpRegistry::LookupBeyondKernel), logged once per kernel with why;
//   - kNewer, the kernel's schema added defaulted arguments (a plugin newer than the runtime):
//     the runtime inserts the kernel's defaults, which is what a caller of the newer schema who
//     left them out would have passed;
//   - anything else is refused: the kernel is never called with arguments it does not expect.

namespace {

struct OpSetVersion {
  int32_t major_version, minor_version;
};

struct KnownOpSet {
  OpSetVersion version;
  std::string_view (*find)(std::string_view op_name);  // the op set header's FindSchema
};

// The op sets this runtime has the schemas of (stable_abi/include/tessera/opset/, generated from
// dispatcher/ops.lock). Add each new op set's header here when it is generated.
constexpr KnownOpSet kKnownOpSets[] = {
    {{1, 0}, &opset::v1_0::FindSchema},
    {{1, 1}, &opset::v1_1::FindSchema},
    {{1, 2}, &opset::v1_2::FindSchema},
    {{1, 3}, &opset::v1_3::FindSchema},
    {{1, 4}, &opset::v1_4::FindSchema},
    {{1, 5}, &opset::v1_5::FindSchema},
    {{1, 6}, &opset::v1_6::FindSchema},
    {{1, 7}, &opset::v1_7::FindSchema},
    {{1, 8}, &opset::v1_8::FindSchema},
    {{1, 9}, &opset::v1_9::FindSchema},
    {{1, 10}, &opset::v1_10::FindSchema},
    {{1, 11}, &opset::v1_11::FindSchema},
};
static_assert(kKnownOpSets[std::size(kKnownOpSets) - 1].version.major_version ==
                      TSR_OP_SET_VERSION_MAJOR &&
                  kKnownOpSets[std::size(kKnownOpSets) - 1].version.minor_version ==
                      TSR_OP_SET_VERSION_MINOR,
              "kKnownOpSets must end with the newest op set (tessera/opset/opset.h)");

// SchemaInOpSet: the op's schema text at op set `version`, or empty when this runtime does not
// know that op set or the op is not in it.
std::string_view SchemaInOpSet(OpSetVersion version, std::string_view op_name) {
  for (const KnownOpSet& set : kKnownOpSets) {
    if (set.version.major_version == version.major_version &&
        set.version.minor_version == version.minor_version) {
      return set.find(op_name);
    }
  }
  return {};
}

OpSetVersion PluginOpSet(const PluginRecord* plugin) {
  if (plugin == nullptr) return OpSetVersion{kOpSetVersionMajor, kOpSetVersionMinor};
  const tsr_plugin_desc& desc = plugin->desc;
  const bool stated = TSR_FIELD_FITS(tsr_plugin_desc, op_set_minor, desc.struct_size) &&
                      (desc.op_set_major != 0 || desc.op_set_minor != 0);
  if (!stated) return OpSetVersion{1, 0};
  return OpSetVersion{static_cast<int32_t>(desc.op_set_major),
                      static_cast<int32_t>(desc.op_set_minor)};
}

struct Adapter {
  KernelFunction inner;
  DispatchKey key;
  KernelBinding::Kind kind;
  std::vector<size_t> positions;
  std::vector<Value> defaults;  // kOlder: the op's defaults; kNewer: the kernel's
  std::vector<std::string> names;
  std::atomic<bool> logged{false};
};

absl::Status CallAdapted(void* context, const OperatorHandle& op, Stack* stack) {
  Adapter& a = *static_cast<Adapter*>(context);
  if (a.kind == KernelBinding::Kind::kNewer) {
    for (size_t j = 0; j < a.positions.size(); ++j) {
      stack->insert(stack->begin() + static_cast<ptrdiff_t>(a.positions[j]), a.defaults[j]);
    }
    return a.inner.Call(op, stack);
  }
  for (size_t j = 0; j < a.positions.size(); ++j) {
    if ((*stack)[a.positions[j]] == a.defaults[j]) continue;
    if (!a.logged.exchange(true)) {
      const std::string message = absl::StrFormat(
          "%s: kernel '%s' was built against a schema without argument '%s', which this call "
          "sets to a value other than its default: running what the op has besides the kernel "
          "on %s instead (logged once per kernel)",
          op.name(), a.inner.name, a.names[j], DispatchKeyName(a.key));
      RuntimeApi().log(TSR_LOG_WARNING, tsr_string{message.data(), message.size()});
    }
    absl::StatusOr<KernelLookup> other = op.registry().LookupBeyondKernel(op, a.key);
    if (!other.ok()) {
      return absl::Status(other.status().code(),
                          absl::StrFormat("%s (kernel '%s' does not take argument '%s', which "
                                          "this call sets)",
                                          other.status().message(), a.inner.name, a.names[j]));
    }
    return other->kernel->Call(op, stack);
  }
  for (size_t j = a.positions.size(); j-- > 0;) {
    stack->erase(stack->begin() + static_cast<ptrdiff_t>(a.positions[j]));
  }
  return a.inner.Call(op, stack);
}

}  // namespace

absl::StatusOr<KernelBinding> BindKernel(const OperatorHandle& op, std::string_view stated_schema,
                                         const PluginRecord* plugin) {
  const FunctionSchema& current = op.schema();
  std::string_view text = stated_schema;
  std::string source = "the schema the kernel states";
  if (text.empty()) {
    const OpSetVersion version = PluginOpSet(plugin);
    text = SchemaInOpSet(version, op.name());
    source = absl::StrFormat("the op's schema in op set %d.%d, which the kernel's plugin states",
                             version.major_version, version.minor_version);
    if (text.empty()) return KernelBinding{KernelBinding::Kind::kSame, current, {}, ""};
  }
  absl::StatusOr<FunctionSchema> built = ParseSchema(text);
  if (!built.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the kernel's schema for %s does not parse: %s", op.name(), built.status().message()));
  }
  KernelBinding binding;
  binding.built = *std::move(built);
  const SchemaChange older = CompareSchemas(binding.built, current);
  if (older.change_class == SchemaChangeClass::kNone) return binding;
  auto describe = [&](const SchemaChange& change) {
    return absl::StrFormat("built against %s (%s); this runtime's is %s: %s",
                           binding.built.ToString(), source, current.ToString(),
                           absl::StrJoin(change.findings, "; "));
  };
  if (older.change_class == SchemaChangeClass::kBackwardCompatible) {
    binding.kind = older.added_arguments.empty() ? KernelBinding::Kind::kSame
                                                 : KernelBinding::Kind::kOlder;
    binding.positions = older.added_arguments;
    binding.note = describe(older);
    return binding;
  }
  const SchemaChange newer = CompareSchemas(current, binding.built);
  if (newer.change_class == SchemaChangeClass::kBackwardCompatible) {
    binding.kind = newer.added_arguments.empty() ? KernelBinding::Kind::kSame
                                                 : KernelBinding::Kind::kNewer;
    binding.positions = newer.added_arguments;
    binding.note = describe(newer);
    return binding;
  }
  return absl::FailedPreconditionError(describe(older));
}

KernelFunction AdaptKernel(KernelFunction kernel, const OperatorHandle& op, DispatchKey key,
                           KernelBinding binding) {
  if (binding.kind == KernelBinding::Kind::kSame) return kernel;
  auto adapter = std::make_shared<Adapter>();
  adapter->key = key;
  adapter->kind = binding.kind;
  adapter->positions = binding.positions;
  const std::vector<Argument>& args = binding.kind == KernelBinding::Kind::kOlder
                                          ? op.schema().arguments
                                          : binding.built.arguments;
  for (size_t i : binding.positions) {
    Value value = *args[i].default_value;
    // The stack holds normalized values (a Scalar for 1, a list for a bare int of `int[2]`):
    // compare with and insert the default in the same form. A default always normalizes.
    (void)NormalizeArgumentValue(args[i], &value);
    adapter->defaults.push_back(std::move(value));
    adapter->names.push_back(args[i].name);
  }
  KernelFunction wrapped;
  wrapped.fn = &CallAdapted;
  wrapped.context = adapter.get();
  wrapped.name = kernel.name;
  wrapped.plugin = kernel.plugin;
  adapter->inner = std::move(kernel);
  wrapped.owner = std::move(adapter);
  return wrapped;
}

}  // namespace capi
}  // namespace tessera
