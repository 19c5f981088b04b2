# Warnings every Tessera target builds with.
function(tessera_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()

# tessera_add_test(NAME SOURCES... LIBS...): one GoogleTest binary registered with CTest.
function(tessera_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  # gcc 12 misreports values read through StatusOr::operator* as maybe-uninitialized.
  target_compile_options(${name} PRIVATE -Wno-maybe-uninitialized)
  tessera_set_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
endfunction()
