#include "core/scalar.h"

#include "absl/strings/str_cat.h"
#include "tessera/sdk/float_to_int.hpp"

namespace tessera {

int64_t Scalar::DoubleToInt(double v) { return sdk::float_to_int64(v); }

std::string Scalar::ToString() const {
  switch (kind_) {
    case Kind::kBool:
      return v_.i ? "True" : "False";
    case Kind::kInt:
      return absl::StrCat(v_.i);
    case Kind::kDouble:
      return absl::StrCat(v_.d);
  }
  return "";
}

}  // namespace tessera
