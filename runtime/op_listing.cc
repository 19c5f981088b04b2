// The C ABI's op listing (since 1.1): which ops are defined, and their arguments and returns
// as structured data, so that an embedder or a plugin never parses schema text.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "runtime/handles.h"
#include "tessera/c/op.h"

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

namespace {

// ArgText: the strings a tsr_arg_info borrows, made once per op (entries live for the process,
// their schemas are immutable) and kept with it.
struct ArgText {
  std::string type;           // "Tensor(a!)", "int[2]"
  std::string default_value;  // "1", "None"; empty without a default
};
struct OpText {
  std::vector<ArgText> arguments, returns;
};

ArgText TextOf(const Argument& arg) {
  // Argument::ToString prints "type name=default" (Note [Faithful schema text]); the type
  // ends at the space before the name, the default starts after the first '=' (neither a type
  // nor a name contains one).
  const std::string text = arg.ToString();
  ArgText out;
  const size_t eq = text.find('=');
  const std::string head = eq == std::string::npos ? text : text.substr(0, eq);
  out.type = arg.name.empty() ? head : head.substr(0, head.size() - arg.name.size() - 1);
  if (eq != std::string::npos) out.default_value = text.substr(eq + 1);
  return out;
}

const OpText& TextFor(const OperatorHandle& op) {
  static absl::Mutex mu;
  static auto* cache = new absl::flat_hash_map<const void*, std::unique_ptr<OpText>>();
  absl::MutexLock lock(&mu);
  std::unique_ptr<OpText>& text = (*cache)[op.entry()];
  if (text == nullptr) {
    text = std::make_unique<OpText>();
    for (const Argument& a : op.schema().arguments) text->arguments.push_back(TextOf(a));
    for (const Argument& r : op.schema().returns) text->returns.push_back(TextOf(r));
  }
  return *text;
}

// KindOf: the tsr_value_kind a caller pushes for `type` (schema.cc's NormalizeArgumentValue
// accepts it without conversion).
tsr_value_kind KindOf(const SchemaType& type) {
  if (type.is_list) {
    switch (type.base) {
      case BaseType::kTensor:
        return TSR_VALUE_TENSOR_LIST;
      case BaseType::kFloat:
        return TSR_VALUE_DOUBLE_LIST;
      case BaseType::kBool:
        return TSR_VALUE_BOOL_LIST;
      default:
        return TSR_VALUE_INT_LIST;  // int[], SymInt[] (the only other lists schemas have)
    }
  }
  switch (type.base) {
    case BaseType::kTensor:
      return TSR_VALUE_TENSOR;
    case BaseType::kInt:
    case BaseType::kLayout:
    case BaseType::kMemoryFormat:
      return TSR_VALUE_INT;
    case BaseType::kFloat:
      return TSR_VALUE_DOUBLE;
    case BaseType::kBool:
      return TSR_VALUE_BOOL;
    case BaseType::kStr:
      return TSR_VALUE_STRING;
    case BaseType::kScalar:
      return TSR_VALUE_SCALAR;
    case BaseType::kScalarType:
      return TSR_VALUE_DTYPE;
    case BaseType::kDevice:
      return TSR_VALUE_DEVICE;
    case BaseType::kGenerator:
      return TSR_VALUE_GENERATOR;
  }
  return TSR_VALUE_NONE;
}

tsr_string S(const std::string& s) { return tsr_string{s.data(), s.size()}; }

// Fill writes `value` into `field` of the caller's struct when the caller's struct_size has it
// (the caller may be built against an older minor with a smaller struct).
#define TSR_FILL(out, field, value)                                                    \
  if (TSR_FIELD_FITS(std::remove_pointer_t<decltype(out)>, field, (out)->struct_size)) \
  (out)->field = (value)

tsr_error* CheckOut(const char* fn, const void* op, const size_t* struct_size, size_t min) {
  if (op == nullptr) {
    return MakeError(absl::StatusCode::kInvalidArgument,
                     absl::StrFormat("%s: expected an op, got NULL", fn));
  }
  if (struct_size == nullptr) {
    return MakeError(absl::StatusCode::kInvalidArgument,
                     absl::StrFormat("%s: expected an output struct, got NULL", fn));
  }
  if (*struct_size < min) {
    return MakeError(absl::StatusCode::kInvalidArgument,
                     absl::StrFormat("%s: out->struct_size is %d, expected at least %d (set it to "
                                     "the struct's sizeof)",
                                     fn, *struct_size, min));
  }
  return nullptr;
}

tsr_error* DescribeArgument(const char* fn, const tsr_op* op, size_t index, tsr_arg_info* out,
                            bool is_return) {
  return Guard(fn, [&]() -> tsr_error* {
    constexpr size_t kMin = offsetof(tsr_arg_info, name) + sizeof(tsr_string);
    if (tsr_error* e = CheckOut(fn, op, out ? &out->struct_size : nullptr, kMin)) return e;
    const OperatorHandle handle = Unwrap(op);
    const std::vector<Argument>& args =
        is_return ? handle.schema().returns : handle.schema().arguments;
    if (index >= args.size()) {
      return MakeError(
          absl::StatusCode::kOutOfRange,
          absl::StrFormat("%s: %s has %d %s; index %d is out of range", fn, handle.name(),
                          args.size(), is_return ? "returns" : "arguments", index));
    }
    const Argument& arg = args[index];
    const OpText& text = TextFor(handle);
    const ArgText& t = (is_return ? text.returns : text.arguments)[index];
    const size_t size = out->struct_size;
    std::memset(out, 0, std::min(size, sizeof *out));
    out->struct_size = size;
    TSR_FILL(out, name, S(arg.name));
    TSR_FILL(out, type, S(t.type));
    TSR_FILL(out, kind, KindOf(arg.type));
    TSR_FILL(out, optional, arg.type.optional ? 1 : 0);
    TSR_FILL(out, kwarg_only, arg.kwarg_only ? 1 : 0);
    TSR_FILL(out, has_default, arg.default_value.has_value() ? 1 : 0);
    TSR_FILL(out, default_value, S(t.default_value));
    TSR_FILL(out, writes, arg.alias.has_value() && arg.alias->is_write ? 1 : 0);
    return nullptr;
  });
}

}  // namespace

extern "C" {

tsr_error* tsr_op_list(const tsr_op** ops, size_t capacity, size_t* count) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (count == nullptr) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       "tsr_op_list: expected a count pointer, got NULL");
    }
    if (ops == nullptr && capacity != 0) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       absl::StrFormat("tsr_op_list: ops is NULL but capacity is %d", capacity));
    }
    const std::vector<std::string> names = OpRegistry::Global().ListOps();
    *count = names.size();
    for (size_t i = 0; i < names.size() && i < capacity; ++i) {
      absl::StatusOr<OperatorHandle> op = OpRegistry::Global().Find(names[i]);
      if (!op.ok()) return ToError(op.status());  // undefined meanwhile: the list is stale
      ops[i] = Wrap(*op);
    }
    return nullptr;
  });
}

tsr_error* tsr_op_describe(const tsr_op* op, tsr_op_info* out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr size_t kMin = offsetof(tsr_op_info, name) + sizeof(tsr_string);
    if (tsr_error* e = CheckOut("tsr_op_describe", op, out ? &out->struct_size : nullptr, kMin))
      return e;
    const OperatorHandle handle = Unwrap(op);
    const size_t size = out->struct_size;
    std::memset(out, 0, std::min(size, sizeof *out));
    out->struct_size = size;
    TSR_FILL(out, name, S(handle.name()));
    TSR_FILL(out, schema, S(handle.schema_text()));
    TSR_FILL(out, num_arguments, handle.schema().arguments.size());
    TSR_FILL(out, num_returns, handle.schema().returns.size());
    if (const OpDeprecation* d = handle.deprecation()) {
      TSR_FILL(out, deprecated, 1);
      TSR_FILL(out, replacement, S(d->replacement));
      TSR_FILL(out, removed_in, S(d->removed_in));
    }
    return nullptr;
  });
}

tsr_error* tsr_op_deprecate(const tsr_op* op, tsr_string replacement, tsr_string removed_in) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (op == nullptr) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       "tsr_op_deprecate: expected an op, got NULL");
    }
    constexpr const char* fn = "tsr_op_deprecate";
    absl::StatusOr<std::string_view> instead = ReadString(replacement, fn, "replacement");
    if (!instead.ok()) return ToError(instead.status());
    absl::StatusOr<std::string_view> version = ReadString(removed_in, fn, "removed_in");
    if (!version.ok()) return ToError(version.status());
    const OperatorHandle handle = Unwrap(op);
    return ToError(handle.registry().Deprecate(
        handle.name(), OpDeprecation{std::string(*instead), std::string(*version)}));
  });
}

tsr_error* tsr_op_argument(const tsr_op* op, size_t index, tsr_arg_info* out) {
  return DescribeArgument(__func__, op, index, out, /*is_return=*/false);
}

tsr_error* tsr_op_return(const tsr_op* op, size_t index, tsr_arg_info* out) {
  return DescribeArgument(__func__, op, index, out, /*is_return=*/true);
}

}  // extern "C"
