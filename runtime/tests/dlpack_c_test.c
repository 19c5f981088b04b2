/* A C99 embedder's DLPack round trip with Debian's <dlpack/dlpack.h> (DLPack 0.6, which has the
 * unversioned DLManagedTensor only): tessera/c/dlpack.h's declarations and DLPack's definitions
 * compile together, in either include order, and the fields read as DLPack says. */
#include <dlpack/dlpack.h>
#include <stdio.h>

#include "tessera/c/tessera.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static int deleted = 0;
static void count_delete(void* data, void* context) {
  (void)data;
  *(int*)context += 1;
}

int main(void) {
  float values[6] = {0, 1, 2, 3, 4, 5};
  const int64_t sizes[2] = {2, 3};
  tsr_tensor* t = NULL;
  tsr_tensor* back = NULL;
  DLManagedTensor* managed = NULL;
  tsr_error* e = tsr_tensor_from_host_memory(values, sizeof values, sizes, NULL, 2,
                                             TSR_DTYPE_FLOAT32, count_delete, &deleted, &t);
  CHECK(e == NULL);
  e = tsr_tensor_to_dlpack(t, NULL, &managed);
  CHECK(e == NULL && managed != NULL);
  tsr_tensor_release(t); /* the managed tensor holds the memory now */
  CHECK(deleted == 0);
  if (managed == NULL) return 1;
  CHECK(managed->dl_tensor.data == (void*)values);
  CHECK(managed->dl_tensor.device.device_type == kDLCPU);
  CHECK(managed->dl_tensor.dtype.code == kDLFloat && managed->dl_tensor.dtype.bits == 32);
  CHECK(managed->dl_tensor.ndim == 2 && managed->dl_tensor.shape[1] == 3);
  CHECK(managed->dl_tensor.strides[0] == 3 && managed->dl_tensor.strides[1] == 1);

  e = tsr_tensor_from_dlpack(managed, NULL, &back); /* Tessera owns `managed` now */
  CHECK(e == NULL);
  CHECK(tsr_tensor_data_ptr(back) == (void*)values);
  values[4] = 40.0f;
  {
    float out[6];
    e = tsr_tensor_copy_to_host(back, out, sizeof out);
    CHECK(e == NULL && out[4] == 40.0f);
  }
  tsr_tensor_release(back); /* runs the export's deleter, which releases the memory */
  CHECK(deleted == 1);
  tsr_error_release(e);
  if (failures == 0) printf("dlpack_c_test: ok\n");
  return failures == 0 ? 0 : 1;
}
