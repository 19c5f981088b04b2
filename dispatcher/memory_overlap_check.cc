// Note [Memory overlap]
// ~~~~~~~~~~~~~~~~~~~~~
// An op that writes (an out= output, an in-place self, copy_'s destination) could silently
// compute garbage when what it writes shares memory with what it reads: a kernel reading
// input element j after it wrote output element i over it. Before any kernel of such an op
// runs, on any backend, CheckWrittenMemory refuses, with PyTorch's messages:
//   - a written tensor whose elements share locations (a stride 0 over a dimension of size
//     > 1, as `expand` makes): "more than one element of the written-to tensor refers to a
//     single memory location";
//   - a written tensor that partially overlaps an input (same storage, byte ranges meet, not
//     the same view, both dense): "some elements of the input tensor and the written-to
//     tensor refer to a single memory location";
//   - a written tensor that is the very same view as an input, as PyTorch's assert_no_overlap
//     does for index and matrix ops, unless the op is elementwise (OutputAliasing::
//     kElementwise: output element i reads only input elements i, so `add(a, b, out=a)` and
//     `a.add_(a)` are fine) or the input is the self of an op with an in-place form (its
//     out= kernel is the in-place kernel too: Note [Variants]). An in-place form's self is
//     not an input of itself.
// An op declared OutputAliasing::kReadsFirst reads its inputs before it writes anything, so
// any overlap with them is fine (fill_.Tensor: x.fill_(x[2]) copies the value first, as ATen).
// Layouts whose overlap is not decided cheaply (a non-dense view whose byte range meets
// another's, as two columns of one matrix do) are allowed, as in PyTorch: they are rarely
// wrong and often meant. The check runs after an out= form's outputs were resized where the
// backend implements that form itself (ValidateCall); elsewhere before the call, so an out=
// tensor that would be resized within an input's storage is refused.
#include "absl/strings/str_format.h"
#include "core/memory_overlap.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "dispatcher/internal/operator_entry.h"
#include "dispatcher/unboxed_call.h"

namespace tessera {
namespace internal {
namespace {

constexpr char kClone[] = "Please clone() the tensor before performing the operation.";

absl::Status InputOverlapError(const OperatorEntry& entry, size_t written, size_t input,
                               const char* how) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: unsupported operation: some elements of the input tensor '%s' and the written-to "
      "tensor '%s' refer to a single memory location (%s). %s",
      entry.name, entry.schema.arguments[input].name, entry.schema.arguments[written].name, how,
      kClone));
}

absl::Status CheckAgainstInput(const OperatorEntry& entry, size_t w, const Tensor& out, size_t i,
                               const Tensor& in) {
  if (entry.output_aliasing == OutputAliasing::kReadsFirst) return absl::OkStatus();
  switch (GetOverlap(out, in)) {
    case Overlap::kPartial:
      return InputOverlapError(entry, w, i, "they partially overlap");
    case Overlap::kFull:
      if (entry.output_aliasing == OutputAliasing::kElementwise) return absl::OkStatus();
      // An op with an in-place form runs it as its out= kernel with out = self, so that
      // kernel handles out = self: addmm(c, a, b, out=c) is c.addmm_(a, b).
      if (i == 0 && entry.inplace != nullptr) return absl::OkStatus();
      return InputOverlapError(entry, w, i,
                               "they are the same memory, and the op is not elementwise");
    case Overlap::kNone:
    case Overlap::kTooHard:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace

template <typename Args>
absl::Status CheckWrittenMemory(const OperatorEntry& entry, const Args& stack) {
  const std::vector<Argument>& args = entry.schema.arguments;
  for (size_t w : entry.written) {
    if (w >= stack.size() || !stack[w].is_tensor()) continue;
    const Tensor& out = stack[w].tensor();
    if (!out.defined() || out.numel() == 0) continue;
    if (HasInternalOverlap(out) == InternalOverlap::kYes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: unsupported operation: more than one element of the written-to tensor '%s' "
          "refers to a single memory location (sizes %s, strides %s). %s",
          entry.name, args[w].name, ShapeToString(out.sizes()), ShapeToString(out.strides()),
          kClone));
    }
    for (size_t i : entry.read_tensors) {
      if (i >= stack.size()) break;  // indices ascend
      const auto& v = stack[i];
      if (v.is_tensor()) {
        TSR_RETURN_IF_ERROR(CheckAgainstInput(entry, w, out, i, v.tensor()));
      } else if (v.is_tensor_list()) {
        for (const Tensor& t : v.tensor_list())
          TSR_RETURN_IF_ERROR(CheckAgainstInput(entry, w, out, i, t));
      }
    }
  }
  return absl::OkStatus();
}

template absl::Status CheckWrittenMemory(const OperatorEntry&, const Stack&);
template absl::Status CheckWrittenMemory(const OperatorEntry&, const UnboxedArgs&);

}  // namespace internal
}  // namespace tessera
