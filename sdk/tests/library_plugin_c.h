/* Typed C kernels of the SDK's test plugin (library_plugin.cc), written in C as a vendor would.
 */
#ifndef TESSERA_SDK_TESTS_LIBRARY_PLUGIN_C_H_
#define TESSERA_SDK_TESTS_LIBRARY_PLUGIN_C_H_

#include "tessera/c/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sdktest_set_api hands the kernels the runtime's table. */
void sdktest_set_api(const tsr_runtime_api* api);

/* The context the plugin registers sdktest_probe with; the kernel checks that it gets it. */
extern const int sdktest_probe_context;

/* The number of values sdktest_probe returns. */
#define SDKTEST_PROBE_VALUES 17

/* sdktest::probe(Tensor self, int n, float x, bool flag, ScalarType dtype, Scalar s, Device d,
 *                str name, int[] sizes, int? maybe, Scalar? opt, Tensor? t) -> Tensor
 * returns a float64 tensor on device d (the call's device, for an op with a Device argument)
 * with what it received, one value each: the context
 * was sdktest_probe_context (1), n, x, flag, dtype, s.kind, s's value, d.type, d.index,
 * name.size, name's first byte (-1: empty), the sizes' count, their sum, *maybe (-1: NULL),
 * *opt's value (-1: NULL), t's numel (-1: NULL), self's numel. */
tsr_error* sdktest_probe(void* context, tsr_tensor* self, int64_t n, double x, int32_t flag,
                         tsr_dtype dtype, tsr_scalar s, tsr_device d, tsr_string name,
                         const int64_t* sizes, size_t sizes_count, const int64_t* maybe,
                         const tsr_scalar* opt, tsr_tensor* t, tsr_tensor** out);

/* add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!) for
 * float32 tensors of one shape (or a one-element other), on any device. */
tsr_error* sdktest_add_out(void* context, tsr_tensor* self, tsr_tensor* other, tsr_scalar alpha,
                           tsr_tensor* out, tsr_tensor** result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TESSERA_SDK_TESTS_LIBRARY_PLUGIN_C_H_ */
