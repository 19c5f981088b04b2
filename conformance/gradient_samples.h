// What the op database's gradient specs (op_db_gradients.cc and the backward families'
// op_db_*_backward.cc) share: how a backward op's arguments follow from its forward's sample.
#pragma once

#include <vector>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {

// GradThenForwardArgs: a GradientSpec::backward_args for the backward ops derivatives.yaml calls
// with the incoming gradient followed by every argument of the forward, in order.
inline std::vector<Arg> GradThenForwardArgs(const Sample& forward, const std::vector<HostTensor>&,
                                            const HostTensor& grad_output) {
  std::vector<Arg> args{Arg::Tensor(grad_output)};
  args.insert(args.end(), forward.args.begin(), forward.args.end());
  return args;
}

}  // namespace conformance
}  // namespace tessera
