// Small helpers the op database's newer families share for writing samples and error inputs
// (op_db_norms_sets.cc, op_db_activation_composites.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {

// Described: a sample described by its arguments (and a note on what it is for).
inline Sample Described(std::vector<Arg> args, const std::string& note = "") {
  std::string desc;
  for (const Arg& a : args) desc += (desc.empty() ? "" : ", ") + a.ToString();
  return {std::move(args), desc + note};
}

// Refused: an error input, described by its arguments.
inline ErrorInput Refused(std::vector<Arg> args, tsr_code code, std::string what) {
  return {Described(std::move(args)), code, std::move(what)};
}

// RefusedSaying: an error input whose error message must contain `message` (ErrorInput's
// message), which also describes it.
inline ErrorInput RefusedSaying(std::vector<Arg> args, tsr_code code, std::string message) {
  ErrorInput e = Refused(std::move(args), code, message);
  e.message = std::move(message);
  return e;
}

// Saying: `e`, whose error message must also contain `message`.
inline ErrorInput Saying(ErrorInput e, std::string message) {
  e.message = std::move(message);
  return e;
}

// Values: a tensor of `shape` holding `values` (row-major), rounded to `dtype`.
inline HostTensor Values(tsr_dtype dtype, std::vector<int64_t> shape,
                         const std::vector<double>& values) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  for (double v : values) t.values.push_back(RoundTo(dtype, v));
  return t;
}

// Uniform: a random tensor of `shape` with values in [low, high) (MakeOptions' range).
inline HostTensor Uniform(std::vector<int64_t> shape, tsr_dtype dtype, Rng& rng, double low,
                          double high) {
  MakeOptions range;
  range.low = low;
  range.high = high;
  return MakeTensor(std::move(shape), dtype, rng, range);
}

// Given: whether the sample passes argument i (not left to its default, not None).
inline bool Given(const Sample& s, size_t i) {
  return i < s.args.size() && s.args[i].kind != Arg::Kind::kNone;
}

}  // namespace conformance
}  // namespace tessera
