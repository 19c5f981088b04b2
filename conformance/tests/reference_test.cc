// The references' own dtype facts, checked against what they stand for: their type promotion
// against PyTorch's table, and their float16/bfloat16 rounding against the conversions the
// runtime and plugins share (which the references do not use); and the database's error inputs,
// each of which names the refusal it expects.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "conformance/compare.h"
#include "conformance/host_tensor.h"
#include "conformance/invoke.h"
#include "conformance/op_db.h"
#include "conformance/reference_promotion.h"
#include "gtest/gtest.h"
#include "tessera/sdk/half.hpp"

namespace tessera {
namespace conformance {
namespace {

// PyTorch's promotion table (_promoteTypesLookup in promoteTypes, c10/core/ScalarType.cpp),
// transcribed in PyTorch's own axis order and abbreviations, its complex rows and columns left
// out.
struct PyTorchDtype {
  const char* abbreviation;
  const char* name;
};
constexpr PyTorchDtype kPyTorchAxis[] = {
    {"u1", "uint8"},   {"i1", "int8"},    {"i2", "int16"},   {"i4", "int32"}, {"i8", "int64"},
    {"f2", "float16"}, {"f4", "float32"}, {"f8", "float64"}, {"b1", "bool"},  {"bf", "bfloat16"},
};
constexpr const char* kPyTorchTable[] = {
    /*        u1 i1 i2 i4 i8 f2 f4 f8 b1 bf */
    /* u1 */ "u1 i2 i2 i4 i8 f2 f4 f8 u1 bf",
    /* i1 */ "i2 i1 i2 i4 i8 f2 f4 f8 i1 bf",
    /* i2 */ "i2 i2 i2 i4 i8 f2 f4 f8 i2 bf",
    /* i4 */ "i4 i4 i4 i4 i8 f2 f4 f8 i4 bf",
    /* i8 */ "i8 i8 i8 i8 i8 f2 f4 f8 i8 bf",
    /* f2 */ "f2 f2 f2 f2 f2 f2 f4 f8 f2 f4",
    /* f4 */ "f4 f4 f4 f4 f4 f4 f4 f8 f4 f4",
    /* f8 */ "f8 f8 f8 f8 f8 f8 f8 f8 f8 f8",
    /* b1 */ "u1 i1 i2 i4 i8 f2 f4 f8 b1 bf",
    /* bf */ "bf bf bf bf bf f4 f4 f8 bf bf",
};

// The Tessera dtype of a PyTorch abbreviation, by name.
tsr_dtype DtypeOf(const std::string& abbreviation) {
  for (const PyTorchDtype& p : kPyTorchAxis) {
    if (abbreviation != p.abbreviation) continue;
    for (tsr_dtype d : kAllDtypes) {
      if (std::string(DtypeName(d)) == p.name) return d;
    }
  }
  ADD_FAILURE() << "no Tessera dtype for PyTorch's " << abbreviation;
  return TSR_DTYPE_FORCE_INT32;
}

// The SNR beside the worst element, for float16 and bfloat16 only (Comparison::snr_db).
TEST(Comparison, HalfResultsCarryTheirSignalToNoiseRatio) {
  const HostTensor expected{TSR_DTYPE_FLOAT16, {4}, {1, 2, 3, 4}};
  HostTensor actual = expected;
  actual.values[3] = 4.5;  // noise 0.25 against a signal of 30: 10 log10(120) dB
  const Comparison off = Compare(actual, expected, ToleranceFor(TSR_DTYPE_FLOAT16, 1), "out");
  EXPECT_FALSE(off.ok);
  EXPECT_NEAR(off.snr_db, 10 * std::log10(120.0), 1e-9);
  EXPECT_NE(off.message.find("(SNR of the whole result 20.8 dB)"), std::string::npos)
      << off.message;
  EXPECT_EQ(Compare(expected, expected, {}, "out").snr_db, INFINITY);
  const HostTensor zeros{TSR_DTYPE_BFLOAT16, {2}, {0, 0}}, ones{TSR_DTYPE_BFLOAT16, {2}, {1, 0}};
  EXPECT_EQ(Compare(ones, zeros, {}, "out").snr_db, -INFINITY);
  // Other dtypes, and a mismatch of shape, compute none.
  const HostTensor f32{TSR_DTYPE_FLOAT32, {2}, {1, 2}};
  EXPECT_TRUE(std::isnan(Compare(f32, f32, {}, "out").snr_db));
  EXPECT_TRUE(std::isnan(Compare(zeros, expected, {}, "out").snr_db));
}

TEST(ReferencePromotion, MatchesPyTorchsTableOnEveryPair) {
  std::set<tsr_dtype> covered;
  for (const PyTorchDtype& p : kPyTorchAxis) covered.insert(DtypeOf(p.abbreviation));
  ASSERT_EQ(covered.size(), std::size(kAllDtypes)) << "the table must cover every dtype once";
  for (size_t row = 0; row < std::size(kPyTorchAxis); ++row) {
    std::istringstream entries(kPyTorchTable[row]);
    for (const PyTorchDtype& column : kPyTorchAxis) {
      std::string expected;
      ASSERT_TRUE(entries >> expected) << "row " << kPyTorchAxis[row].abbreviation;
      const tsr_dtype a = DtypeOf(kPyTorchAxis[row].abbreviation);
      const tsr_dtype b = DtypeOf(column.abbreviation);
      EXPECT_EQ(PromoteTypes(a, b), DtypeOf(expected)) << DtypeName(a) << " with " << DtypeName(b);
    }
  }
}

TEST(ReferencePromotion, RefusesValuesThatAreNotDtypes) {
  EXPECT_EQ(PromoteTypes(static_cast<tsr_dtype>(77), TSR_DTYPE_INT8), TSR_DTYPE_FORCE_INT32);
  EXPECT_EQ(PromoteTypes(TSR_DTYPE_FLOAT32, static_cast<tsr_dtype>(-1)), TSR_DTYPE_FORCE_INT32);
}

Arg T(tsr_dtype d) { return Arg::Tensor(HostTensor{d, {2}, {0, 0}}); }
Arg Z(tsr_dtype d) { return Arg::Tensor(HostTensor{d, {}, {0}}); }

tsr_dtype ResultOf(const std::vector<Arg>& args) {
  std::vector<const Arg*> operands;
  for (const Arg& a : args) operands.push_back(&a);
  return ResultDtype(operands);
}

// Cases from PyTorch's type promotion documentation (torch.result_type).
TEST(ReferenceResultType, FollowsPyTorchsPriorityClasses) {
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_INT32), Arg::ScalarInt(5)}), TSR_DTYPE_INT32);
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_INT32), Arg::ScalarDouble(5.5)}), TSR_DTYPE_FLOAT32);
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_INT32), Z(TSR_DTYPE_INT64)}), TSR_DTYPE_INT32);
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_INT32), Z(TSR_DTYPE_FLOAT64)}), TSR_DTYPE_FLOAT64);
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_FLOAT16), Arg::ScalarDouble(2)}), TSR_DTYPE_FLOAT16);
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_FLOAT16), Z(TSR_DTYPE_FLOAT64)}), TSR_DTYPE_FLOAT16);
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_BOOL), Arg::ScalarInt(1)}), TSR_DTYPE_INT64);
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_BOOL), Arg::ScalarBool(true)}), TSR_DTYPE_BOOL);
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_UINT8), T(TSR_DTYPE_INT8)}), TSR_DTYPE_INT16);
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_BFLOAT16), T(TSR_DTYPE_FLOAT16)}), TSR_DTYPE_FLOAT32);
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_BFLOAT16), Z(TSR_DTYPE_FLOAT16)}), TSR_DTYPE_BFLOAT16);
  EXPECT_EQ(ResultOf({Z(TSR_DTYPE_INT32), Z(TSR_DTYPE_INT64)}), TSR_DTYPE_INT64);
  EXPECT_EQ(ResultOf({Z(TSR_DTYPE_INT32), Arg::ScalarDouble(1.5)}), TSR_DTYPE_FLOAT32);
  EXPECT_EQ(ResultOf({T(TSR_DTYPE_INT32), Z(TSR_DTYPE_BOOL), Arg::ScalarDouble(2.5)}),
            TSR_DTYPE_FLOAT32);
  EXPECT_EQ(ResultOf({}), TSR_DTYPE_FLOAT32);
}

bool SameDouble(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(ReferenceRounding, Float16AndBFloat16AgreeWithTheSharedConversions) {
  // Every combination of the top 20 bits of a float, with low bits at and around the points
  // halfway between two float16 or two bfloat16 values.
  for (uint32_t high = 0; high < (1u << 20); ++high) {
    for (uint32_t low : {0x000u, 0x001u, 0x7ffu, 0x800u, 0x801u, 0xfffu}) {
      const uint32_t bits = (high << 12) | low;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      const double half = RoundTo(TSR_DTYPE_FLOAT16, f);
      const double bfloat = RoundTo(TSR_DTYPE_BFLOAT16, f);
      if (std::isnan(f)) {
        ASSERT_TRUE(std::isnan(half) && std::isnan(bfloat)) << std::hexfloat << f;
        continue;
      }
      ASSERT_TRUE(SameDouble(half, sdk::to_float(sdk::to_half(f))))
          << std::hexfloat << f << " -> " << half;
      ASSERT_TRUE(SameDouble(bfloat, sdk::to_float(sdk::to_bfloat16(f))))
          << std::hexfloat << f << " -> " << bfloat;
    }
  }
}

TEST(ReferenceRounding, GoesThroughFloatLikeAKernelsStore) {
  // 1 + 2^-11 + 2^-40 is above the float16 tie between 1 and 1 + 2^-10, but as a float it is
  // the tie itself, which rounds to even: 1.
  EXPECT_EQ(RoundTo(TSR_DTYPE_FLOAT16, 1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 1.0);
  EXPECT_EQ(RoundTo(TSR_DTYPE_FLOAT16, 65519.0), 65504.0);
  EXPECT_EQ(RoundTo(TSR_DTYPE_FLOAT16, 65520.0), HUGE_VAL);
  EXPECT_EQ(RoundTo(TSR_DTYPE_FLOAT16, -1e6), -HUGE_VAL);
  EXPECT_EQ(RoundTo(TSR_DTYPE_FLOAT16, std::ldexp(3.0, -25)), std::ldexp(1.0, -23));
  EXPECT_TRUE(std::signbit(RoundTo(TSR_DTYPE_FLOAT16, -1e-10)));
  EXPECT_EQ(RoundTo(TSR_DTYPE_BFLOAT16, 1 + std::ldexp(3.0, -8)), 1 + std::ldexp(1.0, -6));
  EXPECT_EQ(RoundTo(TSR_DTYPE_BFLOAT16, 3.4028234663852886e38), HUGE_VAL);
}

// Every error input of the database says which refusal it expects (ErrorInput::message): a
// code alone passes an input that an earlier, unrelated check refuses (div.Scalar's "shapes
// that do not broadcast" input was refused by the argument check, a Tensor where a Scalar is
// due). The suite checks the message; this test keeps new inputs from leaving it out.
TEST(OpDatabase, EveryErrorInputSaysWhichRefusalItExpects) {
  for (const OpInfo& op : OpDatabase()) {
    if (!op.errors) continue;
    Rng rng(SampleSeed(op.name, 0, TSR_DTYPE_FLOAT32) + kErrorInputsSeedOffset);
    for (const ErrorInput& e : op.errors(rng)) {
      EXPECT_FALSE(e.message.empty())
          << op.name << ": the error input '" << e.sample.desc << " (" << e.what
          << ")' declares no message (Saying / RefusedSaying in op_db_helpers.h)";
    }
  }
}

}  // namespace
}  // namespace conformance
}  // namespace tessera
