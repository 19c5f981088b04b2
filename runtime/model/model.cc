#include "runtime/model/model.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/layout.h"
#include "core/status_macros.h"
#include "runtime/model/json_reader.h"
#include "runtime/model/safetensors.h"

namespace tessera {
namespace model {
namespace {

// Note [Model format versions]
// A model file states its format version in its metadata. This reader reads every version up
// to kModelFormatVersion: a newer version may add fields and argument kinds, never change what
// an older one meant, so an older file keeps its meaning (as PyTorch's state_dict versions
// do). A file of a newer version is refused, naming both versions, rather than read in part.
// Fields a reader does not know are errors within a version it knows (a typo is not silently
// dropped); a newer version is the only way to add one.

using Kind = JsonValue::Kind;

absl::Status Invalid(std::string_view where, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrFormat("graph: %s: %s", where, message));
}

absl::Status Expected(std::string_view where, std::string_view expected, const JsonValue& found) {
  return Invalid(where, absl::StrFormat("expected %s, found %s (graph byte %d)", expected,
                                        JsonKindName(found.kind()), found.offset()));
}

// Fields reads an object's members, refusing a missing required one and an unknown one.
class Fields {
 public:
  Fields(const JsonValue& object, std::string where) : object_(object), where_(std::move(where)) {}

  absl::StatusOr<const JsonValue*> Get(std::string_view key, Kind kind, bool required = true) {
    known_.push_back(std::string(key));
    const JsonValue* v = object_.Find(key);
    if (v == nullptr) {
      if (!required) return nullptr;
      return Invalid(where_, absl::StrFormat("expected a field \"%s\" (%s)", key,
                                             JsonKindName(kind)));
    }
    if (v->kind() != kind && !(kind == Kind::kDouble && v->kind() == Kind::kInt)) {
      return Expected(absl::StrFormat("%s.%s", where_, key), JsonKindName(kind), *v);
    }
    return v;
  }

  absl::Status NoOthers() const {
    for (const auto& [key, value] : object_.members()) {
      if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
        return Invalid(where_, absl::StrFormat("unknown field \"%s\" (graph byte %d)", key,
                                               value.offset()));
      }
    }
    return absl::OkStatus();
  }

 private:
  const JsonValue& object_;
  std::string where_;
  std::vector<std::string> known_;
};

absl::StatusOr<ScalarType> ReadDtype(const JsonValue& v, std::string_view where) {
  if (v.kind() != Kind::kString) return Expected(where, "a dtype name", v);
  std::optional<ScalarType> t = ParseScalarType(v.as_string());
  if (!t) {
    return Invalid(where, absl::StrFormat("unknown dtype \"%s\" (graph byte %d)", v.as_string(),
                                          v.offset()));
  }
  return *t;
}

absl::StatusOr<double> ReadFloat(const JsonValue& v, std::string_view where) {
  if (v.is_number()) return v.as_double();
  if (v.kind() == Kind::kString) {
    const std::string& s = v.as_string();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return Expected(where, "a number (or \"inf\", \"-inf\", \"nan\")", v);
}

class GraphReader {
 public:
  explicit GraphReader(Model* model) : model_(model) {}

  // ReadDims: the graph's "dims" (format version 2; Note [Dynamic dims] in dims.h).
  absl::Status ReadDims(const JsonValue& dims) {
    if (dims.items().size() > kMaxDims) {
      return Invalid("dims", absl::StrFormat("expected at most %d dims, found %d", kMaxDims,
                                             dims.items().size()));
    }
    for (size_t i = 0; i < dims.items().size(); ++i) {
      const JsonValue& d = dims.items()[i];
      const std::string where = absl::StrFormat("dims[%d]", i);
      if (d.kind() != Kind::kObject) return Expected(where, "an object", d);
      Fields f(d, where);
      TSR_ASSIGN_OR_RETURN(auto name, f.Get("name", Kind::kString));
      TSR_ASSIGN_OR_RETURN(auto min, f.Get("min", Kind::kInt));
      TSR_ASSIGN_OR_RETURN(auto max, f.Get("max", Kind::kInt, /*required=*/false));
      TSR_RETURN_IF_ERROR(f.NoOthers());
      GraphDim dim;
      dim.name = name->as_string();
      dim.min = min->as_int();
      if (max != nullptr) dim.max = max->as_int();
      if (dim.name.empty()) return Invalid(where, "expected a non-empty name");
      if (dim_ids_.contains(dim.name)) {
        return Invalid(where, absl::StrFormat("dim \"%s\" is declared twice", dim.name));
      }
      if (dim.min < 0 || dim.max < dim.min) {
        return Invalid(where, absl::StrFormat("expected 0 <= min <= max, found min %d, max %d",
                                              dim.min, dim.max));
      }
      dim_ids_[dim.name] = static_cast<int32_t>(model_->dims.size());
      model_->dims.push_back(std::move(dim));
    }
    return absl::OkStatus();
  }

  // ReadSizeInt: an integer of an input's sizes or an int/ints argument: a JSON integer, or
  // (format version 2, dims declared) a size expression {"expr": [[coefficient, dim...], ...]}.
  // A constant sets `*value` and `*expr` to it; an expression sets `*expr`, `*value` to 0 and
  // `*dynamic`.
  absl::Status ReadSizeInt(const JsonValue& v, const std::string& where, int64_t* value,
                           SizeExpr* expr, bool* dynamic) {
    if (v.kind() == Kind::kInt) {
      *value = v.as_int();
      *expr = SizeExpr::Constant(*value);
      return absl::OkStatus();
    }
    if (v.kind() != Kind::kObject || model_->dims.empty()) {
      return Expected(where,
                      model_->dims.empty() ? "an integer"
                                           : "an integer or a size expression "
                                             "({\"expr\": [[coefficient, dim...], ...]})",
                      v);
    }
    Fields f(v, where);
    TSR_ASSIGN_OR_RETURN(auto terms, f.Get("expr", Kind::kArray));
    TSR_RETURN_IF_ERROR(f.NoOthers());
    if (terms->items().size() > kMaxTerms) {
      return Invalid(where, absl::StrFormat("expected at most %d terms, found %d", kMaxTerms,
                                            terms->items().size()));
    }
    SizeExpr e;
    for (const JsonValue& t : terms->items()) {
      if (t.kind() != Kind::kArray || t.items().empty() || t.items()[0].kind() != Kind::kInt) {
        return Expected(where + ".expr", "a term [coefficient, dim...] (an integer first)", t);
      }
      if (t.items().size() - 1 > kMaxFactorsPerTerm) {
        return Invalid(where, absl::StrFormat("expected at most %d dims in a term, found %d",
                                              kMaxFactorsPerTerm, t.items().size() - 1));
      }
      SizeExpr::Term term{t.items()[0].as_int(), {}};
      for (size_t k = 1; k < t.items().size(); ++k) {
        const JsonValue& name = t.items()[k];
        if (name.kind() != Kind::kString) return Expected(where + ".expr", "a dim's name", name);
        auto it = dim_ids_.find(name.as_string());
        if (it == dim_ids_.end()) {
          return Invalid(where, absl::StrFormat("uses dim \"%s\", which the graph's dims do "
                                                "not declare (graph byte %d)",
                                                name.as_string(), name.offset()));
        }
        term.dims.push_back(it->second);
      }
      e.terms.push_back(std::move(term));
    }
    *value = 0;
    *expr = std::move(e);
    *dynamic = true;
    return absl::OkStatus();
  }

  absl::Status DefineValue(const std::string& name, std::string_view where, int32_t* id) {
    if (name.empty()) return Invalid(where, "expected a non-empty value name");
    auto [it, inserted] = ids_.try_emplace(name, static_cast<int32_t>(model_->value_names.size()));
    if (!inserted) {
      return Invalid(where, absl::StrFormat("value \"%s\" is defined twice", name));
    }
    model_->value_names.push_back(name);
    *id = it->second;
    return absl::OkStatus();
  }

  absl::StatusOr<int32_t> Use(const JsonValue& v, std::string_view where) {
    if (v.kind() != Kind::kString) return Expected(where, "a value name", v);
    auto it = ids_.find(v.as_string());
    if (it == ids_.end()) {
      return Invalid(where, absl::StrFormat(
                                "uses \"%s\", which no input, constant or earlier node defines",
                                v.as_string()));
    }
    return it->second;
  }

  absl::StatusOr<GraphArg> ReadArg(const JsonValue& v, const std::string& where) {
    if (v.kind() != Kind::kObject || v.members().size() != 1) {
      return Expected(where, "an object with one member, the argument's kind", v);
    }
    const auto& [tag, x] = v.members()[0];
    const std::string at = absl::StrCat(where, ".", tag);
    GraphArg a;
    using K = GraphArg::Kind;
    if (tag == "none") {
      if (!x.is_null()) return Expected(at, "null", x);
      a.kind = K::kNone;
    } else if (tag == "tensor") {
      a.kind = K::kTensor;
      TSR_ASSIGN_OR_RETURN(auto id, Use(x, at));
      a.values.push_back(id);
    } else if (tag == "tensors") {
      a.kind = K::kTensors;
      if (x.kind() != Kind::kArray) return Expected(at, "an array of value names", x);
      for (const JsonValue& e : x.items()) {
        if (e.is_null()) {
          a.values.push_back(-1);
          continue;
        }
        TSR_ASSIGN_OR_RETURN(auto id, Use(e, at));
        a.values.push_back(id);
      }
    } else if (tag == "int") {
      a.kind = K::kInt;
      SizeExpr e;
      bool dynamic = false;
      TSR_RETURN_IF_ERROR(ReadSizeInt(x, at, &a.i, &e, &dynamic));
      if (dynamic) a.exprs.push_back(std::move(e));
    } else if (tag == "float") {
      a.kind = K::kFloat;
      TSR_ASSIGN_OR_RETURN(auto d, ReadFloat(x, at));
      a.d = d;
    } else if (tag == "bool") {
      if (x.kind() != Kind::kBool) return Expected(at, "true or false", x);
      a.kind = K::kBool;
      a.b = x.as_bool();
    } else if (tag == "str") {
      if (x.kind() != Kind::kString) return Expected(at, "a string", x);
      a.kind = K::kStr;
      a.s = x.as_string();
    } else if (tag == "dtype") {
      a.kind = K::kDtype;
      TSR_ASSIGN_OR_RETURN(auto t, ReadDtype(x, at));
      a.dtype = t;
    } else if (tag == "device") {
      if (x.kind() != Kind::kString) return Expected(at, "a device such as \"cpu\"", x);
      a.kind = K::kDevice;
      a.s = x.as_string();
    } else if (tag == "memory_format") {
      std::optional<MemoryFormat> f;
      if (x.kind() == Kind::kString) f = ParseMemoryFormat(x.as_string());
      if (!f) return Expected(at, "a memory format name (\"contiguous_format\", ...)", x);
      a.kind = K::kMemoryFormat;
      a.i = static_cast<int64_t>(*f);
    } else if (tag == "layout") {
      std::optional<Layout> l;
      if (x.kind() == Kind::kString) l = ParseLayout(x.as_string());
      if (!l) return Expected(at, "a layout name (\"strided\")", x);
      a.kind = K::kLayout;
      a.i = static_cast<int64_t>(*l);
    } else if (tag == "ints" || tag == "floats" || tag == "bools") {
      if (x.kind() != Kind::kArray) return Expected(at, "an array", x);
      a.kind = tag == "ints" ? K::kInts : tag == "floats" ? K::kFloats : K::kBools;
      bool dynamic = false;
      for (const JsonValue& e : x.items()) {
        if (a.kind == K::kInts) {
          int64_t value;
          SizeExpr expr;
          TSR_RETURN_IF_ERROR(ReadSizeInt(e, at, &value, &expr, &dynamic));
          a.ints.push_back(value);
          a.exprs.push_back(std::move(expr));
        } else if (a.kind == K::kFloats) {
          TSR_ASSIGN_OR_RETURN(auto d, ReadFloat(e, at));
          a.floats.push_back(d);
        } else {
          if (e.kind() != Kind::kBool) return Expected(at, "true or false", e);
          a.bools.push_back(e.as_bool());
        }
      }
      if (!dynamic) a.exprs.clear();  // all constants: a plain list
    } else {
      return Invalid(where, absl::StrFormat(
                                "unknown argument kind \"%s\" (expected none, tensor, tensors, "
                                "int, float, bool, str, dtype, device, memory_format, layout, "
                                "ints, floats or bools)",
                                tag));
    }
    return a;
  }

  absl::Status ReadInputs(const JsonValue& inputs) {
    for (size_t i = 0; i < inputs.items().size(); ++i) {
      const JsonValue& in = inputs.items()[i];
      const std::string where = absl::StrFormat("inputs[%d]", i);
      if (in.kind() != Kind::kObject) return Expected(where, "an object", in);
      Fields f(in, where);
      TSR_ASSIGN_OR_RETURN(auto name, f.Get("name", Kind::kString));
      TSR_ASSIGN_OR_RETURN(auto dtype, f.Get("dtype", Kind::kString));
      TSR_ASSIGN_OR_RETURN(auto sizes, f.Get("sizes", Kind::kArray));
      TSR_RETURN_IF_ERROR(f.NoOthers());
      GraphInput input;
      input.name = name->as_string();
      TSR_ASSIGN_OR_RETURN(auto t, ReadDtype(*dtype, where + ".dtype"));
      input.dtype = t;
      bool dynamic = false;
      for (const JsonValue& d : sizes->items()) {
        int64_t size;
        SizeExpr expr;
        bool this_dynamic = false;
        TSR_RETURN_IF_ERROR(ReadSizeInt(d, where + ".sizes", &size, &expr, &this_dynamic));
        if (!this_dynamic && size < 0) {
          return Expected(where + ".sizes", "non-negative integers", d);
        }
        if (this_dynamic) {
          // The dim's source, if this is the first axis that is exactly the dim.
          if (std::optional<int32_t> dim = expr.single_dim();
              dim && model_->dims[*dim].input < 0) {
            model_->dims[*dim].input = static_cast<int32_t>(model_->inputs.size());
            model_->dims[*dim].axis = static_cast<int32_t>(input.sizes.size());
          }
          size = -1;
        }
        dynamic |= this_dynamic;
        input.sizes.push_back(size);
        input.size_exprs.push_back(std::move(expr));
      }
      if (!dynamic) input.size_exprs.clear();
      TSR_RETURN_IF_ERROR(DefineValue(input.name, where, &input.value));
      model_->inputs.push_back(std::move(input));
    }
    for (const GraphDim& dim : model_->dims) {
      if (dim.input < 0) {
        return Invalid("dims", absl::StrFormat(
                                   "dim \"%s\" is not the size of any input axis (some input's "
                                   "sizes must hold {\"expr\": [[1, \"%s\"]]} for a run to "
                                   "read it from)",
                                   dim.name, dim.name));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadNodes(const JsonValue& nodes) {
    for (size_t n = 0; n < nodes.items().size(); ++n) {
      const JsonValue& node = nodes.items()[n];
      const std::string where = absl::StrFormat("nodes[%d]", n);
      if (node.kind() != Kind::kObject) return Expected(where, "an object", node);
      Fields f(node, where);
      TSR_ASSIGN_OR_RETURN(auto op, f.Get("op", Kind::kString));
      TSR_ASSIGN_OR_RETURN(auto schema, f.Get("schema", Kind::kString));
      TSR_ASSIGN_OR_RETURN(auto args, f.Get("args", Kind::kArray));
      TSR_ASSIGN_OR_RETURN(auto outputs, f.Get("outputs", Kind::kArray));
      TSR_RETURN_IF_ERROR(f.NoOthers());
      GraphNode g;
      g.op = op->as_string();
      g.schema = schema->as_string();
      const std::string node_where = absl::StrFormat("%s (%s)", where, g.op);
      for (size_t i = 0; i < args->items().size(); ++i) {
        TSR_ASSIGN_OR_RETURN(auto arg, ReadArg(args->items()[i], absl::StrFormat("%s.args[%d]", node_where, i)));
        g.args.push_back(std::move(arg));
      }
      for (const JsonValue& out : outputs->items()) {
        if (out.kind() != Kind::kString) return Expected(node_where + ".outputs", "names", out);
        int32_t id;
        if (absl::Status s = DefineValue(out.as_string(), node_where + ".outputs", &id); !s.ok()) {
          return s;
        }
        g.outputs.push_back(id);
      }
      model_->nodes.push_back(std::move(g));
    }
    return absl::OkStatus();
  }

  absl::Status ReadOutputs(const JsonValue& outputs) {
    for (size_t i = 0; i < outputs.items().size(); ++i) {
      const JsonValue& out = outputs.items()[i];
      const std::string where = absl::StrFormat("outputs[%d]", i);
      if (out.kind() != Kind::kObject) return Expected(where, "an object", out);
      Fields f(out, where);
      TSR_ASSIGN_OR_RETURN(auto name, f.Get("name", Kind::kString));
      TSR_ASSIGN_OR_RETURN(auto value, f.Get("value", Kind::kString));
      TSR_RETURN_IF_ERROR(f.NoOthers());
      TSR_ASSIGN_OR_RETURN(auto id, Use(*value, where + ".value"));
      model_->outputs.push_back({name->as_string(), id});
    }
    return absl::OkStatus();
  }

 private:
  Model* model_;
  absl::flat_hash_map<std::string, int32_t> ids_;
  absl::flat_hash_map<std::string, int32_t> dim_ids_;
};

// HostTensor: a CPU tensor of the file's bytes. With an `owner` of the bytes (a mapped file)
// an aligned tensor is a view of them that keeps the owner alive, with no copy; otherwise (the
// caller's borrowed buffer, a misaligned tensor) the bytes are copied.
absl::StatusOr<Tensor> HostTensor(const SafetensorsTensor& t,
                                  const std::shared_ptr<const void>& owner) {
  const size_t item = ElementSize(t.dtype);
  if (owner != nullptr && reinterpret_cast<uintptr_t>(t.bytes.data()) % item == 0) {
    DataPtr ptr;
    ptr.data = const_cast<char*>(t.bytes.data());
    ptr.owner = owner;
    ptr.device = Device(DeviceType::kCPU);
    TSR_ASSIGN_OR_RETURN(DimVector strides, ContiguousStrides(t.shape));
    return FromStorage(Ref<StorageImpl>::Make(std::move(ptr), t.bytes.size()), t.dtype, t.shape,
                       strides, 0);
  }
  absl::StatusOr<Tensor> out = Empty(t.shape, t.dtype, Device(DeviceType::kCPU));
  if (!out.ok()) return out.status();
  if (!t.bytes.empty()) std::memcpy(out->data_ptr(), t.bytes.data(), t.bytes.size());
  return out;
}

}  // namespace

bool FitsFixedSizes(const GraphInput& in, IntArrayRef sizes) {
  if (sizes.size() != in.sizes.size()) return false;
  for (size_t a = 0; a < sizes.size(); ++a) {
    if (in.sizes[a] >= 0 && in.sizes[a] != sizes[a]) return false;
  }
  return true;
}

absl::StatusOr<std::vector<int64_t>> BindDims(const Model& m, absl::Span<const IntArrayRef> sizes) {
  std::vector<int64_t> dims(m.dims.size());
  auto source = [&](const GraphDim& d) {
    return absl::StrFormat("input %d ('%s') axis %d", d.input, m.inputs[d.input].name, d.axis);
  };
  for (size_t d = 0; d < dims.size(); ++d) {
    const GraphDim& dim = m.dims[d];
    dims[d] = sizes[dim.input][dim.axis];
    if (dims[d] < dim.min || dims[d] > dim.max) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s gives %s = %d, outside the range the model was exported for, %s", source(dim),
          dim.name, dims[d],
          dim.max == std::numeric_limits<int64_t>::max()
              ? absl::StrFormat("at least %d", dim.min)
              : absl::StrFormat("[%d, %d]", dim.min, dim.max)));
    }
  }
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const GraphInput& in = m.inputs[i];
    for (size_t a = 0; a < in.size_exprs.size(); ++a) {
      absl::StatusOr<int64_t> want = in.size_exprs[a].Evaluate(dims);
      if (want.ok() && *want == sizes[i][a]) continue;
      std::vector<std::string> bound;
      for (size_t d = 0; d < dims.size(); ++d) {
        bound.push_back(
            absl::StrFormat("%s = %d from %s", m.dims[d].name, dims[d], source(m.dims[d])));
      }
      return absl::InvalidArgumentError(absl::StrFormat(
          "input %d ('%s'): expected sizes %s, whose axis %d is %s, got %s (%s)", i, in.name,
          SizesToString(in.sizes, in.size_exprs, m.dims), a,
          want.ok() ? absl::StrCat(*want) : std::string(want.status().message()),
          ShapeToString(sizes[i]), absl::StrJoin(bound, ", ")));
    }
  }
  return dims;
}

absl::StatusOr<std::shared_ptr<const Model>> ReadModel(std::string_view file,
                                                     std::shared_ptr<const void> owner) {
  absl::StatusOr<SafetensorsFile> st = ParseSafetensors(file);
  if (!st.ok()) return st.status();
  auto meta = [&](std::string_view key) -> const std::string* {
    for (const auto& [k, v] : st->metadata) {
      if (k == key) return &v;
    }
    return nullptr;
  };
  const std::string* format = meta("format");
  if (format == nullptr || *format != kModelFormat) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "expected a Tessera model (__metadata__ \"format\": \"%s\"), found %s", kModelFormat,
        format == nullptr ? "a safetensors file without that field"
                          : absl::StrCat("format \"", *format, "\"")));
  }
  const std::string* version_text = meta("format_version");
  int version = 0;
  if (version_text == nullptr || !absl::SimpleAtoi(*version_text, &version) || version < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "expected __metadata__ \"format_version\" to be a positive integer, found %s",
        version_text == nullptr ? "none" : absl::StrCat("\"", *version_text, "\"")));
  }
  if (version > kModelFormatVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the model file has format version %d, newer than this runtime reads (up to %d): "
        "export it again with this release's exporter, or use a newer runtime",
        version, kModelFormatVersion));
  }
  const std::string* graph_text = meta("graph");
  if (graph_text == nullptr) {
    return absl::InvalidArgumentError("expected __metadata__ \"graph\" (the graph as JSON)");
  }
  absl::StatusOr<JsonValue> graph = ParseJson(*graph_text, "graph");
  if (!graph.ok()) return graph.status();
  if (graph->kind() != Kind::kObject) return Expected("the graph", "an object", *graph);

  auto model = std::make_shared<Model>();
  model->format_version = version;
  Fields f(*graph, "the graph");
  TSR_ASSIGN_OR_RETURN(auto name, f.Get("name", Kind::kString));
  TSR_ASSIGN_OR_RETURN(auto producer, f.Get("producer", Kind::kString));
  TSR_ASSIGN_OR_RETURN(auto op_set, f.Get("op_set", Kind::kString));
  TSR_ASSIGN_OR_RETURN(auto inputs, f.Get("inputs", Kind::kArray));
  TSR_ASSIGN_OR_RETURN(auto nodes, f.Get("nodes", Kind::kArray));
  TSR_ASSIGN_OR_RETURN(auto outputs, f.Get("outputs", Kind::kArray));
  const JsonValue* dims = nullptr;
  if (version >= 2) {  // Note [Model format versions]: dims came with version 2
    TSR_ASSIGN_OR_RETURN(dims, f.Get("dims", Kind::kArray, /*required=*/false));
  }
  TSR_RETURN_IF_ERROR(f.NoOthers());
  model->name = name->as_string();
  model->producer = producer->as_string();
  model->op_set = op_set->as_string();

  GraphReader reader(model.get());
  if (dims != nullptr) TSR_RETURN_IF_ERROR(reader.ReadDims(*dims));
  TSR_RETURN_IF_ERROR(reader.ReadInputs(*inputs));
  // Constants are values too, defined after the inputs and before the nodes.
  absl::flat_hash_map<std::string, const SafetensorsTensor*> examples, expected;
  for (const SafetensorsTensor& t : st->tensors) {
    const std::string_view n = t.name;
    auto slash = n.find('/');
    const std::string_view group = n.substr(0, slash == n.npos ? 0 : slash);
    const std::string rest(n.substr(slash == n.npos ? 0 : slash + 1));
    if (group == "constant") {
      int32_t id;
      if (absl::Status s = reader.DefineValue(rest, absl::StrFormat("tensor \"%s\"", n), &id);
          !s.ok()) {
        return s;
      }
      TSR_ASSIGN_OR_RETURN(auto tensor, HostTensor(t, owner));
      model->constants.emplace_back(id, std::move(tensor));
    } else if (group == "input") {
      examples[rest] = &t;
    } else if (group == "expected") {
      expected[rest] = &t;
    } else {
      return absl::InvalidArgumentError(absl::StrFormat(
          "tensor \"%s\": expected a name in constant/, input/ or expected/", n));
    }
  }
  TSR_RETURN_IF_ERROR(reader.ReadNodes(*nodes));
  TSR_RETURN_IF_ERROR(reader.ReadOutputs(*outputs));

  for (const GraphInput& in : model->inputs) {
    Tensor example;
    if (auto it = examples.find(in.name); it != examples.end()) {
      const SafetensorsTensor& t = *it->second;
      if (t.dtype != in.dtype || !FitsFixedSizes(in, t.shape)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "tensor \"input/%s\": expected the input's %s %s, found %s %s", in.name,
            ScalarTypeName(in.dtype), SizesToString(in.sizes, in.size_exprs, model->dims),
            ScalarTypeName(t.dtype), ShapeToString(t.shape)));
      }
      TSR_ASSIGN_OR_RETURN(auto tensor, HostTensor(t, owner));
      example = std::move(tensor);
      examples.erase(it);
    }
    model->example_inputs.push_back(std::move(example));
  }
  for (const GraphOutput& out : model->outputs) {
    Tensor want;
    if (auto it = expected.find(out.name); it != expected.end()) {
      TSR_ASSIGN_OR_RETURN(auto tensor, HostTensor(*it->second, owner));
      want = std::move(tensor);
      expected.erase(it);
    }
    model->expected_outputs.push_back(std::move(want));
  }
  // The example inputs, when all are given, must agree on the dims as a run's inputs must.
  if (!model->dims.empty() &&
      std::all_of(model->example_inputs.begin(), model->example_inputs.end(),
                  [](const Tensor& t) { return t.defined(); })) {
    std::vector<IntArrayRef> sizes;
    for (const Tensor& t : model->example_inputs) sizes.push_back(t.sizes());
    if (absl::StatusOr<std::vector<int64_t>> bound = BindDims(*model, sizes); !bound.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the example inputs (input/...): ", bound.status().message()));
    }
  }
  for (const auto* left : {&examples, &expected}) {
    if (!left->empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "tensor \"%s\" names no %s of the graph", left->begin()->second->name,
          left == &examples ? "input" : "output"));
    }
  }
  return std::shared_ptr<const Model>(std::move(model));
}

absl::StatusOr<std::shared_ptr<const Model>> ReadModelFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int why = errno;
    const std::string message =
        absl::StrFormat("model '%s': cannot open it: %s", path, std::strerror(why));
    return why == ENOENT || why == ENOTDIR ? absl::NotFoundError(message)
                                           : absl::PermissionDeniedError(message);
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrFormat("model '%s': expected a regular file", path));
  }
  // The file is mapped privately (copy-on-write: an op that writes a constant in place changes
  // the process's copy, never the file), and the constants are views of the mapping.
  const size_t size = static_cast<size_t>(info.st_size);
  void* base = size == 0 ? nullptr
                         : mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_POPULATE,
                                fd, 0);
  const int map_errno = errno;
  close(fd);
  if (base == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrFormat("model '%s': mapping its %d bytes failed: %s",
                                                        path, size, std::strerror(map_errno)));
  }
  std::shared_ptr<const void> mapping(base, [size](const void* p) {
    if (p != nullptr) munmap(const_cast<void*>(p), size);
  });
  absl::StatusOr<std::shared_ptr<const Model>> model =
      ReadModel(std::string_view(static_cast<const char*>(base), size), mapping);
  if (!model.ok()) {
    return absl::Status(model.status().code(),
                        absl::StrFormat("model '%s': %s", path, model.status().message()));
  }
  return model;
}

}  // namespace model
}  // namespace tessera
