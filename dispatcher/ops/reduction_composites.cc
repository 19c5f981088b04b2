// Op set 1.8's reductions that ATen builds from others, defined here the same way so that every
// backend has them: nansum (sum with NaN read as 0), count_nonzero (sum of self != 0), aminmax
// (amin and amax), var_mean and std_mean (var or std, and mean), linalg_vector_norm and dist
// (norm). Their out= forms write the results into the out arguments (nansum.out is
// sum.IntList_out, so its out dtype rule is sum's). Op set 1.9 adds the `unbiased` overloads of
// var, std, var_mean and std_mean (correction 1 or 0) and any/all over several dims.
#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/type_promotion.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

// self with NaN read as 0 (integral and bool tensors hold none: self itself).
absl::StatusOr<Tensor> NanAsZero(OpRegistry& r, const Tensor& self) {
  if (!IsFloatingType(self.dtype())) return self;
  TSR_ASSIGN_OR_RETURN(Tensor nan, CallOne(r, "isnan", {self}));
  return CallOne(r, "masked_fill.Scalar", {self, nan, Value(Scalar(int64_t{0}))});
}

// nansum(self, dim=None, keepdim=False, *, dtype=None) and nansum.out(..., *, out)
template <bool kOut>
Out NansumK(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  // ATen's nansum has floating loops only (an integral or bool self is sum's): a floating self
  // summed in an integral dtype is refused.
  if (IsFloatingType(self.dtype()) && !s[3].is_none() && !IsFloatingType(s[3].scalar_type())) {
    return Invalid(
        op, absl::StrFormat("expected a floating dtype to sum a %s tensor in, got %s",
                            ScalarTypeName(self.dtype()), ScalarTypeName(s[3].scalar_type())));
  }
  TSR_ASSIGN_OR_RETURN(Tensor clean, NanAsZero(r, self));
  if constexpr (kOut) {
    return One(CallOne(r, "sum.IntList_out", {Value(clean), s[1], s[2], s[3], s[4]}));
  }
  return One(CallOne(r, "sum.dim_IntList", {Value(clean), s[1], s[2], s[3]}));
}

// count_nonzero over `dims` (empty: every dim): self != 0 (NaN counts) summed as int64.
absl::StatusOr<Tensor> CountNonzero(OpRegistry& r, const Tensor& self, Value dims) {
  TSR_ASSIGN_OR_RETURN(Tensor nonzero, CallOne(r, "ne.Scalar", {self, Value(Scalar(int64_t{0}))}));
  if (dims.is_int_list() && dims.int_list().empty()) dims = Value(std::nullopt);
  return CallOne(r, "sum.dim_IntList", {Value(nonzero), dims, Value(false), Value(std::nullopt)});
}

// count_nonzero.dim_IntList(self, int[] dim)
absl::StatusOr<Tensor> CountNonzeroDimsOf(const OperatorHandle& op, const Stack& s) {
  return CountNonzero(op.registry(), s[0].tensor(), s[1]);
}

// count_nonzero(self, int? dim=None)
absl::StatusOr<Tensor> CountNonzeroOf(const OperatorHandle& op, const Stack& s) {
  if (s[1].is_none()) return CountNonzero(op.registry(), s[0].tensor(), Value(std::nullopt));
  return CountNonzero(op.registry(), s[0].tensor(), Value(IntList{s[1].to_int()}));
}

// aminmax(self, *, dim=None, keepdim=False) -> (min, max): over one dim or over all of them
// (keepdim then keeps every dim as size 1). An empty tensor has neither.
Out AminmaxK(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  Value dims = Value(IntList{});
  if (!s[1].is_none()) {
    dims = Value(IntList{s[1].to_int()});
  } else if (self.numel() == 0) {
    return Invalid(op,
                   "cannot compute aminmax over an empty dimension as the operation has no "
                   "identity");
  }
  TSR_ASSIGN_OR_RETURN(Tensor min, CallOne(r, "amin", {s[0], dims, s[2]}));
  TSR_ASSIGN_OR_RETURN(Tensor max, CallOne(r, "amax", {s[0], dims, s[2]}));
  return std::vector<Tensor>{std::move(min), std::move(max)};
}

// var_mean.correction / std_mean.correction(self, dim=None, *, correction=None, keepdim=False)
// -> (var or std, mean)
template <bool kStd>
Out SpreadMeanK(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor spread, CallOne(r, kStd ? "std.correction" : "var.correction",
                                              {s[0], s[1], s[2], s[3]}));
  TSR_ASSIGN_OR_RETURN(Tensor mean,
                       CallOne(r, "mean.dim", {s[0], s[1], s[3], Value(std::nullopt)}));
  return std::vector<Tensor>{std::move(spread), std::move(mean)};
}

// linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None): norm over dim (all
// dims for None), self first converted to dtype; floating only.
absl::StatusOr<Tensor> VectorNormOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  if (!IsFloatingType(self.dtype())) {
    return Invalid(op, absl::StrFormat("Expected a floating point tensor as input. Got %s",
                                       ScalarTypeName(self.dtype())));
  }
  Value x = s[0];
  if (!s[4].is_none()) {
    const ScalarType dtype = s[4].scalar_type();
    if (!IsFloatingType(dtype)) {
      return Invalid(op, absl::StrFormat("dtype should be a floating point dtype. Got %s",
                                         ScalarTypeName(dtype)));
    }
    // ATen's check_linalg_norm_dtype: the input converts to dtype without narrowing.
    if (PromoteTypes(self.dtype(), dtype) != dtype) {
      return Invalid(op, absl::StrFormat("the dtype of the input (%s) should be convertible "
                                         "without narrowing to the specified dtype (%s)",
                                         ScalarTypeName(self.dtype()), ScalarTypeName(dtype)));
    }
    if (s[4].scalar_type() != self.dtype()) {
      TSR_ASSIGN_OR_RETURN(Tensor converted, CallOne(r, "_to_copy", {s[0], s[4]}));
      x = Value(std::move(converted));
    }
  }
  const Value dims = s[2].is_none() ? Value(IntList{}) : s[2];
  return CallOne(r, "norm.ScalarOpt_dim", {x, s[1], dims, s[3]});
}

// dist(self, other, p=2): the p-norm of self - other, over every element.
absl::StatusOr<Tensor> DistOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  // Checked before the subtraction, whose kernel may refuse the dtype first (UNIMPLEMENTED on a
  // float32-only device) where this is a bad argument on every device.
  ResultTypeBuilder promotion;
  for (const Value& v : {s[0], s[1]}) promotion.AddTensor(v.tensor().dtype(), v.tensor().dim());
  if (!IsFloatingType(promotion.Result())) {
    return Invalid(op, absl::StrFormat("expected floating point operands, got %s and %s",
                                       ScalarTypeName(s[0].tensor().dtype()),
                                       ScalarTypeName(s[1].tensor().dtype())));
  }
  TSR_ASSIGN_OR_RETURN(Tensor difference,
                       CallOne(r, "sub.Tensor", {s[0], s[1], Value(Scalar(int64_t{1}))}));
  return CallOne(r, "norm.ScalarOpt_dim",
                 {Value(difference), s[2], Value(IntList{}), Value(false)});
}

// ---- op set 1.9: var/std with `unbiased`, and any/all over several dims ----

// Correction: an `unbiased` flag as var.correction's correction (1 or 0).
Value Correction(const Value& unbiased) {
  return Value(Scalar(int64_t{unbiased.to_bool() ? 1 : 0}));
}

// var(self, unbiased=True) / std(...): over every element.
template <bool kStd>
absl::StatusOr<Tensor> SpreadAllOf(const OperatorHandle& op, const Stack& s) {
  return CallOne(op.registry(), kStd ? "std.correction" : "var.correction",
                 {s[0], Value(std::nullopt), Correction(s[1]), Value(false)});
}

// var.dim(self, dim, unbiased=True, keepdim=False) / std.dim, and their out= forms (var.out).
template <bool kStd>
absl::StatusOr<Tensor> SpreadDimOf(const OperatorHandle& op, const Stack& s) {
  return CallOne(op.registry(), kStd ? "std.correction" : "var.correction",
                 {s[0], s[1], Correction(s[2]), s[3]});
}
template <bool kStd>
Out SpreadOutK(const OperatorHandle& op, const Stack& s) {
  return One(CallOne(op.registry(), kStd ? "std.correction_out" : "var.correction_out",
                     {s[0], s[1], Correction(s[2]), s[3], s[4]}));
}

// var_mean(self, unbiased=True) and var_mean.dim(self, dim, unbiased=True, keepdim=False);
// std_mean the same.
template <bool kStd, bool kDim>
Out SpreadMeanUnbiasedK(const OperatorHandle& op, const Stack& s) {
  const Stack args = kDim ? Stack{s[0], s[1], Correction(s[2]), s[3]}
                          : Stack{s[0], Value(std::nullopt), Correction(s[1]), Value(false)};
  return SpreadMeanK<kStd>(op, args);
}

// any.dims / all.dims(self, dim=None, keepdim=False): any.dim / all.dim over each dim in turn
// (None: every dim; []: none, as current ATen's allany_meta), as ATen's reduction over a dim
// mask.
template <bool kAny>
absl::StatusOr<Tensor> AnyAllDimsOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const bool keepdim = s[2].to_bool();
  const int64_t nd = self.dim();
  std::vector<int64_t> dims;
  if (!s[1].is_none()) {
    for (int64_t d : s[1].int_list()) {
      TSR_ASSIGN_OR_RETURN(const int64_t wrapped, WrapDim(d, nd, op.name()));
      if (std::count(dims.begin(), dims.end(), wrapped)) {
        return Invalid(
            op, absl::StrFormat("dim %d appears multiple times in the list of dims", wrapped));
      }
      dims.push_back(wrapped);
    }
  }
  if (!s[1].is_none() && dims.empty()) {  // []: no dim reduced, each element's truth alone
    TSR_ASSIGN_OR_RETURN(Tensor truth, CallOne(r, "ne.Scalar", {s[0], Value(Scalar(int64_t{0}))}));
    if (self.dtype() != ScalarType::kUInt8) return truth;  // uint8 stays uint8, as any's
    return CallOne(r, "_to_copy", {Value(truth), Value(ScalarType::kUInt8)});
  }
  if (nd == 0) return CallOne(r, kAny ? "any" : "all", {s[0]});
  if (dims.empty()) {
    for (int64_t d = 0; d < nd; ++d) dims.push_back(d);
  }
  Tensor out = self;
  for (int64_t d : dims) {
    TSR_ASSIGN_OR_RETURN(
        out, CallOne(r, kAny ? "any.dim" : "all.dim", {Value(out), Value(d), Value(true)}));
  }
  if (keepdim) return out;
  return SqueezeDims(out, IntList(dims.begin(), dims.end()));
}

}  // namespace

absl::Status DefineReductionComposites(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) "
           "-> Tensor",
           MakeKernel<Named<NansumK<false>>>("core::nansum")},
          {"nansum.out(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? "
           "dtype=None, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<NansumK<true>>>("core::nansum_out")},
          {"count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor",
           MakeKernel<Named<ComputeOne<CountNonzeroDimsOf>>>("core::count_nonzero")},
          {"count_nonzero.dim_IntList_out(Tensor self, int[] dim, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<CountNonzeroDimsOf, 2>>>("core::count_nonzero_out")},
          {"count_nonzero(Tensor self, int? dim=None) -> Tensor",
           MakeKernel<Named<ComputeOne<CountNonzeroOf>>>("core::count_nonzero")},
          {"count_nonzero.out(Tensor self, int? dim=None, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<CountNonzeroOf, 2>>>("core::count_nonzero_out")},
          {"aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor "
           "max)",
           MakeKernel<Named<AminmaxK>>("core::aminmax")},
          {"aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, "
           "Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!) max)",
           MakeKernel<Named<ComputeIntoOuts<AminmaxK, 3, 2>>>("core::aminmax_out")},
          {"var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
           "keepdim=False) -> (Tensor, Tensor)",
           MakeKernel<Named<SpreadMeanK<false>>>("core::var_mean")},
          {"var_mean.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
           MakeKernel<Named<ComputeIntoOuts<SpreadMeanK<false>, 4, 2>>>("core::var_mean_out")},
          {"std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool "
           "keepdim=False) -> (Tensor, Tensor)",
           MakeKernel<Named<SpreadMeanK<true>>>("core::std_mean")},
          {"std_mean.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
           "bool keepdim=False, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
           MakeKernel<Named<ComputeIntoOuts<SpreadMeanK<true>, 4, 2>>>("core::std_mean_out")},
          {"linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, "
           "*, ScalarType? dtype=None) -> Tensor",
           MakeKernel<Named<ComputeOne<VectorNormOf>>>("core::linalg_vector_norm")},
          {"linalg_vector_norm.out(Tensor self, Scalar ord=2, int[1]? dim=None, bool "
           "keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<VectorNormOf, 5>>>("core::linalg_vector_norm_out")},
          {"dist(Tensor self, Tensor other, Scalar p=2) -> Tensor",
           MakeKernel<Named<ComputeOne<DistOf>>>("core::dist")},
          {"dist.out(Tensor self, Tensor other, Scalar p=2, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<DistOf, 3>>>("core::dist_out")},
          {"var(Tensor self, bool unbiased=True) -> Tensor",
           MakeKernel<Named<ComputeOne<SpreadAllOf<false>>>>("core::var")},
          {"var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
           MakeKernel<Named<ComputeOne<SpreadDimOf<false>>>>("core::var_dim")},
          {"var.out(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False, *, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<SpreadOutK<false>>>("core::var_out")},
          {"std(Tensor self, bool unbiased=True) -> Tensor",
           MakeKernel<Named<ComputeOne<SpreadAllOf<true>>>>("core::std")},
          {"std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
           MakeKernel<Named<ComputeOne<SpreadDimOf<true>>>>("core::std_dim")},
          {"std.out(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False, *, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<SpreadOutK<true>>>("core::std_out")},
          {"var_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)",
           MakeKernel<Named<SpreadMeanUnbiasedK<false, false>>>("core::var_mean")},
          {"var_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> "
           "(Tensor, Tensor)",
           MakeKernel<Named<SpreadMeanUnbiasedK<false, true>>>("core::var_mean_dim")},
          {"std_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)",
           MakeKernel<Named<SpreadMeanUnbiasedK<true, false>>>("core::std_mean")},
          {"std_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> "
           "(Tensor, Tensor)",
           MakeKernel<Named<SpreadMeanUnbiasedK<true, true>>>("core::std_mean_dim")},
          {"any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
           MakeKernel<Named<ComputeOne<AnyAllDimsOf<true>>>>("core::any_dims")},
          {"any.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AnyAllDimsOf<true>, 3>>>("core::any_dims_out")},
          {"all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
           MakeKernel<Named<ComputeOne<AnyAllDimsOf<false>>>>("core::all_dims")},
          {"all.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AnyAllDimsOf<false>, 3>>>("core::all_dims_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
