// The op database: one OpInfo per op of op set v1 (and per overload), as PyTorch's OpInfo:
// its declared dtypes, a sample-input generator, an fp64 reference written here independently
// of every plugin, error inputs with the code they must give, tolerance overrides, and which
// forms (out=, in-place) it has. The oracles (oracles.h) turn each into cases.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "conformance/host_tensor.h"
#include "tessera/sdk/dtypes.hpp"

namespace tessera {
namespace conformance {

// Arg: one argument of a call, in schema order.
struct Arg {
  enum class Kind {
    kTensor,
    kTensorList,
    kScalar,
    kInt,
    kBool,
    kDouble,
    kIntList,
    kBoolList,  // bool[]: `ints`, each 0 or 1
    kString,
    kNone,
    kDtype,
    kDevice,
    kGenerator  // a generator at (seed, offset): a fresh one per call, so reruns repeat it
  };
  Kind kind = Kind::kNone;
  HostTensor tensor;
  // kTensorList: the elements, in order. `absent` marks those that are None in a Tensor?[]
  // (index.Tensor's indices), whose entries in `tensors` are empty placeholders; it is empty
  // or all false for a list without None (every Tensor[]). Read it through Absent(i).
  std::vector<HostTensor> tensors;
  std::vector<bool> absent;
  double number = 0;  // kScalar, kDouble
  enum class ScalarKind { kInt, kDouble, kBool } scalar_kind = ScalarKind::kDouble;
  int64_t integer = 0;        // kInt
  bool boolean = false;       // kBool
  std::vector<int64_t> ints;  // kIntList, kBoolList
  std::string string;         // kString
  tsr_dtype dtype = TSR_DTYPE_FLOAT32;
  uint64_t seed = 0, offset = 0;  // kGenerator
  // A recorded tensor's layout (conformance --cases-from): its strides and storage offset on
  // the device; empty strides: laid out as the case's Layout says.
  std::vector<int64_t> strides;
  int64_t storage_offset = 0;

  static Arg Tensor(HostTensor t);
  static Arg Tensors(std::vector<HostTensor> ts);
  // OptionalTensors: a Tensor?[], whose elements may be None (std::nullopt).
  static Arg OptionalTensors(std::vector<std::optional<HostTensor>> ts);
  static Arg ScalarInt(int64_t v);
  static Arg ScalarDouble(double v);
  static Arg ScalarBool(bool v);
  static Arg Int(int64_t v);
  static Arg Bool(bool v);
  static Arg Double(double v);
  static Arg Ints(std::vector<int64_t> v);
  static Arg Bools(const std::vector<bool>& v);
  static Arg String(std::string v);
  static Arg None();
  static Arg Dtype(tsr_dtype d);
  static Arg Device();  // the device under test (factories)
  static Arg Generator(uint64_t seed, uint64_t offset);

  // Absent: element i of a kTensorList is None.
  bool Absent(size_t i) const { return i < absent.size() && absent[i]; }

  std::string ToString() const;  // for case descriptions
};

struct Sample {
  std::vector<Arg> args;
  std::string desc;  // "[5, 7] + [7]"
};

struct ErrorInput {
  Sample sample;
  tsr_code code;     // what the op must return
  std::string what;  // what the input gets wrong, for the case's description
  // message: a part of the error's message the op must give (ATen's wording: "Dimension out of
  // range"), so that a refusal by another check with the same code fails; empty: not checked.
  std::string message = {};
};

// DtypeMask: bit (1 << tsr_dtype) per dtype; the sets and the list are the SDK's
// (tessera/sdk/dtypes.hpp, from the C ABI's dtype list).
using DtypeMask = sdk::DtypeSet;
constexpr DtypeMask Bit(tsr_dtype d) { return sdk::dtype_bit(d); }
constexpr DtypeMask kIntegralMask = sdk::kIntegralTypes;
constexpr DtypeMask kFloatingMask = sdk::kFloatingTypes;
constexpr DtypeMask kNumericMask = kIntegralMask | kFloatingMask;
constexpr DtypeMask kAllMask = sdk::kAllTypes;
using sdk::kAllDtypes;

// GradientSpec: how a backward op's returns follow from its forward op, for the gradient oracle
// (gradcheck.h): the gradients it returns against central differences of the forward, both run
// on the device, in float64 (op_db_gradients.cc has one per backward op).
struct GradientSpec {
  std::string forward;  // the forward op: "gelu"
  // The forward's samples in float64, away from where it has no derivative.
  std::function<std::vector<Sample>(Rng&)> samples;
  // The forward's arguments the gradients are for, in the order the backward returns them.
  std::vector<size_t> wrt;
  size_t output = 0;  // the forward's return the gradient flows back from
  // The backward's arguments, from the forward's sample, its returns (read back) and the
  // incoming gradient of return `output`.
  std::function<std::vector<Arg>(const Sample& forward, const std::vector<HostTensor>& returns,
                                 const HostTensor& grad_output)>
      backward_args;
};

struct OpInfo {
  std::string name;     // the functional form: "add.Tensor"
  std::string out;      // its out= form, or ""
  std::string inplace;  // its in-place form, or ""
  // family: the part of the database it comes from (kOpFamilies; "cases" for a cases
  // library's op), which --family selects by.
  std::string family;
  DtypeMask dtypes = 0;  // what the op supports (PyTorch's CPU backend among Tessera's ten)
  std::function<std::vector<Sample>(tsr_dtype, Rng&)> samples;
  // reference: the expected returns for a sample, computed in double and rounded to each
  // return's dtype (which the reference decides, by PyTorch's rules).
  std::function<std::vector<HostTensor>(const Sample&)> reference;
  std::function<std::vector<ErrorInput>(Rng&)> errors;
  double tolerance_scale = 1;  // multiplies the per-dtype atol and rtol
  bool elementwise = false;    // inputs may be expanded (stride 0) in the layouts oracle
  bool mutates_self = false;   // an in-place op (fill_, copy_): its first argument changes
  // shape_from_values: the returns' shapes depend on the inputs' values (nonzero, unique,
  // masked_select), which a meta tensor does not have: on the meta device the op must refuse
  // with UNIMPLEMENTED, as ATen's meta functions do, instead of giving a shape.
  bool shape_from_values = false;
  // mutated_args: other arguments (by index) the op updates in place, as batch norm in training
  // updates its running statistics. `reference` returns their expected values after the op's
  // returns, in this order (none for an argument that is None in the sample), and the
  // reference oracle compares them instead of requiring them unchanged.
  std::vector<size_t> mutated_args;
  // across_devices: its tensors may be on different devices (copy_): the mixed-devices case
  // must compute the reference instead of being refused.
  bool across_devices = false;
  // compare_returns: how many returns the oracles compare (sort's indices with ties are not
  // unique, for example); -1: all.
  int compare_returns = -1;
  // unmasked_returns: the returns a backward op gives whatever its output_mask asks
  // (grid_sampler_2d_backward's grid gradient, as ATen computes it regardless); the
  // undefined-gradient cases compare them with asking for every gradient instead of None.
  std::vector<size_t> unmasked_returns;
  // gradient: a backward op's link to its forward op (the gradient oracle), or none.
  std::optional<GradientSpec> gradient;
  // specified_elements: for an op whose returns show memory it never wrote (resize growing a
  // storage: ATen leaves the new elements uninitialized), how many leading row-major elements
  // of each return the oracles judge for a sample; the others are checked by dtype and shape
  // only (reference, layouts, out=, determinism, cross-backend). Unset: all of them.
  std::function<int64_t(const Sample&)> specified_elements;
};

// OpDatabase: every op, in a stable order.
const std::vector<OpInfo>& OpDatabase();

// The families of the database, in its order (op_db_<family>.cc), then "cases": the names
// --family takes.
extern const char* const kOpFamilies[8];

// Parts of the database, one per family (op_db_*.cc).
void AddPointwiseOps(std::vector<OpInfo>& db);
void AddReductionOps(std::vector<OpInfo>& db);
void AddLinalgNNOps(std::vector<OpInfo>& db);
void AddIndexFactoryOps(std::vector<OpInfo>& db);
void AddActivationOps(std::vector<OpInfo>& db);           // op set 1.2
void AddTrainingOps(std::vector<OpInfo>& db);             // op set 1.2
void AddNormBackwardOps(std::vector<OpInfo>& db);         // op set 1.3, in the training family
void AddNNBackwardOps(std::vector<OpInfo>& db);           // op set 1.4, in the training family
void AddRandomOps(std::vector<OpInfo>& db);               // op set 1.5
void AddDistributionOps(std::vector<OpInfo>& db);         // op set 1.6, in the random family
void AddSpecialOps(std::vector<OpInfo>& db);              // op set 1.7, in the pointwise family
void AddBinaryMathOps(std::vector<OpInfo>& db);           // op set 1.7, in the pointwise family
void AddLinalgProductOps(std::vector<OpInfo>& db);        // op set 1.8, in the linalg_nn family
void AddReductionCompositeOps(std::vector<OpInfo>& db);   // op set 1.8, in the reductions family
void AddShapeOps(std::vector<OpInfo>& db);                // op set 1.8, in the index family
void AddRearrangeOps(std::vector<OpInfo>& db);            // op set 1.8, in the index family
void AddFillFactoryOps(std::vector<OpInfo>& db);          // op set 1.8, in the index family
void AddNormSetOps(std::vector<OpInfo>& db);              // op set 1.8, in the reductions family
void AddActivationCompositeOps(std::vector<OpInfo>& db);  // op set 1.8, activations family
void AddPaddingOps(std::vector<OpInfo>& db);              // op set 1.9, in the index family
void AddLossOps(std::vector<OpInfo>& db);                 // op set 1.9, in the training family
void AddIndexCompositeOps(std::vector<OpInfo>& db);       // op set 1.9, in the index family
void AddOrderStatisticOps(std::vector<OpInfo>& db);       // op set 1.9, in the reductions family
void AddCountingOps(std::vector<OpInfo>& db);             // op set 1.9, in the index family
void AddCoreExtraOps(std::vector<OpInfo>& db);            // op set 1.9, in the reductions family
void AddUpsampleOps(std::vector<OpInfo>& db);             // op set 1.9, in the linalg_nn family
void AddPoolingOps(std::vector<OpInfo>& db);              // op set 1.9, in the linalg_nn family
void AddGroupNormAttentionOps(std::vector<OpInfo>& db);   // op set 1.9, in the linalg_nn family
void AddFoldScatterOps(std::vector<OpInfo>& db);          // op set 1.9, in the index family
void AddPoolingBackwardOps(std::vector<OpInfo>& db);      // op set 1.10, training family
void AddUpsampleBackwardOps(std::vector<OpInfo>& db);     // op set 1.10, training family
void AddLossBackwardOps(std::vector<OpInfo>& db);         // op set 1.10, training family
void AddActivationBackwardOps(std::vector<OpInfo>& db);   // op set 1.10, training family
void AddViewBackwardOps(std::vector<OpInfo>& db);         // op set 1.10, training family
void AddPaddingBackwardOps(std::vector<OpInfo>& db);      // op set 1.10, training family
void AddGroupNormBackwardOps(std::vector<OpInfo>& db);    // op set 1.10, training family
void AddEmbeddingBagOps(std::vector<OpInfo>& db);         // op set 1.10, linalg_nn family
void AddGridSamplerOps(std::vector<OpInfo>& db);          // op set 1.10, linalg_nn family
void AddDistanceBackwardOps(std::vector<OpInfo>& db);     // op set 1.10, training family
void AddHostValueOps(std::vector<OpInfo>& db);            // op set 1.10, reductions family
void AddResizeOps(std::vector<OpInfo>& db);               // op set 1.11, in the index family
// AttachGradients gives every backward op of `db` its GradientSpec (op_db_gradients.cc).
void AttachGradients(std::vector<OpInfo>& db);

// Shared helpers for references.
// ResultDtype: torch.result_type, on the references' own promotion (reference_promotion.h).
tsr_dtype ResultDtype(const std::vector<const Arg*>& operands);
std::vector<int64_t> BroadcastShape(const std::vector<std::vector<int64_t>>& shapes);
// Elementwise: out[i] = f(operand values at i), operands broadcast (a Scalar arg is a
// constant); the result rounded to `dtype`.
HostTensor Elementwise(const std::vector<const Arg*>& operands, tsr_dtype dtype,
                       const std::function<double(const double*)>& f);
HostTensor Full(std::vector<int64_t> shape, tsr_dtype dtype, double value);
// CastTo: the tensor's values rounded to `dtype`, as copy_ and to(dtype) convert them.
HostTensor CastTo(HostTensor t, tsr_dtype dtype);
// LinesAlong: a row-major shape seen as lines along `dim` (negative wraps; a 0-dim shape is
// one line of one element), as the references of scans, softmax and sort walk it: `outer`
// lines before the dim times `inner` after it, each `len` long.
struct LinesAlong {
  LinesAlong(const std::vector<int64_t>& shape, int64_t dim);
  // The row-major index of element k of line (o, i).
  int64_t index(int64_t o, int64_t i, int64_t k) const { return (o * len + k) * inner + i; }
  int64_t outer = 0, len = 1, inner = 1;
};
// Unravel: the index of row-major element `flat` of `shape`; Ravel: back.
std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& shape);
int64_t Ravel(const std::vector<int64_t>& index, const std::vector<int64_t>& shape);
// MatMul: C[t] = A[t] @ B[t] for row-major [batches, M, K] and [batches, K, N] values, in long
// double (the matrix products' references).
std::vector<long double> MatMul(const HostTensor& a, const HostTensor& b, int64_t batches,
                                int64_t M, int64_t K, int64_t N);
// Standard sample shapes: 0-dim, empty, odd sizes, 2D.
const std::vector<std::vector<int64_t>>& UnaryShapes();

}  // namespace conformance
}  // namespace tessera
