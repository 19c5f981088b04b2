#include "dispatcher/schema.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "core/layout.h"
#include "dispatcher/op_registry.h"
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
  // ATen's symbolic host values (torch.export's metadata queries) are plain ones here, and the
  // canonical text says so; the enum default reads back as its number.
  EXPECT_EQ(MustParse("sym_numel(Tensor self) -> SymInt").returns[0].type.base, BaseType::kInt);
  FunctionSchema sym_bool = MustParse(
      "sym_is_contiguous(Tensor self, MemoryFormat memory_format=contiguous_format) -> SymBool");
  EXPECT_EQ(sym_bool.returns[0].type.base, BaseType::kBool) << "SymBool is bool";
  EXPECT_EQ(sym_bool.ToString(),
            "sym_is_contiguous(Tensor self, MemoryFormat memory_format=0) -> bool");
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

// SameDouble compares bit for bit: a round trip must keep NaN a NaN and -0.0 negative, which
// == cannot see.
bool SameDouble(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

bool SameValue(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kDouble:
      return SameDouble(a.to_double(), b.to_double());
    case Value::Kind::kDoubleList: {
      if (a.double_list().size() != b.double_list().size()) return false;
      for (size_t i = 0; i < a.double_list().size(); ++i) {
        if (!SameDouble(a.double_list()[i], b.double_list()[i])) return false;
      }
      return true;
    }
    case Value::Kind::kScalar:
      if (a.scalar().is_floating_point() != b.scalar().is_floating_point()) return false;
      if (a.scalar().is_floating_point()) {
        return SameDouble(a.scalar().to_double(), b.scalar().to_double());
      }
      return a == b;
    default:
      return a == b;
  }
}

::testing::AssertionResult SameArguments(std::string_view what, const std::vector<Argument>& a,
                                         const std::vector<Argument>& b) {
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure() << what << ": " << a.size() << " vs " << b.size();
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const Argument& x = a[i];
    const Argument& y = b[i];
    const std::string where = absl::StrFormat("%s[%d] '%s'", what, i, x.name);
    if (x.name != y.name) return ::testing::AssertionFailure() << where << ": name " << y.name;
    if (!(x.type == y.type)) {
      return ::testing::AssertionFailure()
             << where << ": type " << x.type.ToString() << " vs " << y.type.ToString();
    }
    if (!(x.alias == y.alias)) return ::testing::AssertionFailure() << where << ": alias";
    if (x.kwarg_only != y.kwarg_only) return ::testing::AssertionFailure() << where << ": kwarg";
    if (x.default_value.has_value() != y.default_value.has_value() ||
        (x.default_value && !SameValue(*x.default_value, *y.default_value))) {
      return ::testing::AssertionFailure()
             << where << ": default "
             << (x.default_value ? x.default_value->ToString() : std::string("(none)")) << " vs "
             << (y.default_value ? y.default_value->ToString() : std::string("(none)"));
    }
  }
  return ::testing::AssertionSuccess();
}

// SameSchema: structural equality, field by field.
::testing::AssertionResult SameSchema(const FunctionSchema& a, const FunctionSchema& b) {
  if (a.ns != b.ns || a.name != b.name || a.overload != b.overload) {
    return ::testing::AssertionFailure() << a.FullName() << " vs " << b.FullName();
  }
  ::testing::AssertionResult args = SameArguments("argument", a.arguments, b.arguments);
  if (!args) return args;
  return SameArguments("return", a.returns, b.returns);
}

// ExpectRoundTrip: parse(print(s)) is s, and print(parse(print(s))) is print(s).
void ExpectRoundTrip(const FunctionSchema& schema, std::string_view origin) {
  const std::string printed = schema.ToString();
  absl::StatusOr<FunctionSchema> again = ParseSchema(printed);
  ASSERT_TRUE(again.ok()) << origin << "\nprinted: " << printed << "\n" << again.status();
  EXPECT_TRUE(SameSchema(schema, *again)) << origin << "\nprinted: " << printed;
  EXPECT_EQ(again->ToString(), printed) << origin;
}

// Schemas chosen to break a printer: quotes and escapes in strings, devices, floats that need
// 17 digits, denormals, signed zero, NaN, the int64 limits, the largest fixed list.
constexpr const char* kTrickySchemas[] = {
    R"(f(str s="it's") -> ())",
    R"(f(str s="a', str t='b") -> ())",
    R"(f(str s='say "hi"', str t='') -> ())",
    R"(f(str s="back\\slash\ttab\nnl\r\a\b\f\v\001\177\303\251\"\'") -> ())",
    "f(str s='raw\ttab') -> ()",
    R"(f(str? s=None, str t=",) -> Tensor") -> ())",
    R"(f(Device d="cpu", Device? e="cuda:1", Device m='meta', Device p="privateuseone:3") -> ())",
    "f(float a=0.1234567, float b=0.1234568, float c=0.30000000000000004) -> ()",
    "f(float a=0.1, float b=1e-05, float c=1e+300, float d=5e-324, float e=-0., float g=nan, "
    "float h=inf, float i=-inf, float j=123456789012345678., float k=2, float l=1.e5) -> ()",
    "f(float[] w=[0.1, 0.30000000000000004, -inf, 1e+16, 0.1234567], float[2] v=[1, 2], "
    "float[] z=[]) -> ()",
    "f(Scalar a=2., Scalar b=1, Scalar c=True, Scalar d=-0.5, Scalar e=0.1234567, Scalar? "
    "f=None, Scalar g=-0.) -> ()",
    "f(int a=-9223372036854775808, int b=9223372036854775807, int[2] c=[9223372036854775807, "
    "-9223372036854775808], SymInt n=-3) -> ()",
    "f(int[1024] big=1, bool[3] m=[True, False, True], int[] e=[], Tensor[] t=[], int[1]? d=None) "
    "-> ()",
    "f(ScalarType t=float32, ScalarType? u=None, MemoryFormat m=channels_last, Layout l=strided, "
    "Generator? g=None) -> ()",
    R"(npu::op.out(Tensor(a) self, Tensor?[] idx, *, str mode="x\"y", Tensor(b!)[] outs))"
    R"( -> (Tensor(b!)[] outs, Tensor))",
    "f() -> ()",
    "f(*, int x) -> Tensor",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
};

TEST(SchemaRoundTrip, PrintParsePrintIsTheIdentityOnTrickySchemas) {
  for (const char* text : kTrickySchemas) {
    absl::StatusOr<FunctionSchema> s = ParseSchema(text);
    ASSERT_TRUE(s.ok()) << text << "\n" << s.status();
    ExpectRoundTrip(*s, text);
  }
}

TEST(SchemaRoundTrip, PrintParsePrintIsTheIdentityOnEveryRegisteredOp) {
  OpRegistry& registry = OpRegistry::Global();
  const std::vector<std::string> names = registry.ListOps();
  ASSERT_GT(names.size(), 100u);
  for (const std::string& name : names) {
    absl::StatusOr<OperatorHandle> op = registry.Find(name);
    ASSERT_TRUE(op.ok()) << op.status();
    ExpectRoundTrip(op->schema(), name);
  }
}

// Random defaults, built as values (not text): every double bit pattern but NaN payloads, every
// byte in strings.
TEST(SchemaRoundTrip, PrintParsePrintIsTheIdentityOnRandomFloatAndStringDefaults) {
  std::mt19937_64 rng(14);
  for (int i = 0; i < 2000; ++i) {
    double d;
    do {
      const uint64_t bits = rng();
      std::memcpy(&d, &bits, sizeof(d));
    } while (std::isnan(d));
    std::string text(rng() % 12, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    FunctionSchema schema = MustParse("f(float x, Scalar y, float[] z, str s) -> ()");
    schema.arguments[0].default_value = Value(d);
    schema.arguments[1].default_value = Value(Scalar(d));
    schema.arguments[2].default_value = Value(std::vector<double>{d, -d});
    schema.arguments[3].default_value = Value(text);
    ExpectRoundTrip(schema, absl::StrFormat("%a, \"%s\"", d, absl::CHexEscape(text)));
    if (HasFailure()) return;
  }
}

TEST(SchemaRoundTrip, StringDefaultsKeepQuotesAndEscapes) {
  FunctionSchema s = MustParse(R"(f(str s="a', str t='b") -> ())");
  ASSERT_EQ(s.arguments.size(), 1u);
  EXPECT_EQ(*s.arguments[0].default_value, Value("a', str t='b"));
  FunctionSchema again = MustParse(s.ToString());
  ASSERT_EQ(again.arguments.size(), 1u) << s.ToString();
  EXPECT_EQ(*again.arguments[0].default_value, Value("a', str t='b"));
  // A real two-argument op must not print as the same text.
  EXPECT_NE(MustParse("f(str s='a', str t='b') -> ()").ToString(), s.ToString());

  // PyTorch's escapes (c10::printQuotedString) read back to the same bytes.
  FunctionSchema escaped = MustParse(R"(f(str s="\\\t\n\r\a\b\f\v\'\"\001\177\303\251") -> ())");
  EXPECT_EQ(*escaped.arguments[0].default_value, Value("\\\t\n\r\a\b\f\v'\"\001\177\303\251"));
  EXPECT_EQ(escaped.ToString(), R"(f(str s="\\\t\n\r\a\b\f\v\'\"\001\177\303\251") -> ())");
  EXPECT_EQ(MustParse(R"(f(str s="it's") -> ())").ToString(), R"(f(str s="it\'s") -> ())");
}

TEST(SchemaRoundTrip, DeviceDefaultsPrintQuotedUnderTheirReservedNames) {
  EXPECT_EQ(MustParse(R"(f(Device d="cpu", Device? e='cuda:1') -> ())").ToString(),
            R"(f(Device d="cpu", Device? e="cuda:1") -> ())");
}

TEST(SchemaRoundTrip, FloatDefaultsPrintTheShortestTextThatReadsBackExactly) {
  const FunctionSchema a = MustParse("f(float x=0.1234567) -> ()");
  const FunctionSchema b = MustParse("f(float x=0.1234568) -> ()");
  EXPECT_NE(a.ToString(), b.ToString());
  EXPECT_EQ(a.ToString(), "f(float x=0.1234567) -> ()");
  EXPECT_EQ(MustParse("f(float x=0.30000000000000004, float y=2, float z=1e-05, float w=-0.) -> ()")
                .ToString(),
            "f(float x=0.30000000000000004, float y=2., float z=1e-05, float w=-0.) -> ()");
  EXPECT_EQ(MustParse("f(float[] x=[0.1234567, 3], Scalar s=2.) -> ()").ToString(),
            "f(float[] x=[0.1234567, 3.], Scalar s=2.) -> ()")
      << "a float Scalar stays a float";
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
      // Numbers are read whole and exactly, or refused naming the argument (issue 14, item 15).
      {"f(float x=1.5.5) -> ()", 11,
       "argument 'x': expected a number, found malformed number '1.5.5'"},
      {"f(float x=1e) -> ()", 11, "argument 'x': expected a number, found malformed number '1e'"},
      {"f(float x=1e999) -> ()", 11, "argument 'x': expected a float in double's range"},
      {"f(float x=1e-999) -> ()", 11, "argument 'x': expected a float in double's range"},
      {"f(int x=99999999999999999999) -> ()", 9,
       "argument 'x': expected an integer in [-9223372036854775808, 9223372036854775807], found "
       "'99999999999999999999'"},
      {"f(int x=-9223372036854775809) -> ()", 9, "argument 'x': expected an integer in"},
      {"f(int[2] x=[1, 99999999999999999999]) -> ()", 16, "argument 'x': expected an integer in"},
      {"f(float[] x=[0.5, 1.5.5]) -> ()", 19, "argument 'x': expected a number, found malformed"},
      {"f(bool[2] x=[1, True]) -> ()", 17,
       "argument 'x': expected a list of numbers or of True/False, found both"},
      {"f(int[99999999999999999999] x) -> ()", 7,
       "argument 'x': expected a positive list size of at most 1024, found integer "
       "'99999999999999999999'"},
      {R"(f(str s='a\q') -> ())", 11, "argument 's': unknown escape '\\q' in a string"},
      {R"(f(str s='a\400') -> ())", 11, "unknown escape"},
      {R"(f(str s='a\') -> ())", 9, "unterminated string literal"},
      // Fixed-size lists are capped, so a bare int cannot make a call build a huge list
      // (issue 14, item 16).
      {"f(int[300000000] x) -> ()", 7,
       "argument 'x': expected a positive list size of at most 1024, found integer '300000000'"},
      {"f(int[9223372036854775807] x=1) -> ()", 7, "at most 1024"},
      {"f(int[1025] x) -> ()", 7, "at most 1024"},
      {"f(Tensor x) -> int[2000]", 20, "return 0: expected a positive list size of at most 1024"},
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

TEST(NormalizeArgumentValue, LayoutAndMemoryFormatAcceptOnlyTheirValues) {
  FunctionSchema s = MustParse(
      "f(Layout l, MemoryFormat? m, MemoryFormat c=channels_last_3d, Layout s=strided) -> ()");
  EXPECT_EQ(*s.arguments[2].default_value,
            Value(static_cast<int64_t>(MemoryFormat::kChannelsLast3d)));
  EXPECT_EQ(*s.arguments[3].default_value, Value(static_cast<int64_t>(Layout::kStrided)));
  for (int64_t v = 0; v < kNumMemoryFormats; ++v) {
    Value m(v);
    EXPECT_TRUE(NormalizeArgumentValue(s.arguments[1], &m).ok()) << v;
    EXPECT_EQ(ParseMemoryFormat(MemoryFormatName(static_cast<MemoryFormat>(v))),
              static_cast<MemoryFormat>(v));
  }
  Value none;
  EXPECT_TRUE(NormalizeArgumentValue(s.arguments[1], &none).ok());
  Value strided(int64_t{0});
  EXPECT_TRUE(NormalizeArgumentValue(s.arguments[0], &strided).ok());
  Value sparse(int64_t{1});
  EXPECT_THAT(NormalizeArgumentValue(s.arguments[0], &sparse).message(),
              HasSubstr("expected a Layout (0: strided, the only layout of Tessera's tensors), "
                        "got 1"));
  for (int64_t bad : {int64_t{-1}, int64_t{4}, int64_t{1} << 40}) {
    Value m(bad);
    EXPECT_THAT(NormalizeArgumentValue(s.arguments[1], &m).message(),
                HasSubstr(absl::StrFormat("expected a MemoryFormat in [0, 4) (0: "
                                          "contiguous_format, 1: preserve_format, 2: "
                                          "channels_last, 3: channels_last_3d), got %d",
                                          bad)));
  }
  EXPECT_FALSE(ParseSchema("f(MemoryFormat m=channels_first) -> ()").ok());
  EXPECT_FALSE(ParseSchema("f(Layout l=sparse_coo) -> ()").ok());
}

}  // namespace
}  // namespace tessera
