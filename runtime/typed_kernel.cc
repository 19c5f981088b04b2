#include "runtime/typed_kernel.h"

#include <ffi.h>

#include <array>
#include <mutex>
#include <vector>

#include "absl/strings/str_format.h"
#include "runtime/device_registry.h"
#include "runtime/handles.h"
#include "tessera/c/tensor.h"

namespace tessera {
namespace capi {
namespace {

// How one schema argument is passed to the C function.
enum class Pass : uint8_t {
  kTensor,    // tsr_tensor*, NULL for None in Tensor?
  kInt,       // int64_t
  kDouble,    // double
  kBool,      // int32_t
  kDtype,     // tsr_dtype (int32)
  kScalar,    // tsr_scalar by value
  kDevice,    // tsr_device by value
  kString,    // tsr_string by value
  kIntList,   // const int64_t*, size_t
  kBoolList,  // const uint8_t*, size_t
  kOptional,  // const T* (T as `inner`), NULL for None
};

struct ArgPlan {
  Pass pass;
  Pass inner;  // for kOptional: how the value itself is represented
};

// ffi descriptions of the ABI's by-value structs. libffi fills in size and alignment the first
// time a call interface uses them; PrepareStructTypes does that once, before any concurrent use.
ffi_type* g_scalar_elements[] = {&ffi_type_sint32, &ffi_type_sint32, &ffi_type_sint64,
                                 &ffi_type_double, nullptr};
ffi_type g_scalar_type = {0, 0, FFI_TYPE_STRUCT, g_scalar_elements};
ffi_type* g_device_elements[] = {&ffi_type_sint32, &ffi_type_sint32, nullptr};
ffi_type g_device_type = {0, 0, FFI_TYPE_STRUCT, g_device_elements};
ffi_type* g_string_elements[] = {&ffi_type_pointer, &ffi_type_uint64, nullptr};
ffi_type g_string_type = {0, 0, FFI_TYPE_STRUCT, g_string_elements};
static_assert(sizeof(tsr_string) == 16 && sizeof(size_t) == 8, "tsr_string is {ptr, u64}");

void PrepareStructTypes() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (ffi_type* t : {&g_scalar_type, &g_device_type, &g_string_type}) {
      ffi_cif cif;
      ffi_type* args[] = {t};
      ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 1, &ffi_type_void, args);
    }
  });
}

ffi_type* FfiType(Pass pass) {
  switch (pass) {
    case Pass::kInt:
      return &ffi_type_sint64;
    case Pass::kDouble:
      return &ffi_type_double;
    case Pass::kBool:
    case Pass::kDtype:
      return &ffi_type_sint32;
    case Pass::kScalar:
      return &g_scalar_type;
    case Pass::kDevice:
      return &g_device_type;
    case Pass::kString:
      return &g_string_type;
    default:
      return &ffi_type_pointer;
  }
}

absl::StatusOr<Pass> PassFor(BaseType base) {
  switch (base) {
    case BaseType::kInt:
      return Pass::kInt;
    case BaseType::kFloat:
      return Pass::kDouble;
    case BaseType::kBool:
      return Pass::kBool;
    case BaseType::kScalarType:
      return Pass::kDtype;
    case BaseType::kScalar:
      return Pass::kScalar;
    case BaseType::kDevice:
      return Pass::kDevice;
    case BaseType::kStr:
      return Pass::kString;
    case BaseType::kTensor:
      return Pass::kTensor;
    default:
      return absl::UnimplementedError("no C mapping");
  }
}

constexpr size_t kMaxSlots = 32;
constexpr size_t kMaxReturns = 8;

struct TypedKernel {
  ffi_cif cif;
  std::vector<ffi_type*> types;  // the cif points into this
  std::vector<ArgPlan> plan;
  size_t returns = 0;
  tsr_typed_kernel_fn fn;
  void* context;
  std::shared_ptr<PluginGate> gate;
  std::string name;  // for errors
};

// One argument value as the C function receives it.
union Slot {
  void* p;
  const void* cp;
  int64_t i;
  double d;
  int32_t i32;
  tsr_scalar scalar;
  tsr_device device;
  tsr_string string;
  uint64_t n;
};

void Fill(Pass pass, const Value& v, Slot* slot) {
  switch (pass) {
    case Pass::kTensor:
      slot->p = v.is_none() ? nullptr : v.tensor().impl();
      break;
    case Pass::kInt:
      slot->i = v.to_int();
      break;
    case Pass::kDouble:
      slot->d = v.to_double();
      break;
    case Pass::kBool:
      slot->i32 = v.to_bool() ? 1 : 0;
      break;
    case Pass::kDtype:
      slot->i32 = static_cast<int32_t>(v.scalar_type());
      break;
    case Pass::kScalar:
      slot->scalar = ToC(v.scalar());
      break;
    case Pass::kDevice:
      slot->device = tsr_device{static_cast<int32_t>(v.device().type), v.device().index};
      break;
    case Pass::kString:
      slot->string = tsr_string{v.string().data(), v.string().size()};
      break;
    default:
      break;
  }
}

absl::Status CallTyped(void* context, const OperatorHandle& op, Stack* stack) {
  const TypedKernel& k = *static_cast<const TypedKernel*>(context);
  // Note [Device memory belongs to its plugin instance]
  if (absl::Status s = CheckArguments(*stack, op.name(), k.name); !s.ok()) return s;
  std::array<Slot, kMaxSlots> slots;
  std::array<Slot, kMaxSlots> optional_values;
  std::array<void*, kMaxSlots> values;
  std::array<tsr_tensor*, kMaxReturns> outs{};
  std::array<tsr_tensor**, kMaxReturns> out_ptrs;
  size_t n = 0;
  slots[n].p = k.context;
  values[n] = &slots[n];
  ++n;
  for (size_t a = 0; a < k.plan.size(); ++a) {
    const Value& v = (*stack)[a];
    const ArgPlan& plan = k.plan[a];
    if (plan.pass == Pass::kIntList || plan.pass == Pass::kBoolList) {
      const bool ints = plan.pass == Pass::kIntList;
      slots[n].cp = ints ? static_cast<const void*>(v.int_list().data()) : v.bool_list().data();
      values[n] = &slots[n];
      ++n;
      slots[n].n = ints ? v.int_list().size() : v.bool_list().size();
      values[n] = &slots[n];
      ++n;
    } else if (plan.pass == Pass::kOptional) {
      if (v.is_none()) {
        slots[n].cp = nullptr;
      } else {
        Fill(plan.inner, v, &optional_values[a]);
        slots[n].cp = &optional_values[a];
      }
      values[n] = &slots[n];
      ++n;
    } else {
      Fill(plan.pass, v, &slots[n]);
      values[n] = &slots[n];
      ++n;
    }
  }
  for (size_t r = 0; r < k.returns; ++r) {
    out_ptrs[r] = &outs[r];
    values[n++] = &out_ptrs[r];
  }
  if (k.gate && !k.gate->MayEnterCall()) return PluginUnloaded(op.name(), *k.gate);
  ffi_arg result = 0;
  try {
    ffi_call(const_cast<ffi_cif*>(&k.cif), FFI_FN(k.fn), &result, values.data());
  } catch (...) {  // Note [Exceptions from plugin code]
    for (size_t r = 0; r < k.returns; ++r) tsr_tensor_release(outs[r]);
    return KernelThrew(op.name(), k.name, k.gate.get());
  }
  auto* error = reinterpret_cast<tsr_error*>(static_cast<uintptr_t>(result));
  auto release_outs = [&] {
    for (size_t r = 0; r < k.returns; ++r) tsr_tensor_release(outs[r]);
  };
  if (error != nullptr) {
    release_outs();
    return StatusFrom(error);
  }
  for (size_t r = 0; r < k.returns; ++r) {
    if (outs[r] == nullptr) {
      release_outs();
      return absl::InternalError(absl::StrFormat(
          "%s: the typed kernel returned success but left return %d NULL", op.name(), r));
    }
  }
  stack->clear();
  for (size_t r = 0; r < k.returns; ++r) {
    stack->push_back(Value(Tensor(Ref<TensorImpl>::Adopt(Unwrap(outs[r])))));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<KernelFunction> MakeTypedKernel(const OperatorHandle& op,
                                               const FunctionSchema& schema, tsr_typed_kernel_fn fn,
                                               void* context, std::string name,
                                               std::shared_ptr<PluginGate> gate) {
  PrepareStructTypes();
  auto k = std::make_shared<TypedKernel>();
  k->fn = fn;
  k->context = context;
  k->gate = std::move(gate);
  k->name = name;
  k->types.push_back(&ffi_type_pointer);  // context
  for (const Argument& arg : schema.arguments) {
    const SchemaType& t = arg.type;
    auto unsupported = [&] {
      return absl::InvalidArgumentError(absl::StrFormat(
          "typed C kernel for %s: argument '%s' of type %s has no C mapping; register a boxed "
          "kernel instead",
          op.name(), arg.name, t.ToString()));
    };
    if (t.is_list) {
      if ((t.base != BaseType::kInt && t.base != BaseType::kBool) || t.optional) {
        return unsupported();
      }
      const Pass list = t.base == BaseType::kInt ? Pass::kIntList : Pass::kBoolList;
      k->plan.push_back({list, list});
      k->types.push_back(&ffi_type_pointer);
      k->types.push_back(&ffi_type_uint64);
      continue;
    }
    absl::StatusOr<Pass> pass = PassFor(t.base);
    if (!pass.ok()) return unsupported();
    if (t.optional && *pass != Pass::kTensor) {
      k->plan.push_back({Pass::kOptional, *pass});
      k->types.push_back(&ffi_type_pointer);
    } else {
      k->plan.push_back({*pass, *pass});
      k->types.push_back(FfiType(*pass));
    }
  }
  for (const Argument& ret : schema.returns) {
    if (ret.type.base != BaseType::kTensor || ret.type.is_list || ret.type.optional) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "typed C kernel for %s: return of type %s has no C mapping; register a boxed kernel "
          "instead",
          op.name(), ret.type.ToString()));
    }
    k->types.push_back(&ffi_type_pointer);
  }
  k->returns = schema.returns.size();
  if (k->types.size() > kMaxSlots || k->returns > kMaxReturns) {
    return absl::InvalidArgumentError(
        absl::StrFormat("typed C kernel for %s: too many parameters (%d, at most %d)", op.name(),
                        k->types.size(), kMaxSlots));
  }
  if (ffi_prep_cif(&k->cif, FFI_DEFAULT_ABI, static_cast<unsigned>(k->types.size()),
                   &ffi_type_pointer, k->types.data()) != FFI_OK) {
    return absl::InternalError(
        absl::StrFormat("typed C kernel for %s: libffi could not prepare the call", op.name()));
  }
  KernelFunction kernel;
  kernel.fn = &CallTyped;
  kernel.context = k.get();
  kernel.owner = k;
  kernel.name = std::move(name);
  return kernel;
}

}  // namespace capi
}  // namespace tessera
