// What cdist's forward (distance_ops.cc) and backward (distance_backward_ops.cc) share: ATen's
// checks of x1 and x2 with their messages, the broadcast of their batch dims, and the size of the
// row blocks the differences are formed in, so that the backward reads its forward's arguments
// exactly as the forward did.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {

// CheckCdistRanks: x1 and x2 are at least 2-D, [..., rows, columns], with as many columns.
inline absl::Status CheckCdistRanks(const OperatorHandle& op, const Tensor& x1, const Tensor& x2) {
  if (x1.dim() < 2) {
    return Invalid(
        op, absl::StrFormat("cdist only supports at least 2D tensors, X1 got: %dD", x1.dim()));
  }
  if (x2.dim() < 2) {
    return Invalid(
        op, absl::StrFormat("cdist only supports at least 2D tensors, X2 got: %dD", x2.dim()));
  }
  const int64_t c1 = x1.sizes().back(), c2 = x2.sizes().back();
  if (c1 != c2) {
    return Invalid(op, absl::StrFormat("X1 and X2 must have the same number of columns. X1: %d "
                                       "X2: %d",
                                       c1, c2));
  }
  return absl::OkStatus();
}

// RefuseHalf: ATen's distance kernels take float32 and float64 only (UNIMPLEMENTED for the
// 16-bit floats).
inline absl::Status RefuseHalf(const OperatorHandle& op, const Tensor& x) {
  if (x.dtype() == ScalarType::kFloat16 || x.dtype() == ScalarType::kBFloat16) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: not implemented for dtype %s", op.name(), ScalarTypeName(x.dtype())));
  }
  return absl::OkStatus();
}

// CdistShapes: x1 and x2 of CheckCdistRanks with their batch dims broadcast: `batch`, x1
// expanded to `x1` ([...batch, r1, c]), x2 to `x2` ([...batch, r2, c]) and the distances' `out`
// ([...batch, r1, r2]).
struct CdistShapes {
  DimVector batch, x1, x2, out;
};
inline absl::StatusOr<CdistShapes> CdistShapesOf(const OperatorHandle& op, const Tensor& x1,
                                                 const Tensor& x2) {
  absl::StatusOr<DimVector> batch =
      BroadcastShapes(x1.sizes().subspan(0, x1.dim() - 2), x2.sizes().subspan(0, x2.dim() - 2));
  if (!batch.ok()) return Invalid(op, std::string(batch.status().message()));
  const int64_t r1 = x1.sizes()[x1.dim() - 2], r2 = x2.sizes()[x2.dim() - 2];
  const int64_t c = x1.sizes().back();
  CdistShapes shapes{*batch, *batch, *batch, *batch};
  shapes.x1.insert(shapes.x1.end(), {r1, c});
  shapes.x2.insert(shapes.x2.end(), {r2, c});
  shapes.out.insert(shapes.out.end(), {r1, r2});
  return shapes;
}

// RowBlock: how many of x1's rows ([..., r1, c], batch dims equal to x2's [..., r2, c]) one block
// takes, so that its [..., rows, r2, c] differences hold at most 2^24 elements (at least one row).
inline int64_t RowBlock(const Tensor& x1, const Tensor& x2) {
  const int64_t rows_dim = x1.dim() - 2;
  const int64_t r1 = x1.sizes()[rows_dim];
  const int64_t per_row =
      std::max<int64_t>(x1.numel() / std::max<int64_t>(r1, 1) * x2.sizes()[rows_dim], 1);
  return std::max<int64_t>((int64_t{1} << 24) / per_row, 1);
}

}  // namespace ops
}  // namespace tessera
