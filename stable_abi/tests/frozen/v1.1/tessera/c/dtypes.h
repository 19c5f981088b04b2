/* Tessera stable C ABI: the element types, as one list (since 1.1; the dtypes are 1.0's).
 *
 * TSR_FOR_EACH_DTYPE(X) expands to X(NAME, Name, value, name, size, category) once per dtype, in
 * enum order:
 *   NAME      the enumerator's suffix: common.h makes `TSR_DTYPE_<NAME> = value` of tsr_dtype
 *   Name      the same in CamelCase, for generated C++ identifiers (the runtime's kFloat32)
 *   value     the enumerator's value; frozen (abi.lock), a new dtype takes the next one
 *   name      PyTorch's name without "torch.", a string literal
 *   size      bytes per element
 *   category  TSR_DTYPE_CATEGORY_BOOL, _INTEGRAL or _FLOATING, ordered as torch.result_type
 *             orders them (bool < integral < floating)
 *
 * Everything that knows the dtypes (the enum, the runtime's ScalarType, the SDK's names and
 * dtype sets) is generated from this list, so that they cannot drift apart. A C plugin may use
 * it too, e.g. for names:
 *
 *   #define NAME_OF(NAME, Name, value, name, size, category) name,
 *   static const char* const kDtypeNames[] = {TSR_FOR_EACH_DTYPE(NAME_OF)};
 *   #undef NAME_OF
 *
 * float16 is IEEE 754 binary16; bfloat16 is the upper half of an IEEE 754 binary32. */
#ifndef TESSERA_C_DTYPES_H_
#define TESSERA_C_DTYPES_H_

#define TSR_DTYPE_CATEGORY_BOOL 0
#define TSR_DTYPE_CATEGORY_INTEGRAL 1
#define TSR_DTYPE_CATEGORY_FLOATING 2

/* clang-format off */
#define TSR_FOR_EACH_DTYPE(X)                                                  \
  X(BOOL,     Bool,     0, "bool",     1, TSR_DTYPE_CATEGORY_BOOL)             \
  X(UINT8,    UInt8,    1, "uint8",    1, TSR_DTYPE_CATEGORY_INTEGRAL)         \
  X(INT8,     Int8,     2, "int8",     1, TSR_DTYPE_CATEGORY_INTEGRAL)         \
  X(INT16,    Int16,    3, "int16",    2, TSR_DTYPE_CATEGORY_INTEGRAL)         \
  X(INT32,    Int32,    4, "int32",    4, TSR_DTYPE_CATEGORY_INTEGRAL)         \
  X(INT64,    Int64,    5, "int64",    8, TSR_DTYPE_CATEGORY_INTEGRAL)         \
  X(FLOAT16,  Float16,  6, "float16",  2, TSR_DTYPE_CATEGORY_FLOATING)         \
  X(BFLOAT16, BFloat16, 7, "bfloat16", 2, TSR_DTYPE_CATEGORY_FLOATING)         \
  X(FLOAT32,  Float32,  8, "float32",  4, TSR_DTYPE_CATEGORY_FLOATING)         \
  X(FLOAT64,  Float64,  9, "float64",  8, TSR_DTYPE_CATEGORY_FLOATING)
/* clang-format on */

#endif /* TESSERA_C_DTYPES_H_ */
