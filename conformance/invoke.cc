#include "conformance/invoke.h"

#include <optional>
#include <sstream>
#include <stdexcept>

namespace tessera {
namespace conformance {

void Push(const Arg& a, tsr_device device, Layout layout, Call* call) {
  tsr_stack* s = call->stack.get();
  switch (a.kind) {
    case Arg::Kind::kTensor: {
      Tensor t = device.type == TSR_DEVICE_META ? EmptyOn(a.tensor.shape, a.tensor.dtype, device)
                 : a.strides.empty()
                     ? ToDevice(a.tensor, device, layout)
                     : ToDeviceStrided(a.tensor, device, a.strides, a.storage_offset);
      call->tensors.push_back(t);
      sdk::check(sdk::api().stack_push_tensor(s, t.get()));
      return;
    }
    case Arg::Kind::kTensorList: {
      // A None element of a Tensor?[] is a NULL entry of the C list (tsr_stack_push_tensor_list,
      // as tsr_stack_get_tensor_list reads it back); only present elements are call->tensors.
      std::vector<tsr_tensor*> raw;
      for (size_t i = 0; i < a.tensors.size(); ++i) {
        if (a.Absent(i)) {
          raw.push_back(nullptr);
          continue;
        }
        const HostTensor& h = a.tensors[i];
        call->tensors.push_back(device.type == TSR_DEVICE_META ? EmptyOn(h.shape, h.dtype, device)
                                                               : ToDevice(h, device, layout));
        raw.push_back(call->tensors.back().get());
      }
      sdk::check(sdk::api().stack_push_tensor_list(s, raw.data(), raw.size()));
      return;
    }
    case Arg::Kind::kScalar: {
      tsr_scalar v{};
      if (a.scalar_kind == Arg::ScalarKind::kDouble) {
        v.kind = TSR_SCALAR_DOUBLE;
        v.d = a.number;
      } else {
        v.kind = a.scalar_kind == Arg::ScalarKind::kBool ? TSR_SCALAR_BOOL : TSR_SCALAR_INT;
        v.i = static_cast<int64_t>(a.number);
      }
      sdk::check(sdk::api().stack_push_scalar(s, v));
      return;
    }
    case Arg::Kind::kInt:
      internal::push(s, a.integer);
      return;
    case Arg::Kind::kBool:
      internal::push(s, a.boolean);
      return;
    case Arg::Kind::kDouble:
      internal::push(s, a.number);
      return;
    case Arg::Kind::kIntList:
      internal::push(s, a.ints);
      return;
    case Arg::Kind::kBoolList:
      internal::push(s, std::vector<bool>(a.ints.begin(), a.ints.end()));
      return;
    case Arg::Kind::kString:
      internal::push(s, std::string_view(a.string));
      return;
    case Arg::Kind::kNone:
      internal::push(s, std::nullopt);
      return;
    case Arg::Kind::kDtype:
      internal::push(s, a.dtype);
      return;
    case Arg::Kind::kDevice:
      internal::push(s, device);
      return;
    case Arg::Kind::kGenerator: {
      Generator g(a.seed);
      g.set_state({a.seed, a.offset});
      internal::push(s, g);  // the stack holds its own reference
      return;
    }
  }
}

std::vector<std::string> SchemaArguments(const std::string& schema) {
  std::vector<std::string> out;
  const size_t open = schema.find('(');
  int depth = 0;
  std::string cur;
  for (size_t i = open + 1; i < schema.size(); ++i) {
    const char c = schema[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ')') {
      if (depth == 0) break;
      --depth;
    }
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (cur.find_first_not_of(' ') != std::string::npos) out.push_back(cur);
  std::vector<std::string> args;
  for (std::string& a : out) {
    a.erase(0, a.find_first_not_of(' '));
    if (a != "*") args.push_back(a);
  }
  return args;
}

namespace {

// DefaultArg turns a schema default ("Scalar alpha=1", "bool keepdim=False") into an Arg.
Arg DefaultArg(const std::string& decl) {
  const size_t eq = decl.find('=');
  if (eq == std::string::npos) return Arg::None();
  const std::string value = decl.substr(eq + 1), type = decl.substr(0, decl.find(' '));
  if (value == "None") return Arg::None();
  if (value == "True" || value == "False") return Arg::Bool(value == "True");
  if (value.front() == '[') {
    std::vector<int64_t> ints;
    std::stringstream ss(value.substr(1, value.size() - 2));
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (item.find_first_not_of(' ') != std::string::npos) ints.push_back(std::stoll(item));
    }
    return Arg::Ints(ints);
  }
  if (value.front() == '\'' || value.front() == '"')
    return Arg::String(value.substr(1, value.size() - 2));
  if (type.rfind("Scalar", 0) == 0 && type != "ScalarType" && type != "ScalarType?") {
    return value.find_first_of(".e") != std::string::npos ? Arg::ScalarDouble(std::stod(value))
                                                          : Arg::ScalarInt(std::stoll(value));
  }
  if (type.rfind("float", 0) == 0) return Arg::Double(std::stod(value));
  if (type.find("[") != std::string::npos) return Arg::Ints({std::stoll(value)});
  if (type.rfind("int", 0) == 0 || type.rfind("SymInt", 0) == 0) return Arg::Int(std::stoll(value));
  return Arg::None();
}

}  // namespace

int OutputMaskIndex(const std::string& op_name) {
  const std::vector<std::string> decls =
      SchemaArguments(std::string(sdk::from_c(sdk::api().op_schema(find_op(op_name)))));
  for (size_t i = 0; i < decls.size(); ++i) {
    const std::string& d = decls[i];
    const size_t space = d.find(' ');
    if (d.rfind("bool[", 0) == 0 && space != std::string::npos &&
        d.substr(space + 1, d.find('=') - space - 1) == "output_mask") {
      return static_cast<int>(i);
    }
  }
  return -1;
}

Sample WithDefaults(const std::string& functional, const Sample& s) {
  const tsr_op* op = find_op(functional);
  const std::vector<std::string> decls =
      SchemaArguments(std::string(sdk::from_c(sdk::api().op_schema(op))));
  Sample full = s;
  for (size_t i = full.args.size(); i < decls.size(); ++i)
    full.args.push_back(DefaultArg(decls[i]));
  return full;
}

namespace {

// A host value an op returns (equal's bool, sym_size's int, item's Scalar) as a 0-dim CPU
// tensor of its kind (bool, int64 or float64), so the oracles compare it as a tensor; nullopt
// for other kinds.
std::optional<Tensor> HostValueAsTensor(tsr_stack* stack, size_t i) {
  HostTensor h;
  h.shape = {};
  switch (sdk::api().stack_kind(stack, i)) {
    case TSR_VALUE_BOOL: {
      int32_t b = 0;
      sdk::check(sdk::api().stack_get_bool(stack, i, &b));
      h.dtype = TSR_DTYPE_BOOL;
      h.values = {b != 0 ? 1.0 : 0.0};
      break;
    }
    case TSR_VALUE_INT: {
      int64_t v = 0;
      sdk::check(sdk::api().stack_get_int(stack, i, &v));
      h.dtype = TSR_DTYPE_INT64;
      h.values = {static_cast<double>(v)};
      break;
    }
    case TSR_VALUE_SCALAR: {
      tsr_scalar v{};
      sdk::check(sdk::api().stack_get_scalar(stack, i, &v));
      h.dtype = v.kind == TSR_SCALAR_BOOL  ? TSR_DTYPE_BOOL
                : v.kind == TSR_SCALAR_INT ? TSR_DTYPE_INT64
                                           : TSR_DTYPE_FLOAT64;
      h.values = {v.kind == TSR_SCALAR_DOUBLE ? v.d : static_cast<double>(v.i)};
      break;
    }
    default:
      return std::nullopt;
  }
  return ToDevice(h, tsr_device{TSR_DEVICE_CPU, 0});
}

// ReturnedValues: returned_tensors, with host values as 0-dim CPU tensors.
std::vector<Tensor> ReturnedValues(tsr_stack* stack) {
  const size_t n = sdk::api().stack_size(stack);
  for (size_t i = 0; i < n; ++i) {
    if (std::optional<Tensor> t = HostValueAsTensor(stack, i)) {
      if (n != 1) {
        throw std::logic_error("conformance: an op returning a host value among other returns");
      }
      return {*std::move(t)};
    }
  }
  return ::tessera::returned_tensors(stack);
}

}  // namespace

std::vector<Tensor> Invoke(const std::string& op_name, const Sample& sample, tsr_device device,
                           Layout layout, const std::vector<Tensor>& extra,
                           std::vector<Tensor>* inputs) {
  const tsr_op* op = find_op(op_name);
  Call call;
  for (const Arg& a : sample.args) Push(a, device, layout, &call);
  for (const Tensor& t : extra) sdk::check(sdk::api().stack_push_tensor(call.stack.get(), t.get()));
  sdk::check(sdk::api().op_call(op, call.stack.get()));
  std::vector<Tensor> out = ReturnedValues(call.stack.get());
  if (inputs) *inputs = call.tensors;
  return out;
}

uint64_t SampleSeed(const std::string& op_name, uint64_t seed, tsr_dtype dtype) {
  uint64_t h = seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(dtype);
  for (char c : op_name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

}  // namespace conformance
}  // namespace tessera
