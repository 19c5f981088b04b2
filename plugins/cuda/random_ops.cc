// The GPU backends' random kernels, uniform_ and normal_, on the kernels of random.h (Note [GPU
// random kernels]): each element takes its own Philox block by its row-major position, so the
// device gives the CPU backend's bits for the same draw (plugins/cpu/random.cc,
// docs/random.md). The meta checks (a floating dtype, from <= to within the dtype, std >= 0,
// no overlapping elements) have run before a kernel does.
#include "random_ops.h"

#include <string>

#include "gpu_device.h"
#include "kernels_random.h"
#include "op_support.h"
#include "tessera/sdk/random.hpp"
#include "tessera/sdk/stream.hpp"

namespace tessera {
namespace gpu {
namespace {

using sdk::RandomDraw;
using sdk::TensorView;

// Run fills `self` with `kind`'s values of `draw`; p0 and p1 are from and to, or mean and std.
void Run(const char* op, RandomKind kind, const TensorView& self, double p0, double p1,
         const RandomDraw& draw) {
  RequireDtype(op, self.dtype(), kFloatingDtypes);
  RandomPlan plan;
  std::string error;
  if (!MakeRandomPlan(static_cast<char*>(self.data_ptr()), self.sizes().vec(), self.strides().vec(),
                      &plan, &error)) {
    sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": " + error);
  }
  if (plan.numel == 0) return;
  plan.args.draw = draw;
  plan.args.p0 = p0;
  plan.args.p1 = p1;
  plan.args.f0 = static_cast<float>(p0);
  plan.args.f1 = static_cast<float>(p1);
  DeviceGuard guard(self.device().index);
  Check(op, LaunchRandom(kind, self.dtype(), plan, sdk::current_stream(self.device())));
}

// uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None)
TensorView Uniform(TensorView self, double from, double to, RandomDraw draw) {
  Run("uniform_", RandomKind::kUniform, self, from, to, draw);
  return self;
}

// normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None)
TensorView Normal(TensorView self, double mean, double std, RandomDraw draw) {
  Run("normal_", RandomKind::kNormal, self, mean, std, draw);
  return self;
}

}  // namespace

void RegisterRandomOps(sdk::Library& lib) {
  lib.impl<&Uniform>(TESSERA_OP("uniform_"));
  lib.impl<&Normal>(TESSERA_OP("normal_"));
}

}  // namespace gpu
}  // namespace tessera
