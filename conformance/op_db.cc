#include "conformance/op_db.h"

#include <cmath>
#include <iterator>

#include "conformance/reference_promotion.h"

namespace tessera {
namespace conformance {

Arg Arg::Tensor(HostTensor t) {
  Arg a;
  a.kind = Kind::kTensor;
  a.tensor = std::move(t);
  return a;
}
Arg Arg::Tensors(std::vector<HostTensor> ts) {
  Arg a;
  a.kind = Kind::kTensorList;
  a.tensors = std::move(ts);
  return a;
}
Arg Arg::OptionalTensors(std::vector<std::optional<HostTensor>> ts) {
  Arg a;
  a.kind = Kind::kTensorList;
  for (std::optional<HostTensor>& t : ts) {
    a.absent.push_back(!t.has_value());
    a.tensors.push_back(t.has_value() ? std::move(*t) : HostTensor());
  }
  return a;
}
Arg Arg::ScalarInt(int64_t v) {
  Arg a;
  a.kind = Kind::kScalar;
  a.scalar_kind = ScalarKind::kInt;
  a.number = static_cast<double>(v);
  return a;
}
Arg Arg::ScalarDouble(double v) {
  Arg a;
  a.kind = Kind::kScalar;
  a.scalar_kind = ScalarKind::kDouble;
  a.number = v;
  return a;
}
Arg Arg::ScalarBool(bool v) {
  Arg a;
  a.kind = Kind::kScalar;
  a.scalar_kind = ScalarKind::kBool;
  a.number = v;
  return a;
}
Arg Arg::Int(int64_t v) {
  Arg a;
  a.kind = Kind::kInt;
  a.integer = v;
  return a;
}
Arg Arg::Bool(bool v) {
  Arg a;
  a.kind = Kind::kBool;
  a.boolean = v;
  return a;
}
Arg Arg::Double(double v) {
  Arg a;
  a.kind = Kind::kDouble;
  a.number = v;
  return a;
}
Arg Arg::Ints(std::vector<int64_t> v) {
  Arg a;
  a.kind = Kind::kIntList;
  a.ints = std::move(v);
  return a;
}
Arg Arg::Bools(const std::vector<bool>& v) {
  Arg a;
  a.kind = Kind::kBoolList;
  a.ints.assign(v.begin(), v.end());
  return a;
}
Arg Arg::String(std::string v) {
  Arg a;
  a.kind = Kind::kString;
  a.string = std::move(v);
  return a;
}
Arg Arg::None() { return Arg(); }
Arg Arg::Dtype(tsr_dtype d) {
  Arg a;
  a.kind = Kind::kDtype;
  a.dtype = d;
  return a;
}

Arg Arg::Device() {
  Arg a;
  a.kind = Kind::kDevice;
  return a;
}
Arg Arg::Generator(uint64_t seed, uint64_t offset) {
  Arg a;
  a.kind = Kind::kGenerator;
  a.seed = seed;
  a.offset = offset;
  return a;
}

std::string Arg::ToString() const {
  switch (kind) {
    case Kind::kTensor:
      return std::string(DtypeName(tensor.dtype)) + ShapeString(tensor.shape);
    case Kind::kTensorList: {
      std::string s = "[";
      for (size_t i = 0; i < tensors.size(); ++i) {
        s += (i ? ", " : "") +
             (Absent(i) ? std::string("None")
                        : std::string(DtypeName(tensors[i].dtype)) + ShapeString(tensors[i].shape));
      }
      return s + "]";
    }
    case Kind::kScalar:
    case Kind::kDouble: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", number);
      return buf;
    }
    case Kind::kInt:
      return std::to_string(integer);
    case Kind::kBool:
      return boolean ? "True" : "False";
    case Kind::kIntList:
      return ShapeString(ints);
    case Kind::kBoolList: {
      std::string s = "[";
      for (size_t i = 0; i < ints.size(); ++i)
        s += (i ? ", " : "") + std::string(ints[i] ? "True" : "False");
      return s + "]";
    }
    case Kind::kString:
      return "'" + string + "'";
    case Kind::kNone:
      return "None";
    case Kind::kDtype:
      return DtypeName(dtype);
    case Kind::kDevice:
      return "device";
    case Kind::kGenerator:
      return "Generator(seed=" + std::to_string(seed) + ", offset=" + std::to_string(offset) + ")";
  }
  return "?";
}

namespace {
int Category(int d) {
  if (d < 0) return -1;
  const auto t = static_cast<tsr_dtype>(d);
  return IsFloating(t) ? 2 : t == TSR_DTYPE_BOOL ? 0 : 1;
}
int Promote(int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return PromoteTypes(static_cast<tsr_dtype>(a), static_cast<tsr_dtype>(b));
}
int Combine(int higher, int lower) {
  if (higher < 0) return lower;
  if (lower < 0 || Category(lower) <= Category(higher)) return higher;
  return Promote(higher, lower);
}
}  // namespace

tsr_dtype ResultDtype(const std::vector<const Arg*>& operands) {
  int dim = -1, zero_dim = -1, wrapped = -1;
  for (const Arg* a : operands) {
    if (a->kind == Arg::Kind::kTensor) {
      (a->tensor.dim() > 0 ? dim : zero_dim) =
          Promote(a->tensor.dim() > 0 ? dim : zero_dim, a->tensor.dtype);
    } else if (a->kind == Arg::Kind::kScalar) {
      const tsr_dtype d = a->scalar_kind == Arg::ScalarKind::kDouble ? TSR_DTYPE_FLOAT32
                          : a->scalar_kind == Arg::ScalarKind::kBool ? TSR_DTYPE_BOOL
                                                                     : TSR_DTYPE_INT64;
      wrapped = Promote(wrapped, d);
    }
  }
  const int r = Combine(dim, Combine(zero_dim, wrapped));
  return r < 0 ? TSR_DTYPE_FLOAT32 : static_cast<tsr_dtype>(r);
}

std::vector<int64_t> BroadcastShape(const std::vector<std::vector<int64_t>>& shapes) {
  size_t nd = 0;
  for (const auto& s : shapes) nd = std::max(nd, s.size());
  std::vector<int64_t> out(nd, 1);
  for (const auto& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[nd - s.size() + i];
      if (s[i] != 1) o = s[i];
    }
  }
  return out;
}

HostTensor Elementwise(const std::vector<const Arg*>& operands, tsr_dtype dtype,
                       const std::function<double(const double*)>& f) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Arg* a : operands) {
    if (a->kind == Arg::Kind::kTensor) shapes.push_back(a->tensor.shape);
  }
  HostTensor out;
  out.dtype = dtype;
  out.shape = BroadcastShape(shapes);
  const int64_t n = out.numel();
  const size_t nd = out.shape.size();
  out.values.resize(static_cast<size_t>(n));
  std::vector<int64_t> index(nd, 0);
  std::vector<double> x(operands.size());
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat;
    for (size_t d = nd; d-- > 0;) {
      index[d] = rest % out.shape[d];
      rest /= out.shape[d];
    }
    for (size_t k = 0; k < operands.size(); ++k) {
      const Arg* a = operands[k];
      if (a->kind != Arg::Kind::kTensor) {
        x[k] = a->number;
        continue;
      }
      const HostTensor& t = a->tensor;
      int64_t off = 0;
      const size_t lead = nd - t.shape.size();
      for (size_t d = 0; d < t.shape.size(); ++d) {
        off = off * t.shape[d] + (t.shape[d] == 1 ? 0 : index[lead + d]);
      }
      x[k] = t.values[static_cast<size_t>(off)];
    }
    out.values[static_cast<size_t>(flat)] = RoundTo(dtype, f(x.data()));
  }
  return out;
}

HostTensor Full(std::vector<int64_t> shape, tsr_dtype dtype, double value) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.values.assign(static_cast<size_t>(t.numel()), RoundTo(dtype, value));
  return t;
}

HostTensor CastTo(HostTensor t, tsr_dtype dtype) {
  t.dtype = dtype;
  for (double& v : t.values) v = RoundTo(dtype, v);
  return t;
}

LinesAlong::LinesAlong(const std::vector<int64_t>& shape, int64_t dim) {
  const std::vector<int64_t> s = shape.empty() ? std::vector<int64_t>{1} : shape;
  const int64_t nd = static_cast<int64_t>(s.size());
  if (dim < 0) dim += nd;
  len = s[dim];
  int64_t numel = 1;
  for (int64_t d = 0; d < nd; ++d) {
    numel *= s[d];
    if (d > dim) inner *= s[d];
  }
  outer = len * inner == 0 ? 0 : numel / (len * inner);
}

std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

int64_t Ravel(const std::vector<int64_t>& index, const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

std::vector<long double> MatMul(const HostTensor& a, const HostTensor& b, int64_t batches,
                                int64_t M, int64_t K, int64_t N) {
  std::vector<long double> c(static_cast<size_t>(batches * M * N), 0);
  for (int64_t t = 0; t < batches; ++t) {
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        long double acc = 0;
        for (int64_t k = 0; k < K; ++k) {
          acc += static_cast<long double>(a.values[(t * M + i) * K + k]) *
                 b.values[(t * K + k) * N + j];
        }
        c[(t * M + i) * N + j] = acc;
      }
    }
  }
  return c;
}

const std::vector<std::vector<int64_t>>& UnaryShapes() {
  static const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {7, 11}, {13, 1, 5}};
  return shapes;
}

const char* const kOpFamilies[8] = {"pointwise",   "reductions", "linalg_nn", "index",
                                    "activations", "training",   "random",    "cases"};

const std::vector<OpInfo>& OpDatabase() {
  static const std::vector<OpInfo>* db = [] {
    auto* v = new std::vector<OpInfo>();
    using Add = void (*)(std::vector<OpInfo>&);
    const Add parts[] = {&AddPointwiseOps,  &AddReductionOps, &AddLinalgNNOps, &AddIndexFactoryOps,
                         &AddActivationOps, &AddTrainingOps,  &AddRandomOps};
    static_assert(std::size(parts) + 1 == std::size(kOpFamilies), "a family per part, and cases");
    for (size_t i = 0; i < std::size(parts); ++i) {
      const size_t first = v->size();
      parts[i](*v);
      for (size_t k = first; k < v->size(); ++k) (*v)[k].family = kOpFamilies[i];
    }
    AttachGradients(*v);
    return v;
  }();
  return *db;
}

}  // namespace conformance
}  // namespace tessera
