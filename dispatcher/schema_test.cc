#include "dispatcher/schema.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

FunctionSchema MustParse(std::string_view text) {
  absl::StatusOr<FunctionSchema> s = ParseSchema(text);
  EXPECT_TRUE(s.ok()) << text << "\n" << s.status();
  return s.ok() ? *std::move(s) : FunctionSchema{};
}

TEST(SchemaParser, ParsesNameOverloadArgumentsAndKeywordOnly) {
  FunctionSchema s =
      MustParse("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_EQ(s.name, "add");
  EXPECT_EQ(s.overload, "Tensor");
  EXPECT_EQ(s.FullName(), "add.Tensor");
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_EQ(s.arguments[0].name, "self");
  EXPECT_EQ(s.arguments[0].type.base, BaseType::kTensor);
  EXPECT_FALSE(s.arguments[1].kwarg_only);
  EXPECT_TRUE(s.arguments[2].kwarg_only);
  EXPECT_EQ(s.arguments[2].type.base, BaseType::kScalar);
  ASSERT_TRUE(s.arguments[2].default_value.has_value());
  EXPECT_EQ(*s.arguments[2].default_value, Value(Scalar(int64_t{1})));
  ASSERT_EQ(s.returns.size(), 1u);
  EXPECT_FALSE(s.HasWrittenArgument());
}

TEST(SchemaParser, ParsesAliasAnnotationsAndNamespaces) {
  FunctionSchema s = MustParse("npu::fused.out(Tensor(a) self, *, Tensor(b!) out) -> Tensor(b!)");
  EXPECT_EQ(s.ns, "npu");
  EXPECT_EQ(s.FullName(), "npu::fused.out");
  ASSERT_TRUE(s.arguments[0].alias.has_value());
  EXPECT_EQ(s.arguments[0].alias->set, "a");
  EXPECT_FALSE(s.arguments[0].alias->is_write);
  EXPECT_EQ(s.arguments[1].alias->set, "b");
  EXPECT_TRUE(s.arguments[1].alias->is_write);
  EXPECT_TRUE(s.returns[0].alias->is_write);
  EXPECT_TRUE(s.HasWrittenArgument());
  FunctionSchema plain = MustParse("relu(Tensor self) -> Tensor");
  EXPECT_EQ(plain.overload, "");
  EXPECT_EQ(plain.FullName(), "relu");
}

TEST(SchemaParser, ParsesEveryTypeFormAndDefault) {
  FunctionSchema s = MustParse(
      "f(Tensor? a, Tensor[] b, Tensor?[] c, int[1]? dim, int[2] stride=1, int[] dims=[], "
      "float eps=1e-05, float lo=-inf, str? mode=None, str approx='none', bool keep=False, "
      "ScalarType? dtype=None, Device? device=None, SymInt n=-3, float[] w=[0.5, 1.5], "
      "MemoryFormat fmt=contiguous_format, Layout? layout=None, Generator? gen=None, "
      "bool[3] mask=[True, False, True], ScalarType t=long, Scalar s=2.5) -> Tensor");
  const auto& a = s.arguments;
  ASSERT_EQ(a.size(), 21u);
  EXPECT_TRUE(a[0].type.optional);
  EXPECT_TRUE(a[1].type.is_list);
  EXPECT_FALSE(a[1].type.element_optional);
  EXPECT_TRUE(a[2].type.element_optional);
  EXPECT_FALSE(a[2].type.optional);
  EXPECT_TRUE(a[3].type.is_list && a[3].type.optional);
  EXPECT_EQ(a[3].type.list_size, 1);
  EXPECT_EQ(a[3].type.ToString(), "int[1]?");
  EXPECT_EQ(*a[4].default_value, Value(IntList{1, 1})) << "a bare int fills a fixed-size list";
  EXPECT_EQ(*a[5].default_value, Value(IntList{}));
  EXPECT_EQ(*a[6].default_value, Value(1e-05));
  EXPECT_EQ(a[7].default_value->to_double(), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(a[8].default_value->is_none());
  EXPECT_EQ(*a[9].default_value, Value("none"));
  EXPECT_EQ(*a[10].default_value, Value(false));
  EXPECT_EQ(a[13].type.base, BaseType::kInt) << "SymInt is int";
  EXPECT_EQ(*a[13].default_value, Value(int64_t{-3}));
  EXPECT_EQ(*a[14].default_value, Value(std::vector<double>{0.5, 1.5}));
  EXPECT_EQ(*a[15].default_value, Value(int64_t{0}));
  EXPECT_EQ(*a[18].default_value, Value(std::vector<bool>{true, false, true}));
  EXPECT_EQ(*a[19].default_value, Value(ScalarType::kInt64));
  EXPECT_EQ(*a[20].default_value, Value(Scalar(2.5)));
}

TEST(SchemaParser, ParsesReturnForms) {
  FunctionSchema two = MustParse(
      "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  ASSERT_EQ(two.returns.size(), 2u);
  EXPECT_EQ(two.returns[0].name, "values");
  EXPECT_EQ(two.returns[1].name, "indices");
  FunctionSchema out = MustParse(
      "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) "
      "max_values) -> (Tensor(a!) values, Tensor(b!) indices)");
  EXPECT_TRUE(out.returns[1].alias->is_write);
  EXPECT_TRUE(MustParse("_foreach(Tensor[] self) -> ()").returns.empty());
  FunctionSchema list = MustParse("unbind.int(Tensor(a) self, int dim=0) -> Tensor(a)[]");
  EXPECT_TRUE(list.returns[0].type.is_list);
  EXPECT_EQ(list.returns[0].alias->set, "a");
  FunctionSchema unnamed = MustParse("f(Tensor x) -> (Tensor, Tensor)");
  EXPECT_EQ(unnamed.returns.size(), 2u);
}

TEST(SchemaParser, PrintsCanonicalFormThatParsesBackIdentically) {
  for (const char* text : {
           "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
           "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
           "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
           "dtype=None) -> Tensor",
           "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
           "conv(Tensor input, Tensor? bias, int[2] stride=[1, 1], float eps=1e-05, float p=2., "
           "str m='x') -> Tensor",
           "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
           "npu::op(Tensor(a!)[] xs) -> ()",
           "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
       }) {
    FunctionSchema first = MustParse(text);
    FunctionSchema again = MustParse(first.ToString());
    EXPECT_EQ(again.ToString(), first.ToString()) << text;
  }
  EXPECT_EQ(MustParse("add.Tensor(Tensor self,Tensor other,*,Scalar alpha=1)->Tensor").ToString(),
            "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
}

struct BadSchema {
  const char* text;
  size_t column;  // 1-based column the error must point at
  const char* message;
};

TEST(SchemaParser, MalformedSchemasPointAtTheOffendingColumn) {
  const BadSchema kCases[] = {
      {"", 1, "expected an operator name"},
      {"add.(Tensor self) -> Tensor", 5, "expected an overload name"},
      {"add.Tensor(Tensor self Tensor other) -> Tensor", 24, "expected ','"},
      {"add(Tensr self) -> Tensor", 5, "unknown type"},
      {"add(Tensor self) Tensor", 18, "expected '->'"},
      {"add(Tensor self) -> ", 21, "expected a type, found end of schema"},
      {"add(Tensor self) -> Tensor extra", 28, "expected end of schema"},
      {"add(Tensor self, Tensor self) -> Tensor", 18, "duplicate argument name 'self'"},
      {"add(int x=None) -> Tensor", 11, "invalid default for argument 'x': expected int, got None"},
      {"add(int x='a') -> Tensor", 11, "expected int, got str"},
      {"add(Tensor self=1) -> Tensor", 17, "expected Tensor, got int"},
      {"add(Tensor self, *, int a, *, int b) -> Tensor", 28, "'*' may appear only once"},
      {"add(str s='abc) -> Tensor", 11, "unterminated string literal"},
      {"add(Tensor self, int[0] x) -> Tensor", 22, "positive list size"},
      {"add(int(a) x) -> Tensor", 8, "alias annotations apply only to Tensor"},
      {"add(int a=1, int b) -> Tensor", 14, "without a default follows one with a default"},
      {"add(Tensor self, int$ x) -> Tensor", 21, "unexpected character '$'"},
      {"add(int?[] x) -> Tensor", 5, "only Tensor?[]"},
      {"add(Tensor self, ScalarType t=complex) -> Tensor", 31, "unknown default value"},
      {"add(Tensor self, int[2] k=[1, x]) -> Tensor", 31, "expected a number or True/False"},
  };
  for (const BadSchema& c : kCases) {
    absl::StatusOr<FunctionSchema> s = ParseSchema(c.text);
    ASSERT_FALSE(s.ok()) << "parsed: " << c.text;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(s.status().message());
    EXPECT_THAT(message, HasSubstr("column " + std::to_string(c.column) + ":")) << c.text << "\n"
                                                                                << message;
    EXPECT_THAT(message, HasSubstr(c.message)) << c.text;
    // The caret line puts '^' under the column.
    const size_t caret = message.rfind('^');
    const size_t line_start = message.rfind('\n', caret) + 1;
    EXPECT_EQ(caret - line_start, c.column - 1 + 2) << c.text << "\n" << message;
  }
}

TEST(OperatorName, SplitsNamespaceNameAndOverload) {
  OperatorName n = *ParseOperatorName("npu::my_op.out");
  EXPECT_EQ(n.ns, "npu");
  EXPECT_EQ(n.name, "my_op");
  EXPECT_EQ(n.overload, "out");
  EXPECT_FALSE(ParseOperatorName("my_op(").ok());
}

TEST(NormalizeArgumentValue, ConvertsAndRejectsWithExpectedAndFound) {
  FunctionSchema s = MustParse(
      "f(float x, Scalar y, int[2] k, Device d, Tensor? t, Tensor[] ts, ScalarType dt) -> ()");
  Value x(int64_t{3});
  ASSERT_TRUE(NormalizeArgumentValue(s.arguments[0], &x).ok());
  EXPECT_EQ(x, Value(3.0));
  Value y(2.5);
  ASSERT_TRUE(NormalizeArgumentValue(s.arguments[1], &y).ok());
  EXPECT_EQ(y, Value(Scalar(2.5)));
  Value k(int64_t{4});
  ASSERT_TRUE(NormalizeArgumentValue(s.arguments[2], &k).ok());
  EXPECT_EQ(k, Value(IntList{4, 4}));
  Value d("cuda:1");
  ASSERT_TRUE(NormalizeArgumentValue(s.arguments[3], &d).ok());
  EXPECT_EQ(d, Value(Device(DeviceType::kCUDA, 1)));
  Value bad_device("gpu:1");
  EXPECT_THAT(NormalizeArgumentValue(s.arguments[3], &bad_device).message(),
              HasSubstr("unknown device type 'gpu'"));
  Value undefined{Tensor()};
  ASSERT_TRUE(NormalizeArgumentValue(s.arguments[4], &undefined).ok());
  EXPECT_TRUE(undefined.is_none());
  Value list(std::vector<Tensor>{Tensor()});
  EXPECT_THAT(NormalizeArgumentValue(s.arguments[5], &list).message(),
              HasSubstr("undefined tensor at element 0"));
  Value wrong(true);
  EXPECT_EQ(NormalizeArgumentValue(s.arguments[0], &wrong).message(), "expected float, got bool");
  Value bad_dtype(static_cast<ScalarType>(77));
  EXPECT_THAT(NormalizeArgumentValue(s.arguments[6], &bad_dtype).message(), HasSubstr("got 77"));
}

}  // namespace
}  // namespace tessera
