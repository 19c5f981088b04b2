/* Typed C kernels of the sample NPU: plain C functions whose parameters follow their op's schema
 * (tessera/c/kernel.h, "tsr_typed_kernel_fn"), registered from npu_plugin.cc with
 * lib.impl_typed, which checks each signature against the schema at compile time. */
#ifndef NPU_C_KERNELS_H_
#define NPU_C_KERNELS_H_

#include "tessera/c/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* npu_c_kernels_init hands the kernels the runtime's table (borrowed, valid while the plugin is
 * loaded); the plugin calls it when it registers. */
void npu_c_kernels_init(const tsr_runtime_api* api);

/* clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!):
 * one C parameter per argument (a Scalar? is a pointer, NULL for None), then the return. */
tsr_error* npu_clamp_out(void* context, tsr_tensor* self, const tsr_scalar* min,
                         const tsr_scalar* max, tsr_tensor* out, tsr_tensor** result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NPU_C_KERNELS_H_ */
