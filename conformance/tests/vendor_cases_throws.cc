// A cases library in C++ that breaks the C interface: its reference throws. The suite must
// report the op's cases as failed, naming the library, not crash or skip them.
#include <stdexcept>

#include "tessera/conformance/cases.h"

namespace {

tsr_string Str(const char* s) { return tsr_string{s, std::char_traits<char>::length(s)}; }

int32_t Samples(void*, const tsr_cases_host* host, tsr_cases_sink* sink, int32_t dtype, uint64_t) {
  const int64_t three = 3;
  host->sample(sink, Str("[3] with [3]"));
  host->arg_random_tensor(sink, dtype, &three, 1, nullptr);
  host->arg_random_tensor(sink, dtype, &three, 1, nullptr);
  return TSR_OK;
}

int32_t Reference(void*, const tsr_cases_host*, tsr_cases_sink*, const tsr_cases_sample*) {
  throw std::runtime_error("the reference's own bug");
}

}  // namespace

extern "C" TSR_CASES_EXPORT const tsr_cases_library* tsr_conformance_cases(const tsr_cases_host*) {
  static const tsr_cases_op op = {sizeof(tsr_cases_op),
                                  Str("vnd::scale_bias"),
                                  1u << TSR_DTYPE_FLOAT32,
                                  1,
                                  0,
                                  &Samples,
                                  &Reference,
                                  nullptr,
                                  nullptr};
  static const tsr_cases_op* const ops[] = {&op};
  static const tsr_cases_library library = {sizeof(tsr_cases_library),
                                            TSR_CASES_VERSION_MAJOR,
                                            TSR_CASES_VERSION_MINOR,
                                            Str("throwing cases"),
                                            ops,
                                            1};
  return &library;
}
