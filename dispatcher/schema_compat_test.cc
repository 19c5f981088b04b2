#include "dispatcher/schema_compat.h"

#include <cctype>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;

FunctionSchema MustParse(std::string_view text) {
  absl::StatusOr<FunctionSchema> s = ParseSchema(text);
  EXPECT_TRUE(s.ok()) << text << "\n" << s.status();
  return s.ok() ? *std::move(s) : FunctionSchema{};
}

struct Case {
  const char* what;
  const char* old_schema;
  const char* new_schema;
  SchemaChangeClass expected;
  bool forward_compatible;
  const char* finding;  // a substring of the findings
};

class CompareSchemasTest : public ::testing::TestWithParam<Case> {};

TEST_P(CompareSchemasTest, ClassifiesAsPyTorchDoes) {
  const Case& c = GetParam();
  const SchemaChange change = CompareSchemas(MustParse(c.old_schema), MustParse(c.new_schema));
  const std::string findings = absl::StrJoin(change.findings, "; ");
  EXPECT_EQ(change.change_class, c.expected) << c.what << ": " << findings;
  EXPECT_EQ(change.forward_compatible, c.forward_compatible) << c.what << ": " << findings;
  EXPECT_THAT(findings, HasSubstr(c.finding)) << c.what;
}

constexpr auto kNone = SchemaChangeClass::kNone;
constexpr auto kBC = SchemaChangeClass::kBackwardCompatible;
constexpr auto kBreaking = SchemaChangeClass::kBreaking;

INSTANTIATE_TEST_SUITE_P(
    Table, CompareSchemasTest,
    ::testing::Values(
        Case{"same", "f(Tensor self, int dim=0) -> Tensor", "f(Tensor self, int dim=0) -> Tensor",
             kNone, true, ""},
        Case{"trailing defaulted argument", "f(Tensor self) -> Tensor",
             "f(Tensor self, bool keepdim=False) -> Tensor", kBC, false,
             "argument bool keepdim=False added at position 1, with a default"},
        Case{"trailing keyword-only defaulted argument", "f(Tensor self) -> Tensor",
             "f(Tensor self, *, ScalarType? dtype=None) -> Tensor", kBC, false, "dtype"},
        Case{"trailing argument without default", "f(Tensor self) -> Tensor",
             "f(Tensor self, int dim) -> Tensor", kBreaking, false, "without a default"},
        Case{"out= form: argument before out",
             "f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
             "f.out(Tensor self, int dim=0, *, Tensor(a!) out) -> Tensor(a!)", kBC, false,
             "argument int dim=0 added at position 1"},
        Case{"out= form: argument after out", "f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
             "f.out(Tensor self, *, Tensor(a!) out, int dim=0) -> Tensor(a!)", kBreaking, false,
             ""},
        Case{"removed argument", "f(Tensor self, int dim=0) -> Tensor", "f(Tensor self) -> Tensor",
             kBreaking, false, "argument 'dim' removed"},
        Case{"renamed argument", "f(Tensor self, Tensor other) -> Tensor",
             "f(Tensor self, Tensor x) -> Tensor", kBreaking, false,
             "argument 1 renamed: expected 'other', found 'x'"},
        Case{"reordered arguments", "f(Tensor self, int a, bool b) -> Tensor",
             "f(Tensor self, bool b, int a) -> Tensor", kBreaking, false,
             "argument 'a' reordered: expected at position 1, found at 2"},
        Case{"retyped argument", "f(Tensor self, int dim) -> Tensor",
             "f(Tensor self, int? dim) -> Tensor", kBreaking, false,
             "argument 'dim' retyped: expected int, found int?"},
        Case{"removed default", "f(Tensor self, int dim=0) -> Tensor",
             "f(Tensor self, int dim) -> Tensor", kBreaking, false,
             "default of argument 'dim' removed: expected =0, found none"},
        Case{"changed default", "f(Tensor self, Scalar alpha=1) -> Tensor",
             "f(Tensor self, Scalar alpha=2) -> Tensor", kBreaking, false,
             "default of argument 'alpha' changed: expected =1, found =2"},
        Case{"added default", "f(Tensor self, int dim) -> Tensor",
             "f(Tensor self, int dim=0) -> Tensor", kBC, false, "default =0 added"},
        Case{"became keyword-only", "f(Tensor self, int dim=0) -> Tensor",
             "f(Tensor self, *, int dim=0) -> Tensor", kBreaking, false, "became keyword-only"},
        Case{"became positional", "f(Tensor self, *, int dim=0) -> Tensor",
             "f(Tensor self, int dim=0) -> Tensor", kBC, true, "became positional"},
        Case{"changed return", "f(Tensor self) -> Tensor", "f(Tensor self) -> (Tensor, Tensor)",
             kBreaking, false, "returns changed"},
        Case{"renamed return", "f(Tensor self) -> (Tensor values, Tensor indices)",
             "f(Tensor self) -> (Tensor values, Tensor idx)", kBreaking, false, "return 1 changed"},
        Case{"alias annotation of an argument", "f_(Tensor(a!) self) -> Tensor(a!)",
             "f_(Tensor(a) self) -> Tensor(a!)", kBreaking, false,
             "alias annotation of argument 'self' changed: expected Tensor(a!), found Tensor(a)"},
        Case{"alias annotation of a return", "f(Tensor(a) self) -> Tensor(a)",
             "f(Tensor(a) self) -> Tensor", kBreaking, false, "alias annotation of return 0"},
        Case{"another op", "f(Tensor self) -> Tensor", "g(Tensor self) -> Tensor", kBreaking, false,
             "op renamed"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = info.param.what;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

}  // namespace
}  // namespace tessera
