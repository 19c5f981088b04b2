// What every CPU kernel file uses: dtype dispatch over compile-time dtype sets, the op name for
// messages, and the family registration functions. Kernels are typed C++ functions registered
// with the SDK's lib.impl<&fn>(TESSERA_OP("op")) (tessera/sdk/boxing.hpp), every family
// including nn: nothing here reads the stack by position.
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
void register_activations(sdk::Library& lib);
void register_random(sdk::Library& lib);

}  // namespace cpu
}  // namespace tessera
