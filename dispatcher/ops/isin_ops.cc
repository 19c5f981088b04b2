// isin (op set 1.8): for each element, whether it equals one of test_elements, as a composite
// over ops every backend has, in one of two ways, as ATen chooses between two kernels:
//   - pairwise, when there are few test elements (or few pairs): elements compared with every
//     test element at once, in blocks of up to 2^24 pairs, each block reduced by `any` into its
//     slice of the result (memory bounded whatever the sizes);
//   - by sorting otherwise, O((n + m) log(n + m)): test elements and elements sorted together
//     (stably, the tests first, so each run of equal values starts with its tests), runs
//     numbered by a cumsum of "differs from the previous value", the tests of each run counted
//     with scatter_add, and each element found where its run has one, scattered back to its
//     place. NaN differs from everything, itself included, so a NaN is never found (current
//     ATen's rule); -0.0 and 0.0 are one value.
// Elements and test elements are compared in one dtype, torch.result_type's for them as passed
// (a 0-dim tensor counts less, a Scalar element less still). assume_unique only lets ATen skip
// a step; the answer is the same, so it is not read. bool is refused, as ATen's.
#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/type_promotion.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

absl::Status CheckIsinDtype(const OperatorHandle& op, ScalarType dtype) {
  if (dtype != ScalarType::kBool) return absl::OkStatus();
  return Invalid(op, "Unsupported input type encountered for isin(): bool");
}

// Pairwise: found[i] = any(flat[i] == tests).
absl::Status FindPairwise(OpRegistry& r, const Tensor& flat, const Tensor& tests,
                          const Tensor& found) {
  const int64_t n = flat.numel(), m = tests.numel();
  constexpr int64_t kPairsPerBlock = int64_t{1} << 24;
  const int64_t block = std::max<int64_t>(kPairsPerBlock / m, 1);
  for (int64_t start = 0; start < n; start += block) {
    const int64_t length = std::min(block, n - start);
    TSR_ASSIGN_OR_RETURN(Tensor part, Narrow(flat, 0, start, length));
    TSR_ASSIGN_OR_RETURN(Tensor column, Unsqueeze(part, 1));
    TSR_ASSIGN_OR_RETURN(Tensor equal, CallOne(r, "eq.Tensor", {Value(column), Value(tests)}));
    TSR_ASSIGN_OR_RETURN(Tensor into, Narrow(found, 0, start, length));
    TSR_RETURN_IF_ERROR(
        CallOne(r, "any.out", {Value(equal), Value(int64_t{1}), Value(false), Value(into)})
            .status());
  }
  return absl::OkStatus();
}

// By sorting (above): found for each element of flat.
absl::StatusOr<Tensor> FindSorted(OpRegistry& r, const Tensor& flat, const Tensor& tests) {
  const int64_t n = flat.numel(), m = tests.numel(), total = n + m;
  TSR_ASSIGN_OR_RETURN(
      Tensor all, CallOne(r, "cat", {Value(std::vector<Tensor>{tests, flat}), Value(int64_t{0})}));
  TSR_ASSIGN_OR_RETURN(OperatorHandle sort, r.Find("sort.stable"));
  Stack sorted{Value(all), Value(true), Value(int64_t{0}), Value(false)};
  TSR_RETURN_IF_ERROR(r.Call(sort, &sorted));
  const Tensor values = sorted[0].tensor(), order = sorted[1].tensor();
  // starts[k]: value k begins a run (the first, or unlike the one before it).
  TSR_ASSIGN_OR_RETURN(Tensor later, Narrow(values, 0, 1, total - 1));
  TSR_ASSIGN_OR_RETURN(Tensor earlier, Narrow(values, 0, 0, total - 1));
  TSR_ASSIGN_OR_RETURN(Tensor differs, CallOne(r, "ne.Tensor", {Value(later), Value(earlier)}));
  TSR_ASSIGN_OR_RETURN(Tensor first,
                       CallOne(r, "full",
                               {Value(IntList{1}), Value(Scalar(true)), Value(ScalarType::kBool),
                                Value(), Value(flat.device())}));
  TSR_ASSIGN_OR_RETURN(
      Tensor starts,
      CallOne(r, "cat", {Value(std::vector<Tensor>{first, differs}), Value(int64_t{0})}));
  TSR_ASSIGN_OR_RETURN(
      Tensor run,
      CallOne(r, "cumsum", {Value(starts), Value(int64_t{0}), Value(ScalarType::kInt64)}));
  TSR_ASSIGN_OR_RETURN(
      run,
      CallOne(r, "sub.Scalar", {Value(run), Value(Scalar(int64_t{1})), Value(Scalar(int64_t{1}))}));
  // The tests in each run, counted; then, for each sorted value, whether its run has one.
  TSR_ASSIGN_OR_RETURN(Tensor is_test, CallOne(r, "lt.Scalar", {Value(order), Value(Scalar(m))}));
  TSR_ASSIGN_OR_RETURN(is_test,
                       CallOne(r, "_to_copy", {Value(is_test), Value(ScalarType::kInt64)}));
  TSR_ASSIGN_OR_RETURN(Tensor counts, Zeros(r, {total}, ScalarType::kInt64, flat.device()));
  TSR_ASSIGN_OR_RETURN(
      counts,
      CallOne(r, "scatter_add", {Value(counts), Value(int64_t{0}), Value(run), Value(is_test)}));
  TSR_ASSIGN_OR_RETURN(Tensor run_counts,
                       CallOne(r, "index_select", {Value(counts), Value(int64_t{0}), Value(run)}));
  TSR_ASSIGN_OR_RETURN(Tensor found_sorted,
                       CallOne(r, "gt.Scalar", {Value(run_counts), Value(Scalar(int64_t{0}))}));
  // Back to the places the values came from; the elements' are after the tests'.
  TSR_ASSIGN_OR_RETURN(Tensor found_all, Zeros(r, {total}, ScalarType::kBool, flat.device()));
  TSR_ASSIGN_OR_RETURN(
      found_all, CallOne(r, "scatter.src",
                         {Value(found_all), Value(int64_t{0}), Value(order), Value(found_sorted)}));
  return Narrow(found_all, 0, m, n);
}

// isin over elements (a tensor, or a Scalar's 0-dim tensor `element_scalar` stands for) and
// test_elements, then `invert`ed.
absl::StatusOr<Tensor> Isin(const OperatorHandle& op, const Tensor& elements,
                            const Scalar* element_scalar, const Tensor& test_elements,
                            bool invert) {
  OpRegistry& r = op.registry();
  TSR_RETURN_IF_ERROR(CheckIsinDtype(op, elements.dtype()));
  TSR_RETURN_IF_ERROR(CheckIsinDtype(op, test_elements.dtype()));
  // One device for both, a 0-dim CPU tensor included: ATen compares flattened copies, where a
  // CPU scalar's exemption no longer applies, so its device kernels refuse the mix too.
  if (elements.device() != test_elements.device()) {
    return Invalid(op, absl::StrFormat("Expected elements and test_elements on the same device, "
                                       "but found elements on %s and test_elements on %s",
                                       DeviceToString(elements.device()),
                                       DeviceToString(test_elements.device())));
  }
  ResultTypeBuilder promotion;
  if (element_scalar != nullptr) {
    promotion.AddScalar(*element_scalar);
  } else {
    promotion.AddTensor(elements.dtype(), elements.dim());
  }
  promotion.AddTensor(test_elements.dtype(), test_elements.dim());
  const ScalarType common = promotion.Result();
  auto flat_in_common = [&](const Tensor& t) -> absl::StatusOr<Tensor> {
    TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {t, Value(IntList{-1})}));
    if (flat.dtype() == common) return flat;
    return CallOne(r, "_to_copy", {Value(flat), Value(common)});
  };
  TSR_ASSIGN_OR_RETURN(Tensor flat, flat_in_common(elements));
  TSR_ASSIGN_OR_RETURN(Tensor tests, flat_in_common(test_elements));
  const int64_t n = flat.numel(), m = tests.numel();
  Tensor found;
  if (elements.device().type == DeviceType::kMeta) {
    // Meta tensors have no values to find: the result's shape, dtype and device are all there
    // is. Both ways below would cost time with the shape alone (the pairwise blocks number
    // n·m / 2^24: 2^21 for a [2^40, 32] Meta tensor; n + m may not fit in int64).
    TSR_ASSIGN_OR_RETURN(found, Zeros(r, {n}, ScalarType::kBool, elements.device()));
  } else if (n == 0 || m == 0 || m <= 32 || n <= (int64_t{1} << 22) / m) {
    TSR_ASSIGN_OR_RETURN(found, Zeros(r, {n}, ScalarType::kBool, elements.device()));
    if (m > 0) TSR_RETURN_IF_ERROR(FindPairwise(r, flat, tests, found));
  } else {
    TSR_ASSIGN_OR_RETURN(found, FindSorted(r, flat, tests));
  }
  if (invert) {
    TSR_ASSIGN_OR_RETURN(found, CallOne(r, "logical_not", {Value(found)}));
  }
  return CallOne(r, "reshape",
                 {Value(found), Value(IntList(elements.sizes().begin(), elements.sizes().end()))});
}

// isin.Tensor_Tensor / isin.Tensor_Scalar / isin.Scalar_Tensor (elements, test, *,
// assume_unique, invert). A Scalar test element is ATen's eq / ne; a Scalar element is wrapped
// in a 0-dim tensor of its kind's dtype, which the promotion above sees as a Scalar.
template <bool kScalarElement, bool kScalarTest>
absl::StatusOr<Tensor> IsinOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const bool invert = s[3].to_bool();
  if constexpr (kScalarTest) {
    TSR_RETURN_IF_ERROR(CheckIsinDtype(op, s[0].tensor().dtype()));
    if (s[1].scalar().is_bool()) TSR_RETURN_IF_ERROR(CheckIsinDtype(op, ScalarType::kBool));
    return CallOne(r, invert ? "ne.Scalar" : "eq.Scalar", {s[0], s[1]});
  }
  if constexpr (kScalarElement) {
    const Scalar& v = s[0].scalar();
    const Tensor& tests = s[1].tensor();
    const ScalarType kind = v.is_bool()             ? ScalarType::kBool
                            : v.is_floating_point() ? ScalarType::kFloat64
                                                    : ScalarType::kInt64;
    TSR_ASSIGN_OR_RETURN(Tensor element, CallOne(r, "full",
                                                 {Value(IntList{}), Value(v), Value(kind), Value(),
                                                  Value(tests.device())}));
    return Isin(op, element, &v, tests, invert);
  }
  return Isin(op, s[0].tensor(), nullptr, s[1].tensor(), invert);
}

}  // namespace

absl::Status DefineIsinOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool "
           "assume_unique=False, bool invert=False) -> Tensor",
           MakeKernel<Named<ComputeOne<IsinOf<false, false>>>>("core::isin")},
          {"isin.Tensor_Tensor_out(Tensor elements, Tensor test_elements, *, bool "
           "assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<IsinOf<false, false>, 4>>>("core::isin_out")},
          {"isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool "
           "assume_unique=False, bool invert=False) -> Tensor",
           MakeKernel<Named<ComputeOne<IsinOf<false, true>>>>("core::isin")},
          {"isin.Tensor_Scalar_out(Tensor elements, Scalar test_element, *, bool "
           "assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<IsinOf<false, true>, 4>>>("core::isin_out")},
          {"isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool "
           "assume_unique=False, bool invert=False) -> Tensor",
           MakeKernel<Named<ComputeOne<IsinOf<true, false>>>>("core::isin")},
          {"isin.Scalar_Tensor_out(Scalar element, Tensor test_elements, *, bool "
           "assume_unique=False, bool invert=False, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<IsinOf<true, false>, 4>>>("core::isin_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera
