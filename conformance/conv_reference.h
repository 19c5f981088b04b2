// The convolution's reference arithmetic, shared by the forward's references (op_db_linalg_nn.cc)
// and its backward op's (op_db_nn_backward.cc): which input element meets which kernel tap at
// which output element, written once as a scatter over (input element, tap) pairs, in long
// double.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "conformance/host_tensor.h"

namespace tessera {
namespace conformance {

// The convolution's arguments as the references read them, whatever the form.
struct ConvArgs {
  const HostTensor *x, *w, *bias;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  std::vector<int64_t> padding_right;  // when it differs from `padding` ('same', odd totals)
  int64_t groups;
  bool transposed;
};

// A per-dim argument's value for spatial dim d (one value for every dim, or one each).
int64_t PerDim(const std::vector<int64_t>& v, size_t d);

// ConvOutputShape: the output's shape [N, O, *out] (an unbatched input counts as N = 1).
std::vector<int64_t> ConvOutputShape(const ConvArgs& a);

// ForEachConvTerm calls term(x, w, y) with row-major element indices for every product
// x[x] * w[w] that adds to the output's y[y] (the bias aside): forward, out = (input + pad -
// tap * dilation) / stride where that divides; transposed, out = input * stride - pad + tap *
// dilation.
void ForEachConvTerm(const ConvArgs& a, const std::function<void(int64_t, int64_t, int64_t)>& term);

// ConvReference: the convolution's output, rounded to the input's dtype.
HostTensor ConvReference(const ConvArgs& a);

}  // namespace conformance
}  // namespace tessera
