// The host side of the GPU index, shape and sort kernels (index.h): from tensor shapes and
// strides to launch arguments. Plain C++ (no GPU toolkit, no SDK), so tests/index_test.cc
// checks it on the host.
//
// Note [GPU index kernels]
// gather, index_select, scatter (src, value, reduce), scatter_add, flip, tril, triu and clone
// are one kernel each over an iteration shape with three operands (dst, src, index), like the
// CPU backend's: the operand indexed along `dim` is "restrided" (stride 0 there) and the thread
// adds index * step itself, so any strides work without copies. flip reads its input with
// negative strides from the last element of each flipped dimension; tril and triu keep the
// matrices' two dimensions apart to know each element's row and column. Dimensions of size 1
// drop and neighbours that every operand steps through as one merge (MakeIndexArgs), so a
// contiguous tensor is one dimension; arithmetic is 32-bit (FastDivmod) below 2^31 elements
// and 64-bit above.
//
// Out-of-range indices: a thread skips the element (nothing out of bounds is read or written)
// and records the first bad index in an IndexError in device memory; the plugin copies that
// record back after the launch, which waits for the stream, and reports it as the CPU backend
// does ("index 5 is out of bounds for dimension 0 with size 3", INVALID_ARGUMENT). The cost is
// one stream synchronization per gather, index_select and scatter call (PyTorch's CUDA kernels
// assert on the device instead, which is asynchronous but leaves the context unusable).
//
// scatter with repeated indices: replace writes one of the values (which one depends on
// scheduling, as on PyTorch's CUDA backend); add and multiply combine every value atomically
// (AtomicCombine), so a float sum's rounding depends on the order the additions happen in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "index.h"

namespace tessera {
namespace gpu {

// IndexOperandSpec: one operand's address and byte strides (aligned with the shape; unused
// operands have no data and zero strides).
struct IndexOperandSpec {
  char* data = nullptr;
  std::vector<int64_t> strides;  // bytes
};

// MakeIndexArgs plans an iteration over `shape` (outermost first, as a tensor's sizes) for
// the three operands. `keep` (empty or one flag per dimension) names dimensions that must stay
// apart (tril/triu's last two); MakeIndexArgs sets row_dim/col_dim to where the last two of
// them landed. Returns false with *error when more than kMaxDims dimensions remain.
bool MakeIndexArgs(const std::vector<int64_t>& shape, const IndexOperandSpec operands[3],
                   const std::vector<bool>& keep, IndexArgs* args, std::string* error);

// TensorSpec: what the plugin knows about one tensor (a 0-dim tensor as one element of one
// dimension: sizes {1}, strides {0}).
struct TensorSpec {
  char* data = nullptr;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // elements
  int64_t itemsize = 0;
};

// ByteStrides: element strides times itemsize.
std::vector<int64_t> ByteStrides(const std::vector<int64_t>& strides, int64_t itemsize);

// The launches of the ops (Note [GPU index kernels]); `dim` is wrapped (0 <= dim < rank). Each
// returns false with *error when the iteration has too many dimensions for the kernels.
// gather: over index's shape, out = self[index] along dim.
bool PlanGather(const TensorSpec& out, const TensorSpec& self, const TensorSpec& index, int64_t dim,
                IndexArgs* args, std::string* error);
// index_select: over out's shape, index (1-D or 0-dim, int32 or int64) along dim.
bool PlanIndexSelect(const TensorSpec& out, const TensorSpec& self, const TensorSpec& index,
                     int32_t index_dtype, int64_t dim, IndexArgs* args, std::string* error);
// scatter: over index's shape, out[index] along dim = src (null: args->value).
bool PlanScatter(const TensorSpec& out, const TensorSpec& index, const TensorSpec* src, int64_t dim,
                 IndexArgs* args, std::string* error);
// copy: dst = src (same sizes), any strides.
bool PlanCopy(const TensorSpec& dst, const TensorSpec& src, IndexArgs* args, std::string* error);
// flip: out = self read backwards along the dimensions flagged in `flipped`.
bool PlanFlip(const TensorSpec& out, const TensorSpec& self, const std::vector<bool>& flipped,
              IndexArgs* args, std::string* error);
// tril / triu: over out's shape (at least 2-D), the last two dimensions kept apart.
bool PlanTri(const TensorSpec& out, const TensorSpec& self, int64_t diagonal, IndexArgs* args,
             std::string* error);

// ScalarBits: a Scalar (bool and int in `i`, double in `d`) converted to `dtype` as the CPU
// backend's scalar_to converts it (Convert: bool is "!= 0", floating to integral truncates
// through int64 and wraps), as the element's raw bytes (scatter.value's `value`).
enum class ScalarKind { kBool, kInt, kDouble };
uint64_t ScalarBits(ScalarKind kind, int64_t i, double d, int32_t dtype);

// MakeSortArgs plans sorting the rows of self along `dim` into values and indices (same
// sizes but `count` along dim), writing `count` per row. *rows receives the number of rows.
// Returns false with *error when the rows are too long (2^31 elements) or more than kMaxDims
// other dimensions remain after merging.
bool MakeSortArgs(const TensorSpec& self, int64_t dim, const TensorSpec& values,
                  const TensorSpec& indices, int64_t count, bool descending, SortArgs* args,
                  int64_t* rows, std::string* error);

}  // namespace gpu
}  // namespace tessera
