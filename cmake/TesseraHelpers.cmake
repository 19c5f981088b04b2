# Warnings every Tessera target builds with.
# gcc 12 reports false maybe-uninitialized warnings inside absl::InlinedVector and StatusOr.
function(tessera_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter
                         $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
endfunction()

# tessera_sanitizer_test_environment(TEST): what a test needs under the sanitizers. Tests ask
# for impossible sizes on purpose and expect an error back, not an abort.
#
# intercept_tls_get_addr=0: gcc 12's sanitizer runtime (as LLVM's before 17) takes a dynamic
# TLS block whose address sits 16 bytes into a page for a pre-2.25 glibc block, reads the
# two words before it as the block's bounds, and LeakSanitizer's stop-the-world then scans
# that garbage range and dies at exit ("Tracer caught signal 11"). A dlopen'd plugin's TLS
# (oneDNN, libgomp) touched by a thread still alive at exit is enough; whether the block
# lands there depends on the heap layout, so it fails on some machines and runs only.
# glibc >= 2.25 mallocs these blocks, so with the interceptor off LeakSanitizer still sees
# what they point to. Reproduced and checked with a dlopen'd 16-byte thread_local touched
# by 64 live threads: every run crashes with the interceptor on, none with it off.
#
# ThreadSanitizer: halt on the first report, allocations that fail return NULL (as above), and
# OMP_NUM_THREADS=1, because libgomp (oneDNN's threads in the CPU plugin) is not instrumented
# and its barriers are invisible to TSan; the runtime's own thread pool is instrumented.
function(tessera_sanitizer_test_environment test)
  if(TESSERA_SANITIZE MATCHES "thread")
    set_tests_properties(${test} PROPERTIES ENVIRONMENT
      "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1;OMP_NUM_THREADS=1")
  elseif(TESSERA_SANITIZE)
    set_tests_properties(${test} PROPERTIES ENVIRONMENT
      "ASAN_OPTIONS=allocator_may_return_null=1:intercept_tls_get_addr=0;UBSAN_OPTIONS=print_stacktrace=1")
  endif()
endfunction()

# tessera_add_test(NAME SOURCES... LIBS...): one GoogleTest binary registered with CTest.
function(tessera_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  if(TARGET tessera_tsan_annotations)
    target_link_libraries(${name} PRIVATE tessera_tsan_annotations)
  endif()
  tessera_set_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  if(TESSERA_SANITIZE)
    tessera_sanitizer_test_environment(${name})
  endif()
endfunction()

# tessera_embed_plugin_manifest(TARGET): after TARGET (a plugin MODULE) links, load it with
# tessera-plugin-info and write its manifest (kernels, schemas, op set) into its
# .tessera.manifest section, so that the tool can print it later without loading it
# (docs/plugin_guide.md, "The manifest"). Nothing when TESSERA_PLUGIN_MANIFEST is OFF. The
# installed package's tessera_add_plugin() does the same (cmake/TesseraConfig.cmake.in).
function(tessera_embed_plugin_manifest target)
  if(NOT TESSERA_PLUGIN_MANIFEST)
    return()
  endif()
  if(NOT CMAKE_OBJCOPY)
    message(FATAL_ERROR "TESSERA_PLUGIN_MANIFEST needs objcopy (Debian: binutils); install it, "
                        "or configure with -DTESSERA_PLUGIN_MANIFEST=OFF")
  endif()
  # The tool runs the plugin's registration in an instrumented process: in sanitizer builds
  # leak checking at its exit would only see what the runtime keeps for the process.
  set(env)
  if(TESSERA_SANITIZE OR TESSERA_BUILD_FUZZERS)
    set(env ${CMAKE_COMMAND} -E env
        "ASAN_OPTIONS=detect_leaks=0:intercept_tls_get_addr=0:allocator_may_return_null=1")
  endif()
  # The tool by its file: a target name is replaced by its file only as a command's first word,
  # which `cmake -E env` is in sanitizer builds. The dependency makes the plugin's link (not its
  # compiles) wait for the tool.
  add_dependencies(${target} tessera_plugin_info)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${env} $<TARGET_FILE:tessera_plugin_info> --embed $<TARGET_FILE:${target}>
            --objcopy ${CMAKE_OBJCOPY}
    COMMENT "Embedding the plugin manifest of ${target}"
    VERBATIM)
endfunction()
