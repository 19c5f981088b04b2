#include "dispatcher/tools/calls_header.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dispatcher/tools/ops_lock.h"

namespace tessera::ops_lock {

namespace {

// kLocals: the names a generated function declares itself; no parameter may take one.
const std::set<std::string, std::less<>> kLocals = {"op_", "args_", "rets_", "error_"};

// kKeywords: C and C++ keywords an argument name could be; such a parameter gets a '_' suffix.
const std::set<std::string, std::less<>> kKeywords = {
    "and",    "asm",      "auto",     "bool",     "break",     "case",     "catch",     "char",
    "class",  "const",    "continue", "default",  "delete",    "do",       "double",    "else",
    "enum",   "explicit", "export",   "extern",   "false",     "float",    "for",       "friend",
    "goto",   "if",       "inline",   "int",      "long",      "mutable",  "namespace", "new",
    "not",    "operator", "or",       "private",  "protected", "public",   "register",  "restrict",
    "return", "short",    "signed",   "sizeof",   "static",    "struct",   "switch",    "template",
    "this",   "throw",    "true",     "try",      "typedef",   "typename", "union",     "unsigned",
    "using",  "virtual",  "void",     "volatile", "while",     "xor"};

// CArgument: how one schema argument travels: the C parameters a caller passes, and the C
// expression that packs them into a tsr_value (a helper of the header's prologue).
struct CArgument {
  std::vector<std::string> params;
  std::string value;
};

// ScalarForm: the C type and helper stem of a non-list, non-Tensor argument type, or none.
std::optional<std::pair<std::string, std::string>> ScalarForm(BaseType base) {
  switch (base) {
    case BaseType::kInt:
      return std::make_pair("int64_t", "int");
    case BaseType::kFloat:
      return std::make_pair("double", "double");
    case BaseType::kBool:
      return std::make_pair("int32_t", "bool");
    case BaseType::kStr:
      return std::make_pair("tsr_string", "string");
    case BaseType::kScalar:
      return std::make_pair("tsr_scalar", "scalar");
    case BaseType::kScalarType:
      return std::make_pair("tsr_dtype", "dtype");
    case BaseType::kDevice:
      return std::make_pair("tsr_device", "device");
    case BaseType::kLayout:
      return std::make_pair("tsr_layout", "layout");
    case BaseType::kMemoryFormat:
      return std::make_pair("tsr_memory_format", "memory_format");
    case BaseType::kTensor:
    case BaseType::kGenerator:
      break;
  }
  return std::nullopt;
}

// MapArgument: the C form of `arg` (named `name` in C), or none where it has no C form.
std::optional<CArgument> MapArgument(const Argument& arg, const std::string& name) {
  const SchemaType& t = arg.type;
  const std::string opt = t.optional ? "_opt" : "";
  if (t.is_list) {
    std::string element;
    std::string stem;
    switch (t.base) {
      case BaseType::kInt:
        element = "const int64_t*";
        stem = "int_list";
        break;
      case BaseType::kFloat:
        element = "const double*";
        stem = "double_list";
        break;
      case BaseType::kBool:
        element = "const uint8_t*";
        stem = "bool_list";
        break;
      case BaseType::kTensor:
        // Tensor?[]: a NULL element is None.
        element = "tsr_tensor* const*";
        stem = "tensor_list";
        break;
      default:
        return std::nullopt;
    }
    return CArgument{{absl::StrCat(element, " ", name), absl::StrCat("size_t ", name, "_count")},
                     absl::StrFormat("tsr_aten_%s%s_(%s, %s_count)", stem, opt, name, name)};
  }
  if (t.base == BaseType::kTensor) {
    return CArgument{{absl::StrCat("tsr_tensor* ", name)},
                     absl::StrFormat("tsr_aten_tensor%s_(%s)", opt, name)};
  }
  const auto form = ScalarForm(t.base);
  if (!form) return std::nullopt;
  const std::string type = t.optional ? absl::StrCat("const ", form->first, "*") : form->first;
  return CArgument{{absl::StrCat(type, " ", name)},
                   absl::StrFormat("tsr_aten_%s%s_(%s)", form->second, opt, name)};
}

// MapReturn: the out-parameter of one return, or none where it has no C form. Only tensors have
// one: no op of the op sets returns anything else that tsr_op_call_values can hand back.
std::optional<std::string> MapReturn(const Argument& ret, const std::string& name) {
  if (ret.type.is_list || ret.type.base != BaseType::kTensor) return std::nullopt;
  return absl::StrCat("tsr_tensor** ", name);
}

// Signature: `static inline tsr_error* NAME(params) {`, one parameter a line when it is long.
std::string Signature(const std::string& function, const std::vector<std::string>& params) {
  const std::string head = absl::StrCat("static inline tsr_error* ", function, "(");
  const std::string one_line =
      absl::StrCat(head, params.empty() ? "void" : absl::StrJoin(params, ", "), ") {\n");
  if (one_line.size() <= 101) return one_line;
  // Filled lines under the first parameter, or 4 spaces in when the name is long.
  const bool aligned = head.size() <= 60;
  const std::string indent(aligned ? head.size() : 4, ' ');
  std::string out = aligned ? head : absl::StrCat(head, "\n", indent);
  size_t column = aligned ? head.size() : indent.size();
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string piece = params[i] + (i + 1 < params.size() ? "," : ") {");
    if (column > indent.size() && column + 1 + piece.size() > 100) {
      absl::StrAppend(&out, "\n", indent);
      column = indent.size();
    } else if (column > indent.size()) {
      out += ' ';
      ++column;
    }
    out += piece;
    column += piece.size();
  }
  return out + "\n";
}

// The prologue: the helpers every function uses, once per translation unit.
constexpr char kPrologue[] = R"(#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tessera/c/tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tsr_aten_call_: runs the op named `name` on `args`, finding it on the first call and keeping
 * it in *cache (op handles live as long as the process). The returns' slots are zeroed first. */
static inline tsr_error* tsr_aten_call_(const tsr_op** cache, const char* name, size_t name_size,
                                        const tsr_value* args, size_t num_args, tsr_value* rets,
                                        size_t num_rets) {
  const tsr_op* op;
  tsr_error* error;
  memset(rets, 0, num_rets * sizeof(tsr_value));
#if defined(__GNUC__) || defined(__clang__)
  op = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
#else
  op = NULL; /* no portable atomics in C99: look the op up on every call */
  (void)cache;
#endif
  if (op == NULL) {
    tsr_string op_name;
    op_name.data = name;
    op_name.size = name_size;
    error = tsr_op_find(op_name, &op);
    if (error != NULL) return error;
#if defined(__GNUC__) || defined(__clang__)
    __atomic_store_n(cache, op, __ATOMIC_RELEASE);
#endif
  }
  return tsr_op_call_values(op, args, num_args, rets, num_rets, NULL);
}

/* Packing: one helper per C form of an argument; an _opt_ helper takes NULL for None. */
static inline tsr_value tsr_aten_value_(int32_t kind) {
  tsr_value v;
  memset(&v, 0, sizeof v);
  v.kind = kind;
  return v;
}
static inline tsr_value tsr_aten_tensor_(tsr_tensor* t) {
  tsr_value v = tsr_aten_value_(TSR_VALUE_TENSOR); /* NULL is refused by name, as a value */
  v.u.tensor = t;
  return v;
}
static inline tsr_value tsr_aten_tensor_opt_(tsr_tensor* t) {
  return t == NULL ? tsr_aten_value_(TSR_VALUE_NONE) : tsr_aten_tensor_(t);
}
#define TSR_ATEN_SCALAR_FORM_(stem, ctype, KIND, field)                               \
  static inline tsr_value tsr_aten_##stem##_(ctype x) {                                \
    tsr_value v = tsr_aten_value_(KIND);                                               \
    v.u.field = x;                                                                     \
    return v;                                                                          \
  }                                                                                    \
  static inline tsr_value tsr_aten_##stem##_opt_(const ctype* x) {                     \
    return x == NULL ? tsr_aten_value_(TSR_VALUE_NONE) : tsr_aten_##stem##_(*x);       \
  }
TSR_ATEN_SCALAR_FORM_(int, int64_t, TSR_VALUE_INT, i)
TSR_ATEN_SCALAR_FORM_(double, double, TSR_VALUE_DOUBLE, d)
TSR_ATEN_SCALAR_FORM_(bool, int32_t, TSR_VALUE_BOOL, b)
TSR_ATEN_SCALAR_FORM_(string, tsr_string, TSR_VALUE_STRING, string)
TSR_ATEN_SCALAR_FORM_(scalar, tsr_scalar, TSR_VALUE_SCALAR, scalar)
TSR_ATEN_SCALAR_FORM_(dtype, tsr_dtype, TSR_VALUE_DTYPE, dtype)
TSR_ATEN_SCALAR_FORM_(device, tsr_device, TSR_VALUE_DEVICE, device)
TSR_ATEN_SCALAR_FORM_(layout, tsr_layout, TSR_VALUE_INT, i)
TSR_ATEN_SCALAR_FORM_(memory_format, tsr_memory_format, TSR_VALUE_INT, i)
#undef TSR_ATEN_SCALAR_FORM_
/* Lists: `data` may be NULL when `count` is 0; for an optional list, NULL data is None and a
 * non-NULL pointer with count 0 the empty list. */
#define TSR_ATEN_LIST_FORM_(stem, ctype, KIND)                                            \
  static inline tsr_value tsr_aten_##stem##_(ctype data, size_t count) {                  \
    tsr_value v = tsr_aten_value_(KIND);                                                  \
    v.u.list.data = data;                                                                 \
    v.u.list.size = count;                                                                \
    return v;                                                                             \
  }                                                                                       \
  static inline tsr_value tsr_aten_##stem##_opt_(ctype data, size_t count) {              \
    return data == NULL ? tsr_aten_value_(TSR_VALUE_NONE) : tsr_aten_##stem##_(data, count); \
  }
TSR_ATEN_LIST_FORM_(int_list, const int64_t*, TSR_VALUE_INT_LIST)
TSR_ATEN_LIST_FORM_(double_list, const double*, TSR_VALUE_DOUBLE_LIST)
TSR_ATEN_LIST_FORM_(bool_list, const uint8_t*, TSR_VALUE_BOOL_LIST)
TSR_ATEN_LIST_FORM_(tensor_list, tsr_tensor* const*, TSR_VALUE_TENSOR_LIST)
#undef TSR_ATEN_LIST_FORM_

/* Returns: each out-parameter gets its tensor, a new reference the caller releases (NULL for a
 * None of a Tensor? return, and after an error); a NULL out-parameter drops its return. */
static inline void tsr_aten_take_tensor_(const tsr_error* error, const tsr_value* v,
                                         tsr_tensor** out) {
  tsr_tensor* t = error == NULL && v->kind == TSR_VALUE_TENSOR ? v->u.tensor : NULL;
  if (out != NULL) {
    *out = t;
  } else if (t != NULL) {
    tsr_tensor_release(t);
  }
}
)";

}  // namespace

bool IsKeyword(std::string_view name) { return kKeywords.count(name) > 0; }

std::string CallsFunctionName(std::string_view op_name) {
  return absl::StrCat("tsr_aten_", MangleOpName(op_name));
}

absl::StatusOr<std::string> GenerateCallsHeader(
    std::string_view banner, std::string_view version, std::string_view mangled,
    const std::vector<std::pair<std::string, FunctionSchema>>& ops) {
  std::string body;
  std::vector<std::string> without;  // ops with no C form
  size_t count = 0;
  for (const auto& [name, schema] : ops) {
    std::vector<std::string> params;
    std::vector<std::string> packs;
    std::vector<std::string> results;  // the out-parameters' names
    std::set<std::string, std::less<>> taken(kLocals.begin(), kLocals.end());
    auto claim = [&](const std::string& param) -> absl::Status {
      // The name is the parameter's last word.
      const std::string id = param.substr(param.find_last_of(' ') + 1);
      if (!taken.insert(id).second) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "op %s: its C parameter '%s' collides with another name of its typed call %s; "
            "rename the argument or teach dispatcher/tools/calls_header.cc a spelling",
            name, id, CallsFunctionName(name)));
      }
      return absl::OkStatus();
    };
    bool mapped = true;
    for (const Argument& arg : schema.arguments) {
      std::string id = arg.name;
      if (kKeywords.count(id)) id += "_";
      const std::optional<CArgument> c = MapArgument(arg, id);
      if (!c) {
        mapped = false;
        break;
      }
      for (const std::string& p : c->params) {
        if (absl::Status s = claim(p); !s.ok()) return s;
        params.push_back(p);
      }
      packs.push_back(c->value);
    }
    for (size_t i = 0; mapped && i < schema.returns.size(); ++i) {
      const std::string id = schema.returns.size() == 1 ? "result" : absl::StrCat("result", i);
      const std::optional<std::string> r = MapReturn(schema.returns[i], id);
      if (!r) {
        mapped = false;
        break;
      }
      if (absl::Status s = claim(*r); !s.ok()) return s;
      params.push_back(*r);
      results.push_back(id);
    }
    if (!mapped) {
      without.push_back(name);
      continue;
    }
    ++count;
    absl::StrAppend(&body, "\n/* ", schema.ToString(), " */\n",
                    Signature(CallsFunctionName(name), params));
    absl::StrAppendFormat(&body,
                          "  static const tsr_op* op_ = NULL;\n  tsr_value args_[%d];\n"
                          "  tsr_value rets_[%d];\n  tsr_error* error_;\n",
                          std::max<size_t>(packs.size(), 1), std::max<size_t>(results.size(), 1));
    for (size_t i = 0; i < packs.size(); ++i) {
      absl::StrAppendFormat(&body, "  args_[%d] = %s;\n", i, packs[i]);
    }
    if (packs.empty()) body += "  (void)args_;\n";
    absl::StrAppendFormat(&body,
                          "  error_ = tsr_aten_call_(&op_, \"%s\", %d, args_, %d, rets_, %d);\n",
                          name, name.size(), packs.size(), results.size());
    for (size_t i = 0; i < results.size(); ++i) {
      absl::StrAppendFormat(&body, "  tsr_aten_take_tensor_(error_, &rets_[%d], %s);\n", i,
                            results[i]);
    }
    body += "  return error_;\n}\n";
  }

  const std::string guard = absl::StrCat("TESSERA_OPSET_CALLS_V", std::string(mangled), "_H_");
  std::string h(banner);
  absl::StrAppendFormat(
      &h,
      "/* Typed calls of op set %s: one C function per op, tsr_aten_<op> ('.' as '_'), that packs\n"
      " * its arguments and calls tsr_op_call_values (%d ops; the %d without a C form are listed\n"
      " * at the end). Header-only: nothing here is an exported symbol. The mapping and an "
      "example:\n"
      " * docs/embedding_guide.md, \"Typed calls\". Include one calls header per translation\n"
      " * unit: each op set's header defines the same names. */\n"
      "#ifndef %s\n#define %s\n\n"
      "#ifdef TSR_ATEN_CALLS_OP_SET\n"
      "#error \"tessera/opset/calls_v%s.h: another op set's calls header is already included\"\n"
      "#endif\n#define TSR_ATEN_CALLS_OP_SET \"%s\"\n\n",
      version, count, without.size(), guard, guard, mangled, version);
  absl::StrAppend(&h, kPrologue, body);
  // Ops whose arguments or returns have no C form (a Generator, a list or string return).
  absl::StrAppend(
      &h, "\n/* Ops of op set ", std::string(version),
      " without a typed call (call them with tsr_op_call):", without.empty() ? " none." : "");
  std::string line = " *";
  for (const std::string& name : without) {
    if (line.size() + name.size() + 1 > 99) {
      absl::StrAppend(&h, "\n", line);
      line = " *";
    }
    absl::StrAppend(&line, " ", name);
  }
  if (!without.empty()) absl::StrAppend(&h, "\n", line, "\n");
  absl::StrAppend(&h, " */\n\n#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif /* ",
                  guard, " */\n");
  return h;
}

}  // namespace tessera::ops_lock
