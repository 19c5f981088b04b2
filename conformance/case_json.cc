#include "conformance/case_json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace tessera {
namespace conformance {
namespace {

const char* KindName(Json::Kind k) {
  switch (k) {
    case Json::Kind::kNull:
      return "null";
    case Json::Kind::kBool:
      return "a bool";
    case Json::Kind::kNumber:
      return "a number";
    case Json::Kind::kString:
      return "a string";
    case Json::Kind::kArray:
      return "an array";
    case Json::Kind::kObject:
      return "an object";
  }
  return "?";
}

// Field: member `key` of `j`, which must be of `kind`.
const Json& Field(const Json& j, const char* key, Json::Kind kind) {
  const Json* v = j.find(key);
  if (v == nullptr || v->kind() != kind) {
    throw CaseJsonError(std::string("expected \"") + key + "\" to be " + KindName(kind) +
                        ", found " + (v ? KindName(v->kind()) : "nothing"));
  }
  return *v;
}

int64_t Integer(const Json& v, const char* what) { return IntegerFrom(v, what); }

std::vector<int64_t> Integers(const Json& j, const char* key) {
  std::vector<int64_t> out;
  for (const Json& v : Field(j, key, Json::Kind::kArray).items()) out.push_back(Integer(v, key));
  return out;
}

// Drawn values: floating in [-1, 1], so that sums over a real layer's thousands of products
// stay within float32's tolerance; integers and bool as MakeTensor draws them.
MakeOptions DrawRange(tsr_dtype dtype) {
  MakeOptions range;
  if (IsFloating(dtype)) {
    range.low = -1;
    range.high = 1;
  }
  return range;
}

// Drawn values of a tensor laid out with `strides` from `offset`: one value per memory
// element, so elements that share memory (stride 0) share their value, as on the device.
std::vector<double> DrawValues(const HostTensor& t, const std::vector<int64_t>& strides,
                               int64_t offset, Rng& rng) {
  const std::vector<int64_t> at = StridedPositions(t.shape, strides, offset);
  int64_t extent = 0;
  for (int64_t p : at) extent = std::max(extent, p + 1);
  const HostTensor memory = MakeTensor({extent}, t.dtype, rng, DrawRange(t.dtype));
  std::vector<double> values;
  values.reserve(at.size());
  for (int64_t p : at) values.push_back(memory.values[static_cast<size_t>(p)]);
  return values;
}

}  // namespace

int64_t IntegerFrom(const Json& v, const char* what) {
  if (v.kind() == Json::Kind::kString) {  // beyond 2^53, exactly (a recording writes them so)
    const std::string& text = v.as_string();
    errno = 0;
    char* end = nullptr;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE) {
      throw CaseJsonError(std::string("expected ") + what +
                          " to be an integer (a number, or its digits as a string), found \"" +
                          text + "\"");
    }
    return n;
  }
  const double d = NumberFrom(v);
  // [-2^63, 2^63): what an int64 holds; NaN and infinities fail the comparison too.
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != std::floor(d)) {
    throw CaseJsonError(std::string("expected ") + what + " to be an integer, found " +
                        std::to_string(d));
  }
  return static_cast<int64_t>(d);
}

double NumberFrom(const Json& v) {
  if (v.kind() == Json::Kind::kString) {
    const std::string& s = v.as_string();
    if (s == "nan" || s == "inf" || s == "-inf") return std::strtod(s.c_str(), nullptr);
    throw CaseJsonError("expected a number, or \"nan\", \"inf\", \"-inf\", found \"" + s + "\"");
  }
  if (v.kind() == Json::Kind::kBool) return v.as_bool();
  if (v.kind() != Json::Kind::kNumber) {
    throw CaseJsonError(std::string("expected a number, found ") + KindName(v.kind()));
  }
  return v.as_number();
}

tsr_dtype DtypeFrom(const Json& v) {
  if (v.kind() != Json::Kind::kString) {
    throw CaseJsonError(std::string("expected a dtype name, found ") + KindName(v.kind()));
  }
  for (tsr_dtype d : kAllDtypes) {
    if (v.as_string() == DtypeName(d)) return d;
  }
  throw CaseJsonError("expected a dtype name (bool, uint8, ..., float64), found '" + v.as_string() +
                      "'");
}

HostTensor TensorFrom(const Json& j, Rng* draw, std::vector<int64_t>* strides,
                      int64_t* storage_offset) {
  if (j.kind() != Json::Kind::kObject) {
    throw CaseJsonError(std::string("expected a tensor object, found ") + KindName(j.kind()));
  }
  HostTensor t;
  t.dtype = DtypeFrom(j["dtype"]);
  t.shape = Integers(j, "shape");
  for (int64_t s : t.shape) {
    if (s < 0) throw CaseJsonError("expected sizes >= 0, found " + ShapeString(t.shape));
  }
  // What a replay can make: every size counted without overflow, at most kMaxReplayElements.
  int64_t numel = 1;
  for (int64_t s : t.shape) {
    if (s != 0 && numel > kMaxReplayElements / s) {
      throw CaseNotReplayable("a tensor of shape " + ShapeString(t.shape) +
                              ", more elements than a replay makes (at most 2^28)");
    }
    numel *= s;
  }
  std::vector<int64_t> layout;
  int64_t offset = 0;
  if (j.find("strides") != nullptr) {
    layout = Integers(j, "strides");
    if (layout.size() != t.shape.size()) {
      throw CaseJsonError("expected " + std::to_string(t.shape.size()) + " strides for shape " +
                          ShapeString(t.shape) + ", found " + ShapeString(layout));
    }
    for (int64_t s : layout) {
      if (s < 0) throw CaseJsonError("expected strides >= 0, found " + ShapeString(layout));
    }
    if (j.find("storage_offset") != nullptr)
      offset = Integer(j["storage_offset"], "storage_offset");
    if (offset < 0)
      throw CaseJsonError("expected a storage_offset >= 0, found " + std::to_string(offset));
    // The memory it spans, bounded the same way (each step checked before it could overflow).
    int64_t extent = offset;
    bool fits = extent <= kMaxReplayElements;
    for (size_t d = 0; d < layout.size() && numel > 0 && fits; ++d) {
      const int64_t steps = t.shape[d] - 1;
      fits = layout[d] <= kMaxReplayElements &&
             (layout[d] == 0 || steps <= (kMaxReplayElements - extent) / layout[d]);
      if (fits) extent += steps * layout[d];
    }
    if (!fits) {
      throw CaseNotReplayable("a tensor of shape " + ShapeString(t.shape) + ", strides " +
                              ShapeString(layout) + " and storage offset " +
                              std::to_string(offset) +
                              ", spanning more memory than a replay makes (at most 2^28 elements)");
    }
  }
  if (j.find("values") != nullptr) {
    for (const Json& v : Field(j, "values", Json::Kind::kArray).items())
      t.values.push_back(RoundTo(t.dtype, NumberFrom(v)));
    if (static_cast<int64_t>(t.values.size()) != t.numel())
      throw CaseJsonError("expected " + std::to_string(t.numel()) + " values for shape " +
                          ShapeString(t.shape) + ", found " + std::to_string(t.values.size()));
  } else if (draw != nullptr) {
    t.values = layout.empty() ? MakeTensor(t.shape, t.dtype, *draw, DrawRange(t.dtype)).values
                              : DrawValues(t, layout, offset, *draw);
  } else {
    throw CaseJsonError("expected the tensor's \"values\", found none");
  }
  if (strides != nullptr) *strides = layout;
  if (storage_offset != nullptr) *storage_offset = offset;
  return t;
}

Arg ArgFrom(const Json& j, Rng* draw) {
  if (j.kind() != Json::Kind::kObject) {
    throw CaseJsonError(std::string("expected an argument object, found ") + KindName(j.kind()));
  }
  const std::string kind = Field(j, "kind", Json::Kind::kString).as_string();
  if (kind == "tensor") {
    Arg a = Arg::Tensor(HostTensor());
    a.tensor = TensorFrom(j, draw, &a.strides, &a.storage_offset);
    return a;
  }
  if (kind == "tensor_list") {
    // A null element is None, in a Tensor?[] (index.Tensor's indices): as tessera_dump_cases
    // and recordings write it.
    std::vector<std::optional<HostTensor>> ts;
    for (const Json& t : Field(j, "tensors", Json::Kind::kArray).items()) {
      if (t.is_null()) {
        ts.emplace_back();
      } else {
        ts.emplace_back(TensorFrom(t, draw));
      }
    }
    return Arg::OptionalTensors(std::move(ts));
  }
  if (kind == "scalar") {
    const std::string sk = Field(j, "scalar_kind", Json::Kind::kString).as_string();
    const double v = NumberFrom(j["value"]);
    if (sk == "int") return Arg::ScalarInt(Integer(j["value"], "an int Scalar"));
    if (sk == "bool") return Arg::ScalarBool(v != 0);
    if (sk == "double") return Arg::ScalarDouble(v);
    throw CaseJsonError("expected a scalar_kind of int, bool or double, found '" + sk + "'");
  }
  if (kind == "int") return Arg::Int(Integer(j["value"], "an int argument"));
  if (kind == "bool") return Arg::Bool(NumberFrom(j["value"]) != 0);
  if (kind == "double") return Arg::Double(NumberFrom(j["value"]));
  if (kind == "int_list") return Arg::Ints(Integers(j, "value"));
  if (kind == "bool_list") {
    std::vector<bool> bools;
    for (int64_t v : Integers(j, "value")) bools.push_back(v != 0);
    return Arg::Bools(bools);
  }
  if (kind == "string") return Arg::String(Field(j, "value", Json::Kind::kString).as_string());
  if (kind == "none") return Arg::None();
  if (kind == "dtype") return Arg::Dtype(DtypeFrom(j["value"]));
  if (kind == "device") return Arg::Device();
  if (kind == "generator") {
    auto state = [&](const char* key) {
      const std::string& s = Field(j, key, Json::Kind::kString).as_string();
      char* end = nullptr;
      const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0')
        throw CaseJsonError(std::string("expected the generator's ") + key +
                            " as a decimal string, found '" + s + "'");
      return static_cast<uint64_t>(v);
    };
    return Arg::Generator(state("seed"), state("offset"));
  }
  if (kind == "unsupported") {
    throw CaseNotReplayable("the recording could not carry this argument (" +
                            j["what"].as_string() + ")");
  }
  throw CaseJsonError("unknown argument kind '" + kind + "'");
}

}  // namespace conformance
}  // namespace tessera
