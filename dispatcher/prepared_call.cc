// Prepared unboxed calls: OpRegistry::PrepareUnboxed and OpRegistry::CallPrepared.
#include "dispatcher/prepared_call.h"

#include "absl/base/casts.h"
#include "core/allocator.h"
#include "core/status_macros.h"
#include "core/storage.h"
#include "dispatcher/call_epoch.h"
#include "dispatcher/internal/operator_entry.h"

namespace tessera {

// Note [Prepared calls]
// A compiled model's node makes one call on every run, with tensors that, run after run, have
// the same dtypes, devices, sizes and strides (only their data differs) and literals that never
// change. Its plan (Note [Call plans]: the output's shape, strides and dtype, the compute
// dtype) is then the same on every run, and computing it again was a fifth of a 1-element
// node's instructions. A prepared call computes it once, with the plan function the unboxed
// fast path calls (Note [The unboxed fast path] in unboxed_call.cc), and keeps it beside what
// it was computed from: each argument's kind, each Scalar's value, each tensor's dtype, device,
// sizes and strides. A plan function reads nothing else (no data, no global setting: a random
// op, whose plan reserves a draw, has no unboxed plan and is never prepared), so a later call
// whose arguments match all of that has the same plan, and CallPrepared runs it as CallUnboxed
// would: the same outputs allocated, the same kernel entry, the same checks of its returns.
//
// What is not kept is looked up on every call, as CallUnboxed does: the kernel (a plugin may
// register or deregister one between two runs; the call epoch keeps the one loaded alive), the
// op's definition, the plan function itself (a plan made by a replaced function is not used),
// and call tracing. A call that does not match, or that CallUnboxed would run another way (the
// form's own kernel, a nondeterministic one, none), is not taken: the caller makes it the
// unprepared way, which plans it afresh and gives its results or errors.
//
// Prepared: the functional form of a pointwise op (the ops with unboxed plans) whose kernel is
// its out= form's, the derivation a model's nodes take. A plan that failed is not prepared:
// the unprepared call reports the error, and the call site may prepare a later call. Not a cache of
// recipes keyed by metadata (DESIGN.md): a call site holds its one prepared call, and every call
// checks the whole of what the plan was computed from.

bool PreparedCall::Matches(const UnboxedArgs& args) const {
  if (ABSL_PREDICT_FALSE(args.size() != guards_.size())) return false;
  for (size_t i = 0; i < guards_.size(); ++i) {
    const Guard& g = guards_[i];
    const UnboxedArg& a = args[i];
    if (a.kind() != g.kind) return false;
    switch (g.kind) {
      case UnboxedArg::Kind::kNone:
        break;
      case UnboxedArg::Kind::kTensor: {
        const TensorImpl& t = *a.tensor().impl();
        if (t.dtype() != g.dtype || t.device() != g.device ||
            static_cast<size_t>(t.dim()) != g.ndim) {
          return false;
        }
        const int64_t* want = dims_.data() + g.dims_at;
        const int64_t* sizes = t.sizes().data();
        const int64_t* strides = t.strides().data();
        for (size_t d = 0; d < g.ndim; ++d) {
          if (sizes[d] != want[d] || strides[d] != want[g.ndim + d]) return false;
        }
        break;
      }
      case UnboxedArg::Kind::kScalar: {
        const Scalar& s = a.scalar();
        if (s.kind() != g.scalar.kind()) return false;
        // Bit for bit: -0.0 and NaN payloads are values a check may tell apart.
        if (s.is_floating_point() ? absl::bit_cast<uint64_t>(s.to_double()) !=
                                        absl::bit_cast<uint64_t>(g.scalar.to_double())
                                  : s.to_int() != g.scalar.to_int()) {
          return false;
        }
        break;
      }
    }
  }
  return true;
}

std::unique_ptr<PreparedCall> OpRegistry::PrepareUnboxed(const OperatorHandle& op,
                                                         const UnboxedArgs& args,
                                                         bool* never) const {
  *never = true;  // until the op is found to be one whose calls are prepared
  const internal::OperatorEntry& entry = *op.entry_;
  if (entry.variant != VariantKind::kFunctional || entry.out == nullptr) return nullptr;
  if (args.size() != entry.schema.arguments.size() ||
      args.size() + entry.schema.returns.size() > UnboxedArgs::kMax) {
    return nullptr;
  }
  const PlanFunction* f = entry.plan.load(std::memory_order_acquire);
  if (f == nullptr || f->unboxed == nullptr || entry.generator_argument >= 0) return nullptr;
  *never = false;                                  // from here on, these arguments decide
  const int key = internal::UnboxedCallKey(args);  // CallUnboxed's device rule
  if (key < 0) return nullptr;

  std::unique_ptr<PreparedCall> p(new PreparedCall());
  p->entry_ = &entry;
  p->plan_function_ = f;
  p->key_ = key;
  if (!internal::RequirePlan(entry, args, &p->plan_).ok() || p->plan_.rng ||
      entry.plan.load(std::memory_order_acquire) != f) {
    return nullptr;
  }
  for (const TensorSpec& spec : p->plan_.outputs) {
    absl::StatusOr<CheckedLayout> layout = CheckLayout(spec.sizes, spec.strides, spec.dtype);
    if (!layout.ok()) return nullptr;  // the unprepared call's EmptyStrided says why
    p->outputs_.push_back(*layout);
  }
  p->guards_.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    PreparedCall::Guard& g = p->guards_[i];
    const UnboxedArg& a = args[i];
    g.kind = a.kind();
    if (a.is_tensor()) {
      const TensorImpl& t = *a.tensor().impl();
      g.dtype = t.dtype();
      g.device = t.device();
      g.ndim = t.dim();
      g.dims_at = p->dims_.size();
      p->dims_.insert(p->dims_.end(), t.sizes().begin(), t.sizes().end());
      p->dims_.insert(p->dims_.end(), t.strides().begin(), t.strides().end());
    } else if (a.is_scalar()) {
      g.scalar = a.scalar();
    }
  }
  return p;
}

// Note [Spare outputs]
// A compiled model's node allocates its output on every run and the run frees it after its
// last reader; for small tensors that allocation and release (a tensor, a storage, the host
// allocator's cache) cost more than the kernel. The model keeps such an output when it is done
// with it and hands it to a later prepared call of the same output layout as `spare` (Note
// [Run states] in runtime/model/compiled_model.h), which writes into it instead of
// allocating. A spare is used only where writing it is as good as a fresh tensor
// (MaySpare): nothing else holds the tensor or its storage (a view of it, a copy an application
// kept, a plugin's cache would each hold a reference), its memory is the CPU allocator's (a
// device's kernels run on streams that may still use it; an application's or a plugin's lent
// memory must not outlive the run), small (kMaxSpareBytes: past it the kernel outweighs the
// allocation, and spares would hold memory a run has freed), not immutable, and its layout,
// dtype and device are the plan's. Otherwise the call allocates as before and the spare is left
// to its holder.
bool MaySpare(const TensorImpl& t) {
  const StorageImpl& storage = *t.storage();
  return t.use_count() == 1 && storage.use_count() == 1 && t.device().type == DeviceType::kCPU &&
         t.storage_offset() == 0 && storage.nbytes() <= kMaxSpareBytes &&
         storage.allocator() == GetAllocator(DeviceType::kCPU) && storage.owner() == nullptr &&
         t.immutable_id() == 0;
}

namespace {
bool ReusableSpare(const Tensor& spare, const TensorSpec& spec, Device device) {
  const TensorImpl& t = *spare.impl();
  return MaySpare(t) && t.dtype() == spec.dtype && t.device() == device &&
         SameDims(t.sizes(), spec.sizes) && SameDims(t.strides(), spec.strides);
}
}  // namespace

absl::Status OpRegistry::CallPrepared(const PreparedCall& p, UnboxedArgs* args,
                                      UnboxedReturns* returns, bool* taken, Tensor* spare) const {
  *taken = false;
  const internal::OperatorEntry& entry = *p.entry_;
  if (ABSL_PREDICT_FALSE(trace_.load(std::memory_order_relaxed))) return absl::OkStatus();
  if (entry.plan.load(std::memory_order_acquire) != p.plan_function_ || !p.Matches(*args)) {
    return absl::OkStatus();
  }
  CallScope scope;  // Note [Reclaiming deregistered kernels]: the kernel below stays alive
  if (ABSL_PREDICT_FALSE(!entry.defined.load(std::memory_order_acquire))) return absl::OkStatus();
  // CallUnboxed's choice: none where the form has a kernel of its own (CallUnboxed runs that).
  const KernelFunction* out_kernel = internal::FunctionalFromOutKernel(entry, p.key_);
  if (out_kernel == nullptr) return absl::OkStatus();
  *taken = true;
  for (size_t r = 0; r < p.outputs_.size(); ++r) {
    const TensorSpec& spec = p.plan_.outputs[r];
    Tensor out;
    if (spare != nullptr && spare->defined() && p.outputs_.size() == 1 &&
        ReusableSpare(*spare, spec, p.plan_.device)) {
      out = std::move(*spare);
    } else {
      TSR_ASSIGN_OR_RETURN(
          out, EmptyChecked(spec.sizes, spec.strides, spec.dtype, p.plan_.device, p.outputs_[r]));
    }
    args->AddTensor(out.impl());  // room checked by PrepareUnboxed
    returns->tensors[returns->size++] = std::move(out);
  }
  return internal::CallUnboxedPacked(entry, *entry.out, *out_kernel, p.plan_, *args);
}

}  // namespace tessera
