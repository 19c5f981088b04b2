// Reductions and scans (op set v1): schemas and plan functions.
//
// A table row says where an op's dim, keepdim and dtype arguments are and how the output
// dtype follows from the input's: sum and prod widen integers to int64, mean and var need
// floating types, argmax gives int64, any/all give bool (uint8 stays uint8), as in PyTorch.
#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "absl/strings/str_format.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/plan_support.h"
#include "dispatcher/unboxed_call.h"

namespace tessera {
namespace ops {
namespace {

enum class DimKind { kAll, kList, kSingle, kOptionalSingle, kScan };
enum class DtypeRule { kSumLike, kKeep, kFloatOnly, kInt64, kBoolLike, kIntToFloat };

struct ReductionSpec {
  const char* schema;
  DimKind dims;
  int dim_index;      // -1: none
  int keepdim_index;  // -1: none (keepdim false)
  int dtype_index;    // -1: no dtype argument
  DtypeRule rule;
  bool needs_nonempty;  // a reduction over zero elements has no identity (max, argmax)
  const char* out;      // the out= form's name
  const char* inplace;  // the in-place form's name, "" for none
};

template <typename Args>
absl::StatusOr<ScalarType> OutputDtype(const OperatorHandle& op, const ReductionSpec& spec,
                                       const Tensor& self, const Args& s) {
  const bool has_dtype = spec.dtype_index >= 0 && !s[spec.dtype_index].is_none();
  const ScalarType in = has_dtype ? s[spec.dtype_index].scalar_type() : self.dtype();
  switch (spec.rule) {
    case DtypeRule::kSumLike:
      return !has_dtype && IsIntegralType(in, true) ? ScalarType::kInt64 : in;
    case DtypeRule::kKeep:
      return in;
    case DtypeRule::kFloatOnly:
      if (!IsFloatingType(in)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: expected a floating point input or dtype, got %s", op.name(), ScalarTypeName(in)));
      }
      return in;
    case DtypeRule::kInt64:
      return ScalarType::kInt64;
    case DtypeRule::kBoolLike:
      return in == ScalarType::kUInt8 ? ScalarType::kUInt8 : ScalarType::kBool;
    case DtypeRule::kIntToFloat:
      return IsIntegralType(in, true) ? ScalarType::kFloat32 : in;
  }
  return in;
}

// ReductionPlan: the plan function (Note [Call plans]) of every row, one template for the boxed
// and the unboxed form of a call. Rows whose calls have only tensors, Scalars and None (sum,
// mean, prod, max, min, any, all of a whole tensor) take the unboxed fast path; the others
// have int, int[] or bool arguments, which the decoders leave to the boxed path.
template <typename Args>
absl::Status ReductionPlan(const void* context, const OperatorHandle& op, const Args& s,
                           CallPlan* plan) {
  const ReductionSpec& spec = *static_cast<const ReductionSpec*>(context);
  const Tensor& self = s[0].tensor();
  const int64_t ndim = self.dim();
  absl::InlinedVector<bool, 6> reduced(std::max<int64_t>(ndim, 1), false);
  bool reduce_all = false;
  DimVector dims;
  switch (spec.dims) {
    case DimKind::kAll:
      reduce_all = true;
      break;
    case DimKind::kList:
      if (s[spec.dim_index].is_none() || s[spec.dim_index].int_list().empty()) {
        reduce_all = true;
      } else {
        for (int64_t d : s[spec.dim_index].int_list()) dims.push_back(d);
      }
      break;
    case DimKind::kOptionalSingle:
      if (s[spec.dim_index].is_none()) {
        reduce_all = true;
        break;
      }
      [[fallthrough]];
    case DimKind::kSingle:
    case DimKind::kScan:
      dims.push_back(s[spec.dim_index].to_int());
      break;
  }
  for (int64_t d : dims) {
    TSR_ASSIGN_OR_RETURN(const int64_t w, WrapDim(d, ndim, op.name()));
    if (reduced[w]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: dim %d appears multiple times in the list of dims", op.name(), w));
    }
    reduced[w] = true;
  }
  if (reduce_all) std::fill(reduced.begin(), reduced.end(), true);

  if (spec.needs_nonempty) {
    for (int64_t d = 0; d < ndim; ++d) {
      if (reduced[d] && self.sizes()[d] == 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: expected reduction dim %d to have non-zero size (input shape %s)",
                            op.name(), d, ShapeToString(self.sizes())));
      }
    }
  }
  if (std::string_view(spec.out) == "norm.out" && !s[1].is_none()) {
    // An +inf or negative order over an empty dim has no identity: PyTorch's
    // linalg.vector_norm refuses it (an empty input reduced over non-empty dims is fine).
    const double p = s[1].scalar().to_double();
    for (int64_t d = 0; d < ndim && (p < 0 || p == INFINITY); ++d) {
      if (reduced[d] && self.sizes()[d] == 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: cannot compute the %g norm over dim %d of an input of shape %s: the dim is "
            "empty and the %g norm has no identity (expected a non-empty reduced dim, or an "
            "order p >= 0 other than inf)",
            op.name(), p, d, ShapeToString(self.sizes()), p));
      }
    }
  }
  TSR_ASSIGN_OR_RETURN(const ScalarType dtype, OutputDtype(op, spec, self, s));
  DimVector out_sizes;
  if (spec.dims == DimKind::kScan) {
    out_sizes.assign(self.sizes().begin(), self.sizes().end());
  } else {
    const bool keepdim = spec.keepdim_index >= 0 && s[spec.keepdim_index].to_bool();
    for (int64_t d = 0; d < ndim; ++d) {
      if (!reduced[d]) {
        out_sizes.push_back(self.sizes()[d]);
      } else if (keepdim) {
        out_sizes.push_back(1);
      }
    }
  }
  plan->outputs.clear();
  TSR_RETURN_IF_ERROR(AddContiguousOutput(plan, out_sizes, dtype));
  if (op.schema().returns.size() == 2) {  // (values, indices)
    TSR_RETURN_IF_ERROR(AddContiguousOutput(plan, out_sizes, ScalarType::kInt64));
  }
  return absl::OkStatus();
}

constexpr ReductionSpec kReductions[] = {
    {"sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", DimKind::kAll, -1, -1, 1,
     DtypeRule::kSumLike, false, "sum.out", ""},
    {"sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) "
     "-> Tensor",
     DimKind::kList, 1, 2, 3, DtypeRule::kSumLike, false, "sum.IntList_out", ""},
    {"mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", DimKind::kAll, -1, -1, 1,
     DtypeRule::kFloatOnly, false, "mean.dtype_out", ""},
    {"mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
     "Tensor",
     DimKind::kList, 1, 2, 3, DtypeRule::kFloatOnly, false, "mean.out", ""},
    {"prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", DimKind::kAll, -1, -1, 1,
     DtypeRule::kSumLike, false, "prod.out", ""},
    {"prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
     "Tensor",
     DimKind::kSingle, 1, 2, 3, DtypeRule::kSumLike, false, "prod.int_out", ""},
    {"amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", DimKind::kList, 1, 2, -1,
     DtypeRule::kKeep, true, "amax.out", ""},
    {"amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", DimKind::kList, 1, 2, -1,
     DtypeRule::kKeep, true, "amin.out", ""},
    {"max(Tensor self) -> Tensor", DimKind::kAll, -1, -1, -1, DtypeRule::kKeep, true,
     "max.unary_out", ""},
    {"min(Tensor self) -> Tensor", DimKind::kAll, -1, -1, -1, DtypeRule::kKeep, true,
     "min.unary_out", ""},
    {"max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
     DimKind::kSingle, 1, 2, -1, DtypeRule::kKeep, true, "max.dim_max", ""},
    {"min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
     DimKind::kSingle, 1, 2, -1, DtypeRule::kKeep, true, "min.dim_min", ""},
    {"argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", DimKind::kOptionalSingle,
     1, 2, -1, DtypeRule::kInt64, true, "argmax.out", ""},
    {"argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", DimKind::kOptionalSingle,
     1, 2, -1, DtypeRule::kInt64, true, "argmin.out", ""},
    {"var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
     "keepdim=False) -> Tensor",
     DimKind::kList, 1, 3, -1, DtypeRule::kFloatOnly, false, "var.correction_out", ""},
    {"std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
     "keepdim=False) -> Tensor",
     DimKind::kList, 1, 3, -1, DtypeRule::kFloatOnly, false, "std.correction_out", ""},
    {"any(Tensor self) -> Tensor", DimKind::kAll, -1, -1, -1, DtypeRule::kBoolLike, false,
     "any.all_out", ""},
    {"any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", DimKind::kSingle, 1, 2, -1,
     DtypeRule::kBoolLike, false, "any.out", ""},
    {"all(Tensor self) -> Tensor", DimKind::kAll, -1, -1, -1, DtypeRule::kBoolLike, false,
     "all.all_out", ""},
    {"all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", DimKind::kSingle, 1, 2, -1,
     DtypeRule::kBoolLike, false, "all.out", ""},
    {"norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor",
     DimKind::kList, 2, 3, -1, DtypeRule::kFloatOnly, false, "norm.out", ""},
    {"logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", DimKind::kList, 1, 2, -1,
     DtypeRule::kIntToFloat, false, "logsumexp.out", ""},
    {"cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", DimKind::kScan, 1, -1, 2,
     DtypeRule::kSumLike, false, "cumsum.out", "cumsum_"},
    {"cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", DimKind::kScan, 1, -1, 2,
     DtypeRule::kSumLike, false, "cumprod.out", "cumprod_"},
    {"_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", DimKind::kScan, 1, -1, -1,
     DtypeRule::kFloatOnly, false, "_softmax.out", ""},
    {"_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", DimKind::kScan, 1, -1, -1,
     DtypeRule::kFloatOnly, false, "_log_softmax.out", ""},
};

}  // namespace

absl::Status DefineReductionOps(OpRegistry& registry) {
  // One plan per row, for the life of the process: the registry keeps pointers to them.
  static const std::array<PlanFunction, std::size(kReductions)> plans = [] {
    std::array<PlanFunction, std::size(kReductions)> p;
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] = {&ReductionPlan<Stack>, &kReductions[i], &ReductionPlan<UnboxedArgs>};
    }
    return p;
  }();
  std::vector<OpDefinition> defs;
  for (const ReductionSpec& spec : kReductions) {
    defs.push_back({spec.schema, MetaKernelFromPlan("meta::reduction")});
  }
  TSR_RETURN_IF_ERROR(DefineAll(registry, std::move(defs), KernelSlot::kMeta));
  for (size_t i = 0; i < plans.size(); ++i) {
    const ReductionSpec& spec = kReductions[i];
    TSR_ASSIGN_OR_RETURN(FunctionSchema schema, ParseSchema(spec.schema));
    TSR_RETURN_IF_ERROR(registry.SetPlanFunction(schema.FullName(), &plans[i]));
    TSR_RETURN_IF_ERROR(registry.DefineVariants(
        schema.FullName(), spec.out, spec.inplace,
        *spec.inplace ? OutDtypeRule::kCastable : OutDtypeRule::kExact, OutputAliasing::kDisjoint));
  }
  return absl::OkStatus();
}

}  // namespace ops
}  // namespace tessera
