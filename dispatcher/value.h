// Value and Stack: the boxed calling convention of the dispatcher.
//
// A boxed call puts an op's arguments, in schema order, on a Stack; the kernel replaces them
// with the op's returns. Stack keeps up to 8 values inline, and every value kind an op-set-v1
// call passes (tensors, ints, doubles, Scalars, dtypes, devices, short int lists) is stored
// without a heap allocation (so are bool lists of up to 16), so a boxed call allocates nothing
// for the arguments.
#pragma once

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/container/inlined_vector.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/generator.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace tessera {

using IntList = absl::InlinedVector<int64_t, 4>;
// A bool[] keeps one byte (0 or 1) per element, so that the C ABI can lend it out as an array.
using BoolList = absl::InlinedVector<uint8_t, 16>;

// The two markers a caller may put on a stack before an op call binds it (Note [Binding named
// and defaulted arguments] in dispatcher/argument_binding.cc): "this argument's default" and
// "the next value is the argument called `name`". A kernel never sees either.
struct DefaultArgument {
  friend bool operator==(DefaultArgument, DefaultArgument) { return true; }
};
struct ArgumentName {
  std::string name;
  friend bool operator==(const ArgumentName& a, const ArgumentName& b) { return a.name == b.name; }
};

class Value {
 public:
  enum class Kind : uint8_t {
    kNone,
    kTensor,
    kInt,
    kDouble,
    kBool,
    kString,
    kIntList,
    kDoubleList,
    kBoolList,
    kTensorList,  // also Tensor?[]: undefined tensors stand for None
    kScalar,
    kScalarType,
    kDevice,
    kDefault,    // DefaultArgument
    kName,       // ArgumentName
    kGenerator,  // a Generator (core/generator.h; since op set 1.5)
  };

  Value() = default;                                                       // None
  Value(std::nullopt_t) {}                                                 // NOLINT: implicit
  Value(Tensor t) : v_(std::move(t)) {}                                    // NOLINT: implicit
  Value(int64_t i) : v_(i) {}                                              // NOLINT: implicit
  Value(int i) : v_(static_cast<int64_t>(i)) {}                            // NOLINT: implicit
  Value(double d) : v_(d) {}                                               // NOLINT: implicit
  Value(bool b) : v_(b) {}                                                 // NOLINT: implicit
  Value(std::string s) : v_(std::move(s)) {}                               // NOLINT: implicit
  Value(const char* s) : v_(std::string(s)) {}                             // NOLINT: implicit
  Value(IntList l) : v_(std::move(l)) {}                                   // NOLINT: implicit
  Value(std::initializer_list<int64_t> l) : v_(IntList(l)) {}              // NOLINT: implicit
  Value(std::vector<double> l) : v_(std::move(l)) {}                       // NOLINT: implicit
  Value(BoolList l) : v_(std::move(l)) {}                                  // NOLINT: implicit
  Value(const std::vector<bool>& l) : v_(BoolList(l.begin(), l.end())) {}  // NOLINT: implicit
  Value(std::vector<Tensor> l) : v_(std::move(l)) {}                       // NOLINT: implicit
  Value(Scalar s) : v_(s) {}                                               // NOLINT: implicit
  Value(ScalarType t) : v_(t) {}                                           // NOLINT: implicit
  Value(Device d) : v_(d) {}                                               // NOLINT: implicit
  Value(DefaultArgument d) : v_(d) {}                                      // NOLINT: implicit
  Value(ArgumentName n) : v_(std::move(n)) {}                              // NOLINT: implicit
  Value(GeneratorRef g) : v_(std::move(g)) {}                              // NOLINT: implicit

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_tensor() const { return kind() == Kind::kTensor; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_double() const { return kind() == Kind::kDouble; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_int_list() const { return kind() == Kind::kIntList; }
  bool is_tensor_list() const { return kind() == Kind::kTensorList; }
  bool is_scalar() const { return kind() == Kind::kScalar; }
  bool is_scalar_type() const { return kind() == Kind::kScalarType; }
  bool is_device() const { return kind() == Kind::kDevice; }
  // A marker of an unbound stack (kDefault or kName).
  bool is_binding_marker() const { return kind() == Kind::kDefault || kind() == Kind::kName; }
  bool is_generator() const { return kind() == Kind::kGenerator; }

  // Accessors; calling one for another kind is a programming error (checked by std::get).
  const Tensor& tensor() const { return std::get<Tensor>(v_); }
  Tensor& tensor() { return std::get<Tensor>(v_); }
  int64_t to_int() const { return std::get<int64_t>(v_); }
  double to_double() const { return std::get<double>(v_); }
  bool to_bool() const { return std::get<bool>(v_); }
  const std::string& string() const { return std::get<std::string>(v_); }
  const IntList& int_list() const { return std::get<IntList>(v_); }
  const std::vector<double>& double_list() const { return std::get<std::vector<double>>(v_); }
  const BoolList& bool_list() const { return std::get<BoolList>(v_); }
  const std::vector<Tensor>& tensor_list() const { return std::get<std::vector<Tensor>>(v_); }
  const Scalar& scalar() const { return std::get<Scalar>(v_); }
  ScalarType scalar_type() const { return std::get<ScalarType>(v_); }
  Device device() const { return std::get<Device>(v_); }
  const std::string& argument_name() const { return std::get<ArgumentName>(v_).name; }
  const GeneratorRef& generator() const { return std::get<GeneratorRef>(v_); }

  // Debug text: "Tensor(float32[2, 3] on cpu)", "3", "[1, 2]", "None".
  std::string ToString() const;

  friend bool operator==(const Value& a, const Value& b);

 private:
  std::variant<std::monostate, Tensor, int64_t, double, bool, std::string, IntList,
               std::vector<double>, BoolList, std::vector<Tensor>, Scalar, ScalarType, Device,
               DefaultArgument, ArgumentName, GeneratorRef>
      v_;
};

std::string_view ValueKindName(Value::Kind kind);

// For test failure messages.
inline std::ostream& operator<<(std::ostream& os, const Value& v) { return os << v.ToString(); }

struct CallPlan;

// Stack: the values of one boxed call. While a backend kernel runs, its stack also carries the
// call plan that the dispatcher computed for the call (Note [Call plans] in
// dispatcher/call_plan.h): the kernel reads the outputs' metadata and the compute dtype from it
// instead of recomputing them. A copied or moved stack carries no plan: a plan belongs to the
// one call it was computed for.
class Stack : public absl::InlinedVector<Value, 8> {
 public:
  using Base = absl::InlinedVector<Value, 8>;
  using Base::Base;
  Stack() = default;
  // A copy or a move has the values (an unfilled stack fills first) and no plan.
  Stack(const Stack& o) : Base(o.Materialized()) {}
  Stack(Stack&& o) noexcept : Base(std::move(o.MaterializedForMove())) {}
  Stack& operator=(const Stack& o) {
    Base::operator=(o.Materialized());
    return *this;
  }
  Stack& operator=(Stack&& o) noexcept {
    Base::operator=(std::move(o.MaterializedForMove()));
    return *this;
  }

  // The plan of the call whose kernel is running on this stack; NULL outside one, and for
  // calls without a plan (ops without a Meta function, composites, fallbacks).
  const CallPlan* plan() const { return plan_; }

  // Materialized: the stack with its values. An unboxed call (Note [The unboxed fast path] in
  // dispatcher/unboxed_call.cc) hands its kernel an empty stack that fills itself from the
  // call's arguments the first time it is read or written through the C ABI (the stack entry
  // points call this; a kernel may read its stack from several threads, so the fill happens
  // once, the others waiting for it); a kernel that reads only its packed arguments never pays
  // for it.
  const Stack& Materialized() const {
    if (ABSL_PREDICT_FALSE(fill_state_.load(std::memory_order_acquire) != kFilled)) Fill();
    return *this;
  }
  Stack& Materialized() {
    if (ABSL_PREDICT_FALSE(fill_state_.load(std::memory_order_acquire) != kFilled)) Fill();
    return *this;
  }
  // unfilled: the stack of an unboxed call that nobody has read or written yet.
  bool unfilled() const { return fill_state_.load(std::memory_order_acquire) != kFilled; }

 private:
  friend class PlanScope;
  friend class UnboxedStack;
  enum : uint8_t { kFilled = 0, kPending = 1, kFilling = 2 };
  Base& MaterializedForMove() const { return const_cast<Stack&>(Materialized()); }
  void Fill() const;  // value.cc

  const CallPlan* plan_ = nullptr;
  void (*fill_)(const void* source, Stack* stack) = nullptr;
  const void* fill_source_ = nullptr;
  mutable std::atomic<uint8_t> fill_state_{kFilled};
};

}  // namespace tessera
