#include "runtime/unboxed_decode.h"

#include "runtime/handles.h"

namespace tessera {
namespace capi {

// DecodeValues: the caller's tsr_values (tsr_op_call_values) as an unboxed call's arguments.
bool DecodeValues(const FunctionSchema& schema, const tsr_value* args, size_t n, UnboxedArgs* out) {
  const std::vector<Argument>& params = schema.arguments;
  if (n > params.size()) return false;
  for (size_t i = 0; i < n; ++i) {
    const tsr_value& v = args[i];
    bool ok = false;
    if (v.kind == TSR_VALUE_TENSOR) {
      if (v.u.tensor == nullptr) return false;  // the boxed path's error
      ok = AddAs(params[i], Unwrap(v.u.tensor), nullptr, false, out);
    } else if (v.kind == TSR_VALUE_SCALAR) {
      const tsr_scalar& c = v.u.scalar;
      if (c.kind != TSR_SCALAR_BOOL && c.kind != TSR_SCALAR_INT && c.kind != TSR_SCALAR_DOUBLE) {
        return false;
      }
      const Scalar scalar = c.kind == TSR_SCALAR_BOOL  ? Scalar(c.i != 0)
                            : c.kind == TSR_SCALAR_INT ? Scalar(c.i)
                                                       : Scalar(c.d);
      ok = AddAs(params[i], nullptr, &scalar, false, out);
    } else if (v.kind == TSR_VALUE_NONE) {
      ok = AddAs(params[i], nullptr, nullptr, true, out);
    }
    if (!ok) return false;
  }
  return AddDefaults(params, n, out);
}

// DecodeStack: a caller's stack (tsr_op_call) as an unboxed call's arguments, borrowed from it.
bool DecodeStack(const FunctionSchema& schema, const Stack& stack, UnboxedArgs* out) {
  const std::vector<Argument>& params = schema.arguments;
  if (stack.size() > params.size()) return false;
  for (size_t i = 0; i < stack.size(); ++i) {
    const Value& v = stack[i];
    bool ok = false;
    if (v.is_tensor()) {
      const bool undefined = !v.tensor().defined();  // None where optional, as normalized
      ok = AddAs(params[i], v.tensor().impl(), nullptr, undefined, out);
    } else if (v.is_scalar()) {
      ok = AddAs(params[i], nullptr, &v.scalar(), false, out);
    } else if (v.is_none()) {
      ok = AddAs(params[i], nullptr, nullptr, true, out);
    }
    if (!ok) return false;
  }
  return AddDefaults(params, stack.size(), out);
}

}  // namespace capi
}  // namespace tessera
