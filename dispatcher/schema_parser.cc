// A recursive-descent parser for PyTorch's operator schema language (see schema.h).
#include <cctype>
#include <charconv>
#include <limits>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/layout.h"
#include "core/status_macros.h"
#include "dispatcher/schema.h"

namespace tessera {
namespace {

enum class TokenKind { kIdent, kInt, kFloat, kString, kPunct, kEnd };

struct Token {
  TokenKind kind;
  std::string_view text;  // for strings: without the quotes, escapes not yet decoded
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
        // A backslash escapes the next character, the closing quote included; the escapes are
        // decoded by ParseDefault, which can name the argument in an error.
        size_t close = i + 1;
        while (close < text_.size() && text_[close] != c) close += text_[close] == '\\' ? 2 : 1;
        if (close >= text_.size()) return ErrorAtColumn(start, "unterminated string literal");
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
        TSR_RETURN_IF_ERROR(ParseType(&arg, /*return_index=*/std::nullopt));
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
        TSR_RETURN_IF_ERROR(ParseType(&ret, schema->returns.size()));
        if (Peek().kind == TokenKind::kIdent) ret.name = std::string(Next().text);
        schema->returns.push_back(std::move(ret));
        if (Accept(")")) return absl::OkStatus();
        TSR_RETURN_IF_ERROR(Expect(","));
      }
    }
    Argument ret;
    TSR_RETURN_IF_ERROR(ParseType(&ret, /*return_index=*/0));
    schema->returns.push_back(std::move(ret));
    return absl::OkStatus();
  }

  // ParseType reads a type; `return_index` is set for a return, for error messages.
  absl::Status ParseType(Argument* arg, std::optional<size_t> return_index) {
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
        {"SymBool", BaseType::kBool},
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
                     "unknown type (expected Tensor, int, SymInt, float, bool, SymBool, str, "
                     "Scalar, ScalarType, Device, Layout, MemoryFormat or Generator)");
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
    const Token* size_token = nullptr;
    if (Accept("[")) {
      arg->type.is_list = true;
      arg->type.element_optional = question;
      question = false;
      if (Peek().kind == TokenKind::kInt) size_token = &Next();
      TSR_RETURN_IF_ERROR(Expect("]"));
      question = Accept("?");
    }
    arg->type.optional = question;
    if (arg->type.element_optional && arg->type.base != BaseType::kTensor) {
      return ErrorAtColumn(t.column, "only Tensor?[] may have optional elements");
    }
    if (size_token != nullptr) {
      // Checked once the argument's name is next, so that the error can name it. The cap keeps
      // a bare int from filling a huge list on every call (Note [Fixed-size list cap] in
      // schema.cc).
      int64_t size = 0;
      if (!ParseInt(size_token->text, &size) || size <= 0 ||
          static_cast<uint64_t>(size) > kMaxFixedListSize) {
        const std::string who = return_index ? absl::StrFormat("return %d", *return_index)
                                : Peek().kind == TokenKind::kIdent
                                    ? absl::StrFormat("argument '%s'", Peek().text)
                                    : std::string("argument");
        return ErrorAtColumn(
            size_token->column,
            absl::StrFormat("%s: expected a positive list size of at most %d, found integer '%s'",
                            who, kMaxFixedListSize, size_token->text));
      }
      arg->type.list_size = size;
    }
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
          const bool is_bool =
              e.kind == TokenKind::kIdent && (e.text == "True" || e.text == "False");
          if (is_bool ? !doubles.empty() : !bools.empty()) {
            // Keeping one kind and dropping the other would change the default silently.
            return ErrorAtColumn(
                e.column, absl::StrFormat("invalid default for argument '%s': expected a list of "
                                          "numbers or of True/False, found both",
                                          arg->name));
          }
          if (e.kind == TokenKind::kInt) {
            TSR_ASSIGN_OR_RETURN(int64_t i, IntDefault(*arg, e));
            ints.push_back(i);
            // Read as a double too (not converted from `i`), for the correctly rounded value.
            TSR_ASSIGN_OR_RETURN(double d, FloatDefault(*arg, e));
            doubles.push_back(d);
          } else if (e.kind == TokenKind::kFloat || IsInfOrNan(e)) {
            any_float = true;
            TSR_ASSIGN_OR_RETURN(double d, FloatDefault(*arg, e));
            doubles.push_back(d);
          } else if (is_bool) {
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
        case TokenKind::kInt: {
          TSR_ASSIGN_OR_RETURN(int64_t i, IntDefault(*arg, t));
          value = Value(i);
          break;
        }
        case TokenKind::kFloat: {
          TSR_ASSIGN_OR_RETURN(double d, FloatDefault(*arg, t));
          value = Value(d);
          break;
        }
        case TokenKind::kString: {
          TSR_ASSIGN_OR_RETURN(std::string s, StringDefault(*arg, t));
          value = Value(std::move(s));
          break;
        }
        case TokenKind::kIdent:
          if (t.text == "None") {
            value = Value();
          } else if (t.text == "True" || t.text == "False") {
            value = Value(t.text == "True");
          } else if (IsInfOrNan(t)) {
            TSR_ASSIGN_OR_RETURN(double d, FloatDefault(*arg, t));
            value = Value(d);
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

  static bool IsInfOrNan(const Token& t) {
    return t.kind == TokenKind::kIdent && (t.text == "inf" || t.text == "nan");
  }

  // ParseInt reads all of `text` as an int64; false if it is not one or does not fit.
  static bool ParseInt(std::string_view text, int64_t* out) {
    const char* end = text.data() + text.size();
    const std::from_chars_result r = std::from_chars(text.data(), end, *out);
    return r.ec == std::errc() && r.ptr == end;
  }

  // The numeric defaults are read whole and exactly, never saturated or cut short: what is
  // printed back must be what was written (Note [Faithful schema text] in schema.cc).
  absl::StatusOr<int64_t> IntDefault(const Argument& arg, const Token& t) const {
    int64_t value = 0;
    if (ParseInt(t.text, &value)) return value;
    return ErrorAtColumn(
        t.column, absl::StrFormat("invalid default for argument '%s': expected an integer in "
                                  "[%d, %d], found '%s'",
                                  arg.name, std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max(), t.text));
  }

  absl::StatusOr<double> FloatDefault(const Argument& arg, const Token& t) const {
    if (t.text == "inf") return std::numeric_limits<double>::infinity();
    if (t.text == "-inf") return -std::numeric_limits<double>::infinity();
    if (t.text == "nan") return std::numeric_limits<double>::quiet_NaN();
    double value = 0;
    const char* end = t.text.data() + t.text.size();
    const std::from_chars_result r = std::from_chars(t.text.data(), end, value);
    if (r.ec == std::errc::result_out_of_range) {
      return ErrorAtColumn(t.column,
                           absl::StrFormat("invalid default for argument '%s': expected a float "
                                           "in double's range (inf for an infinite one), found "
                                           "'%s'",
                                           arg.name, t.text));
    }
    if (r.ec != std::errc() || r.ptr != end) {
      return ErrorAtColumn(t.column,
                           absl::StrFormat("invalid default for argument '%s': expected a "
                                           "number, found malformed number '%s'",
                                           arg.name, t.text));
    }
    return value;
  }

  // StringDefault decodes the escapes c10::printQuotedString writes: \\ \' \" \a \b \f \n
  // \r \t \v and \ooo (three octal digits, a byte).
  absl::StatusOr<std::string> StringDefault(const Argument& arg, const Token& t) const {
    std::string out;
    out.reserve(t.text.size());
    const std::string_view s = t.text;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '\\') {
        out += s[i];
        continue;
      }
      const char e = s[i + 1];  // the tokenizer never ends a string on a lone backslash
      static constexpr std::string_view kFrom = "\\'\"abfnrtv";
      static constexpr std::string_view kTo = "\\'\"\a\b\f\n\r\t\v";
      if (const size_t k = kFrom.find(e); k != std::string_view::npos) {
        out += kTo[k];
        ++i;
        continue;
      }
      if (i + 3 < s.size() && IsOctal(s[i + 1]) && IsOctal(s[i + 2]) && IsOctal(s[i + 3]) &&
          s[i + 1] <= '3') {
        out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
        i += 3;
        continue;
      }
      return ErrorAtColumn(
          t.column + 1 + i,
          absl::StrFormat("invalid default for argument '%s': unknown escape '\\%s' in a string "
                          "(expected one of \\\\ \\' \\\" \\a \\b \\f \\n \\r \\t \\v or \\ooo, "
                          "three octal digits up to \\377)",
                          arg.name, s.substr(i + 1, 1)));
    }
    return out;
  }
  static bool IsOctal(char c) { return c >= '0' && c <= '7'; }

  // Identifiers as defaults: dtype names for ScalarType, and the enum types' constants.
  static absl::StatusOr<Value> NamedDefault(BaseType base, std::string_view name) {
    if (base == BaseType::kScalarType) {
      if (std::optional<ScalarType> t = ParseScalarType(name)) return Value(*t);
    }
    if (base == BaseType::kLayout) {
      if (std::optional<Layout> layout = ParseLayout(name)) {
        return Value(static_cast<int64_t>(*layout));
      }
    }
    if (base == BaseType::kMemoryFormat) {
      if (std::optional<MemoryFormat> format = ParseMemoryFormat(name)) {
        return Value(static_cast<int64_t>(*format));
      }
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
