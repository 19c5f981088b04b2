// A recursive-descent parser for PyTorch's operator schema language (see schema.h).
#include <cctype>
#include <cstdlib>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "dispatcher/schema.h"

namespace tessera {
namespace {

enum class TokenKind { kIdent, kInt, kFloat, kString, kPunct, kEnd };

struct Token {
  TokenKind kind;
  std::string_view text;  // for strings: without the quotes
  size_t column;          // 0-based offset into the schema text
};

std::string_view TokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kIdent:
      return "identifier";
    case TokenKind::kInt:
      return "integer";
    case TokenKind::kFloat:
      return "number";
    case TokenKind::kString:
      return "string";
    case TokenKind::kPunct:
      return "punctuation";
    case TokenKind::kEnd:
      return "end of schema";
  }
  return "token";
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<FunctionSchema> Parse() {
    TSR_RETURN_IF_ERROR(Tokenize());
    FunctionSchema schema;
    TSR_RETURN_IF_ERROR(ParseName(&schema));
    TSR_RETURN_IF_ERROR(Expect("("));
    TSR_RETURN_IF_ERROR(ParseArguments(&schema));
    TSR_RETURN_IF_ERROR(Expect(")"));
    TSR_RETURN_IF_ERROR(Expect("->"));
    TSR_RETURN_IF_ERROR(ParseReturns(&schema));
    if (Peek().kind != TokenKind::kEnd) return ErrorAt(Peek(), "expected end of schema");
    return schema;
  }

  absl::StatusOr<OperatorName> ParseNameOnly() {
    TSR_RETURN_IF_ERROR(Tokenize());
    FunctionSchema schema;
    TSR_RETURN_IF_ERROR(ParseName(&schema));
    if (Peek().kind != TokenKind::kEnd) return ErrorAt(Peek(), "expected end of operator name");
    return OperatorName{schema.ns, schema.name, schema.overload};
  }

 private:
  // --- lexing ---------------------------------------------------------------------------------
  absl::Status Tokenize() {
    size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
        continue;
      }
      const size_t start = i;
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (i < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[i])) || text_[i] == '_')) {
          ++i;
        }
        tokens_.push_back({TokenKind::kIdent, text_.substr(start, i - start), start});
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '-' && i + 1 < text_.size() &&
                  (std::isdigit(static_cast<unsigned char>(text_[i + 1])) ||
                   text_.substr(i + 1, 3) == "inf"))) {
        if (text_.substr(i + 1, 3) == "inf") {
          i += 4;
          tokens_.push_back({TokenKind::kFloat, text_.substr(start, 4), start});
          continue;
        }
        bool is_float = false;
        ++i;
        while (i < text_.size()) {
          const char d = text_[i];
          if (std::isdigit(static_cast<unsigned char>(d))) {
            ++i;
          } else if (d == '.' || d == 'e' || d == 'E') {
            is_float = true;
            ++i;
            if ((d == 'e' || d == 'E') && i < text_.size() &&
                (text_[i] == '-' || text_[i] == '+')) {
              ++i;
            }
          } else {
            break;
          }
        }
        tokens_.push_back({is_float ? TokenKind::kFloat : TokenKind::kInt,
                           text_.substr(start, i - start), start});
      } else if (c == '\'' || c == '"') {
        const size_t close = text_.find(c, i + 1);
        if (close == std::string_view::npos) {
          return ErrorAtColumn(start, "unterminated string literal");
        }
        tokens_.push_back({TokenKind::kString, text_.substr(i + 1, close - i - 1), start});
        i = close + 1;
      } else if (text_.substr(i, 2) == "->" || text_.substr(i, 2) == "::") {
        tokens_.push_back({TokenKind::kPunct, text_.substr(i, 2), start});
        i += 2;
      } else if (std::string_view("()[],*?!.=").find(c) != std::string_view::npos) {
        tokens_.push_back({TokenKind::kPunct, text_.substr(i, 1), start});
        ++i;
      } else {
        return ErrorAtColumn(start, absl::StrFormat("unexpected character '%c'", c));
      }
    }
    tokens_.push_back({TokenKind::kEnd, "", text_.size()});
    return absl::OkStatus();
  }

  // --- token helpers --------------------------------------------------------------------------
  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool IsPunct(std::string_view p, size_t ahead = 0) const {
    return Peek(ahead).kind == TokenKind::kPunct && Peek(ahead).text == p;
  }
  bool Accept(std::string_view p) {
    if (!IsPunct(p)) return false;
    Next();
    return true;
  }
  absl::Status Expect(std::string_view p) {
    if (Accept(p)) return absl::OkStatus();
    return ErrorAt(Peek(), absl::StrFormat("expected '%s'", p));
  }
  absl::StatusOr<std::string_view> ExpectIdent(std::string_view what) {
    if (Peek().kind != TokenKind::kIdent) {
      return ErrorAt(Peek(), absl::StrFormat("expected %s", what));
    }
    return Next().text;
  }

  std::string Describe(const Token& t) const {
    if (t.kind == TokenKind::kEnd) return "end of schema";
    if (t.kind == TokenKind::kPunct) return absl::StrFormat("'%s'", t.text);
    return absl::StrFormat("%s '%s'", TokenKindName(t.kind), t.text);
  }
  absl::Status ErrorAt(const Token& t, std::string_view message) const {
    return ErrorAtColumn(t.column, absl::StrFormat("%s, found %s", message, Describe(t)));
  }
  absl::Status ErrorAtColumn(size_t column, std::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("schema parse error at column %d: %s\n  %s\n  %s^", column + 1, message,
                        text_, std::string(column, ' ')));
  }

  // --- grammar ----------------------------------------------------------------------------------
  absl::Status ParseName(FunctionSchema* schema) {
    TSR_ASSIGN_OR_RETURN(std::string_view first, ExpectIdent("an operator name"));
    if (Accept("::")) {
      schema->ns = std::string(first);
      TSR_ASSIGN_OR_RETURN(first, ExpectIdent("an operator name after '::'"));
    }
    schema->name = std::string(first);
    if (Accept(".")) {
      TSR_ASSIGN_OR_RETURN(std::string_view overload, ExpectIdent("an overload name after '.'"));
      schema->overload = std::string(overload);
    }
    return absl::OkStatus();
  }

  absl::Status ParseArguments(FunctionSchema* schema) {
    if (IsPunct(")")) return absl::OkStatus();
    bool kwarg_only = false;
    while (true) {
      if (IsPunct("*")) {
        if (kwarg_only) return ErrorAt(Peek(), "'*' may appear only once");
        Next();
        kwarg_only = true;
      } else {
        const Token& start = Peek();
        Argument arg;
        TSR_RETURN_IF_ERROR(ParseType(&arg, /*is_return=*/false));
        TSR_ASSIGN_OR_RETURN(std::string_view name, ExpectIdent("an argument name"));
        arg.name = std::string(name);
        arg.kwarg_only = kwarg_only;
        for (const Argument& other : schema->arguments) {
          if (other.name == arg.name) {
            return ErrorAtColumn(start.column,
                                 absl::StrFormat("duplicate argument name '%s'", arg.name));
          }
        }
        if (IsPunct("=")) {
          const Token& eq = Next();
          TSR_RETURN_IF_ERROR(ParseDefault(&arg, eq));
        } else if (!arg.kwarg_only && !schema->arguments.empty() &&
                   schema->arguments.back().default_value && !schema->arguments.back().kwarg_only) {
          return ErrorAtColumn(start.column,
                               absl::StrFormat("positional argument '%s' without a default follows "
                                               "one with a default",
                                               arg.name));
        }
        schema->arguments.push_back(std::move(arg));
      }
      if (IsPunct(")")) return absl::OkStatus();
      TSR_RETURN_IF_ERROR(Expect(","));
    }
  }

  absl::Status ParseReturns(FunctionSchema* schema) {
    if (Accept("(")) {
      if (Accept(")")) return absl::OkStatus();
      while (true) {
        Argument ret;
        TSR_RETURN_IF_ERROR(ParseType(&ret, /*is_return=*/true));
        if (Peek().kind == TokenKind::kIdent) ret.name = std::string(Next().text);
        schema->returns.push_back(std::move(ret));
        if (Accept(")")) return absl::OkStatus();
        TSR_RETURN_IF_ERROR(Expect(","));
      }
    }
    Argument ret;
    TSR_RETURN_IF_ERROR(ParseType(&ret, /*is_return=*/true));
    schema->returns.push_back(std::move(ret));
    return absl::OkStatus();
  }

  absl::Status ParseType(Argument* arg, bool is_return) {
    const Token& t = Peek();
    if (t.kind != TokenKind::kIdent) return ErrorAt(t, "expected a type");
    struct Named {
      std::string_view name;
      BaseType base;
    };
    static constexpr Named kTypes[] = {
        {"Tensor", BaseType::kTensor},
        {"int", BaseType::kInt},
        {"SymInt", BaseType::kInt},
        {"float", BaseType::kFloat},
        {"bool", BaseType::kBool},
        {"str", BaseType::kStr},
        {"Scalar", BaseType::kScalar},
        {"ScalarType", BaseType::kScalarType},
        {"Device", BaseType::kDevice},
        {"Layout", BaseType::kLayout},
        {"MemoryFormat", BaseType::kMemoryFormat},
        {"Generator", BaseType::kGenerator},
    };
    bool found = false;
    for (const Named& n : kTypes) {
      if (n.name == t.text) {
        arg->type.base = n.base;
        found = true;
      }
    }
    if (!found) {
      return ErrorAt(t,
                     "unknown type (expected Tensor, int, SymInt, float, bool, str, Scalar, "
                     "ScalarType, Device, Layout, MemoryFormat or Generator)");
    }
    Next();
    if (IsPunct("(")) {
      if (arg->type.base != BaseType::kTensor) {
        return ErrorAt(Peek(), "alias annotations apply only to Tensor");
      }
      Next();
      TSR_ASSIGN_OR_RETURN(std::string_view set, ExpectIdent("an alias set name"));
      AliasInfo alias{std::string(set), Accept("!")};
      TSR_RETURN_IF_ERROR(Expect(")"));
      arg->alias = std::move(alias);
    }
    bool question = Accept("?");
    if (Accept("[")) {
      arg->type.is_list = true;
      arg->type.element_optional = question;
      question = false;
      if (Peek().kind == TokenKind::kInt) {
        const Token& n = Next();
        int64_t size = std::strtoll(std::string(n.text).c_str(), nullptr, 10);
        if (size <= 0) return ErrorAt(n, "expected a positive list size");
        arg->type.list_size = size;
      }
      TSR_RETURN_IF_ERROR(Expect("]"));
      question = Accept("?");
    }
    arg->type.optional = question;
    if (arg->type.element_optional && arg->type.base != BaseType::kTensor) {
      return ErrorAtColumn(t.column, "only Tensor?[] may have optional elements");
    }
    (void)is_return;
    return absl::OkStatus();
  }

  absl::Status ParseDefault(Argument* arg, const Token& eq) {
    const Token& t = Peek();
    Value value;
    if (IsPunct("[")) {
      Next();
      IntList ints;
      std::vector<double> doubles;
      std::vector<bool> bools;
      bool any_float = false;
      if (!IsPunct("]")) {
        while (true) {
          const Token& e = Next();
          if (e.kind == TokenKind::kInt) {
            ints.push_back(std::strtoll(std::string(e.text).c_str(), nullptr, 10));
            doubles.push_back(std::strtod(std::string(e.text).c_str(), nullptr));
          } else if (e.kind == TokenKind::kFloat) {
            any_float = true;
            doubles.push_back(ParseFloat(e.text));
          } else if (e.kind == TokenKind::kIdent && (e.text == "True" || e.text == "False")) {
            bools.push_back(e.text == "True");
          } else {
            return ErrorAt(e, "expected a number or True/False in a default list");
          }
          if (Accept("]")) break;
          TSR_RETURN_IF_ERROR(Expect(","));
        }
      } else {
        Next();
      }
      if (doubles.empty() && bools.empty()) {
        value = EmptyListFor(arg->type);  // `[]` takes the argument's element type
      } else if (!bools.empty()) {
        value = Value(std::move(bools));
      } else if (any_float || arg->type.base == BaseType::kFloat) {
        value = Value(std::move(doubles));
      } else {
        value = Value(std::move(ints));
      }
    } else {
      Next();
      switch (t.kind) {
        case TokenKind::kInt:
          value =
              Value(static_cast<int64_t>(std::strtoll(std::string(t.text).c_str(), nullptr, 10)));
          break;
        case TokenKind::kFloat:
          value = Value(ParseFloat(t.text));
          break;
        case TokenKind::kString:
          value = Value(std::string(t.text));
          break;
        case TokenKind::kIdent:
          if (t.text == "None") {
            value = Value();
          } else if (t.text == "True" || t.text == "False") {
            value = Value(t.text == "True");
          } else if (t.text == "inf" || t.text == "nan") {
            value = Value(ParseFloat(t.text));
          } else {
            absl::StatusOr<Value> named = NamedDefault(arg->type.base, t.text);
            if (!named.ok()) return ErrorAt(t, std::string(named.status().message()));
            value = *std::move(named);
          }
          break;
        default:
          return ErrorAt(t, "expected a default value");
      }
    }
    absl::Status ok = NormalizeArgumentValue(*arg, &value);
    if (!ok.ok()) {
      return ErrorAtColumn(eq.column + 1, absl::StrFormat("invalid default for argument '%s': %s",
                                                          arg->name, std::string(ok.message())));
    }
    arg->default_value = std::move(value);
    return absl::OkStatus();
  }

  static Value EmptyListFor(const SchemaType& type) {
    switch (type.base) {
      case BaseType::kFloat:
        return Value(std::vector<double>{});
      case BaseType::kBool:
        return Value(std::vector<bool>{});
      case BaseType::kTensor:
        return Value(std::vector<Tensor>{});
      default:
        return Value(IntList{});
    }
  }

  static double ParseFloat(std::string_view text) {
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    return std::strtod(std::string(text).c_str(), nullptr);
  }

  // Identifiers as defaults: dtype names for ScalarType, and the enum types' constants.
  static absl::StatusOr<Value> NamedDefault(BaseType base, std::string_view name) {
    if (base == BaseType::kScalarType) {
      if (std::optional<ScalarType> t = ParseScalarType(name)) return Value(*t);
    }
    if (base == BaseType::kLayout && name == "strided") return Value(int64_t{0});
    if (base == BaseType::kMemoryFormat) {
      if (name == "contiguous_format") return Value(int64_t{0});
      if (name == "preserve_format") return Value(int64_t{1});
      if (name == "channels_last") return Value(int64_t{2});
    }
    return absl::InvalidArgumentError("unknown default value");
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<FunctionSchema> ParseSchema(std::string_view text) { return Parser(text).Parse(); }

absl::StatusOr<OperatorName> ParseOperatorName(std::string_view text) {
  return Parser(text).ParseNameOnly();
}

}  // namespace tessera
