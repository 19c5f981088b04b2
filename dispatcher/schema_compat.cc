#include "dispatcher/schema_compat.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tessera {

// Note [Schema compatibility]
// A plugin's kernel is bound to its op's schema by position: a boxed kernel reads argument i
// from stack slot i, a typed C kernel gets one C parameter per argument, in order. So, unlike
// PyTorch's check, which lets an argument's type widen (int -> int?) because TorchScript
// callers pass values by name and type, any change of an existing argument's name, type, alias
// annotation or default is breaking here; only what an old caller or kernel can be adapted to
// is backward compatible: new trailing arguments with defaults (the runtime drops them for an
// old kernel, fills them in for an old caller), placed before the out arguments of an out= form
// (PyTorch's findFirstOutArg split), a default added, and a keyword-only argument made
// positional (the stack position does not change).

std::string_view SchemaChangeClassName(SchemaChangeClass c) {
  switch (c) {
    case SchemaChangeClass::kNone:
      return "unchanged";
    case SchemaChangeClass::kBackwardCompatible:
      return "backward compatible";
    case SchemaChangeClass::kBreaking:
      return "breaking";
  }
  return "<invalid>";
}

namespace {

bool IsOutArgument(const Argument& a) {
  return a.kwarg_only && a.alias.has_value() && a.alias->is_write;
}

// FirstOut: the index of the first out argument, or the argument count.
size_t FirstOut(const std::vector<Argument>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (IsOutArgument(args[i])) return i;
  }
  return args.size();
}

std::string TypeText(const Argument& a) {
  Argument unnamed = a;
  unnamed.name.clear();
  unnamed.default_value.reset();
  return unnamed.ToString();  // the type with its alias annotation: `Tensor(a!)`
}

std::string DefaultText(const Argument& a) {
  const std::string text = a.ToString();
  const size_t eq = text.find('=');
  return eq == std::string::npos ? "" : text.substr(eq + 1);
}

class Comparison {
 public:
  Comparison(const FunctionSchema& old_schema, const FunctionSchema& new_schema)
      : old_(old_schema), new_(new_schema) {}

  void Breaking(std::string finding) {
    change_.change_class = SchemaChangeClass::kBreaking;
    change_.forward_compatible = false;
    change_.findings.push_back(std::move(finding));
  }
  void Compatible(std::string finding, bool forward_compatible) {
    if (change_.change_class == SchemaChangeClass::kNone) {
      change_.change_class = SchemaChangeClass::kBackwardCompatible;
    }
    change_.forward_compatible = change_.forward_compatible && forward_compatible;
    change_.findings.push_back(std::move(finding));
  }

  // CompareArgument compares old argument `o` (at position `oi`) with its new counterpart `n`.
  void CompareArgument(const Argument& o, size_t oi, const Argument& n) {
    if (o.name != n.name) {
      // Reordered when the old name is still there, at another position.
      for (size_t j = 0; j < new_.arguments.size(); ++j) {
        if (new_.arguments[j].name == o.name) {
          Breaking(absl::StrFormat("argument '%s' reordered: expected at position %d, found at %d",
                                   o.name, oi, j));
          return;
        }
      }
      Breaking(
          absl::StrFormat("argument %d renamed: expected '%s', found '%s'", oi, o.name, n.name));
      return;
    }
    if (!(o.type == n.type)) {
      Breaking(absl::StrFormat("argument '%s' retyped: expected %s, found %s", o.name,
                               o.type.ToString(), n.type.ToString()));
    } else if (!(o.alias == n.alias)) {
      Breaking(absl::StrFormat("alias annotation of argument '%s' changed: expected %s, found %s",
                               o.name, TypeText(o), TypeText(n)));
    }
    if (n.kwarg_only && !o.kwarg_only) {
      Breaking(absl::StrFormat("argument '%s' became keyword-only", o.name));
    } else if (o.kwarg_only && !n.kwarg_only) {
      Compatible(absl::StrFormat("argument '%s' became positional", o.name), true);
    }
    const std::string od = DefaultText(o), nd = DefaultText(n);
    if (o.default_value && !n.default_value) {
      Breaking(absl::StrFormat("default of argument '%s' removed: expected =%s, found none", o.name,
                               od));
    } else if (o.default_value && od != nd) {
      Breaking(absl::StrFormat("default of argument '%s' changed: expected =%s, found =%s", o.name,
                               od, nd));
    } else if (!o.default_value && n.default_value) {
      Compatible(absl::StrFormat("default =%s added to argument '%s'", nd, o.name), false);
    }
  }

  SchemaChange Run() {
    if (old_.FullName() != new_.FullName()) {
      Breaking(
          absl::StrFormat("op renamed: expected %s, found %s", old_.FullName(), new_.FullName()));
      return change_;
    }
    Returns();
    const std::vector<Argument>& oa = old_.arguments;
    const std::vector<Argument>& na = new_.arguments;
    const size_t old_out = FirstOut(oa), new_out = FirstOut(na);
    const size_t old_outs = oa.size() - old_out, new_outs = na.size() - new_out;
    for (size_t i = 0; i < std::min(old_out, new_out); ++i) CompareArgument(oa[i], i, na[i]);
    for (size_t i = new_out; i < old_out; ++i) {
      Breaking(absl::StrFormat("argument '%s' removed: expected %s at position %d, found none",
                               oa[i].name, oa[i].ToString(), i));
    }
    for (size_t i = old_out; i < new_out; ++i) {
      if (na[i].default_value) {
        change_.added_arguments.push_back(i);
        Compatible(absl::StrFormat("argument %s added at position %d, with a default",
                                   na[i].ToString(), i),
                   false);
      } else {
        Breaking(absl::StrFormat("argument %s added at position %d without a default",
                                 na[i].ToString(), i));
      }
    }
    if (old_outs != new_outs) {
      Breaking(absl::StrFormat("out arguments changed: expected %d, found %d", old_outs, new_outs));
    } else {
      for (size_t k = 0; k < old_outs; ++k) {
        CompareArgument(oa[old_out + k], old_out + k, na[new_out + k]);
      }
    }
    // Whatever the rules above do not name is still a difference: never report it as none.
    if (change_.change_class == SchemaChangeClass::kNone && old_.ToString() != new_.ToString()) {
      Breaking(absl::StrFormat("schema changed: expected %s, found %s", old_.ToString(),
                               new_.ToString()));
    }
    return change_;
  }

 private:
  void Returns() {
    const std::vector<Argument>& o = old_.returns;
    const std::vector<Argument>& n = new_.returns;
    auto join = [](const std::vector<Argument>& rs) {
      return absl::StrCat(
          "(",
          absl::StrJoin(rs, ", ",
                        [](std::string* out, const Argument& a) { out->append(a.ToString()); }),
          ")");
    };
    if (o.size() != n.size()) {
      Breaking(absl::StrFormat("returns changed: expected %s, found %s", join(o), join(n)));
      return;
    }
    for (size_t i = 0; i < o.size(); ++i) {
      if (o[i].name != n[i].name || !(o[i].type == n[i].type)) {
        Breaking(absl::StrFormat("return %d changed: expected %s, found %s", i, o[i].ToString(),
                                 n[i].ToString()));
      } else if (!(o[i].alias == n[i].alias)) {
        Breaking(absl::StrFormat("alias annotation of return %d changed: expected %s, found %s", i,
                                 TypeText(o[i]), TypeText(n[i])));
      }
    }
  }

  const FunctionSchema& old_;
  const FunctionSchema& new_;
  SchemaChange change_;
};

}  // namespace

SchemaChange CompareSchemas(const FunctionSchema& old_schema, const FunctionSchema& new_schema) {
  return Comparison(old_schema, new_schema).Run();
}

}  // namespace tessera
