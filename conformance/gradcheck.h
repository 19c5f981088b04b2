// The gradient oracle's arithmetic, PyTorch's gradcheck in float64: the gradients a backward op
// returned (analytic) against central differences of a scalar function of the forward's inputs,
// L(x) = sum(grad_output * forward(x)), whose gradient they are. Elementwise (every input
// element perturbed, as gradcheck's default) and along one random direction (gradcheck's
// fast_mode: (L(x + eps v) - L(x - eps v)) / 2 eps against the analytic gradient dotted with v).
// The oracle that runs them is in oracles.cc ("gradient", "gradient_fast").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "conformance/host_tensor.h"

namespace tessera {
namespace conformance {

// gradcheck's defaults.
inline constexpr double kGradEps = 1e-6, kGradAtol = 1e-5, kGradRtol = 1e-3;
// Elements per input the elementwise check perturbs (chosen at random beyond that): two forward
// calls each.
inline constexpr int64_t kGradMaxElements = 64;

struct GradCheck {
  bool ok = true;
  std::string message;  // the first disagreement
  double max_abs = 0, max_rel = 0;
};

// Loss: L at these values of the differentiated inputs (the forward on the device).
using GradLoss = std::function<double(const std::vector<HostTensor>& inputs)>;

// CheckElementwise: for each input i and element j, (L(x + eps e_ij) - L(x - eps e_ij)) / 2 eps
// against analytic[i][j], |a - n| <= atol + rtol |n|. The analytic gradients must have the
// inputs' dtypes and shapes (a mismatch is the first disagreement). `names`: the inputs'
// argument names, for messages.
GradCheck CheckElementwise(const GradLoss& loss, const std::vector<HostTensor>& inputs,
                           const std::vector<HostTensor>& analytic,
                           const std::vector<std::string>& names, Rng& rng);

// CheckProjection: along a random direction v over every input, the central difference of L
// against sum_i analytic[i] . v[i].
GradCheck CheckProjection(const GradLoss& loss, const std::vector<HostTensor>& inputs,
                          const std::vector<HostTensor>& analytic,
                          const std::vector<std::string>& names, Rng& rng);

}  // namespace conformance
}  // namespace tessera
