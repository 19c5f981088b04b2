// An application's call before it made its tessera::Runtime: the SDK has no runtime table yet,
// and says so with an exception instead of dereferencing a null table.
#include <stdexcept>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tessera/sdk/runtime.hpp"

namespace {

using ::testing::HasSubstr;

std::string MessageOf(void (*call)()) {
  try {
    call();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "no exception";
}

TEST(SdkWithoutRuntime, CallsSayToCreateARuntimeFirst) {
  EXPECT_THAT(MessageOf([] { tessera::find_op("add.Tensor"); }),
              HasSubstr("creates a tessera::Runtime before its first call"));
  EXPECT_THAT(MessageOf([] { tessera::Tensor::empty({2}, TSR_DTYPE_FLOAT32); }),
              HasSubstr("creates a tessera::Runtime before its first call"));
}

}  // namespace
