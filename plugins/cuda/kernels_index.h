// The index, shape and sort kernels' launchers (kernels_index.cu), callable from host code
// compiled by g++.
#pragma once

#include <cstdint>
#include <string>

#include "index_plan.h"

namespace tessera {
namespace gpu {

// IndexDtypes: the dtypes a kind has kernels for (bits 1 << tsr_dtype): every dtype, by its
// element size for the kinds that move bytes and by its dtype for scatter's add and multiply.
inline constexpr uint32_t IndexDtypes(IndexKind /*kind*/) { return kAllDtypes; }

// LaunchIndex queues one launch of `args` (kernels_index.cu) for elements of `dtype` on
// `stream`. It returns "" or the launch's error in the vendor's words.
std::string LaunchIndex(IndexKind kind, int32_t dtype, const IndexArgs& args, void* stream);

// LaunchSort queues the sort of `rows` rows (Note [GPU sort]) of `dtype` (any of the ten), in
// launches of at most `rows_per_launch` rows; rows with args.padded above kSortSharedMax use
// args.scratch_keys / scratch_pos, which hold rows_per_launch * args.padded entries each.
std::string LaunchSort(int32_t dtype, const SortArgs& args, int64_t rows, int64_t rows_per_launch,
                       void* stream);

}  // namespace gpu
}  // namespace tessera
