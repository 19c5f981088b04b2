// What every CPU kernel file uses: dtype dispatch over compile-time dtype sets, the op name for
// messages, and the family registration functions. Kernels are typed C++ functions registered
// with the SDK's lib.impl<&fn>(TESSERA_OP("op")) (tessera/sdk/boxing.hpp); the boxed helpers at
// the end are left for the nn kernels (nn.cc) only, until they move to that form too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "element.hpp"
#include "tessera/sdk/boxing.hpp"
#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace cpu {

// dispatch<Set>: like sdk::dispatch, but instantiates `f` only for the dtypes of Set, so a
// kernel body need not compile for types its op refuses (bitwise ops on floats).
// `op` names the op in messages: its name, or the kernel's context (asked only on failure).
inline std::string op_label(std::string_view op) { return std::string(op); }
inline std::string op_label(const sdk::KernelContext& ctx) { return std::string(ctx.op_name()); }

template <sdk::DtypeSet Set, typename Op, typename F>
void dispatch(tsr_dtype dtype, const Op& op, F&& f) {
  if ((Set & sdk::dtype_bit(dtype)) == 0) {
    sdk::fail(TSR_UNIMPLEMENTED,
              op_label(op) + ": not implemented for dtype " + sdk::dtype_name(dtype) + " on cpu");
  }
#define TESSERA_CPU_CASE(DT, T)                      \
  case DT:                                           \
    if constexpr ((Set & sdk::dtype_bit(DT)) != 0) { \
      return f(sdk::TypeTag<T>{});                   \
    }                                                \
    break;
  switch (dtype) {
    TESSERA_CPU_CASE(TSR_DTYPE_BOOL, bool)
    TESSERA_CPU_CASE(TSR_DTYPE_UINT8, uint8_t)
    TESSERA_CPU_CASE(TSR_DTYPE_INT8, int8_t)
    TESSERA_CPU_CASE(TSR_DTYPE_INT16, int16_t)
    TESSERA_CPU_CASE(TSR_DTYPE_INT32, int32_t)
    TESSERA_CPU_CASE(TSR_DTYPE_INT64, int64_t)
    TESSERA_CPU_CASE(TSR_DTYPE_FLOAT16, Half)
    TESSERA_CPU_CASE(TSR_DTYPE_BFLOAT16, BFloat16)
    TESSERA_CPU_CASE(TSR_DTYPE_FLOAT32, float)
    TESSERA_CPU_CASE(TSR_DTYPE_FLOAT64, double)
    default:
      break;
  }
#undef TESSERA_CPU_CASE
  sdk::fail(TSR_INVALID_ARGUMENT, op_label(op) + ": invalid dtype");
}

// --- Used by the nn kernels only (nn.cc), which still read the stack by position ------------

// Reading stack arguments by C++ type (the SDK's readers).
template <typename T>
T arg(const tsr_stack* s, size_t i) {
  return sdk::internal::ArgReader<T>::read(s, i);
}
inline bool is_none(const tsr_stack* s, size_t i) {
  return sdk::api().stack_kind(s, i) == TSR_VALUE_NONE;
}
inline bool is_tensor(const tsr_stack* s, size_t i) {
  return sdk::api().stack_kind(s, i) == TSR_VALUE_TENSOR;
}

// Replacing the arguments by the op's returns.
inline void set_result(tsr_stack* s, tsr_tensor* t) {
  sdk::api().stack_clear(s);
  sdk::check(sdk::api().stack_push_tensor(s, t));
}
inline void set_result(tsr_stack* s, const sdk::Tensor& t) { set_result(s, t.get()); }
inline void set_results(tsr_stack* s, const sdk::Tensor& a, const sdk::Tensor& b) {
  sdk::api().stack_clear(s);
  sdk::internal::push(s, a);
  sdk::internal::push(s, b);
}

// A kernel body (nn.cc only): reads its arguments from the stack and leaves its returns there.
using KernelBody = void (*)(const char* op, tsr_stack* stack);

// guarded<Body>: the C kernel for a body; every exception becomes an error.
template <KernelBody Body>
tsr_error* guarded(void* context, const tsr_op* op, tsr_stack* stack) noexcept {
  const char* name = static_cast<const char*>(context);
  try {
    Body(name, stack);
    return nullptr;
  } catch (const sdk::Error& e) {
    return e.to_c();
  } catch (const std::exception& e) {
    return sdk::internal::ToError(TSR_INTERNAL, std::string(sdk::from_c(sdk::api().op_name(op))) +
                                                    ": cpu kernel threw: " + e.what());
  } catch (...) {
    return sdk::internal::ToError(TSR_INTERNAL, "cpu kernel threw a non-standard exception");
  }
}

// impl registers `Body` for `op` (a string literal: it is also the kernel's context; nn.cc
// only: every other family registers typed kernels with lib.impl<&fn>(TESSERA_OP("op"))).
template <KernelBody Body>
void impl(sdk::Library& lib, const char* op) {
  lib.impl_boxed(op, &guarded<Body>, const_cast<char*>(op), op);
}

// --- end of the nn-only helpers ---------------------------------------------------------------

// The op families, each in its own file.
void register_copy(sdk::Library& lib);
void register_unary(sdk::Library& lib);
void register_binary(sdk::Library& lib);
void register_ternary(sdk::Library& lib);
void register_reductions(sdk::Library& lib);
void register_scans(sdk::Library& lib);
void register_linalg(sdk::Library& lib);
void register_index(sdk::Library& lib);
void register_nn(sdk::Library& lib);

}  // namespace cpu
}  // namespace tessera
