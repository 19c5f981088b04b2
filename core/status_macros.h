// Early-return helpers for absl::Status / absl::StatusOr, as used across the runtime.
#pragma once

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TSR_STATUS_CONCAT_INNER(a, b) a##b
#define TSR_STATUS_CONCAT(a, b) TSR_STATUS_CONCAT_INNER(a, b)

// TSR_RETURN_IF_ERROR(expr): returns the status of `expr` from the enclosing function unless ok.
#define TSR_RETURN_IF_ERROR(expr)                                  \
  do {                                                             \
    ::absl::Status tsr_status_ = (expr);                           \
    if (ABSL_PREDICT_FALSE(!tsr_status_.ok())) return tsr_status_; \
  } while (0)

// TSR_ASSIGN_OR_RETURN(lhs, expr): evaluates the StatusOr `expr`; returns its status on error,
// otherwise moves its value into `lhs` (which may be a declaration: `auto x`).
#define TSR_ASSIGN_OR_RETURN(lhs, expr) \
  TSR_ASSIGN_OR_RETURN_IMPL(TSR_STATUS_CONCAT(tsr_statusor_, __LINE__), lhs, expr)
#define TSR_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr)                         \
  auto statusor = (expr);                                                      \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()
