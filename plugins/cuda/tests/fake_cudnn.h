/* What the fake libcudnn (fake_cudnn.c) records for the host tests (dnn_test.cc), which read it
 * through the fake's fake_cudnn_record(). C, for both. */
#ifndef TESSERA_GPU_TESTS_FAKE_CUDNN_H_
#define TESSERA_GPU_TESTS_FAKE_CUDNN_H_

#include <stddef.h>

struct FakeCudnnRecord {
  int live_descriptors; /* created and not yet destroyed */
  int handles;
  int math_type, compute_type, groups, algo, mode; /* of the last convolution */
  size_t workspace_bytes;
  void* workspace;
  int forward_calls, add_tensor_calls;
  void* stream;
};

#endif /* TESSERA_GPU_TESTS_FAKE_CUDNN_H_ */
