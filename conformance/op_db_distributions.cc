// The distributions of op set 1.6 (family "random"; docs/random.md): exponential_, geometric_,
// log_normal_, cauchy_, random_ (.from, .to, whole range), randint_like, normal with tensor
// parameters and multinomial. Each reference computes the op's documented transformation of its
// draws from Philox here (op_db_random.h), in double, step by step as the documented formula
// rounds, so a backend that transforms, numbers or rounds otherwise fails by name.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "conformance/op_db_helpers.h"
#include "conformance/op_db_random.h"

namespace tessera {
namespace conformance {
namespace {

// U: the float64 uniform in [0, 1) of element i's block.
double U(const std::array<uint32_t, 4>& w) { return Top53(w[0], w[1]); }

// A distribution op: self (in place), its float parameters, a generator.
struct Distribution {
  const char* name;
  DtypeMask dtypes;
  std::vector<std::vector<double>> params;  // sampled parameter sets
  double (*value)(const std::array<uint32_t, 4>& w, const std::vector<double>& params);
  std::vector<std::pair<std::vector<double>, std::string>> bad;  // refused parameters, why
  std::string bad_message;           // what the refusals of `bad` say
  std::string not_floating_message;  // what the refusal of an int64 self says
};

double Exponential(const std::array<uint32_t, 4>& w, const std::vector<double>& p) {
  const double scale = -1.0 / p[0];
  return scale * std::log1p(-U(w));
}
double Geometric(const std::array<uint32_t, 4>& w, const std::vector<double>& p) {
  return std::max(1.0, std::ceil(std::log1p(-U(w)) / std::log1p(-p[0])));
}
double LogNormal(const std::array<uint32_t, 4>& w, const std::vector<double>& p) {
  return std::exp(Normal(TSR_DTYPE_FLOAT64, w, p[0], p[1]));
}
double Cauchy(const std::array<uint32_t, 4>& w, const std::vector<double>& p) {
  const double angle = (U(w) - 0.5) * M_PI;
  const double scaled = std::tan(angle) * p[1];
  return scaled + p[0];
}

std::string Params(const std::vector<double>& p) {
  std::string s;
  for (double v : p) s += " " + std::to_string(v);
  return s;
}

void AddDistribution(std::vector<OpInfo>& db, const Distribution& d) {
  OpInfo op;
  op.name = d.name;
  op.dtypes = d.dtypes;
  op.mutates_self = true;
  op.samples = [d](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const auto& shape : Shapes()) {
      for (const std::vector<double>& params : d.params) {
        Sample sample{{Arg::Tensor(MakeTensor(shape, dtype, rng))},
                      ShapeString(shape) + Params(params)};
        for (double v : params) sample.args.push_back(Arg::Double(v));
        sample.args.push_back(SomeGenerator(rng));
        s.push_back(std::move(sample));
      }
    }
    return s;
  };
  op.reference = [d](const Sample& s) {
    std::vector<double> params;
    for (size_t i = 1; i + 1 < s.args.size(); ++i) params.push_back(s.args[i].number);
    const HostTensor& self = s.args[0].tensor;
    return std::vector<HostTensor>{
        Drawn(self.shape, self.dtype, s.args.back(),
              [&](const std::array<uint32_t, 4>& w) { return d.value(w, params); })};
  };
  op.errors = [d](Rng& rng) {
    std::vector<ErrorInput> errors;
    for (const auto& [params, why] : d.bad) {
      Sample s{{F32({3}, rng)}, Params(params)};
      for (double v : params) s.args.push_back(Arg::Double(v));
      s.args.push_back(Arg::None());
      errors.push_back(Saying({s, TSR_INVALID_ARGUMENT, why}, d.bad_message));
    }
    if ((d.dtypes & Bit(TSR_DTYPE_INT64)) == 0) {
      Sample s{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT64, rng))}, "an int64 tensor"};
      for (double v : d.params.front()) s.args.push_back(Arg::Double(v));
      s.args.push_back(Arg::None());
      errors.push_back(Saying({s, TSR_INVALID_ARGUMENT, "a tensor that is not floating-point"},
                              d.not_floating_message));
    }
    return errors;
  };
  db.push_back(std::move(op));
}

// random_'s integers, from the draw at `offset` (and `offset` + 1 for a range past 2^53):
// floor(u * range) + from, or (floor(u1 * 2^31) * 2^32 + floor(u2 * 2^32)) mod range + from.
// The sum is an integer one: as a double it would round beyond 2^53.
double RandomInteger(uint64_t i, const Arg& generator, int64_t from, uint64_t range) {
  const std::array<uint32_t, 4> w = Philox(i, generator.seed, generator.offset);
  if (range <= (uint64_t{1} << 53)) {
    return static_cast<double>(from +
                               static_cast<int64_t>(std::floor(U(w) * static_cast<double>(range))));
  }
  const std::array<uint32_t, 4> w2 = Philox(i, generator.seed, generator.offset + 1);
  const uint64_t high = static_cast<uint64_t>(std::floor(U(w) * std::ldexp(1.0, 31)));
  const uint64_t low = static_cast<uint64_t>(std::floor(U(w2) * std::ldexp(1.0, 32)));
  uint64_t bits = (high << 32) + low;
  if (range < (uint64_t{1} << 63)) bits %= range;
  return static_cast<double>(from + static_cast<int64_t>(bits));
}

// The largest integer random_ draws for a dtype without `to`: 2^digits for a floating dtype, the
// largest value otherwise.
int64_t WholeRangeTop(tsr_dtype dtype) {
  switch (dtype) {
    case TSR_DTYPE_BOOL:
      return 1;
    case TSR_DTYPE_UINT8:
      return 255;
    case TSR_DTYPE_INT8:
      return 127;
    case TSR_DTYPE_INT16:
      return 32767;
    case TSR_DTYPE_INT32:
      return INT32_MAX;
    case TSR_DTYPE_INT64:
      return INT64_MAX;
    case TSR_DTYPE_FLOAT16:
      return int64_t{1} << 11;
    case TSR_DTYPE_BFLOAT16:
      return int64_t{1} << 8;
    case TSR_DTYPE_FLOAT32:
      return int64_t{1} << 24;
    default:
      return int64_t{1} << 53;
  }
}

// RoundedInteger: `v` rounded to a floating `dtype` as an integer (saturating past int64).
int64_t RoundedInteger(tsr_dtype dtype, int64_t v) {
  const double r = RoundTo(dtype, static_cast<double>(v));
  if (r >= 9223372036854775808.0) return INT64_MAX;
  if (r <= -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(r);
}

int Digits(tsr_dtype dtype) {
  return dtype == TSR_DTYPE_FLOAT16    ? 11
         : dtype == TSR_DTYPE_BFLOAT16 ? 8
         : dtype == TSR_DTYPE_FLOAT32  ? 24
                                       : 53;
}

// For a floating dtype, ATen's update_from and update_to (DistributionTemplates.h): `from` moved
// up, `to` down, by the dtype's spacing there, where rounding to the dtype would leave [from, to).
int64_t UpdatedFrom(tsr_dtype dtype, int64_t from) {
  if (!IsFloating(dtype) || from == INT64_MAX) return from;
  const int64_t rounded = RoundedInteger(dtype, from + 1);
  if (rounded >= from) return from;
  int n = 0;
  for (int64_t m = std::abs(from + 1); m >>= 1;) ++n;
  return rounded + (int64_t{1} << (n - Digits(dtype) + 1));
}
int64_t UpdatedTo(tsr_dtype dtype, int64_t to) {
  if (!IsFloating(dtype)) return to;
  const int64_t rounded = RoundedInteger(dtype, to - 1);
  if (rounded < to) return to;
  int n = 0;
  for (int64_t m = std::abs(to - 1); m >>= 1;) ++n;
  return rounded - (int64_t{1} << (n - Digits(dtype) + 1));
}

void AddRandom(std::vector<OpInfo>& db) {
  // random_.from(self, from, to?, *, generator): [from, to), or [from, top] without `to`.
  OpInfo op;
  op.name = "random_.from";
  op.dtypes = kAllMask;
  op.mutates_self = true;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    const bool small = dtype == TSR_DTYPE_BOOL;
    const bool unsigned8 = dtype == TSR_DTYPE_UINT8;
    std::vector<std::pair<int64_t, std::optional<int64_t>>> bounds = {
        {0, 2}, {unsigned8 || small ? 0 : -3, small ? std::optional<int64_t>(1) : 5}};
    if (!small) bounds.push_back({unsigned8 ? 250 : 100, std::nullopt});  // to the top
    // Bounds a float16 cannot hold exactly (ATen moves them), and int64 bounds beyond 2^53.
    if (dtype == TSR_DTYPE_FLOAT16) bounds.push_back({60000, 65504});
    if (dtype == TSR_DTYPE_INT64) {
      bounds.push_back({(int64_t{1} << 60) + 256, (int64_t{1} << 60) + 456});
    }
    std::vector<Sample> s;
    for (const auto& shape : Shapes()) {
      for (const auto& [from, to] : bounds) {
        s.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::Int(from),
                      to ? Arg::Int(*to) : Arg::None(), SomeGenerator(rng)},
                     ShapeString(shape) + " from " + std::to_string(from) +
                         (to ? " to " + std::to_string(*to) : " to the top")});
      }
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& self = s.args[0].tensor;
    const int64_t from = UpdatedFrom(self.dtype, s.args[1].integer);
    const int64_t top = s.args[2].kind == Arg::Kind::kNone
                            ? WholeRangeTop(self.dtype)
                            : UpdatedTo(self.dtype, s.args[2].integer) - 1;
    const uint64_t range = static_cast<uint64_t>(top) - static_cast<uint64_t>(from) + 1;
    HostTensor out = Full(self.shape, self.dtype, 0);
    for (size_t i = 0; i < out.values.size(); ++i) {
      out.values[i] = RoundTo(self.dtype, RandomInteger(i, s.args[3], from, range));
    }
    return std::vector<HostTensor>{out};
  };
  op.errors = [](Rng& rng) {
    auto call = [&rng](tsr_dtype dtype, int64_t from, std::optional<int64_t> to) {
      return std::vector<Arg>{Arg::Tensor(MakeTensor({3}, dtype, rng)), Arg::Int(from),
                              to ? Arg::Int(*to) : Arg::None(), Arg::None()};
    };
    return std::vector<ErrorInput>{
        Saying({{call(TSR_DTYPE_INT64, 3, 3), "from 3 to 3"}, TSR_INVALID_ARGUMENT,
                "an empty range"},
               "random_ expects 'from' to be less than 'to', but got from=3 >= to=3"),
        Saying({{call(TSR_DTYPE_UINT8, -1, 5), "uint8 from -1"},
                TSR_INVALID_ARGUMENT,
                "a bound the dtype cannot hold"},
               "from is out of bounds for uint8 (got -1)"),
        Saying({{call(TSR_DTYPE_INT8, 0, 300), "int8 to 300"},
                TSR_INVALID_ARGUMENT,
                "a bound the dtype cannot hold"},
               "to - 1 is out of bounds for int8 (got 299)"),
        Saying({{call(TSR_DTYPE_INT64, INT64_MIN, std::nullopt), "int64 from its least value"},
                TSR_UNIMPLEMENTED,
                "a range of 2^64 values (63 random bits per element)"},
               "a range of more than 2^63 values is not supported")};
  };
  db.push_back(std::move(op));

  // random_(self, *, generator): [0, top]; int64's 2^63 values take two draws.
  OpInfo whole;
  whole.name = "random_";
  whole.dtypes = kAllMask;
  whole.mutates_self = true;
  whole.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const auto& shape : Shapes()) {
      s.push_back(
          {{Arg::Tensor(MakeTensor(shape, dtype, rng)), SomeGenerator(rng)}, ShapeString(shape)});
    }
    return s;
  };
  whole.reference = [](const Sample& s) {
    const HostTensor& self = s.args[0].tensor;
    const uint64_t range = static_cast<uint64_t>(WholeRangeTop(self.dtype)) + 1;
    HostTensor out = Full(self.shape, self.dtype, 0);
    for (size_t i = 0; i < out.values.size(); ++i) {
      out.values[i] = RoundTo(self.dtype, RandomInteger(i, s.args[1], 0, range));
    }
    return std::vector<HostTensor>{out};
  };
  db.push_back(std::move(whole));
}

void AddRandintLike(std::vector<OpInfo>& db) {
  // randint_like.low_dtype(self, low, high, *, dtype, layout, device, pin_memory,
  // memory_format): self's shape, the dtype given (or self's), random_ over [low, high) from the
  // device's default generator. The draw is unknown to the reference (no generator argument):
  // sampled where the range holds one value.
  OpInfo op;
  op.name = "randint_like.low_dtype";
  op.dtypes = kNumericMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const auto& shape : Shapes()) {
      const int64_t low = dtype == TSR_DTYPE_UINT8 ? 7 : -7;
      s.push_back(
          {{Arg::Tensor(MakeTensor(shape, TSR_DTYPE_FLOAT32, rng)), Arg::Int(low),
            Arg::Int(low + 1), Arg::Dtype(dtype), Arg::None(), Arg::None(), Arg::None(),
            Arg::None()},
           ShapeString(shape) + " [" + std::to_string(low) + ", " + std::to_string(low + 1) + ")"});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{
        Full(s.args[0].tensor.shape, s.args[3].dtype, static_cast<double>(s.args[1].integer))};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        Saying({{{F32({3}, rng), Arg::Int(4), Arg::Int(4), Arg::None(), Arg::None(), Arg::None(),
                  Arg::None(), Arg::None()},
                 "[4, 4)"},
                TSR_INVALID_ARGUMENT,
                "an empty range"},
               "random_ expects 'from' to be less than 'to', but got from=4 >= to=4")};
  };
  db.push_back(std::move(op));
}

// normal.Tensor_Tensor / .Tensor_float / .float_Tensor: mean + std * z over the broadcast
// shape, z a standard normal draw per element of the result, each step rounded to the result's
// dtype as the composite computes it (normal_ into the result, then mul_ by a std tensor, then
// add_ of the mean).
HostTensor NormalReference(const Arg* mean, double mean_value, const Arg* std, double std_value,
                           const Arg& generator, tsr_dtype dtype) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Arg* a : {mean, std}) {
    if (a != nullptr) shapes.push_back(a->tensor.shape);
  }
  const std::vector<int64_t> shape = BroadcastShape(shapes);
  const Arg z = Arg::Tensor(Drawn(shape, dtype, generator, [&](const std::array<uint32_t, 4>& w) {
    return Normal(dtype, w, 0.0, std != nullptr ? 1.0 : std_value);
  }));
  Arg scaled = z;
  if (std != nullptr) {
    scaled =
        Arg::Tensor(Elementwise({&z, std}, dtype, [](const double* v) { return v[0] * v[1]; }));
  }
  if (mean != nullptr) {
    return Elementwise({&scaled, mean}, dtype, [](const double* v) { return v[0] + v[1]; });
  }
  const Arg m = Arg::ScalarDouble(mean_value);
  return Elementwise({&scaled, &m}, dtype, [](const double* v) { return v[0] + v[1]; });
}

void AddNormal(std::vector<OpInfo>& db) {
  struct Form {
    const char* name;
    bool mean_tensor, std_tensor;
  };
  for (const Form f :
       {Form{"normal.Tensor_Tensor", true, true}, Form{"normal.Tensor_float", true, false},
        Form{"normal.float_Tensor", false, true}}) {
    OpInfo op;
    op.name = f.name;
    op.out = std::string(f.name) + "_out";
    op.dtypes = kFloatingMask;
    op.samples = [f](tsr_dtype dtype, Rng& rng) {
      const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
          {{}, {}}, {{0}, {0}}, {{5}, {5}}, {{7, 11}, {11}}, {{3, 1}, {1, 4}}};
      std::vector<Sample> s;
      for (const auto& [mean_shape, std_shape] : shapes) {
        if (!(f.mean_tensor && f.std_tensor) && mean_shape != std_shape) continue;
        const Arg mean =
            f.mean_tensor ? Arg::Tensor(MakeTensor(mean_shape, dtype, rng)) : Arg::Double(1.5);
        const Arg std = f.std_tensor
                            ? Arg::Tensor(MakeTensor(std_shape, dtype, rng, {.low = 0, .high = 3}))
                            : Arg::Double(0.5);
        s.push_back({{mean, std, SomeGenerator(rng)},
                     (f.mean_tensor ? ShapeString(mean_shape) : "1.5") + ", " +
                         (f.std_tensor ? ShapeString(std_shape) : "0.5")});
      }
      return s;
    };
    op.reference = [f](const Sample& s) {
      const tsr_dtype dtype = (f.mean_tensor ? s.args[0] : s.args[1]).tensor.dtype;
      return std::vector<HostTensor>{
          NormalReference(f.mean_tensor ? &s.args[0] : nullptr, s.args[0].number,
                          f.std_tensor ? &s.args[1] : nullptr, s.args[1].number, s.args[2], dtype)};
    };
    op.errors = [f](Rng& rng) {
      std::vector<ErrorInput> errors;
      const Arg mean = f.mean_tensor ? F32({3}, rng) : Arg::Double(0);
      if (f.std_tensor) {
        errors.push_back(Saying(
            {{{mean, Arg::Tensor(Full({3}, TSR_DTYPE_FLOAT32, -1)), Arg::None()}, "a std of -1"},
             TSR_INVALID_ARGUMENT,
             "a negative element of std"},
            "normal expects all elements of std >= 0.0"));
      } else {
        errors.push_back(Saying({{{mean, Arg::Double(-1), Arg::None()}, "std -1"},
                                 TSR_INVALID_ARGUMENT,
                                 "a negative std"},
                                "normal expects std >= 0.0, but found std -1"));
      }
      return errors;
    };
    db.push_back(std::move(op));
  }
  // normal.float_float(mean, std, size, *, generator, dtype, layout, device, pin_memory)
  OpInfo op;
  op.name = "normal.float_float";
  op.dtypes = kFloatingMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const auto& shape : Shapes()) {
      s.push_back({{Arg::Double(-2), Arg::Double(3), Arg::Ints(shape), SomeGenerator(rng),
                    Arg::Dtype(dtype), Arg::None(), Arg::Device(), Arg::None()},
                   ShapeString(shape)});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const tsr_dtype dtype = s.args[4].dtype;
    const double mean = s.args[0].number, std = s.args[1].number;
    return std::vector<HostTensor>{
        Drawn(s.args[2].ints, dtype, s.args[3],
              [&](const std::array<uint32_t, 4>& w) { return Normal(dtype, w, mean, std); })};
  };
  db.push_back(std::move(op));
}

// multinomial(self, num_samples, replacement, *, generator): per row of the probabilities,
// without replacement (or one sample) the indices of the largest p / q, q = -log1p(-u) the
// Exp(1) draw of each category (the first largest for one sample; a stable descending order
// otherwise); with replacement the count of cdf_j < (1 - u) * total, cdf the row's running sum
// in double, u a draw per sample.
HostTensor MultinomialReference(const HostTensor& p, int64_t n, bool replacement,
                                const Arg& generator) {
  const int64_t k = p.shape.back();
  const int64_t rows = p.dim() == 1 ? 1 : p.shape[0];
  std::vector<int64_t> shape = p.shape;
  shape.back() = n;
  HostTensor out = Full(shape, TSR_DTYPE_INT64, 0);
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = p.values.data() + r * k;
    std::vector<int64_t> picked;
    if (!replacement || n == 1) {
      std::vector<double> ratio(static_cast<size_t>(k));
      for (int64_t j = 0; j < k; ++j) {
        const double q = -1.0 * std::log1p(-U(Philox(static_cast<uint64_t>(r * k + j),
                                                     generator.seed, generator.offset)));
        ratio[j] = row[j] / q;
      }
      std::vector<int64_t> order(static_cast<size_t>(k));
      for (int64_t j = 0; j < k; ++j) order[j] = j;
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return ratio[a] > ratio[b]; });
      picked.assign(order.begin(), order.begin() + n);
    } else {
      std::vector<double> cdf(static_cast<size_t>(k));
      double sum = 0;
      for (int64_t j = 0; j < k; ++j) cdf[j] = sum += row[j];
      for (int64_t t = 0; t < n; ++t) {
        const double u =
            U(Philox(static_cast<uint64_t>(r * n + t), generator.seed, generator.offset));
        const double target = (1 - u) * cdf.back();
        picked.push_back(
            std::count_if(cdf.begin(), cdf.end(), [&](double c) { return c < target; }));
      }
    }
    for (int64_t t = 0; t < n; ++t) out.values[r * n + t] = static_cast<double>(picked[t]);
  }
  return out;
}

void AddMultinomial(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "multinomial";
  op.out = "multinomial.out";
  op.dtypes = kFloatingMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{5}, {3, 6}}) {
      HostTensor p = MakeTensor(shape, dtype, rng, {.low = 0.05, .high = 1});
      p.values[1] = 0;  // a category that is never drawn
      for (const auto& [n, replacement] : std::vector<std::pair<int64_t, bool>>{
               {1, false}, {3, false}, {shape.back(), false}, {1, true}, {4, true}, {10, true}}) {
        s.push_back({{Arg::Tensor(p), Arg::Int(n), Arg::Bool(replacement), SomeGenerator(rng)},
                     ShapeString(shape) + " n " + std::to_string(n) +
                         (replacement ? " with replacement" : "")});
      }
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{
        MultinomialReference(s.args[0].tensor, s.args[1].integer, s.args[2].boolean, s.args[3])};
  };
  op.errors = [](Rng& rng) {
    auto call = [](HostTensor p, int64_t n, bool replacement, const std::string& what) {
      return Sample{{Arg::Tensor(std::move(p)), Arg::Int(n), Arg::Bool(replacement), Arg::None()},
                    what};
    };
    const HostTensor p = MakeTensor({4}, TSR_DTYPE_FLOAT32, rng, {.low = 0.1, .high = 1});
    return std::vector<ErrorInput>{
        Saying({call(MakeTensor({2, 2, 2}, TSR_DTYPE_FLOAT32, rng, {.low = 0.1, .high = 1}), 1,
                     false, "3-D"),
                TSR_INVALID_ARGUMENT, "probabilities of 3 dims"},
               "prob_dist must be 1 or 2 dim, got 3 dims"),
        Saying({call(MakeTensor({4}, TSR_DTYPE_INT64, rng, {.low = 1, .high = 5}), 1, false,
                     "int64"),
                TSR_INVALID_ARGUMENT, "integer probabilities"},
               "multinomial only supports floating-point dtypes for input, got: int64"),
        Saying({call(p, 0, true, "n 0"), TSR_INVALID_ARGUMENT, "no samples"},
               "cannot sample n_sample <= 0 samples (got 0)"),
        Saying({call(p, 5, false, "5 of 4 without replacement"), TSR_INVALID_ARGUMENT,
                "more samples than categories without replacement"},
               "cannot sample n_sample > prob_dist.size(-1) samples without replacement (5 > 4)"),
        Saying({call(Full({3}, TSR_DTYPE_FLOAT32, -1), 1, true, "a negative probability"),
                TSR_INVALID_ARGUMENT, "a negative probability"},
               "probability tensor contains either `inf`, `nan` or element < 0"),
        Saying({call(Full({2, 3}, TSR_DTYPE_FLOAT32, 0), 2, true, "rows of zeros"),
                TSR_INVALID_ARGUMENT, "a row whose probabilities sum to 0"},
               "invalid multinomial distribution (sum of probabilities <= 0)")};
  };
  db.push_back(std::move(op));
}

}  // namespace

void AddDistributionOps(std::vector<OpInfo>& db) {
  AddDistribution(db, {"exponential_",
                       kFloatingMask,
                       {{1.0}, {0.25}},
                       &Exponential,
                       {{{0.0}, "lambda 0"}, {{-1.0}, "a negative lambda"}},
                       "expects lambda > 0.0",
                       "expected a floating-point tensor, got int64"});
  AddDistribution(db, {"geometric_",
                       kNumericMask,
                       {{0.5}, {0.2}, {0.9}},
                       &Geometric,
                       {{{0.0}, "p 0"}, {{1.0}, "p 1"}},
                       "expects p to be in (0, 1)",
                       ""});  // integral selfs are geometric_'s too
  AddDistribution(db, {"log_normal_",
                       kFloatingMask,
                       {{1.0, 2.0}, {-0.5, 0.25}},
                       &LogNormal,
                       {{{1.0, 0.0}, "std 0"}},
                       "expects std > 0.0",
                       "expected a floating-point tensor, got int64"});
  AddDistribution(db, {"cauchy_",
                       kFloatingMask,
                       {{0.0, 1.0}, {2.0, 0.5}},
                       &Cauchy,
                       {{{0.0, 0.0}, "sigma 0"}},
                       "expects sigma > 0.0",
                       "dtype must be a floating point but you specified int64"});
  AddRandom(db);
  AddRandintLike(db);
  AddNormal(db);
  AddMultinomial(db);
}

}  // namespace conformance
}  // namespace tessera
