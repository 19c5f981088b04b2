// The unboxed fast path of an op call (Note [The unboxed fast path] in unboxed_call.cc): the
// arguments as the caller holds them, borrowed for the call, and what the plan functions, the
// checks and the kernels' unboxed entries read them through. The runtime's C entry points
// (tsr_op_call_values, tsr_op_call) decode their arguments into UnboxedArgs and call
// OpRegistry::CallUnboxed, which either runs the call or says it did not take it.
#pragma once

#include <cstddef>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/optimization.h"
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/schema.h"
#include "dispatcher/value.h"

namespace tessera {

// UnboxedArg: one argument of an unboxed call: a tensor, a Scalar or None. Its accessors are
// Value's, so that a plan function or a check is written once for both. A tensor argument is a
// Tensor over the caller's impl made without taking a reference and never destroyed (so never
// released): the caller keeps the tensor alive for the call. A copy of it is an ordinary
// Tensor with a reference of its own, so code that keeps what it reads stays correct. Nothing
// of a slot is constructed before it is added, or destroyed after: UnboxedArgs costs nothing
// for the slots a call leaves unused.
class UnboxedArg {
 public:
  enum class Kind : uint8_t { kNone, kTensor, kScalar };

  UnboxedArg() {}  // NOLINT: deliberately leaves the slot uninitialized
  UnboxedArg(const UnboxedArg&) = delete;
  UnboxedArg& operator=(const UnboxedArg&) = delete;

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_scalar() const { return kind_ == Kind::kScalar; }
  bool is_tensor_list() const { return false; }
  bool is_device() const { return false; }
  const Tensor& tensor() const { return *std::launder(reinterpret_cast<const Tensor*>(bytes_)); }
  const Scalar& scalar() const { return *std::launder(reinterpret_cast<const Scalar*>(bytes_)); }
  // string, to_bool, to_int, int_list, scalar_type, tensor_list, device: an unboxed call has
  // none (an op with such an argument takes the boxed path); here so that the plan functions
  // and checks compile for both forms, and ending the process if ever called.
  [[noreturn]] const std::string& string() const;
  [[noreturn]] bool to_bool() const;
  [[noreturn]] int64_t to_int() const;
  [[noreturn]] const IntList& int_list() const;
  [[noreturn]] ScalarType scalar_type() const;
  [[noreturn]] const std::vector<Tensor>& tensor_list() const;
  [[noreturn]] Device device() const;

 private:
  friend class UnboxedArgs;
  static_assert(std::is_trivially_destructible_v<Scalar>, "a Scalar slot is never destroyed");
  Kind kind_;
  alignas(Tensor) alignas(
      Scalar) unsigned char bytes_[sizeof(Tensor) > sizeof(Scalar) ? sizeof(Tensor)
                                                                   : sizeof(Scalar)];
};

// UnboxedArgs: every argument of a call in schema order (defaults filled in), each of the kind
// the schema gives it, as a bound Stack would hold them.
class UnboxedArgs {
 public:
  // The most arguments an unboxed call takes (an out= form with its outputs included).
  static constexpr size_t kMax = 8;

  UnboxedArgs() {}  // NOLINT: the slots stay uninitialized until added
  UnboxedArgs(const UnboxedArgs&) = delete;
  UnboxedArgs& operator=(const UnboxedArgs&) = delete;

  size_t size() const { return size_; }
  const UnboxedArg& operator[](size_t i) const { return args_[i]; }

  // Each Add returns false when the call already has kMax arguments.
  bool AddTensor(TensorImpl* impl) {
    if (ABSL_PREDICT_FALSE(size_ == kMax)) return false;
    UnboxedArg& a = args_[size_++];
    a.kind_ = UnboxedArg::Kind::kTensor;
    new (a.bytes_) Tensor(Ref<TensorImpl>::Adopt(impl));  // borrowed: never destroyed
    return true;
  }
  bool AddScalar(const Scalar& s) {
    if (ABSL_PREDICT_FALSE(size_ == kMax)) return false;
    UnboxedArg& a = args_[size_++];
    a.kind_ = UnboxedArg::Kind::kScalar;
    new (a.bytes_) Scalar(s);
    return true;
  }
  bool AddNone() {
    if (ABSL_PREDICT_FALSE(size_ == kMax)) return false;
    args_[size_++].kind_ = UnboxedArg::Kind::kNone;
    return true;
  }

  // ToStack: the same arguments as Values (each tensor with a reference of its own).
  void ToStack(Stack* stack) const;

 private:
  UnboxedArg args_[kMax];
  size_t size_ = 0;
};

// AddAs and AddDefaults build an unboxed call's arguments one by one (the C entry points,
// compiled models' nodes); inline: they run on every fast-path call.
// AddAs appends argument `param`'s value when it is one an unboxed call takes: a tensor for a
// Tensor, a Scalar for a Scalar, None where the type is optional.
inline bool AddAs(const Argument& param, TensorImpl* tensor, const Scalar* scalar, bool none,
                  UnboxedArgs* out) {
  const SchemaType& type = param.type;
  if (type.is_list) return false;
  if (none) return type.optional && out->AddNone();
  switch (type.base) {
    case BaseType::kTensor:
      return tensor != nullptr && out->AddTensor(tensor);
    case BaseType::kScalar:
      return scalar != nullptr && out->AddScalar(*scalar);
    default:
      return false;
  }
}

// AddDefaults appends the defaults of the parameters from `first` on (none: not unboxed).
inline bool AddDefaults(const std::vector<Argument>& params, size_t first, UnboxedArgs* out) {
  for (size_t i = first; i < params.size(); ++i) {
    const std::optional<Value>& d = params[i].default_value;
    if (!d) return false;
    const bool ok = d->is_scalar() ? AddAs(params[i], nullptr, &d->scalar(), false, out)
                    : d->is_none() ? AddAs(params[i], nullptr, nullptr, true, out)
                                   : false;
    if (!ok) return false;
  }
  return true;
}

// UnboxedStack: the stack an unboxed call hands its kernel (tsr_kernel_call.stack): empty
// until read (Stack::Materialized), then the call's arguments. It lives for the kernel's call.
class UnboxedStack {
 public:
  explicit UnboxedStack(const UnboxedArgs& args) {
    stack_.fill_ = &Fill;
    stack_.fill_source_ = &args;
    stack_.fill_state_.store(Stack::kPending, std::memory_order_relaxed);
  }
  Stack* get() { return &stack_; }

 private:
  static void Fill(const void* args, Stack* stack) {
    static_cast<const UnboxedArgs*>(args)->ToStack(stack);
  }
  Stack stack_;
};

// UnboxedReturns: what an unboxed call returns: one tensor per return of the op, each with a
// reference of its own (new outputs, or the written arguments).
struct UnboxedReturns {
  Tensor tensors[kMaxPackedReturns];
  size_t size = 0;
};

// UnboxedPathEnabled: false when TESSERA_FAST_PATH=0 (read once): every call then takes the
// boxed path, which the differential test compares the fast path with (docs/build.md). The
// runtime's entry points also take the boxed path while they record calls (CallsRecorded).
bool UnboxedPathEnabled();

}  // namespace tessera
