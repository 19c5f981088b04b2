// Indexing, sorting, joining, copies and factories.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

// Distinct values in a random order (sorting ops: indices are unique then).
HostTensor Permutation(std::vector<int64_t> shape, tsr_dtype dtype, Rng& rng) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  const int64_t n = t.numel();
  t.values.resize(static_cast<size_t>(n));
  std::iota(t.values.begin(), t.values.end(),
            dtype == TSR_DTYPE_UINT8 ? 0.0 : -static_cast<double>(n / 2));
  std::shuffle(t.values.begin(), t.values.end(), rng);
  for (double& v : t.values) v = RoundTo(dtype, v);
  return t;
}

HostTensor Indices(std::vector<int64_t> shape, int64_t bound, Rng& rng) {
  MakeOptions o;
  o.low = 0;
  o.high = static_cast<double>(bound);
  return MakeTensor(std::move(shape), TSR_DTYPE_INT64, rng, o);
}

// Sort each line along `dim`: returns (values, indices); stable, NaN last (first if descending).
std::vector<HostTensor> SortLines(const HostTensor& x, int64_t dim, bool descending, int64_t k) {
  const int64_t nd = std::max<int64_t>(x.dim(), 1);
  const std::vector<int64_t> shape = x.shape.empty() ? std::vector<int64_t>{1} : x.shape;
  if (dim < 0) dim += nd;
  std::vector<int64_t> out_shape = shape;
  out_shape[dim] = k;
  HostTensor values, indices;
  values.dtype = x.dtype;
  indices.dtype = TSR_DTYPE_INT64;
  values.shape = indices.shape = x.shape.empty() ? std::vector<int64_t>{} : out_shape;
  int64_t outn = 1;
  for (int64_t s : out_shape) outn *= s;
  values.values.resize(outn);
  indices.values.resize(outn);
  const LinesAlong lines(x.shape, dim);
  const int64_t inner = lines.inner;
  for (int64_t o = 0; o < lines.outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<int64_t> order(lines.len);
      std::iota(order.begin(), order.end(), 0);
      auto val = [&](int64_t j) { return x.values[lines.index(o, i, j)]; };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const double va = val(a), vb = val(b);
        if (std::isnan(va) || std::isnan(vb))
          return descending ? std::isnan(va) && !std::isnan(vb) : !std::isnan(va) && std::isnan(vb);
        return descending ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        values.values[(o * k + j) * inner + i] = val(order[j]);
        indices.values[(o * k + j) * inner + i] = static_cast<double>(order[j]);
      }
    }
  }
  return {values, indices};
}

OpInfo Copying(const std::string& name, const std::string& out, const std::string& inplace,
               DtypeMask dtypes) {
  OpInfo op;
  op.name = name;
  op.out = out;
  op.inplace = inplace;
  op.dtypes = dtypes;
  return op;
}

}  // namespace

void AddIndexFactoryOps(std::vector<OpInfo>& db) {
  {
    OpInfo op = Copying("index_select", "index_select.out", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      s.push_back({{Arg::Tensor(MakeTensor({5, 7}, dtype, rng)), Arg::Int(0),
                    Arg::Tensor(Indices({6}, 5, rng))},
                   "[5, 7] dim 0"});
      s.push_back({{Arg::Tensor(MakeTensor({5, 7}, dtype, rng)), Arg::Int(-1),
                    Arg::Tensor(Indices({3}, 7, rng))},
                   "[5, 7] dim -1"});
      s.push_back({{Arg::Tensor(MakeTensor({5, 7}, dtype, rng)), Arg::Int(1),
                    Arg::Tensor(Indices({0}, 7, rng))},
                   "empty index"});
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor &x = s.args[0].tensor, &index = s.args[2].tensor;
      const int64_t dim = s.args[1].integer < 0 ? s.args[1].integer + x.dim() : s.args[1].integer;
      HostTensor out;
      out.dtype = x.dtype;
      out.shape = x.shape;
      out.shape[dim] = index.numel();
      for (int64_t f = 0; f < out.numel(); ++f) {
        std::vector<int64_t> idx = Unravel(f, out.shape);
        idx[dim] = static_cast<int64_t>(index.values[idx[dim]]);
        out.values.push_back(x.values[Ravel(idx, x.shape)]);
      }
      return std::vector<HostTensor>{out};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)), Arg::Int(0),
                    Arg::Tensor(Full({1}, TSR_DTYPE_INT64, 3))},
                   "index 3 of 3"},
                  TSR_INVALID_ARGUMENT,
                  "an index out of range"},
                 "index 3 is out of bounds for dimension 0 with size 3"),
          // PyTorch's index_select does not count negative indices
          // from the end: "index out of range in self".
          Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)), Arg::Int(0),
                    Arg::Tensor(Full({1}, TSR_DTYPE_INT64, -1))},
                   "index -1"},
                  TSR_INVALID_ARGUMENT,
                  "a negative index"},
                 "index -1 is out of bounds for dimension 0 with size 3")};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("gather", "gather.out", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      s.push_back({{Arg::Tensor(MakeTensor({5, 7}, dtype, rng)), Arg::Int(1),
                    Arg::Tensor(Indices({5, 4}, 7, rng))},
                   "[5, 7] dim 1"});
      s.push_back({{Arg::Tensor(MakeTensor({5, 7}, dtype, rng)), Arg::Int(0),
                    Arg::Tensor(Indices({3, 7}, 5, rng))},
                   "[5, 7] dim 0"});
      // PyTorch checks neither the dtype nor the rank of an empty index (gather's meta).
      s.push_back({{Arg::Tensor(MakeTensor({5}, dtype, rng)), Arg::Int(0),
                    Arg::Tensor(MakeTensor({0}, TSR_DTYPE_UINT8, rng))},
                   "[5], empty uint8 index"});
      s.push_back({{Arg::Tensor(MakeTensor({5, 7}, dtype, rng)), Arg::Int(1),
                    Arg::Tensor(MakeTensor({0}, TSR_DTYPE_INT64, rng))},
                   "[5, 7], empty 1-D index"});
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor &x = s.args[0].tensor, &index = s.args[2].tensor;
      const int64_t dim = s.args[1].integer;
      HostTensor out;
      out.dtype = x.dtype;
      out.shape = index.shape;
      for (int64_t f = 0; f < index.numel(); ++f) {
        std::vector<int64_t> idx = Unravel(f, index.shape);
        idx[dim] = static_cast<int64_t>(index.values[f]);
        out.values.push_back(x.values[Ravel(idx, x.shape)]);
      }
      return std::vector<HostTensor>{out};
    };
    db.push_back(std::move(op));
  }
  for (bool add : {false, true}) {
    OpInfo op =
        Copying(add ? "scatter_add" : "scatter.src", add ? "scatter_add.out" : "scatter.src_out",
                add ? "scatter_add_" : "scatter_.src", kAllMask);
    op.samples = [add](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      // Distinct indices per line for scatter (the last write would otherwise be unspecified).
      HostTensor index;
      index.dtype = TSR_DTYPE_INT64;
      index.shape = {3, 4};
      for (int64_t r = 0; r < 3; ++r) {
        HostTensor p = Permutation({5}, TSR_DTYPE_INT64, rng);
        for (int64_t c = 0; c < 4; ++c) index.values.push_back(p.values[c] + 2);  // 0..4
      }
      if (add) index = Indices({3, 4}, 5, rng);
      s.push_back({{Arg::Tensor(MakeTensor({3, 5}, dtype, rng)), Arg::Int(1), Arg::Tensor(index),
                    Arg::Tensor(MakeTensor({3, 4}, dtype, rng))},
                   "[3, 5] dim 1"});
      // A 0-dim self and src count as [1] (PyTorch: zeros(()).scatter(0, [0], 5.) is 5.).
      HostTensor zero_index{TSR_DTYPE_INT64, {1}, {0}};
      s.push_back({{Arg::Tensor(MakeTensor({}, dtype, rng)), Arg::Int(0), Arg::Tensor(zero_index),
                    Arg::Tensor(MakeTensor({}, dtype, rng))},
                   "0-dim self and src, index [1]"});
      return s;
    };
    op.reference = [add](const Sample& s) {
      HostTensor out = s.args[0].tensor;
      const HostTensor &index = s.args[2].tensor, &src = s.args[3].tensor;
      // A 0-dim tensor's one element is at offset 0, whatever the index says.
      auto at = [](const HostTensor& t, const std::vector<int64_t>& idx) {
        return t.shape.empty() ? int64_t{0} : Ravel(idx, t.shape);
      };
      for (int64_t f = 0; f < index.numel(); ++f) {
        std::vector<int64_t> idx = Unravel(f, index.shape);
        const double v = src.values[at(src, idx)];
        idx[s.args[1].integer] = static_cast<int64_t>(index.values[f]);
        double& dst = out.values[at(out, idx)];
        dst = RoundTo(out.dtype, add ? dst + v : v);
      }
      return std::vector<HostTensor>{out};
    };
    db.push_back(std::move(op));
  }
  // scatter with reduce='add' | 'multiply', from a src tensor or a Scalar value. Repeated
  // indices on purpose: each combines into the same element.
  for (bool value : {false, true}) {
    OpInfo op = value
                    ? Copying("scatter.value_reduce", "scatter.value_reduce_out",
                              "scatter_.value_reduce", kAllMask)
                    : Copying("scatter.reduce", "scatter.reduce_out", "scatter_.reduce", kAllMask);
    op.samples = [value](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      MakeOptions small;
      small.low = -2;
      small.high = 2;  // integers -2..1: products of a few stay exact in every dtype
      if (dtype == TSR_DTYPE_UINT8) small.low = 0;
      for (const char* reduce : {"add", "multiply"}) {
        const Arg src = value ? (IsFloating(dtype)         ? Arg::ScalarDouble(1.5)
                                 : dtype == TSR_DTYPE_BOOL ? Arg::ScalarBool(true)
                                                           : Arg::ScalarInt(2))
                              : Arg::Tensor(MakeTensor({3, 4}, dtype, rng, small));
        s.push_back({{Arg::Tensor(MakeTensor({3, 5}, dtype, rng, small)), Arg::Int(1),
                      Arg::Tensor(Indices({3, 4}, 5, rng)), src, Arg::String(reduce)},
                     std::string("[3, 5] dim 1 ") + reduce});
        s.push_back({{Arg::Tensor(MakeTensor({4, 2}, dtype, rng, small)), Arg::Int(0),
                      Arg::Tensor(Indices({6, 2}, 4, rng)),
                      value ? src : Arg::Tensor(MakeTensor({6, 3}, dtype, rng, small)),
                      Arg::String(reduce)},
                     std::string("[4, 2] dim 0, index longer than self ") + reduce});
        s.push_back({{Arg::Tensor(MakeTensor({4}, dtype, rng, small)), Arg::Int(0),
                      Arg::Tensor(MakeTensor({0}, TSR_DTYPE_UINT8, rng)),
                      value ? src : Arg::Tensor(MakeTensor({0}, dtype, rng)), Arg::String(reduce)},
                     std::string("empty uint8 index ") + reduce});
      }
      return s;
    };
    op.reference = [value](const Sample& s) {
      HostTensor out = s.args[0].tensor;
      const HostTensor& index = s.args[2].tensor;
      const bool add = s.args[4].string == "add";
      for (int64_t f = 0; f < index.numel(); ++f) {
        std::vector<int64_t> idx = Unravel(f, index.shape);
        const double v = value ? RoundTo(out.dtype, s.args[3].number)
                               : s.args[3].tensor.values[Ravel(idx, s.args[3].tensor.shape)];
        idx[s.args[1].integer] = static_cast<int64_t>(index.values[f]);
        double& dst = out.values[Ravel(idx, out.shape)];
        dst = RoundTo(out.dtype, add ? dst + v : dst * v);
      }
      return std::vector<HostTensor>{out};
    };
    op.errors = [value](Rng& rng) {
      const Arg src =
          value ? Arg::ScalarDouble(1) : Arg::Tensor(MakeTensor({2}, TSR_DTYPE_FLOAT32, rng));
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)), Arg::Int(0),
                    Arg::Tensor(Full({2}, TSR_DTYPE_INT64, 0)), src, Arg::String("max")},
                   "reduce 'max'"},
                  TSR_INVALID_ARGUMENT,
                  "a reduce other than add or multiply"},
                 "reduce argument must be either add or multiply, got 'max'")};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("sort", "sort.values", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      s.push_back(
          {{Arg::Tensor(Permutation({13}, dtype, rng)), Arg::Int(0), Arg::Bool(false)}, "[13]"});
      s.push_back({{Arg::Tensor(Permutation({5, 7}, dtype, rng)), Arg::Int(1), Arg::Bool(true)},
                   "[5, 7] dim 1 descending"});
      s.push_back({{Arg::Tensor(Permutation({5, 7}, dtype, rng)), Arg::Int(0), Arg::Bool(false)},
                   "[5, 7] dim 0"});
      return s;
    };
    op.reference = [](const Sample& s) {
      const int64_t nd = std::max<int64_t>(s.args[0].tensor.dim(), 1);
      const int64_t dim = s.args[1].integer < 0 ? s.args[1].integer + nd : s.args[1].integer;
      return SortLines(s.args[0].tensor, dim, s.args[2].boolean, s.args[0].tensor.shape[dim]);
    };
    db.push_back(std::move(op));
  }
  {
    // sort.stable: ties (few distinct values) keep their order, so the indices are unique and
    // compared too; NaN sorts last ascending, first descending.
    OpInfo op = Copying("sort.stable", "sort.values_stable", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      MakeOptions ties;
      ties.low = 0;
      ties.high = 3;
      for (const bool descending : {false, true}) {
        const std::string d = descending ? " descending" : "";
        s.push_back({{Arg::Tensor(MakeTensor({17}, dtype, rng, ties)), Arg::Bool(true), Arg::Int(0),
                      Arg::Bool(descending)},
                     "[17] ties" + d});
        s.push_back({{Arg::Tensor(MakeTensor({4, 9}, dtype, rng, ties)), Arg::None(), Arg::Int(-1),
                      Arg::Bool(descending)},
                     "[4, 9] ties, stable=None" + d});
        s.push_back({{Arg::Tensor(MakeTensor({6, 3}, dtype, rng, ties)), Arg::Bool(true),
                      Arg::Int(0), Arg::Bool(descending)},
                     "[6, 3] dim 0 ties" + d});
        if (IsFloating(dtype)) {
          s.push_back({{Arg::Tensor(ExtremeTensor(dtype)), Arg::Bool(true), Arg::Int(0),
                        Arg::Bool(descending)},
                       "inf, nan, -0.0" + d});
        }
      }
      s.push_back({{Arg::Tensor(MakeTensor({}, dtype, rng)), Arg::Bool(true), Arg::Int(0),
                    Arg::Bool(false)},
                   "0-dim"});
      s.push_back({{Arg::Tensor(MakeTensor({0, 3}, dtype, rng)), Arg::Bool(true), Arg::Int(0),
                    Arg::Bool(false)},
                   "empty"});
      return s;
    };
    op.reference = [](const Sample& s) {
      const int64_t nd = std::max<int64_t>(s.args[0].tensor.dim(), 1);
      const int64_t dim = s.args[2].integer < 0 ? s.args[2].integer + nd : s.args[2].integer;
      const int64_t len = s.args[0].tensor.shape.empty() ? 1 : s.args[0].tensor.shape[dim];
      return SortLines(s.args[0].tensor, dim, s.args[3].boolean, len);
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("topk", "topk.values", "", kNumericMask);
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      s.push_back({{Arg::Tensor(Permutation({13}, dtype, rng)), Arg::Int(4), Arg::Int(0),
                    Arg::Bool(true), Arg::Bool(true)},
                   "[13] k 4"});
      s.push_back({{Arg::Tensor(Permutation({5, 7}, dtype, rng)), Arg::Int(2), Arg::Int(1),
                    Arg::Bool(false), Arg::Bool(true)},
                   "[5, 7] k 2 smallest"});
      s.push_back({{Arg::Tensor(Permutation({5, 7}, dtype, rng)), Arg::Int(0), Arg::Int(-1),
                    Arg::Bool(true), Arg::Bool(true)},
                   "k 0"});
      return s;
    };
    op.reference = [](const Sample& s) {
      const int64_t nd = std::max<int64_t>(s.args[0].tensor.dim(), 1);
      const int64_t dim = s.args[2].integer < 0 ? s.args[2].integer + nd : s.args[2].integer;
      return SortLines(s.args[0].tensor, dim, s.args[3].boolean, s.args[1].integer);
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)), Arg::Int(4)}, "k 4 of 3"},
                  TSR_INVALID_ARGUMENT,
                  "k above the dim's size"},
                 "selected index k out of range (k = 4, dimension 0 has size 3)")};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("argsort", "", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      return std::vector<Sample>{
          {{Arg::Tensor(Permutation({5, 7}, dtype, rng)), Arg::Int(-1), Arg::Bool(false)},
           "[5, 7]"}};
    };
    op.reference = [](const Sample& s) {
      return std::vector<HostTensor>{SortLines(s.args[0].tensor, 1, false, 7)[1]};
    };
    db.push_back(std::move(op));
  }
  for (bool stack : {false, true}) {
    OpInfo op = Copying(stack ? "stack" : "cat", stack ? "stack.out" : "cat.out", "", kAllMask);
    op.samples = [stack](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      if (stack) {
        s.push_back(
            {{Arg::Tensors({MakeTensor({3, 4}, dtype, rng), MakeTensor({3, 4}, dtype, rng)}),
              Arg::Int(1)},
             "2 x [3, 4] dim 1"});
      } else {
        s.push_back({{Arg::Tensors({MakeTensor({2, 4}, dtype, rng), MakeTensor({3, 4}, dtype, rng),
                                    MakeTensor({0, 4}, dtype, rng)}),
                      Arg::Int(0)},
                     "[2, 4] [3, 4] [0, 4] dim 0"});
        s.push_back(
            {{Arg::Tensors({MakeTensor({2, 1}, dtype, rng), MakeTensor({2, 3}, dtype, rng)}),
              Arg::Int(-1)},
             "[2, 1] [2, 3] dim -1"});
      }
      return s;
    };
    op.reference = [stack](const Sample& s) {
      std::vector<HostTensor> parts = s.args[0].tensors;
      int64_t dim = s.args[1].integer;
      const int64_t nd = parts[0].dim() + (stack ? 1 : 0);
      if (dim < 0) dim += nd;
      if (stack) {
        for (HostTensor& p : parts) p.shape.insert(p.shape.begin() + dim, 1);
      }
      HostTensor out;
      out.dtype = parts[0].dtype;
      out.shape = parts[0].shape;
      out.shape[dim] = 0;
      for (const HostTensor& p : parts) out.shape[dim] += p.shape[dim];
      out.values.resize(out.numel());
      int64_t offset = 0;
      for (const HostTensor& p : parts) {
        for (int64_t f = 0; f < p.numel(); ++f) {
          std::vector<int64_t> idx = Unravel(f, p.shape);
          idx[dim] += offset;
          out.values[Ravel(idx, out.shape)] = p.values[f];
        }
        offset += p.shape[dim];
      }
      return std::vector<HostTensor>{out};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("flip", "flip.out", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      return std::vector<Sample>{
          {{Arg::Tensor(MakeTensor({5, 7}, dtype, rng)), Arg::Ints({0, 1})}, "[5, 7] dims [0, 1]"},
          {{Arg::Tensor(MakeTensor({3, 4, 5}, dtype, rng)), Arg::Ints({-1})},
           "[3, 4, 5] dims [-1]"}};
    };
    op.reference = [](const Sample& s) {
      const HostTensor& x = s.args[0].tensor;
      HostTensor out = x;
      for (int64_t f = 0; f < x.numel(); ++f) {
        std::vector<int64_t> idx = Unravel(f, x.shape);
        for (int64_t d : s.args[1].ints) {
          const int64_t w = d < 0 ? d + x.dim() : d;
          idx[w] = x.shape[w] - 1 - idx[w];
        }
        out.values[f] = x.values[Ravel(idx, x.shape)];
      }
      return std::vector<HostTensor>{out};
    };
    db.push_back(std::move(op));
  }
  for (bool upper : {false, true}) {
    OpInfo op = Copying(upper ? "triu" : "tril", upper ? "triu.out" : "tril.out",
                        upper ? "triu_" : "tril_", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      return std::vector<Sample>{
          {{Arg::Tensor(MakeTensor({5, 7}, dtype, rng)), Arg::Int(0)}, "[5, 7]"},
          {{Arg::Tensor(MakeTensor({2, 4, 4}, dtype, rng)), Arg::Int(-1)}, "[2, 4, 4] diagonal -1"},
          {{Arg::Tensor(MakeTensor({3, 6}, dtype, rng)), Arg::Int(2)}, "[3, 6] diagonal 2"}};
    };
    op.reference = [upper](const Sample& s) {
      HostTensor out = s.args[0].tensor;
      const int64_t diag = s.args[1].integer;
      for (int64_t f = 0; f < out.numel(); ++f) {
        const std::vector<int64_t> idx = Unravel(f, out.shape);
        const int64_t i = idx[idx.size() - 2], j = idx.back();
        if (upper ? j - i < diag : j - i > diag) out.values[f] = 0;
      }
      return std::vector<HostTensor>{out};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng))}, "1D"},
                  TSR_INVALID_ARGUMENT,
                  "a 1D input"},
                 "input tensor must have at least 2 dimensions, got 1D")};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("clone", "", "", kAllMask);
    op.elementwise = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& shape : UnaryShapes())
        s.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng))}, ShapeString(shape)});
      return s;
    };
    op.reference = [](const Sample& s) { return std::vector<HostTensor>{s.args[0].tensor}; };
    db.push_back(std::move(op));
  }
  {
    // _to_copy to every other dtype on the same device (PyTorch's conversion rules).
    OpInfo op = Copying("_to_copy", "", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (tsr_dtype to : kAllDtypes) {
        s.push_back({{Arg::Tensor(MakeTensor({7, 3}, dtype, rng)), Arg::Dtype(to)},
                     std::string("to ") + DtypeName(to)});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      return std::vector<HostTensor>{CastTo(s.args[0].tensor, s.args[1].dtype)};
    };
    db.push_back(std::move(op));
  }
  // Factories on the device under test.
  {
    OpInfo op = Copying("full", "", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng&) {
      const Arg value = dtype == TSR_DTYPE_BOOL ? Arg::ScalarBool(true)
                        : IsFloating(dtype)     ? Arg::ScalarDouble(2.5)
                                                : Arg::ScalarInt(7);
      return std::vector<Sample>{
          {{Arg::Ints({3, 4}), value, Arg::Dtype(dtype), Arg::None(), Arg::Device()}, "[3, 4]"},
          {{Arg::Ints({0}), value, Arg::Dtype(dtype), Arg::None(), Arg::Device()}, "[0]"}};
    };
    op.reference = [](const Sample& s) {
      return std::vector<HostTensor>{Full(s.args[0].ints, s.args[2].dtype, s.args[1].number)};
    };
    op.errors = [](Rng&) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Ints({2}), Arg::ScalarInt(300), Arg::Dtype(TSR_DTYPE_UINT8), Arg::None(),
                    Arg::Device()},
                   "300 into uint8"},
                  TSR_INVALID_ARGUMENT,
                  "a value that overflows the dtype"},
                 "argument 'fill_value' (300) cannot be converted to uint8 without overflow")};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("arange.start_step", "", "", kNumericMask);
    op.samples = [](tsr_dtype dtype, Rng&) {
      const bool f = IsFloating(dtype);
      const bool u = dtype == TSR_DTYPE_UINT8;
      auto range = [&](double a, double b, double st, const std::string& desc) {
        return Sample{{Arg::ScalarDouble(a), Arg::ScalarDouble(b), Arg::ScalarDouble(st),
                       Arg::Dtype(dtype), Arg::None(), Arg::Device()},
                      desc};
      };
      std::vector<Sample> s{
          {{f ? Arg::ScalarDouble(-2.5) : Arg::ScalarInt(u ? 1 : -3),
            f ? Arg::ScalarDouble(4.0) : Arg::ScalarInt(9),
            f ? Arg::ScalarDouble(0.5) : Arg::ScalarInt(2), Arg::Dtype(dtype), Arg::None(),
            Arg::Device()},
           "range"},
          // Float bounds into an integral dtype: converted before use, and for int64 the
          // length too (PyTorch's arange_out): [1, 3] for int64, [1, 3, 5] otherwise.
          range(1.0, 5.000001, 2.0, "float bounds just past the end"),
          range(u ? 0.0 : 2.0, 2.0, 1.0, "empty (start == end)"),
          range(0.0, 3.0, 5.0, "step past the end"),
          // Start and step truncate before counting: 2, 1, 0, -1, -2 for integral dtypes.
          range(2.1, u ? 1.0 : -2.9, -1.0, "fractional start, negative step"),
          range(-0.9, 2.1, 2.0, "fractional negative start")};
      if (!u) s.push_back(range(0.0, -8.000001, -4.0, "negative step past the end"));
      // (A fractional step truncates to 0 for integral dtypes: an error there.)
      if (f) s.push_back(range(1.5, -2.5, -0.75, "fractional negative step"));
      return s;
    };
    op.reference = [](const Sample& s) {
      // PyTorch: start and step in the accumulate type (int64 for integers, float for 16-bit
      // floats, double otherwise); the length from the doubles, except for int64, where it is
      // computed in int64 from the converted values.
      const tsr_dtype dtype = s.args[3].dtype;
      const bool integral = IsIntegral(dtype, true);
      const bool half = dtype == TSR_DTYPE_FLOAT16 || dtype == TSR_DTYPE_BFLOAT16;
      auto acc = [&](double v) {
        return integral ? std::trunc(v) : half ? static_cast<double>(static_cast<float>(v)) : v;
      };
      const double a = acc(s.args[0].number), b = acc(s.args[1].number), st = acc(s.args[2].number);
      int64_t n =
          static_cast<int64_t>(std::ceil((s.args[1].number - s.args[0].number) / s.args[2].number));
      if (dtype == TSR_DTYPE_INT64) {
        const int64_t ia = static_cast<int64_t>(a), ib = static_cast<int64_t>(b),
                      ist = static_cast<int64_t>(st);
        n = (ib - ia + ist - (ist > 0 ? 1 : -1)) / ist;
      }
      HostTensor out;
      out.dtype = dtype;
      for (int64_t i = 0; i < n; ++i) {
        const double v = half ? static_cast<double>(static_cast<float>(a) +
                                                    static_cast<float>(i) * static_cast<float>(st))
                              : a + static_cast<double>(i) * st;
        out.values.push_back(RoundTo(dtype, v));
      }
      out.shape = {n};
      return std::vector<HostTensor>{out};
    };
    op.errors = [](Rng&) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::ScalarInt(0), Arg::ScalarInt(5), Arg::ScalarInt(0)}, "step 0"},
                  TSR_INVALID_ARGUMENT,
                  "a zero step"},
                 "step must be nonzero")};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("linspace", "", "", kNumericMask);
    op.samples = [](tsr_dtype dtype, Rng&) {
      const double low = dtype == TSR_DTYPE_UINT8 ? 0 : -1;  // negative uint8 is a wrap
      auto steps = [&](double a, double b, int64_t n, const std::string& desc) {
        return Sample{{Arg::ScalarDouble(a), Arg::ScalarDouble(b), Arg::Int(n), Arg::Dtype(dtype),
                       Arg::None(), Arg::Device()},
                      desc};
      };
      return std::vector<Sample>{
          steps(low, 2, 7, "7 steps"), steps(3, 3, 1, "1 step"),
          // One step is start alone, whatever end is (PyTorch fills start).
          steps(0, 4, 1, "1 step, start != end"), steps(4, low, 1, "1 step, going down"),
          steps(2, 0, 0, "0 steps"), steps(low, 5, 2, "2 steps"),
          // Integral outputs convert the bounds first: 0.5..3 runs from 0 to 3.
          steps(0.5, 3, 4, "fractional bounds"), steps(5, low, 6, "descending"),
          // An int bound wraps into uint8 before the step is computed: -5..5 in 3 steps is
          // [251, 128, 5] there, as PyTorch's Scalar::to<uint8_t>.
          Sample{{Arg::ScalarInt(-5), Arg::ScalarInt(5), Arg::Int(3), Arg::Dtype(dtype),
                  Arg::None(), Arg::Device()},
                 "int bounds -5 to 5"}};
    };
    op.reference = [](const Sample& s) {
      // PyTorch's kernel: step = (end - start) / (steps - 1); the first half from start,
      // the second back from end; bounds converted first for integral dtypes.
      const tsr_dtype dtype = s.args[3].dtype;
      const bool integral = IsIntegral(dtype, true);
      const double a = integral ? RoundTo(dtype, std::trunc(s.args[0].number)) : s.args[0].number;
      const double b = integral ? RoundTo(dtype, std::trunc(s.args[1].number)) : s.args[1].number;
      const int64_t n = s.args[2].integer;
      HostTensor out;
      out.dtype = dtype;
      out.shape = {n};
      const double step = n > 1 ? (b - a) / static_cast<double>(n - 1) : 0;
      for (int64_t i = 0; i < n; ++i) {
        const double v = n == 1      ? s.args[0].number
                         : i < n / 2 ? a + step * static_cast<double>(i)
                                     : b - step * static_cast<double>(n - 1 - i);
        out.values.push_back(RoundTo(dtype, v));
      }
      return std::vector<HostTensor>{out};
    };
    op.errors = [](Rng&) {
      // c10::checked_convert refuses a bound outside the integral dtype's range.
      return std::vector<ErrorInput>{
          Saying({{{Arg::ScalarDouble(-1), Arg::ScalarDouble(2), Arg::Int(7),
                    Arg::Dtype(TSR_DTYPE_UINT8), Arg::None(), Arg::Device()},
                   "-1 into uint8"},
                  TSR_INVALID_ARGUMENT,
                  "a bound outside the dtype's range"},
                 "argument 'start' (-1) cannot be converted to uint8 without overflow"),
          Saying({{{Arg::ScalarInt(0), Arg::ScalarInt(200), Arg::Int(3),
                    Arg::Dtype(TSR_DTYPE_INT8), Arg::None(), Arg::Device()},
                   "200 into int8"},
                  TSR_INVALID_ARGUMENT,
                  "a bound outside the dtype's range"},
                 "argument 'end' (200) cannot be converted to int8 without overflow")};
    };
    db.push_back(std::move(op));
  }
  for (const char* name : {"zeros", "ones"}) {
    OpInfo op = Copying(name, "", "", kAllMask);
    const double value = std::string(name) == "ones" ? 1 : 0;
    op.samples = [](tsr_dtype dtype, Rng&) {
      return std::vector<Sample>{
          {{Arg::Ints({2, 3}), Arg::Dtype(dtype), Arg::None(), Arg::Device()}, "[2, 3]"},
          {{Arg::Ints({}), Arg::Dtype(dtype), Arg::None(), Arg::Device()}, "[]"}};
    };
    op.reference = [value](const Sample& s) {
      return std::vector<HostTensor>{Full(s.args[0].ints, s.args[1].dtype, value)};
    };
    db.push_back(std::move(op));
  }
  // zeros_like / ones_like / full_like (op set 1.4): self's shape, self's dtype or the one given.
  // Their out= forms take (self, [fill_value,] memory_format, out), not the functional's
  // arguments, so the out= oracle cannot call them; plugins/cpu/tests/like_and_alias_test.cc does.
  for (const char* name : {"zeros_like", "ones_like", "full_like"}) {
    OpInfo op = Copying(name, "", "", kAllMask);
    const bool full = std::string(name) == "full_like";
    const double value = std::string(name) == "ones_like" ? 1 : 0;
    op.samples = [full](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      const Arg fill = dtype == TSR_DTYPE_BOOL ? Arg::ScalarBool(true)
                       : IsFloating(dtype)     ? Arg::ScalarDouble(2.5)
                                               : Arg::ScalarInt(7);
      for (const auto& shape : UnaryShapes()) {
        Sample sample{{Arg::Tensor(MakeTensor(shape, dtype, rng))}, ShapeString(shape)};
        if (full) sample.args.push_back(fill);
        s.push_back(std::move(sample));
      }
      Sample to_int{{Arg::Tensor(MakeTensor({2, 3}, dtype, rng))}, "[2, 3] dtype int32"};
      if (full) to_int.args.push_back(Arg::ScalarInt(3));
      to_int.args.push_back(Arg::Dtype(TSR_DTYPE_INT32));
      s.push_back(std::move(to_int));
      return s;
    };
    op.reference = [full, value](const Sample& s) {
      const size_t dtype_arg = full ? 2 : 1;
      const tsr_dtype dtype =
          s.args.size() > dtype_arg ? s.args[dtype_arg].dtype : s.args[0].tensor.dtype;
      return std::vector<HostTensor>{
          Full(s.args[0].tensor.shape, dtype, full ? s.args[1].number : value)};
    };
    if (full) {
      op.errors = [](Rng& rng) {
        return std::vector<ErrorInput>{
            Saying({{{Arg::Tensor(MakeTensor({2}, TSR_DTYPE_UINT8, rng)), Arg::ScalarInt(300)},
                     "300 into uint8"},
                    TSR_INVALID_ARGUMENT,
                    "a value that overflows the dtype"},
                   "argument 'fill_value' (300) cannot be converted to uint8 without overflow")};
      };
    }
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("eye", "", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng&) {
      return std::vector<Sample>{
          {{Arg::Int(4), Arg::Dtype(dtype), Arg::None(), Arg::Device()}, "4"}};
    };
    op.reference = [](const Sample& s) {
      HostTensor out = Full({s.args[0].integer, s.args[0].integer}, s.args[1].dtype, 0);
      for (int64_t i = 0; i < s.args[0].integer; ++i) out.values[i * s.args[0].integer + i] = 1;
      return std::vector<HostTensor>{out};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("fill_.Scalar", "", "", kAllMask);
    op.mutates_self = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      const Arg value = dtype == TSR_DTYPE_BOOL ? Arg::ScalarBool(true)
                        : IsFloating(dtype)     ? Arg::ScalarDouble(-2.5)
                                                : Arg::ScalarInt(3);
      std::vector<Sample> s;
      for (const auto& shape : UnaryShapes())
        s.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)), value}, ShapeString(shape)});
      // Values that do fit, at the edges of the rule below.
      std::vector<Arg> edges;
      if (dtype == TSR_DTYPE_BOOL) edges = {Arg::ScalarInt(2), Arg::ScalarDouble(-0.5)};
      if (dtype == TSR_DTYPE_UINT8) edges = {Arg::ScalarInt(-1), Arg::ScalarInt(-255)};
      if (dtype == TSR_DTYPE_INT8) edges = {Arg::ScalarInt(-128), Arg::ScalarDouble(-128.0)};
      if (dtype == TSR_DTYPE_FLOAT16)
        edges = {Arg::ScalarDouble(65504), Arg::ScalarDouble(-INFINITY)};
      if (dtype == TSR_DTYPE_FLOAT32) edges = {Arg::ScalarDouble(NAN), Arg::ScalarDouble(1e38)};
      for (const Arg& v : edges) {
        s.push_back({{Arg::Tensor(MakeTensor({3}, dtype, rng)), v}, "fits: " + v.ToString()});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      return std::vector<HostTensor>{
          Full(s.args[0].tensor.shape, s.args[0].tensor.dtype, s.args[1].number)};
    };
    // A value that does not fit self's dtype is refused, also for an empty self, by PyTorch's
    // checked conversion (Scalar::Overflows in core/scalar.h has the rule); a negative int
    // down to -255 wraps into uint8, anything goes into bool, infinities into floating types.
    op.errors = [](Rng& rng) {
      std::vector<ErrorInput> errors;
      const std::pair<tsr_dtype, Arg> overflowing[] = {
          {TSR_DTYPE_INT8, Arg::ScalarInt(200)},
          {TSR_DTYPE_INT8, Arg::ScalarInt(-129)},
          {TSR_DTYPE_UINT8, Arg::ScalarInt(-256)},
          {TSR_DTYPE_UINT8, Arg::ScalarInt(256)},
          {TSR_DTYPE_UINT8, Arg::ScalarDouble(-1)},
          {TSR_DTYPE_INT32, Arg::ScalarInt(1LL << 40)},
          {TSR_DTYPE_INT16, Arg::ScalarDouble(NAN)},
          {TSR_DTYPE_INT64, Arg::ScalarDouble(INFINITY)},
          {TSR_DTYPE_FLOAT16, Arg::ScalarDouble(65520)},
          {TSR_DTYPE_FLOAT16, Arg::ScalarInt(70000)},
          {TSR_DTYPE_BFLOAT16, Arg::ScalarDouble(1e39)},
          {TSR_DTYPE_FLOAT32, Arg::ScalarDouble(3.5e38)}};
      for (const auto& [dtype, value] : overflowing) {
        for (const std::vector<int64_t>& shape :
             {std::vector<int64_t>{3}, std::vector<int64_t>{0}}) {
          errors.push_back(Saying({{{Arg::Tensor(MakeTensor(shape, dtype, rng)), value},
                                    std::string(DtypeName(dtype)) + " " + ShapeString(shape) +
                                        " with " + value.ToString()},
                                   TSR_INVALID_ARGUMENT,
                                   "a value that overflows the dtype"},
                                  "cannot be converted to " + std::string(DtypeName(dtype)) +
                                      " without overflow"));
        }
      }
      return errors;
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("zero_", "", "", kAllMask);
    op.mutates_self = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& shape : UnaryShapes())
        s.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng))}, ShapeString(shape)});
      return s;
    };
    op.reference = [](const Sample& s) {
      return std::vector<HostTensor>{Full(s.args[0].tensor.shape, s.args[0].tensor.dtype, 0)};
    };
    db.push_back(std::move(op));
  }
  {
    // copy_ into a tensor of this dtype from a float32 source that broadcasts.
    OpInfo op = Copying("copy_", "", "", kAllMask);
    op.mutates_self = true;
    op.across_devices = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      return std::vector<Sample>{
          {{Arg::Tensor(MakeTensor({4, 5}, dtype, rng)),
            Arg::Tensor(MakeTensor({5}, TSR_DTYPE_FLOAT32, rng))},
           "[4, 5] from float32[5]"},
          {{Arg::Tensor(MakeTensor({3}, dtype, rng)), Arg::Tensor(MakeTensor({3}, dtype, rng))},
           "[3] from [3]"}};
    };
    op.reference = [](const Sample& s) {
      Arg dst = s.args[0], src = s.args[1];
      return std::vector<HostTensor>{
          Elementwise({&dst, &src}, dst.tensor.dtype, [](const double* x) { return x[1]; })};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT32, rng)),
                    Arg::Tensor(MakeTensor({4}, TSR_DTYPE_FLOAT32, rng))},
                   "[3] from [4]"},
                  TSR_INVALID_ARGUMENT,
                  "a source that does not broadcast"},
                 "src of shape [4] must broadcast to the destination's shape [3]")};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("embedding", "", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      MakeOptions idx;
      idx.low = 0;
      idx.high = 6;
      return std::vector<Sample>{{{Arg::Tensor(MakeTensor({6, 3}, dtype, rng)),
                                   Arg::Tensor(MakeTensor({2, 4}, TSR_DTYPE_INT64, rng, idx))},
                                  "[6, 3] rows [2, 4]"}};
    };
    op.reference = [](const Sample& s) {
      const HostTensor &w = s.args[0].tensor, &idx = s.args[1].tensor;
      HostTensor out;
      out.dtype = w.dtype;
      out.shape = {idx.shape[0], idx.shape[1], w.shape[1]};
      for (double i : idx.values)
        for (int64_t j = 0; j < w.shape[1]; ++j)
          out.values.push_back(w.values[static_cast<int64_t>(i) * w.shape[1] + j]);
      return std::vector<HostTensor>{out};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("to.dtype", "", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      return std::vector<Sample>{
          {{Arg::Tensor(MakeTensor({3, 4}, dtype, rng)), Arg::Dtype(TSR_DTYPE_FLOAT64)},
           "to float64"},
          {{Arg::Tensor(MakeTensor({3, 4}, dtype, rng)), Arg::Dtype(TSR_DTYPE_INT32)}, "to int32"}};
    };
    op.reference = [](const Sample& s) {
      return std::vector<HostTensor>{CastTo(s.args[0].tensor, s.args[1].dtype)};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("contiguous", "", "", kAllMask);
    op.elementwise = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      return std::vector<Sample>{{{Arg::Tensor(MakeTensor({5, 7}, dtype, rng))}, "[5, 7]"}};
    };
    op.reference = [](const Sample& s) { return std::vector<HostTensor>{s.args[0].tensor}; };
    db.push_back(std::move(op));
  }
  {
    OpInfo op = Copying("eye.m", "", "", kAllMask);
    op.samples = [](tsr_dtype dtype, Rng&) {
      return std::vector<Sample>{
          {{Arg::Int(3), Arg::Int(5), Arg::Dtype(dtype), Arg::None(), Arg::Device()}, "3 x 5"}};
    };
    op.reference = [](const Sample& s) {
      HostTensor out = Full({s.args[0].integer, s.args[1].integer}, s.args[2].dtype, 0);
      for (int64_t i = 0; i < std::min(s.args[0].integer, s.args[1].integer); ++i)
        out.values[i * s.args[1].integer + i] = 1;
      return std::vector<HostTensor>{out};
    };
    db.push_back(std::move(op));
  }
  AddShapeOps(db);           // op set 1.8: padding, repeat, splits, the scatter views
  AddRearrangeOps(db);       // op set 1.8: roll, rot90, diag, diag_embed, tile
  AddFillFactoryOps(db);     // op set 1.8: fill, scalar_tensor, logspace, new_*
  AddPaddingOps(db);         // op set 1.9: reflection/replication padding, pixel_shuffle
  AddIndexCompositeOps(db);  // op set 1.9: index_add/copy/fill, take, put, nonzero, index
  AddCountingOps(db);        // op set 1.9: unique, bincount, histc, searchsorted, tril_indices
  AddFoldScatterOps(db);     // op set 1.9: im2col, col2im, scatter_reduce, as_strided_scatter
  AddResizeOps(db);          // op set 1.11: resize_, resize_as_
}

}  // namespace conformance
}  // namespace tessera
