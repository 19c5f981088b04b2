// A prepared unboxed call: the plan of one call site's call computed once, for a site that
// makes the same call again and again (a compiled model's node). Note [Prepared calls] in
// prepared_call.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/device.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "core/tensor.h"
#include "dispatcher/call_plan.h"
#include "dispatcher/unboxed_call.h"

namespace tessera {

namespace internal {
struct OperatorEntry;
}  // namespace internal

// A spare output (Note [Spare outputs] in prepared_call.cc): at most kMaxSpareBytes of storage.
inline constexpr size_t kMaxSpareBytes = 4096;
// MaySpare: whether `t` may be kept as a spare and written by a later call: on the CPU, held by
// nothing else (neither the tensor nor its storage), at the start of its storage, of at most
// kMaxSpareBytes from the CPU allocator in use now (not memory an application or a plugin
// lent), and not immutable. Its layout is the call's to check.
bool MaySpare(const TensorImpl& t);

// SpareStack: the spares of one run of a call site's calls, newest last (a compiled model's run:
// Note [Run states] in runtime/model/compiled_model.h). Not thread-safe: one run's own.
class SpareStack {
 public:
  static constexpr size_t kSpares = 8;
  // Keep takes `t` (moved from) when MaySpare accepts it; when the stack is full, the oldest
  // spare gives way (the tensors released last are the ones still in the core's caches).
  void Keep(Tensor& t);
  // Take: the most recently kept spare with `spec`'s dtype, sizes and strides (taken off the
  // stack), or an undefined tensor.
  Tensor Take(const TensorSpec& spec);
  size_t size() const { return size_; }

 private:
  Tensor spares_[kSpares];
  size_t size_ = 0;
};

// Inline: a compiled model's run keeps and takes a spare per node, and the calls from another
// file cost about 5 ns of replay's 40 per node above the kernels (tessera_model_benchmark).
inline void SpareStack::Keep(Tensor& t) {
  if (!t.defined() || !MaySpare(*t.impl())) return;
  if (size_ == kSpares) {  // the oldest gives way
    for (size_t k = 1; k < kSpares; ++k) spares_[k - 1] = std::move(spares_[k]);
    --size_;
  }
  spares_[size_++] = std::move(t);
}

inline Tensor SpareStack::Take(const TensorSpec& spec) {
  for (size_t i = size_; i-- > 0;) {
    const TensorImpl& t = *spares_[i].impl();
    if (t.dtype() != spec.dtype || !SameDims(t.sizes(), spec.sizes) ||
        !SameDims(t.strides(), spec.strides)) {
      continue;
    }
    Tensor taken = std::move(spares_[i]);
    for (size_t k = i + 1; k < size_; ++k) spares_[k - 1] = std::move(spares_[k]);
    --size_;
    return taken;
  }
  return Tensor();
}

// PreparedCall: made by OpRegistry::PrepareUnboxed, run by OpRegistry::CallPrepared. It holds
// the plan and what the plan was computed from: every argument's kind, each Scalar's value and
// each tensor's dtype, device, sizes and strides. Immutable once made; calls in several threads
// may run it at once.
class PreparedCall {
 public:
  PreparedCall(const PreparedCall&) = delete;
  PreparedCall& operator=(const PreparedCall&) = delete;

  // Matches: `args` are what the plan was computed from (the guard; no kernel is looked at).
  bool Matches(const UnboxedArgs& args) const;
  // single_output: the layout of the call's one output, where it has one and so may write a
  // spare (Note [Spare outputs]); NULL otherwise.
  const TensorSpec* single_output() const {
    return plan_.outputs.size() == 1 ? &plan_.outputs[0] : nullptr;
  }

 private:
  friend class OpRegistry;
  PreparedCall() = default;

  // What one argument was when the plan was computed.
  struct Guard {
    UnboxedArg::Kind kind = UnboxedArg::Kind::kNone;
    ScalarType dtype = ScalarType::kFloat32;  // a tensor's
    Device device;                            // a tensor's
    size_t ndim = 0;                          // a tensor's: its sizes and then its strides
    size_t dims_at = 0;                       // are dims_[dims_at, dims_at + 2 * ndim)
    Scalar scalar;                            // a Scalar's
  };

  const internal::OperatorEntry* entry_ = nullptr;  // the functional form called
  const PlanFunction* plan_function_ = nullptr;     // the plan function plan_ came from
  int key_ = 0;                                     // the dispatch key of the call's device
  // Inline, not on the heap: a compiled model's run reads every node's prepared call, and
  // each block of its own was a cache line missed per node (Note [Run states] in
  // runtime/model/compiled_model.h).
  CallPlan plan_;
  absl::InlinedVector<CheckedLayout, 1> outputs_;  // plan_.outputs' layouts, checked
  absl::InlinedVector<Guard, 3> guards_;           // one per argument
  absl::InlinedVector<int64_t, 12> dims_;
};

}  // namespace tessera
