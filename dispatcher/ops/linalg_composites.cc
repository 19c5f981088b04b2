// Op set 1.8's matrix-vector products, batched products with an added term and trace, as
// composites over mm, addmm, bmm, sum and the pointwise ops, so that every backend has them and
// a vendor's mm/addmm/bmm kernel serves them all.
//
// The beta/alpha forms compute as ATen's kernels do: alpha * (the product) + beta * self, beta
// and alpha converted to the result's dtype (an int64 result takes 2.7 as 2, as Scalar::to does;
// one that overflows the dtype is refused), and with beta 0 self is not read at all, so NaN or
// inf in it do not reach the result. addmv and addbmm are one addmm each (the kernel rounds
// once). baddbmm is bmm then the pointwise tail; for the 16-bit floats the bmm runs in float32
// (its operands copied) so that the result is rounded once, as ATen's: rounding the product
// first is off by whole units in the last place where beta * self cancels it. addr is ATen's
// TensorIterator op: its operands promote to one dtype, and bool has its own rule.
#include <string>

#include "absl/strings/str_format.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "core/type_promotion.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

absl::Status CheckDim(const OperatorHandle& op, const char* arg, const Tensor& t, int64_t rank) {
  if (t.dim() == rank) return absl::OkStatus();
  return Invalid(op,
                 absl::StrFormat("expected %s to be a %dD tensor, got %dD", arg, rank, t.dim()));
}

absl::Status CheckSameDtype(const OperatorHandle& op, const char* a, const Tensor& x, const char* b,
                            const Tensor& y) {
  if (x.dtype() == y.dtype()) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("expected %s and %s to have the same dtype, but got %s and %s",
                                     a, b, ScalarTypeName(x.dtype()), ScalarTypeName(y.dtype())));
}

// Constant: `value` as a 0-dim CPU tensor of `dtype`, converted as fill_ converts (truncating a
// float for an integral dtype, as ATen's Scalar::to does for beta and alpha).
absl::StatusOr<Tensor> Constant(OpRegistry& r, const Scalar& value, ScalarType dtype) {
  return CallOne(r, "full",
                 {Value(IntList{}), Value(value), Value(dtype), Value(std::nullopt),
                  Value(Device(DeviceType::kCPU))});
}

// CheckAddTerm: self, the term beta scales, broadcasts to the product's `shape` and has its
// `dtype`, and beta and alpha fit that dtype (checked here, before addmm would check them under
// its own name).
absl::Status CheckAddTerm(const OperatorHandle& op, const Tensor& self, IntArrayRef shape,
                          ScalarType dtype, const Scalar& beta, const Scalar& alpha) {
  TSR_RETURN_IF_ERROR(CheckBroadcastsTo(op, "self", self.sizes(), shape, "the product's shape"));
  if (self.dtype() != dtype) {
    return Invalid(op, absl::StrFormat("expected self to have the operands' dtype %s, but got %s",
                                       ScalarTypeName(dtype), ScalarTypeName(self.dtype())));
  }
  TSR_RETURN_IF_ERROR(CheckScalarFits(beta, dtype, op.name(), "beta"));
  return CheckScalarFits(alpha, dtype, op.name(), "alpha");
}

// Product: `name` (mm or bmm) of a and b (of the result's dtype) in the Opmath compute dtype,
// so that a 16-bit result is rounded once, after beta and alpha, as ATen's kernels round it.
absl::StatusOr<Tensor> Product(OpRegistry& r, const char* name, const Tensor& a, const Tensor& b) {
  const Opmath math(a.dtype());
  TSR_ASSIGN_OR_RETURN(Value am, math.In(r, Value(a)));
  TSR_ASSIGN_OR_RETURN(Value bm, math.In(r, Value(b)));
  return CallOne(r, name, {am, bm});
}

// Scaled: beta * self + alpha * product in `dtype` (product in its Opmath compute dtype, of the
// result's shape, which self must broadcast to). beta == 0 does not read self (ATen's rule).
absl::StatusOr<Tensor> Scaled(const OperatorHandle& op, const Tensor& self, Tensor product,
                              ScalarType dtype, const Scalar& beta, const Scalar& alpha) {
  OpRegistry& r = op.registry();
  TSR_RETURN_IF_ERROR(CheckAddTerm(op, self, product.sizes(), dtype, beta, alpha));
  const Opmath math(dtype);
  const bool beta_zero = beta.to_double() == 0;
  if (beta_zero && alpha.to_double() == 1) return math.Out(r, std::move(product));
  Value acc(std::move(product));
  if (alpha.to_double() != 1) {
    TSR_ASSIGN_OR_RETURN(Tensor a, Constant(r, alpha, dtype));
    TSR_ASSIGN_OR_RETURN(Value a_math, math.In(r, Value(a)));
    TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "mul.Tensor", {acc, a_math}));
    acc = Value(std::move(scaled));
  }
  if (!beta_zero) {
    TSR_ASSIGN_OR_RETURN(Value s, math.In(r, Value(self)));
    if (beta.to_double() != 1) {
      TSR_ASSIGN_OR_RETURN(Tensor b, Constant(r, beta, dtype));
      TSR_ASSIGN_OR_RETURN(Value b_math, math.In(r, Value(b)));
      TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "mul.Tensor", {s, b_math}));
      s = Value(std::move(scaled));
    }
    TSR_ASSIGN_OR_RETURN(Tensor sum, CallOne(r, "add.Tensor", {acc, s, Value(int64_t{1})}));
    acc = Value(std::move(sum));
  }
  return math.Out(r, acc.tensor());
}

// dot(self, tensor) and vdot(self, other) (Tessera has no complex dtypes: the same): the
// product of [1, n] and [n, 1] through mm, seen as a 0-dim tensor.
absl::StatusOr<Tensor> DotOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& a = s[0].tensor();
  const Tensor& b = s[1].tensor();
  if (a.dim() != 1 || b.dim() != 1) {
    return Invalid(
        op, absl::StrFormat("1D tensors expected, but got %dD and %dD tensors", a.dim(), b.dim()));
  }
  if (a.dtype() != b.dtype()) {
    return Invalid(op, absl::StrFormat("expected both vectors to have the same dtype, but found %s "
                                       "and %s",
                                       ScalarTypeName(a.dtype()), ScalarTypeName(b.dtype())));
  }
  if (a.numel() != b.numel()) {
    return Invalid(op, absl::StrFormat("inconsistent tensor size, expected tensors of the same "
                                       "number of elements, but got %d and %d",
                                       a.numel(), b.numel()));
  }
  TSR_ASSIGN_OR_RETURN(Tensor row, Unsqueeze(a, 0));
  TSR_ASSIGN_OR_RETURN(Tensor column, Unsqueeze(b, 1));
  TSR_ASSIGN_OR_RETURN(Tensor product, CallOne(op.registry(), "mm", {row, column}));
  return View(product, {});
}

// mat [n, m] and vec [m] of one dtype.
absl::Status CheckMatrixVector(const OperatorHandle& op, const Tensor& mat, const Tensor& vec) {
  TSR_RETURN_IF_ERROR(CheckDim(op, "mat", mat, 2));
  TSR_RETURN_IF_ERROR(CheckDim(op, "vec", vec, 1));
  if (mat.sizes()[1] != vec.sizes()[0]) {
    return Invalid(op, absl::StrFormat("size mismatch: mat %s @ vec %s", ShapeToString(mat.sizes()),
                                       ShapeToString(vec.sizes())));
  }
  return CheckSameDtype(op, "mat", mat, "vec", vec);
}

// mv(self, vec): self [n, m] @ vec [m].
absl::StatusOr<Tensor> MvOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& mat = s[0].tensor();
  TSR_RETURN_IF_ERROR(CheckMatrixVector(op, mat, s[1].tensor()));
  TSR_ASSIGN_OR_RETURN(Tensor column, Unsqueeze(s[1].tensor(), 1));
  TSR_ASSIGN_OR_RETURN(Tensor product, CallOne(op.registry(), "mm", {mat, column}));
  return View(product, {mat.sizes()[0]});
}

// addmv(self, mat, vec, *, beta, alpha): self is [n], [1] or 0-dim (ATen takes no more dims).
absl::StatusOr<Tensor> AddmvOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (self.dim() > 1) {
    return Invalid(
        op, absl::StrFormat("expected self to be a 1D or 0-dim tensor, got %dD", self.dim()));
  }
  const Tensor& mat = s[1].tensor();
  TSR_RETURN_IF_ERROR(CheckMatrixVector(op, mat, s[2].tensor()));
  const int64_t n = mat.sizes()[0];
  TSR_RETURN_IF_ERROR(CheckAddTerm(op, self, {n}, mat.dtype(), s[3].scalar(), s[4].scalar()));
  // As a column: self [n, 1] (or [1, 1], or 0-dim) + mat @ vec [m, 1].
  TSR_ASSIGN_OR_RETURN(Tensor self_column,
                       self.dim() == 1 ? Unsqueeze(self, 1) : absl::StatusOr<Tensor>(self));
  TSR_ASSIGN_OR_RETURN(Tensor column, Unsqueeze(s[2].tensor(), 1));
  TSR_ASSIGN_OR_RETURN(
      Tensor result,
      CallOne(op.registry(), "addmm", {Value(self_column), s[1], Value(column), s[3], s[4]}));
  return View(result, {n});
}

// Batched checks of baddbmm and addbmm: batch1 [b, n, m] and batch2 [b, m, p] of one dtype.
absl::Status CheckBatches(const OperatorHandle& op, const Tensor& b1, const Tensor& b2) {
  TSR_RETURN_IF_ERROR(CheckDim(op, "batch1", b1, 3));
  TSR_RETURN_IF_ERROR(CheckDim(op, "batch2", b2, 3));
  if (b1.sizes()[0] != b2.sizes()[0]) {
    return Invalid(
        op, absl::StrFormat("batch1 and batch2 must have the same number of batches, got %d and %d",
                            b1.sizes()[0], b2.sizes()[0]));
  }
  if (b1.sizes()[2] != b2.sizes()[1]) {
    return Invalid(op, absl::StrFormat("shapes %s and %s cannot be multiplied (%d != %d)",
                                       ShapeToString(b1.sizes()), ShapeToString(b2.sizes()),
                                       b1.sizes()[2], b2.sizes()[1]));
  }
  return CheckSameDtype(op, "batch1", b1, "batch2", b2);
}

// baddbmm(self, batch1, batch2, *, beta, alpha): self broadcasts to [b, n, p].
absl::StatusOr<Tensor> BaddbmmOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& b1 = s[1].tensor();
  const Tensor& b2 = s[2].tensor();
  TSR_RETURN_IF_ERROR(CheckBatches(op, b1, b2));
  TSR_ASSIGN_OR_RETURN(Tensor product, Product(op.registry(), "bmm", b1, b2));
  return Scaled(op, s[0].tensor(), std::move(product), b1.dtype(), s[3].scalar(), s[4].scalar());
}

// addbmm(self, batch1, batch2, *, beta, alpha): the batches' products summed, [n, p]: one addmm
// of the batches laid side by side, [n, b*m] @ [b*m, p] (batch1 copied to lay it so; batch2's
// reshape is a view when it is contiguous).
absl::StatusOr<Tensor> AddbmmOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& b1 = s[1].tensor();
  const Tensor& b2 = s[2].tensor();
  TSR_RETURN_IF_ERROR(CheckBatches(op, b1, b2));
  const int64_t b = b1.sizes()[0], n = b1.sizes()[1], m = b1.sizes()[2], p = b2.sizes()[2];
  TSR_RETURN_IF_ERROR(
      CheckAddTerm(op, s[0].tensor(), {n, p}, b1.dtype(), s[3].scalar(), s[4].scalar()));
  TSR_ASSIGN_OR_RETURN(Tensor left_t, Permute(b1, {1, 0, 2}));  // [n, b, m]
  TSR_ASSIGN_OR_RETURN(Tensor left, CallOne(r, "reshape", {left_t, Value(IntList{n, b * m})}));
  TSR_ASSIGN_OR_RETURN(Tensor right, CallOne(r, "reshape", {b2, Value(IntList{b * m, p})}));
  return CallOne(r, "addmm", {s[0], Value(left), Value(right), s[3], s[4]});
}

// addr's beta and alpha: ATen's check_addr_scalar.
absl::Status CheckAddrScalar(const OperatorHandle& op, ScalarType dtype, const Scalar& v,
                             const char* name) {
  if (v.is_bool() && dtype != ScalarType::kBool) {
    return Invalid(op, absl::StrFormat("Boolean %s only supported for Boolean results", name));
  }
  if (!IsFloatingType(dtype) && v.is_floating_point()) {
    return Invalid(op, absl::StrFormat("for integral input tensors, argument %s must not be a "
                                       "floating point number",
                                       name));
  }
  return CheckScalarFits(v, dtype, op.name(), name);
}

// addr(self, vec1, vec2, *, beta, alpha): beta * self + alpha * outer(vec1, vec2), its operands
// promoted to one dtype; for bool (beta and self) or (alpha and vec1 and vec2).
absl::StatusOr<Tensor> AddrOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const Tensor& v1 = s[1].tensor();
  const Tensor& v2 = s[2].tensor();
  TSR_RETURN_IF_ERROR(CheckDim(op, "vec1", v1, 1));
  TSR_RETURN_IF_ERROR(CheckDim(op, "vec2", v2, 1));
  const DimVector shape{v1.sizes()[0], v2.sizes()[0]};
  TSR_RETURN_IF_ERROR(CheckBroadcastsTo(op, "self", self.sizes(), shape,
                                        "the outer product's"
                                        " shape"));
  // ATen expands self to [n, m] before its TensorIterator promotes: a 0-dim self counts as a
  // dimensioned operand (a 0-dim float64 self with float32 vectors gives float64).
  ResultTypeBuilder promotion;
  for (const Tensor* t : {&self, &v1, &v2}) promotion.AddTensor(t->dtype(), /*dim=*/1);
  const ScalarType dtype = promotion.Result();
  const Scalar beta = s[3].scalar(), alpha = s[4].scalar();
  TSR_RETURN_IF_ERROR(CheckAddrScalar(op, dtype, beta, "beta"));
  TSR_RETURN_IF_ERROR(CheckAddrScalar(op, dtype, alpha, "alpha"));
  TSR_ASSIGN_OR_RETURN(Tensor column, Unsqueeze(v1, 1));
  const Opmath math(dtype);
  auto in = [&](const Tensor& t) { return math.In(r, Value(t)); };
  if (dtype == ScalarType::kBool) {
    TSR_ASSIGN_OR_RETURN(Value c, in(column));
    TSR_ASSIGN_OR_RETURN(Value row, in(v2));
    TSR_ASSIGN_OR_RETURN(Tensor outer, alpha.to_bool()
                                           ? CallOne(r, "logical_and", {c, row})
                                           : Zeros(r, shape, ScalarType::kBool, v1.device()));
    if (!beta.to_bool()) return outer;
    TSR_ASSIGN_OR_RETURN(Value self_b, in(self));
    return CallOne(r, "logical_or", {self_b, Value(outer)});
  }
  TSR_ASSIGN_OR_RETURN(Value c, in(column));
  TSR_ASSIGN_OR_RETURN(Value row, in(v2));
  TSR_ASSIGN_OR_RETURN(Tensor outer, CallOne(r, "mul.Tensor", {c, row}));
  // self converted to the promoted dtype, as ATen's TensorIterator converts its operands.
  Tensor self_r = self;
  if (self.dtype() != dtype) {
    TSR_ASSIGN_OR_RETURN(self_r, CallOne(r, "_to_copy", {Value(self), Value(dtype)}));
  }
  return Scaled(op, self_r, std::move(outer), dtype, beta, alpha);
}

// trace(self): the sum of a matrix's diagonal, integral dtypes summed as int64.
absl::StatusOr<Tensor> TraceOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (self.dim() != 2) {
    return Invalid(op,
                   absl::StrFormat("expected a matrix, but got tensor with dim %d", self.dim()));
  }
  // ATen's CPU trace has loops for the integral dtypes, float32 and float64 only.
  const ScalarType dtype = self.dtype();
  if (dtype == ScalarType::kBool || dtype == ScalarType::kFloat16 ||
      dtype == ScalarType::kBFloat16) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s: not implemented for dtype %s (as PyTorch's CPU trace: integral dtypes, float32 and "
        "float64)",
        op.name(), ScalarTypeName(dtype)));
  }
  TSR_ASSIGN_OR_RETURN(Tensor diagonal, Diagonal(self, 0, 0, 1));
  return CallOne(op.registry(), "sum", {Value(diagonal), Value(std::nullopt)});
}

}  // namespace

absl::Status DefineLinalgComposites(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"dot(Tensor self, Tensor tensor) -> Tensor",
           MakeKernel<Named<ComputeOne<DotOf>>>("core::dot")},
          {"dot.out(Tensor self, Tensor tensor, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<DotOf, 2>>>("core::dot_out")},
          {"vdot(Tensor self, Tensor other) -> Tensor",
           MakeKernel<Named<ComputeOne<DotOf>>>("core::vdot")},
          {"vdot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<DotOf, 2>>>("core::vdot_out")},
          {"mv(Tensor self, Tensor vec) -> Tensor",
           MakeKernel<Named<ComputeOne<MvOf>>>("core::mv")},
          {"mv.out(Tensor self, Tensor vec, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<MvOf, 2>>>("core::mv_out")},
          {"addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> "
           "Tensor",
           MakeKernel<Named<ComputeOne<AddmvOf>>>("core::addmv")},
          {"addmv.out(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AddmvOf, 5>>>("core::addmv_out")},
          {"addmv_(Tensor(a!) self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) "
           "-> Tensor(a!)",
           MakeKernel<Named<IntoSelf<AddmvOf>>>("core::addmv_")},
          {"addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> "
           "Tensor",
           MakeKernel<Named<ComputeOne<AddrOf>>>("core::addr")},
          {"addr.out(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AddrOf, 5, true>>>("core::addr_out")},
          {"addr_(Tensor(a!) self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) "
           "-> Tensor(a!)",
           MakeKernel<Named<IntoSelf<AddrOf>>>("core::addr_")},
          {"baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar "
           "alpha=1) -> Tensor",
           MakeKernel<Named<ComputeOne<BaddbmmOf>>>("core::baddbmm")},
          {"baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar "
           "alpha=1, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<BaddbmmOf, 5>>>("core::baddbmm_out")},
          {"baddbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar "
           "alpha=1) -> Tensor(a!)",
           MakeKernel<Named<IntoSelf<BaddbmmOf>>>("core::baddbmm_")},
          {"addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar "
           "alpha=1) -> Tensor",
           MakeKernel<Named<ComputeOne<AddbmmOf>>>("core::addbmm")},
          {"addbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar "
           "alpha=1, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AddbmmOf, 5>>>("core::addbmm_out")},
          {"addbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar "
           "alpha=1) -> Tensor(a!)",
           MakeKernel<Named<IntoSelf<AddbmmOf>>>("core::addbmm_")},
          {"trace(Tensor self) -> Tensor", MakeKernel<Named<ComputeOne<TraceOf>>>("core::trace")},
          {"trace.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<TraceOf, 1>>>("core::trace_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
