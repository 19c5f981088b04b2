// The unboxed fast path of an op call (Note [The unboxed fast path] in unboxed_call.cc): the
// arguments as the caller holds them, borrowed for the call, and what the plan functions, the
// checks and the kernels' unboxed entries read them through. The runtime's C entry points
// (tsr_op_call_values, tsr_op_call) decode their arguments into UnboxedArgs and call
// OpRegistry::CallUnboxed, which either runs the call or says it did not take it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/optimization.h"
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/value.h"

namespace tessera {

// BorrowedTensor: a Tensor over an impl that the caller keeps alive for the call, made and
// dropped without touching its reference count. A copy of it is an ordinary Tensor with a
// reference of its own, so code that keeps what it reads stays correct.
class BorrowedTensor {
 public:
  BorrowedTensor() = default;
  explicit BorrowedTensor(TensorImpl* impl) : t_(Ref<TensorImpl>::Adopt(impl)) {}
  ~BorrowedTensor() {
    // Hands the pointer back without the release that ~Tensor would make.
    Ref<TensorImpl> ref = std::move(const_cast<Ref<TensorImpl>&>(t_.impl_ref()));
    ref.Leak();
  }
  BorrowedTensor(const BorrowedTensor&) = delete;
  BorrowedTensor& operator=(const BorrowedTensor&) = delete;

  const Tensor& get() const { return t_; }

 private:
  Tensor t_;
};

// UnboxedArg: one argument of an unboxed call: a tensor (borrowed), a Scalar or None. Its
// accessors are Value's, so that a plan function or a check is written once for both.
class UnboxedArg {
 public:
  enum class Kind : uint8_t { kNone, kTensor, kScalar };

  UnboxedArg() = default;
  UnboxedArg(const UnboxedArg&) = delete;
  UnboxedArg& operator=(const UnboxedArg&) = delete;

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_scalar() const { return kind_ == Kind::kScalar; }
  bool is_tensor_list() const { return false; }
  bool is_device() const { return false; }
  const Tensor& tensor() const { return tensor_.get(); }
  const Scalar& scalar() const { return scalar_; }
  // string: an unboxed call has none (an op with a str argument takes the boxed path); here
  // so that the plan functions compile for both argument kinds.
  const std::string& string() const;
  const std::vector<Tensor>& tensor_list() const;                // likewise: never called
  Device device() const { return Device(DeviceType::kCPU, 0); }  // likewise: never called

 private:
  friend class UnboxedArgs;
  Kind kind_ = Kind::kNone;
  BorrowedTensor tensor_;
  Scalar scalar_;
};

// UnboxedArgs: every argument of a call in schema order (defaults filled in), each of the kind
// the schema gives it, as a bound Stack would hold them.
class UnboxedArgs {
 public:
  // The most arguments an unboxed call takes (an out= form with its outputs included).
  static constexpr size_t kMax = 8;

  size_t size() const { return size_; }
  const UnboxedArg& operator[](size_t i) const { return args_[i]; }

  // Each Add returns false when the call already has kMax arguments.
  bool AddTensor(TensorImpl* impl) {
    if (ABSL_PREDICT_FALSE(size_ == kMax)) return false;
    UnboxedArg& a = args_[size_++];
    a.kind_ = UnboxedArg::Kind::kTensor;
    new (&a.tensor_) BorrowedTensor(impl);  // over the default (null) one: nothing to drop
    return true;
  }
  bool AddScalar(const Scalar& s) {
    if (ABSL_PREDICT_FALSE(size_ == kMax)) return false;
    UnboxedArg& a = args_[size_++];
    a.kind_ = UnboxedArg::Kind::kScalar;
    a.scalar_ = s;
    return true;
  }
  bool AddNone() {
    if (ABSL_PREDICT_FALSE(size_ == kMax)) return false;
    ++size_;
    return true;
  }

  // ToStack: the same arguments as Values (each tensor with a reference of its own).
  void ToStack(Stack* stack) const;

 private:
  UnboxedArg args_[kMax];
  size_t size_ = 0;
};

// UnboxedStack: the stack an unboxed call hands its kernel (tsr_kernel_call.stack): empty
// until read (Stack::Materialized), then the call's arguments. It lives for the kernel's call.
class UnboxedStack {
 public:
  explicit UnboxedStack(const UnboxedArgs& args) {
    stack_.fill_ = &Fill;
    stack_.fill_source_ = &args;
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
// boxed path, which the differential test compares the fast path with (docs/build.md).
bool UnboxedPathEnabled();

}  // namespace tessera
