// A model as read from its file (docs/model_format.md): the graph, its constants, and the
// example inputs with PyTorch's outputs for them. Read once, validated whole; immutable after,
// so any number of compiled forms may share it.
//
// Values (inputs, constants, node outputs) are numbered in the order the file defines them; a
// node reads only values defined before it, so the node list is already a topological order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/shape.h"
#include "core/tensor.h"
#include "runtime/model/dims.h"

namespace tessera {
namespace model {

inline constexpr char kModelFormat[] = "tessera.model";
// kModelFormatVersion: the newest format version this reader knows; it reads every older one
// (Note [Model format versions] in model.cc).
// Version 2 added dynamic dims (Note [Dynamic dims] in dims.h); the exporter writes version 1
// for a file without them, so that older runtimes keep reading it.
inline constexpr int kModelFormatVersion = 2;

// One argument of a node, as the file wrote it (docs/model_format.md, "Arguments").
struct GraphArg {
  enum class Kind {
    kNone, kTensor, kTensors, kInt, kFloat, kBool, kStr, kDtype, kDevice, kMemoryFormat,
    kLayout, kInts, kFloats, kBools,
  };
  Kind kind = Kind::kNone;
  int64_t i = 0;  // kInt; kMemoryFormat and kLayout as their enum values
  double d = 0;
  bool b = false;
  std::string s;  // kStr; kDevice as written ("cpu", "npu:0")
  ScalarType dtype = ScalarType::kFloat32;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<bool> bools;
  std::vector<int32_t> values;  // kTensor: one value; kTensors: each value, or -1 for None
  // A kInt or kInts argument some of whose integers are size expressions (format version 2):
  // one expression per integer (the constant ones as constants), and `i` / `ints` hold 0 there
  // until a run evaluates them. Empty for every other argument.
  std::vector<SizeExpr> exprs;
};

struct GraphNode {
  std::string op;      // "add.Tensor"
  std::string schema;  // the schema the file was written against
  std::vector<GraphArg> args;
  std::vector<int32_t> outputs;
};

struct GraphInput {
  std::string name;
  int32_t value;
  ScalarType dtype;
  DimVector sizes;  // a dynamic axis: -1
  // One expression per axis when some axis is dynamic (Note [Dynamic dims]); else empty.
  std::vector<SizeExpr> size_exprs;
};

struct GraphOutput {
  std::string name;
  int32_t value;
};

struct Model {
  int format_version = kModelFormatVersion;
  std::string name;
  std::string producer;
  std::string op_set;  // "1.1": the op set the exporter named ops by
  std::vector<std::string> value_names;
  std::vector<GraphDim> dims;  // format version 2; none: every size is fixed
  std::vector<GraphInput> inputs;
  std::vector<std::pair<int32_t, Tensor>> constants;  // host tensors
  std::vector<GraphNode> nodes;
  std::vector<GraphOutput> outputs;
  // The file's example inputs and PyTorch's outputs for them (host tensors), one per input and
  // output; an undefined Tensor where the file has none.
  std::vector<Tensor> example_inputs;
  std::vector<Tensor> expected_outputs;
};

// FitsFixedSizes: whether `sizes` has the input's rank and its fixed (not dynamic) axes.
bool FitsFixedSizes(const GraphInput& in, IntArrayRef sizes);

// BindDims: the value of every dim of `m` for inputs of `sizes` (one per model input), with
// each dim in its range and every dynamic input axis agreeing with them. Inputs' ranks and
// fixed axes are the caller's to have checked. Errors name the input, the axis and the dims.
absl::StatusOr<std::vector<int64_t>> BindDims(const Model& m, absl::Span<const IntArrayRef> sizes);

// ReadModel reads a model file's bytes; every error names the field or byte it is about.
// `owner`, when given, owns `file` and may be kept by the model's tensors instead of copying
// their bytes; without it the bytes are the caller's and the model copies what it keeps.
absl::StatusOr<std::shared_ptr<const Model>> ReadModel(std::string_view file,
                                                       std::shared_ptr<const void> owner = {});
// ReadModelFile reads the file at `path` first ("model 'x.tsrm': ..." in errors).
absl::StatusOr<std::shared_ptr<const Model>> ReadModelFile(const std::string& path);

}  // namespace model
}  // namespace tessera
