// Placeholder: op set 1.11's resize_ and resize_as_ (filled in by this change).
#include <vector>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {

void AddResizeOps(std::vector<OpInfo>& db) { (void)db; }

}  // namespace conformance
}  // namespace tessera
