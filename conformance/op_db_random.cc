// The random ops (op set 1.5): every sample passes a generator at a known (seed, offset), so the
// reference knows the call's draw and computes each element's value from docs/random.md's
// table, here, from the table's words rather than from the SDK's code: a backend that ignores
// the offset, numbers its elements another way or rounds differently fails by name. The ops
// without a generator argument (native_dropout, dropout) are sampled where their result does not
// depend on the draw (p = 0, p = 1, outside training). Op set 1.11 adds Bernoulli's tensor-p
// forms (bernoulli.Tensor, its out= and in-place forms: p broadcast to self's shape) and the
// out= forms bernoulli.out and bernoulli.float_out (through bernoulli and bernoulli.p).
#include "conformance/op_db_random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {

// Philox-4x32-10 as Salmon et al. define it: ten rounds of two 32x32->64 products, the key
// bumped by the Weyl constants between rounds.
std::array<uint32_t, 4> Philox(uint64_t position, uint64_t seed, uint64_t offset) {
  uint32_t x[4] = {static_cast<uint32_t>(position), static_cast<uint32_t>(position >> 32),
                   static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32)};
  uint32_t key[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += 0x9E3779B9u;
      key[1] += 0xBB67AE85u;
    }
    const uint64_t a = 0xD2511F53ull * x[0], b = 0xCD9E8D57ull * x[2];
    const uint32_t next[4] = {
        static_cast<uint32_t>(b >> 32) ^ x[1] ^ key[0], static_cast<uint32_t>(b),
        static_cast<uint32_t>(a >> 32) ^ x[3] ^ key[1], static_cast<uint32_t>(a)};
    for (int k = 0; k < 4; ++k) x[k] = next[k];
  }
  return {x[0], x[1], x[2], x[3]};
}

double Top53(uint32_t low, uint32_t high) {
  return std::ldexp(static_cast<double>(((static_cast<uint64_t>(high) << 32) | low) >> 11), -53);
}

// The table's values, rounded to `dtype` as the table says.
double Uniform(tsr_dtype dtype, const std::array<uint32_t, 4>& w, double from, double to) {
  if (dtype == TSR_DTYPE_FLOAT64) {
    const double product = Top53(w[0], w[1]) * (to - from);
    return product + from;
  }
  const float lo = static_cast<float>(from), hi = static_cast<float>(to);
  const volatile float product = std::ldexp(static_cast<float>(w[0] >> 8), -24) * (hi - lo);
  return RoundTo(dtype, static_cast<float>(product + lo));
}
double Normal(tsr_dtype dtype, const std::array<uint32_t, 4>& w, double mean, double std) {
  const double u1 = Top53(w[0], w[1]) + std::ldexp(1.0, -53);
  const double u2 = Top53(w[2], w[3]);
  const volatile double angle = 2 * M_PI * u2;
  const volatile double scaled = std * (std::sqrt(-2 * std::log(u1)) * std::cos(angle));
  const double v = scaled + mean;
  return dtype == TSR_DTYPE_FLOAT64 ? v : RoundTo(dtype, static_cast<float>(v));
}
double Bernoulli(const std::array<uint32_t, 4>& w, double p) { return Top53(w[0], w[1]) < p; }

Arg SomeGenerator(Rng& rng) {
  // Offsets past 2^32 too: the counter's high words must reach the numbers.
  return Arg::Generator(rng(), rng() % 2 ? rng() % 8 : (uint64_t{1} << 32) + rng() % 8);
}

const std::vector<std::vector<int64_t>>& Shapes() {
  static const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {7, 11}, {3, 1, 40}};
  return shapes;
}

Arg F32(std::vector<int64_t> shape, Rng& rng) {
  return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
}

namespace {

void AddUniformNormal(std::vector<OpInfo>& db) {
  for (const bool normal : {false, true}) {
    OpInfo op;
    op.name = normal ? "normal_" : "uniform_";
    op.dtypes = kFloatingMask;
    op.mutates_self = true;
    op.samples = [normal](tsr_dtype dtype, Rng& rng) {
      const std::vector<std::pair<double, double>> params =
          normal ? std::vector<std::pair<double, double>>{{0, 1}, {1.5, 0.25}, {-3, 0}}
                 : std::vector<std::pair<double, double>>{{0, 1}, {-3, 5}, {2, 2}};
      std::vector<Sample> s;
      for (const auto& shape : Shapes()) {
        for (const auto& [a, b] : params) {
          s.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::Double(a), Arg::Double(b),
                        SomeGenerator(rng)},
                       ShapeString(shape) + (normal ? " mean " : " from ") + std::to_string(a) +
                           (normal ? " std " : " to ") + std::to_string(b)});
        }
      }
      return s;
    };
    op.reference = [normal](const Sample& s) {
      const tsr_dtype dtype = s.args[0].tensor.dtype;
      const double a = s.args[1].number, b = s.args[2].number;
      return std::vector<HostTensor>{
          Drawn(s.args[0].tensor.shape, dtype, s.args[3], [&](const std::array<uint32_t, 4>& w) {
            return normal ? Normal(dtype, w, a, b) : Uniform(dtype, w, a, b);
          })};
    };
    op.errors = [normal](Rng& rng) {
      std::vector<ErrorInput> errors = {
          Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT64, rng)), Arg::Double(0),
                    Arg::Double(1), Arg::None()},
                   "an int64 tensor"},
                  TSR_INVALID_ARGUMENT,
                  "a tensor that is not floating-point"},
                 "expected a floating-point tensor, got int64")};
      if (normal) {
        errors.push_back(
            Saying({{{F32({3}, rng), Arg::Double(0), Arg::Double(-1), Arg::None()}, "std -1"},
                    TSR_INVALID_ARGUMENT,
                    "a negative std"},
                   "expects std >= 0.0, but found std -1"));
      } else {
        errors.push_back(Saying(
            {{{F32({3}, rng), Arg::Double(2), Arg::Double(1), Arg::None()}, "from 2 > to 1"},
             TSR_INVALID_ARGUMENT,
             "an empty range"},
            "expects to return a [from, to) range, but found from=2 > to=1"));
        errors.push_back(Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT16, rng)),
                                   Arg::Double(0), Arg::Double(1e5), Arg::None()},
                                  "float16 to 1e5"},
                                 TSR_INVALID_ARGUMENT,
                                 "a bound the dtype cannot hold"},
                                "to is out of bounds for float16 (got 100000"));
      }
      return errors;
    };
    db.push_back(std::move(op));
  }
}

void AddFactories(std::vector<OpInfo>& db) {
  for (const bool normal : {false, true}) {
    OpInfo op;
    op.name = normal ? "randn.generator" : "rand.generator";
    // Its out= form takes no dtype (size, generator, out): the oracles cannot call it from
    // these samples; plugins/cpu/tests/random_test.cc covers it.
    op.dtypes = kFloatingMask;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& shape : Shapes()) {
        s.push_back({{Arg::Ints(shape), SomeGenerator(rng), Arg::Dtype(dtype), Arg::None(),
                      Arg::Device(), Arg::None()},
                     ShapeString(shape)});
      }
      return s;
    };
    op.reference = [normal](const Sample& s) {
      const tsr_dtype dtype = s.args[2].dtype;
      return std::vector<HostTensor>{
          Drawn(s.args[0].ints, dtype, s.args[1], [&](const std::array<uint32_t, 4>& w) {
            return normal ? Normal(dtype, w, 0, 1) : Uniform(dtype, w, 0, 1);
          })};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Ints({2}), SomeGenerator(rng), Arg::Dtype(TSR_DTYPE_INT64), Arg::None(),
                    Arg::Device(), Arg::None()},
                   "dtype int64"},
                  TSR_INVALID_ARGUMENT,
                  "a dtype that is not floating-point"},
                 "expected a floating-point dtype, got int64")};
    };
    db.push_back(std::move(op));
  }
}

void AddIntegers(std::vector<OpInfo>& db) {
  {
    OpInfo op;  // randint.low_generator(low, high, size, *, generator, dtype, ...)
    op.name = "randint.low_generator";
    op.dtypes = kNumericMask;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      const bool unsigned8 = dtype == TSR_DTYPE_UINT8;
      std::vector<Sample> s;
      for (const auto& shape : Shapes()) {
        for (const auto& [low, high] : std::vector<std::pair<int64_t, int64_t>>{
                 {unsigned8 ? 0 : -5, 6}, {0, 2}, {unsigned8 ? 200 : 100, unsigned8 ? 201 : 101}}) {
          s.push_back({{Arg::Int(low), Arg::Int(high), Arg::Ints(shape), SomeGenerator(rng),
                        Arg::Dtype(dtype), Arg::None(), Arg::Device(), Arg::None()},
                       ShapeString(shape) + " [" + std::to_string(low) + ", " +
                           std::to_string(high) + ")"});
        }
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const int64_t low = s.args[0].integer, range = s.args[1].integer - low;
      return std::vector<HostTensor>{
          Drawn(s.args[2].ints, s.args[4].dtype, s.args[3], [&](const std::array<uint32_t, 4>& w) {
            return std::floor(Top53(w[0], w[1]) * static_cast<double>(range)) +
                   static_cast<double>(low);
          })};
    };
    op.errors = [](Rng& rng) {
      auto call = [&rng](int64_t low, int64_t high, tsr_dtype dtype) {
        return std::vector<Arg>{Arg::Int(low),      Arg::Int(high),    Arg::Ints({2}),
                                SomeGenerator(rng), Arg::Dtype(dtype), Arg::None(),
                                Arg::Device(),      Arg::None()};
      };
      return std::vector<ErrorInput>{
          Saying({{call(3, 3, TSR_DTYPE_INT64), "[3, 3)"}, TSR_INVALID_ARGUMENT, "an empty range"},
                 "random_ expects 'from' to be less than 'to', but got from=3 >= to=3"),
          Saying({{call(0, 300, TSR_DTYPE_UINT8), "[0, 300) in uint8"},
                  TSR_INVALID_ARGUMENT,
                  "a range the dtype cannot hold"},
                 "[0, 300) does not fit dtype uint8")};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;  // randperm.generator(n, *, generator, dtype, ...)
    op.name = "randperm.generator";
    op.dtypes = kNumericMask;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (int64_t n : {0, 1, 7, dtype == TSR_DTYPE_INT8 ? 100 : 200}) {
        s.push_back({{Arg::Int(n), SomeGenerator(rng), Arg::Dtype(dtype), Arg::None(),
                      Arg::Device(), Arg::None()},
                     "n " + std::to_string(n)});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      // The indices that sort the n float64 draws, ties (improbable) in index order.
      const int64_t n = s.args[0].integer;
      std::vector<double> keys(static_cast<size_t>(n));
      for (size_t i = 0; i < keys.size(); ++i) {
        const std::array<uint32_t, 4> w = Philox(i, s.args[1].seed, s.args[1].offset);
        keys[i] = Top53(w[0], w[1]);
      }
      std::vector<int64_t> order(keys.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
      HostTensor out = Full({n}, s.args[2].dtype, 0);
      for (size_t i = 0; i < order.size(); ++i) out.values[i] = static_cast<double>(order[i]);
      return std::vector<HostTensor>{out};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Int(-1), SomeGenerator(rng), Arg::Dtype(TSR_DTYPE_INT64), Arg::None(),
                    Arg::Device(), Arg::None()},
                   "n -1"},
                  TSR_INVALID_ARGUMENT,
                  "a negative n"},
                 "n must be non-negative, got -1")};
    };
    db.push_back(std::move(op));
  }
}

void AddBernoulli(std::vector<OpInfo>& db) {
  {
    OpInfo op;  // bernoulli_.float(self, p, *, generator): 0/1 in self's dtype
    op.name = "bernoulli_.float";
    op.dtypes = kAllMask;
    op.mutates_self = true;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& shape : Shapes()) {
        for (double p : {0.3, 0.0, 1.0}) {
          s.push_back(
              {{Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::Double(p), SomeGenerator(rng)},
               ShapeString(shape) + " p " + std::to_string(p)});
        }
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const double p = s.args[1].number;
      return std::vector<HostTensor>{
          Drawn(s.args[0].tensor.shape, s.args[0].tensor.dtype, s.args[2],
                [p](const std::array<uint32_t, 4>& w) { return Bernoulli(w, p); })};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{F32({3}, rng), Arg::Double(1.5), Arg::None()}, "p 1.5"},
                  TSR_INVALID_ARGUMENT,
                  "a probability above 1"},
                 "expects p to be in [0, 1], but got p=1.5")};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;  // bernoulli(self, *, generator): self holds the probabilities
    op.name = "bernoulli";
    op.out = "bernoulli.out";  // op set 1.11: out resized to self's shape, filled in its dtype
    op.dtypes = kFloatingMask;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& shape : Shapes()) {
        s.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng, {.low = 0, .high = 1})),
                      SomeGenerator(rng)},
                     ShapeString(shape)});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor& p = s.args[0].tensor;
      HostTensor out = Full(p.shape, p.dtype, 0);
      for (size_t i = 0; i < out.values.size(); ++i) {
        out.values[i] = Bernoulli(Philox(i, s.args[1].seed, s.args[1].offset), p.values[i]);
      }
      return std::vector<HostTensor>{out};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({3}, TSR_DTYPE_INT64, rng)), Arg::None()}, "int64"},
                  TSR_INVALID_ARGUMENT,
                  "probabilities that are not floating-point"},
                 "expected a floating-point tensor of probabilities, got int64"),
          Saying({{{Arg::Tensor(Full({2}, TSR_DTYPE_FLOAT32, 1.5)), Arg::None()}, "p 1.5"},
                  TSR_INVALID_ARGUMENT,
                  "a probability above 1"},
                 "expects all elements of p to be in [0, 1]")};
    };
    db.push_back(std::move(op));
  }
}

// BroadcastElement: the position in `from` (a shape that broadcasts to `to`, aligned at the
// right) of element `flat` of `to`, row-major.
int64_t BroadcastElement(int64_t flat, const std::vector<int64_t>& to,
                         const std::vector<int64_t>& from) {
  const std::vector<int64_t> at = Unravel(flat, to);
  std::vector<int64_t> index(from.size(), 0);
  const size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) index[d] = from[d] == 1 ? 0 : at[lead + d];
  return Ravel(index, from);
}

// Op set 1.11: bernoulli.p with its out= form bernoulli.float_out, and bernoulli.Tensor with
// bernoulli.Tensor_out and bernoulli_.Tensor.
void AddBernoulliForms(std::vector<OpInfo>& db) {
  {
    OpInfo op;  // bernoulli.p(self, p, *, generator): bernoulli_.float on a tensor like self
    op.name = "bernoulli.p";
    op.out = "bernoulli.float_out";
    op.dtypes = kAllMask;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& shape : Shapes()) {
        for (double p : {0.7, 0.0, 1.0}) {
          s.push_back(
              {{Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::Double(p), SomeGenerator(rng)},
               ShapeString(shape) + " p " + std::to_string(p)});
        }
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const double p = s.args[1].number;
      return std::vector<HostTensor>{
          Drawn(s.args[0].tensor.shape, s.args[0].tensor.dtype, s.args[2],
                [p](const std::array<uint32_t, 4>& w) { return Bernoulli(w, p); })};
    };
    op.errors = [](Rng& rng) {
      std::vector<ErrorInput> errors;
      for (const auto& [p, message] : std::vector<std::pair<double, std::string>>{
               {1.5, "expects p to be in [0, 1], but got p=1.5"},
               {-0.25, "expects p to be in [0, 1], but got p=-0.25"},
               {std::numeric_limits<double>::quiet_NaN(), "expects p to be in [0, 1]"}}) {
        errors.push_back(RefusedSaying({F32({3}, rng), Arg::Double(p), Arg::None()},
                                       TSR_INVALID_ARGUMENT, message));
      }
      return errors;
    };
    db.push_back(std::move(op));
  }
  {
    // bernoulli.Tensor(self, p, *, generator): self's shape and dtype (any), p floating and
    // broadcast to self's shape (never self to p); element i is 1 where u_i < p at i.
    OpInfo op;
    op.name = "bernoulli.Tensor";
    op.out = "bernoulli.Tensor_out";
    op.inplace = "bernoulli_.Tensor";
    op.dtypes = kAllMask;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      // p in self's dtype where that is floating, else float32; float64 and float16 p too.
      const tsr_dtype same = IsFloating(dtype) ? dtype : TSR_DTYPE_FLOAT32;
      struct Pair {
        std::vector<int64_t> self, p;
        tsr_dtype p_dtype;
      };
      const std::vector<Pair> pairs = {
          {{}, {}, same},
          {{0}, {0}, same},
          {{0}, {}, same},
          {{2, 0, 3}, {3}, same},
          {{5}, {5}, same},
          {{7, 11}, {11}, same},
          {{7, 11}, {}, TSR_DTYPE_FLOAT64},
          {{3, 1, 40}, {3, 1, 40}, same},
          {{3, 1, 40}, {1, 40}, TSR_DTYPE_FLOAT64},
          {{3, 4, 5}, {3, 1, 5}, TSR_DTYPE_FLOAT16},
          {{4, 6}, {4, 1}, TSR_DTYPE_BFLOAT16},
      };
      std::vector<Sample> s;
      for (const Pair& pair : pairs) {
        s.push_back({{Arg::Tensor(MakeTensor(pair.self, dtype, rng)),
                      Arg::Tensor(MakeTensor(pair.p, pair.p_dtype, rng, {.low = 0, .high = 1})),
                      SomeGenerator(rng)},
                     ShapeString(pair.self) + ", p " + ShapeString(pair.p) + " " +
                         DtypeName(pair.p_dtype)});
      }
      // Probabilities 0 and 1 exactly: every element decided whatever the draw.
      HostTensor edges = Full({2, 3}, same, 0);
      for (size_t i = 3; i < 6; ++i) edges.values[i] = 1;
      s.push_back(
          {{Arg::Tensor(MakeTensor({2, 3}, dtype, rng)), Arg::Tensor(edges), SomeGenerator(rng)},
           "[2, 3], p rows of 0 and 1"});
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor& self = s.args[0].tensor;
      const HostTensor& p = s.args[1].tensor;
      HostTensor out = Full(self.shape, self.dtype, 0);
      for (size_t i = 0; i < out.values.size(); ++i) {
        const double pi = p.values[BroadcastElement(static_cast<int64_t>(i), self.shape, p.shape)];
        out.values[i] = Bernoulli(Philox(i, s.args[2].seed, s.args[2].offset), pi);
      }
      return std::vector<HostTensor>{out};
    };
    op.errors = [](Rng& rng) {
      auto call = [&rng](HostTensor p) {
        return std::vector<Arg>{F32({3}, rng), Arg::Tensor(std::move(p)), Arg::None()};
      };
      const tsr_code bad = TSR_INVALID_ARGUMENT;
      HostTensor nan = Full({3}, TSR_DTYPE_FLOAT32, 0.5);
      nan.values[1] = std::numeric_limits<double>::quiet_NaN();
      return std::vector<ErrorInput>{
          RefusedSaying(call(Full({3}, TSR_DTYPE_FLOAT32, 1.5)), bad,
                        "expects all elements of p to be in [0, 1]"),
          RefusedSaying(call(Full({1}, TSR_DTYPE_FLOAT64, -0.5)), bad,
                        "expects all elements of p to be in [0, 1]"),
          Saying(Refused(call(nan), bad, "a NaN probability"),
                 "expects all elements of p to be in [0, 1]"),
          Saying(Refused(call(MakeTensor({3}, TSR_DTYPE_INT64, rng)), bad, "int64 p"),
                 "expected a floating-point tensor of probabilities, got int64"),
          Saying(Refused(call(Full({3}, TSR_DTYPE_BOOL, 1)), bad, "bool p"),
                 "expected a floating-point tensor of probabilities, got bool"),
          RefusedSaying(call(Full({4}, TSR_DTYPE_FLOAT32, 0.5)), bad,
                        "the expanded size of the tensor (3) must match the existing size (4)"),
          // p expands to self, never self to p (ATen's expand_inplace).
          RefusedSaying(call(Full({2, 3}, TSR_DTYPE_FLOAT32, 0.5)), bad,
                        "the number of sizes provided (1) must be greater or equal to the "
                        "number of dimensions in the tensor (2)"),
      };
    };
    db.push_back(std::move(op));
  }
}

void AddDropout(std::vector<OpInfo>& db) {
  {
    OpInfo op;  // native_dropout(input, p, train?): where the draw decides nothing
    op.name = "native_dropout";
    op.dtypes = kFloatingMask;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& shape : Shapes()) {
        if (shape == std::vector<int64_t>{0}) continue;  // an empty input: its own sample below
        // Training first: it is what refuses an integral input (the dtype claims' sample).
        const Arg x = Arg::Tensor(MakeTensor(shape, dtype, rng));
        s.push_back({{x, Arg::Double(0.0), Arg::Bool(true)}, ShapeString(shape) + " p 0"});
        s.push_back({{x, Arg::Double(1.0), Arg::None()}, ShapeString(shape) + " p 1, train None"});
        s.push_back({{x, Arg::Double(0.5), Arg::Bool(false)}, ShapeString(shape) + " eval"});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor& x = s.args[0].tensor;
      const double p = s.args[1].number;
      const bool train = s.args[2].kind == Arg::Kind::kNone || s.args[2].boolean;
      const bool keep = !train || p == 0.0;
      const double scale = !train ? 1.0 : keep ? 1.0 : 0.0;
      HostTensor out = x;
      for (double& v : out.values) v = RoundTo(x.dtype, v * (keep ? 1.0 : 0.0) * scale);
      return std::vector<HostTensor>{out, Full(x.shape, TSR_DTYPE_BOOL, keep ? 1 : 0)};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;  // native_dropout_backward(grad, mask, scale) = grad * mask * scale
    op.name = "native_dropout_backward";
    op.dtypes = kAllMask;  // an integral or bool grad gives float32 (the float scale promotes)
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& shape : Shapes()) {
        s.push_back({{Arg::Tensor(MakeTensor(shape, dtype, rng)),
                      Arg::Tensor(MakeTensor(shape, TSR_DTYPE_BOOL, rng)), Arg::Double(1.25)},
                     ShapeString(shape)});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor& g = s.args[0].tensor;
      HostTensor out = g;
      out.dtype = IsFloating(g.dtype) ? g.dtype : TSR_DTYPE_FLOAT32;
      for (size_t i = 0; i < out.values.size(); ++i) {
        // mul(grad, mask) rounds to grad's dtype, then mul by the scale rounds again.
        const double kept = RoundTo(g.dtype, g.values[i] * s.args[1].tensor.values[i]);
        out.values[i] = RoundTo(out.dtype, kept * s.args[2].number);
      }
      return std::vector<HostTensor>{out};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;  // dropout(input, p, train): where the draw decides nothing
    op.name = "dropout";
    op.dtypes = kAllMask;  // training with 0 < p < 1 refuses an integral input (not sampled)
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& shape : Shapes()) {
        const Arg x = Arg::Tensor(MakeTensor(shape, dtype, rng));
        s.push_back({{x, Arg::Double(0.5), Arg::Bool(false)}, ShapeString(shape) + " eval"});
        s.push_back({{x, Arg::Double(0.0), Arg::Bool(true)}, ShapeString(shape) + " p 0"});
        s.push_back({{x, Arg::Double(1.0), Arg::Bool(true)}, ShapeString(shape) + " p 1"});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      HostTensor out = s.args[0].tensor;
      if (s.args[1].number == 1.0 && s.args[2].boolean) {
        for (double& v : out.values) v = RoundTo(out.dtype, v * 0.0);
      }
      return std::vector<HostTensor>{out};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{F32({3}, rng), Arg::Double(-0.5), Arg::Bool(true)}, "p -0.5"},
                  TSR_INVALID_ARGUMENT,
                  "a probability below 0"},
                 "dropout probability has to be between 0 and 1, but got -0.5")};
    };
    db.push_back(std::move(op));
  }
}

}  // namespace

void AddRandomOps(std::vector<OpInfo>& db) {
  AddUniformNormal(db);
  AddFactories(db);
  AddIntegers(db);
  AddBernoulli(db);
  AddBernoulliForms(db);
  AddDropout(db);
  AddDistributionOps(db);
}

}  // namespace conformance
}  // namespace tessera
