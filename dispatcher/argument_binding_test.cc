#include "dispatcher/argument_binding.h"

#include <string>
#include <vector>

#include "core/layout.h"
#include "dispatcher/op_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// _to_copy's schema: the motivating case, six defaulted keyword-only arguments after self.
constexpr const char* kToCopy =
    "test::to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
    "device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? "
    "memory_format=None) -> Tensor";

FunctionSchema Parse(const char* text) {
  absl::StatusOr<FunctionSchema> s = ParseSchema(text);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : FunctionSchema{};
}

Value Name(const char* name) { return Value(ArgumentName{name}); }
const Value kDefault{DefaultArgument{}};
const int64_t kContiguous = static_cast<int64_t>(MemoryFormat::kContiguous);

std::vector<std::string> Texts(const Stack& stack) {
  std::vector<std::string> out;
  for (const Value& v : stack) out.push_back(v.ToString());
  return out;
}

Tensor Make() { return *Empty({2}, ScalarType::kFloat32, Device(DeviceType::kCPU)); }

TEST(BindArguments, PutsNamedValuesInTheirPlaceAndDefaultsEverywhereElse) {
  const FunctionSchema schema = Parse(kToCopy);
  const Tensor t = Make();
  Stack stack{t, Name("memory_format"), Value(kContiguous)};
  ASSERT_TRUE(HasBindingMarkers(stack));
  ASSERT_TRUE(BindArguments(schema, "test::to_copy", &stack).ok());
  ASSERT_EQ(stack.size(), 7u);
  EXPECT_EQ(stack[0].tensor().impl(), t.impl());
  EXPECT_THAT(Texts(stack),
              ElementsAre(stack[0].ToString(), "None", "None", "None", "None", "False", "0"));
  EXPECT_FALSE(HasBindingMarkers(stack));
}

TEST(BindArguments, NamesMayComeInAnyOrderAndNameThePositionalArgumentsToo) {
  const FunctionSchema schema = Parse(kToCopy);
  Stack stack{Name("memory_format"),    Value(int64_t{1}), Name("dtype"),
              Value(ScalarType::kInt8), Name("self"),      Value(Make())};
  ASSERT_TRUE(BindArguments(schema, "test::to_copy", &stack).ok());
  EXPECT_THAT(Texts(stack),
              ElementsAre(stack[0].ToString(), "int8", "None", "None", "None", "False", "1"));
}

TEST(BindArguments, APlaceholderTakesTheDefaultPositionallyOrByName) {
  const FunctionSchema schema = Parse(kToCopy);
  Stack skipped{Make(), kDefault, kDefault, kDefault, kDefault, Value(true)};
  ASSERT_TRUE(BindArguments(schema, "test::to_copy", &skipped).ok());
  EXPECT_THAT(Texts(skipped),
              ElementsAre(skipped[0].ToString(), "None", "None", "None", "None", "True", "None"));
  Stack named{Make(), Name("non_blocking"), kDefault, Name("layout"), Value(int64_t{0})};
  ASSERT_TRUE(BindArguments(schema, "test::to_copy", &named).ok());
  EXPECT_THAT(Texts(named),
              ElementsAre(named[0].ToString(), "None", "0", "None", "None", "False", "None"));
}

// Each refusal names the op and what is wrong, and leaves the stack as it was.
TEST(BindArguments, RefusesBadStacksNamingTheOpAndLeavingTheStackAlone) {
  const FunctionSchema schema = Parse(kToCopy);
  struct Case {
    const char* what;
    Stack stack;
    const char* message;
  };
  const Tensor t = Make();
  std::vector<Case> cases = {
      {"unknown name",
       {t, Name("memroy_format"), Value(kContiguous)},
       "test::to_copy: unknown argument name 'memroy_format' (the op's arguments: self, dtype, "
       "layout, device, pin_memory, non_blocking, memory_format)"},
      {"positional and named",
       {t, Name("self"), t},
       "test::to_copy: argument 'self' given twice (at position 0 and by name)"},
      {"named twice",
       {t, Name("dtype"), Value(ScalarType::kInt8), Name("dtype"), Value(ScalarType::kInt16)},
       "test::to_copy: argument 'dtype' given twice (by name, twice)"},
      {"positional after named",
       {t, Name("dtype"), Value(ScalarType::kInt8), Value(int64_t{0})},
       "test::to_copy: expected only named arguments after the named argument 'dtype', got a "
       "positional value (int, stack index 3); push positional values first"},
      {"name without a value",
       {t, Name("dtype")},
       "test::to_copy: argument name 'dtype' (stack index 1) has no value after it"},
      {"name after a name",
       {t, Name("dtype"), Name("layout"), Value(int64_t{0})},
       "test::to_copy: argument name 'dtype' (stack index 1) has no value after it"},
      {"required argument missing",
       {Name("dtype"), Value(ScalarType::kInt8)},
       "test::to_copy: missing value for argument 'self' (position 0), which has no default"},
      {"placeholder without a default",
       {kDefault, Name("dtype"), Value(ScalarType::kInt8)},
       "test::to_copy: argument 'self' (position 0) has no default, but a default placeholder "
       "was pushed for it (tsr_stack_push_default)"},
      {"placeholder named for an argument without a default",
       {Name("self"), kDefault},
       "test::to_copy: argument 'self' (position 0) has no default, but a default placeholder "
       "was pushed for it"},
      {"too many positional values",
       {t, kDefault, kDefault, kDefault, kDefault, kDefault, kDefault, kDefault},
       "test::to_copy: expected at most 7 positional arguments, got more (stack index 7)"},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::vector<std::string> before = Texts(c.stack);
    absl::Status s = BindArguments(schema, "test::to_copy", &c.stack);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr(c.message));
    EXPECT_EQ(Texts(c.stack), before);
  }
}

// The positional path finds markers only through a failed type check (Note [Binding named and
// defaulted arguments]): no schema type may accept one.
TEST(BindArguments, NoSchemaTypeAcceptsAMarker) {
  const FunctionSchema schema = Parse(
      "test::all(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d, int e, int? f, int[2] g, "
      "int[]? h, float i, float[] j, bool k, bool[] l, bool? m, str n, Scalar o, Scalar? p, "
      "ScalarType q, ScalarType? r, Device s, Device? t, Layout u, Layout? v, MemoryFormat w, "
      "MemoryFormat? x, Generator y, Generator? z) -> ()");
  for (const Argument& arg : schema.arguments) {
    for (const Value& marker : {kDefault, Name("a")}) {
      Value v = marker;
      EXPECT_FALSE(NormalizeArgumentValue(arg, &v).ok()) << arg.ToString() << " " << v;
      EXPECT_EQ(v, marker) << "left as it was";
    }
  }
}

// Through the registry: the kernel sees the bound, plain stack.
absl::Status RecordKernel(void* context, const OperatorHandle&, Stack* stack) {
  *static_cast<std::vector<std::string>*>(context) = Texts(*stack);
  stack->clear();
  stack->push_back(Make());
  return absl::OkStatus();
}

TEST(BindArguments, OpCallsBindBeforeTheKernelAndCheckTypesAfterBinding) {
  OpRegistry registry;
  absl::StatusOr<RegistrationHandle> def = registry.Define(kToCopy);
  ASSERT_TRUE(def.ok()) << def.status();
  std::vector<std::string> seen;
  KernelFunction k;
  k.fn = &RecordKernel;
  k.context = &seen;
  k.name = "record";
  absl::StatusOr<RegistrationHandle> impl = registry.Impl("test::to_copy", DispatchKey::kCPU, k);
  ASSERT_TRUE(impl.ok()) << impl.status();
  OperatorHandle op = *registry.Find("test::to_copy");

  const Tensor t = Make();
  Stack stack{t, Name("memory_format"), Value(kContiguous), Name("device"), Value("cpu")};
  absl::Status called = registry.Call(op, &stack);
  ASSERT_TRUE(called.ok()) << called;
  EXPECT_THAT(seen, ElementsAre(Value(t).ToString(), "None", "None",
                                Value(*ParseDevice("cpu")).ToString(), "None", "False", "0"))
      << "the device string was normalized after binding";

  Stack bad_type{t, Name("non_blocking"), Value(int64_t{3})};
  absl::Status s = registry.Call(op, &bad_type);
  EXPECT_THAT(s.message(),
              HasSubstr("test::to_copy: argument 'non_blocking' (position 5): expected bool, got "
                        "int"));
  Stack bad_format{t, Name("memory_format"), Value(int64_t{9})};
  EXPECT_THAT(
      registry.Call(op, &bad_format).message(),
      HasSubstr("argument 'memory_format' (position 6): expected a MemoryFormat in [0, 4)"));
  // A wrong positional value before a marker still gets its own message, after binding.
  Stack bad_self{Value(int64_t{1}), Name("dtype"), Value(ScalarType::kInt8)};
  EXPECT_THAT(registry.Call(op, &bad_self).message(),
              HasSubstr("argument 'self' (position 0): expected Tensor, got int"));
}

}  // namespace
}  // namespace tessera
