# Warnings every Tessera target builds with.
# gcc 12 reports false maybe-uninitialized warnings inside absl::InlinedVector and StatusOr.
function(tessera_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter
                         $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
endfunction()

# tessera_sanitizer_test_environment(TEST): what a test needs under the sanitizers. Tests ask
# for impossible sizes on purpose and expect an error back, not an abort. oneDNN's OpenMP
# worker threads make LeakSanitizer's stop-the-world crash at exit ("Tracer caught signal
# 11"), so oneDNN runs on one thread there; the runtime's own pool keeps its threads.
function(tessera_sanitizer_test_environment test)
  if(TESSERA_SANITIZE)
    set_tests_properties(${test} PROPERTIES ENVIRONMENT
      "ASAN_OPTIONS=allocator_may_return_null=1;UBSAN_OPTIONS=print_stacktrace=1;OMP_NUM_THREADS=1")
  endif()
endfunction()

# tessera_add_test(NAME SOURCES... LIBS...): one GoogleTest binary registered with CTest.
function(tessera_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  tessera_set_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  if(TESSERA_SANITIZE)
    tessera_sanitizer_test_environment(${name})
  endif()
endfunction()
