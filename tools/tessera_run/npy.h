// NumPy's .npy files (format versions 1.0, 2.0 and 3.0), the way tessera-run takes inputs and
// gives outputs to any tool: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
//
//   "\x93NUMPY" major minor, a header length (2 bytes in 1.0, 4 in 2.0 and 3.0), a header that is
//   a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, the data.
//
// The reader takes little-endian (or byte-order-free) arrays of Tessera's dtypes in C order and
// refuses everything else by name: a big-endian or Fortran-order array, an object or structured
// dtype, a size that does not match the data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/c/common.h"

namespace tessera_run {

struct NpyArray {
  tsr_dtype dtype;
  std::vector<int64_t> shape;
  std::string data;  // shape's product times the dtype's size, C order
};

// ReadNpy reads `path`; on error returns false with `error` naming the file and the problem.
bool ReadNpy(const std::string& path, NpyArray* out, std::string* error);

// WriteNpy writes a version 1.0 file (bfloat16, which NumPy lacks, is refused).
bool WriteNpy(const std::string& path, const NpyArray& array, std::string* error);

}  // namespace tessera_run
