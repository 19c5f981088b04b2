// Matrix products (op set v1): schemas and plan functions with PyTorch's shape and dtype
// checks. matmul and linear are composites over these and come with the backends' issue.
#include "absl/strings/str_format.h"
#include "core/scalar.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/plan_support.h"
#include "dispatcher/unboxed_call.h"

namespace tessera {
namespace ops {
namespace {

absl::Status CheckRank(const OperatorHandle& op, const char* arg, const Tensor& t, int64_t rank) {
  if (t.dim() == rank) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: expected '%s' to be a %dD tensor, got %dD",
                                                    op.name(), arg, rank, t.dim()));
}

absl::Status CheckSameDtype(const OperatorHandle& op, const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: expected both matrices to have the same dtype, but got %s != %s",
                      op.name(), ScalarTypeName(a.dtype()), ScalarTypeName(b.dtype())));
}

absl::Status CheckInner(const OperatorHandle& op, const Tensor& a, const Tensor& b, int64_t ka,
                        int64_t kb) {
  if (a.sizes()[ka] == b.sizes()[kb]) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: shapes %s and %s cannot be multiplied (%d != %d)", op.name(), ShapeToString(a.sizes()),
      ShapeToString(b.sizes()), a.sizes()[ka], b.sizes()[kb]));
}

absl::Status CheckMm(const OperatorHandle& op, const Tensor& a, const Tensor& b) {
  // The common case in one test; the checks below say what is wrong (~100 instructions less
  // on every call than four Status round trips).
  if (ABSL_PREDICT_TRUE(a.dim() == 2 && b.dim() == 2 && a.sizes()[1] == b.sizes()[0] &&
                        a.dtype() == b.dtype())) {
    return absl::OkStatus();
  }
  TSR_RETURN_IF_ERROR(CheckRank(op, "self", a, 2));
  TSR_RETURN_IF_ERROR(CheckRank(op, "mat2", b, 2));
  TSR_RETURN_IF_ERROR(CheckInner(op, a, b, 1, 0));
  return CheckSameDtype(op, a, b);
}

// The plan functions (Note [Call plans]): one template for the boxed and the unboxed form of a
// call, so that mm, bmm and addmm take the unboxed fast path and compiled models prepare them.
template <typename Args>
absl::Status MmPlan(const void*, const OperatorHandle& op, const Args& s, CallPlan* plan) {
  const Tensor& a = s[0].tensor();
  const Tensor& b = s[1].tensor();
  TSR_RETURN_IF_ERROR(CheckMm(op, a, b));
  plan->outputs.clear();
  const int64_t sizes[] = {a.sizes()[0], b.sizes()[1]};
  return AddContiguousOutput(plan, sizes, a.dtype());
}

template <typename Args>
absl::Status BmmPlan(const void*, const OperatorHandle& op, const Args& s, CallPlan* plan) {
  const Tensor& a = s[0].tensor();
  const Tensor& b = s[1].tensor();
  TSR_RETURN_IF_ERROR(CheckRank(op, "self", a, 3));
  TSR_RETURN_IF_ERROR(CheckRank(op, "mat2", b, 3));
  if (a.sizes()[0] != b.sizes()[0]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: batch sizes differ: %d (self) != %d (mat2)", op.name(), a.sizes()[0], b.sizes()[0]));
  }
  TSR_RETURN_IF_ERROR(CheckInner(op, a, b, 2, 1));
  TSR_RETURN_IF_ERROR(CheckSameDtype(op, a, b));
  plan->outputs.clear();
  const int64_t sizes[] = {a.sizes()[0], a.sizes()[1], b.sizes()[2]};
  return AddContiguousOutput(plan, sizes, a.dtype());
}

template <typename Args>
absl::Status AddmmPlan(const void*, const OperatorHandle& op, const Args& s, CallPlan* plan) {
  const Tensor& self = s[0].tensor();
  const Tensor& a = s[1].tensor();
  const Tensor& b = s[2].tensor();
  TSR_RETURN_IF_ERROR(CheckMm(op, a, b));
  const int64_t sizes[] = {a.sizes()[0], b.sizes()[1]};
  TSR_RETURN_IF_ERROR(CheckBroadcastsTo(op, "self", self.sizes(), sizes, "the product's shape"));
  TSR_RETURN_IF_ERROR(CheckSameDtype(op, self, a));  // a's dtype is the product's
  // beta and alpha convert to the product's dtype as PyTorch's Scalar::to does, which refuses a
  // value the dtype cannot hold; a kernel's plain cast of one would be undefined behaviour.
  TSR_RETURN_IF_ERROR(CheckScalarFits(s[3].scalar(), self.dtype(), op.name(), "beta"));
  TSR_RETURN_IF_ERROR(CheckScalarFits(s[4].scalar(), self.dtype(), op.name(), "alpha"));
  plan->outputs.clear();
  return AddContiguousOutput(plan, sizes, a.dtype());
}

constexpr PlanFunction kMmPlan{&MmPlan<Stack>, nullptr, &MmPlan<UnboxedArgs>};
constexpr PlanFunction kBmmPlan{&BmmPlan<Stack>, nullptr, &BmmPlan<UnboxedArgs>};
constexpr PlanFunction kAddmmPlan{&AddmmPlan<Stack>, nullptr, &AddmmPlan<UnboxedArgs>};

}  // namespace

absl::Status DefineLinalgOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(DefineAll(
      registry,
      {
          {"mm(Tensor self, Tensor mat2) -> Tensor", MetaKernelFromPlan("meta::mm")},
          {"bmm(Tensor self, Tensor mat2) -> Tensor", MetaKernelFromPlan("meta::bmm")},
          {"addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> "
           "Tensor",
           MetaKernelFromPlan("meta::addmm")},
      },
      KernelSlot::kMeta));
  TSR_RETURN_IF_ERROR(registry.SetPlanFunction("mm", &kMmPlan));
  TSR_RETURN_IF_ERROR(registry.SetPlanFunction("bmm", &kBmmPlan));
  TSR_RETURN_IF_ERROR(registry.SetPlanFunction("addmm", &kAddmmPlan));
  TSR_RETURN_IF_ERROR(
      registry.DefineVariants("mm", "mm.out", "", OutDtypeRule::kExact, OutputAliasing::kDisjoint));
  TSR_RETURN_IF_ERROR(registry.DefineVariants("bmm", "bmm.out", "", OutDtypeRule::kExact,
                                              OutputAliasing::kDisjoint));
  return registry.DefineVariants("addmm", "addmm.out", "addmm_", OutDtypeRule::kExact,
                                 OutputAliasing::kDisjoint);
}

}  // namespace ops
}  // namespace tessera
