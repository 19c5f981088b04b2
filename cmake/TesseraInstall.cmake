# Installation (docs/cmake_package.md lists every installed path and what it is):
#   bin/                      conformance, tessera-plugin-info
#   include/tessera/          the C ABI headers, the C++ SDK, the op-set headers, and the C
#                             interface of conformance cases libraries (conformance/include/)
#   lib/                      libtessera.so
#   lib/tessera/plugins/      the default plugins (the CPU backend, the GPU backends where built):
#                             default discovery loads these
#   lib/tessera/examples/     the sample vendor plugin libnpu.so (loaded by path only)
#   lib/cmake/Tessera/        the CMake package (find_package(Tessera CONFIG))
#   lib/pkgconfig/            tessera.pc (applications), tessera-plugin.pc (plugins)
#   share/tessera/            the plugin exports map, the examples' sources, the frozen ABI
#                             headers and the ABI lock
#   share/doc/tessera/        docs/
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TESSERA_INSTALL_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR}/tessera/plugins)
set(TESSERA_INSTALL_EXAMPLE_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR}/tessera/examples)
set(TESSERA_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
set(TESSERA_INSTALL_DATA_DIR ${CMAKE_INSTALL_DATAROOTDIR}/tessera)
set(TESSERA_INSTALL_DOC_DIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/tessera)
# The exports map a plugin links with (TESSERA_PLUGIN_EXPORTS_MAP, tessera-plugin.pc).
set(TESSERA_INSTALL_EXPORTS_MAP ${TESSERA_INSTALL_DATA_DIR}/plugin_exports.map)

set_target_properties(tessera PROPERTIES EXPORT_NAME runtime)
set_target_properties(tessera_stable_abi PROPERTIES EXPORT_NAME stable_abi)
set_target_properties(tessera_sdk PROPERTIES EXPORT_NAME sdk)
install(TARGETS tessera tessera_stable_abi tessera_sdk EXPORT TesseraTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY stable_abi/include/tessera sdk/include/tessera conformance/include/tessera
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The executables find libtessera.so beside them, in ../lib, wherever the prefix is.
# tessera-plugin-info is exported as Tessera::plugin_info for the package's tessera_add_plugin().
set_target_properties(tessera_plugin_info conformance tessera_run PROPERTIES
  INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
set_target_properties(tessera_plugin_info PROPERTIES EXPORT_NAME plugin_info)
install(TARGETS tessera_plugin_info EXPORT TesseraTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS conformance tessera_run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The exporter (docs/model_format.md): a Python package beside the ops.lock it names ops by
# (share/tessera/python/tessera_export finds share/tessera/ops.lock).
install(DIRECTORY tools/exporter/tessera_export DESTINATION ${TESSERA_INSTALL_DATA_DIR}/python
  PATTERN __pycache__ EXCLUDE)
install(FILES dispatcher/ops.lock DESTINATION ${TESSERA_INSTALL_DATA_DIR})
install(TARGETS tessera_cpu LIBRARY DESTINATION ${TESSERA_INSTALL_PLUGIN_DIR})
# The GPU backends that this build made (plugins/cuda: libtessera_cuda.so; plugins/hip: libtessera_hip.so).
foreach(gpu_plugin IN LISTS TESSERA_GPU_PLUGINS)
  install(TARGETS ${gpu_plugin} LIBRARY DESTINATION ${TESSERA_INSTALL_PLUGIN_DIR})
endforeach()
install(TARGETS npu LIBRARY DESTINATION ${TESSERA_INSTALL_EXAMPLE_PLUGIN_DIR})
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${TESSERA_INSTALL_CMAKE_DIR})

# What a vendor or an embedder builds from: the examples' sources (each folder a CMake project
# on the installed package), the exports map, and the ABI's frozen headers and lock.
install(FILES sdk/plugin_exports.map DESTINATION ${TESSERA_INSTALL_DATA_DIR})
install(FILES sdk/examples/npu/CMakeLists.txt sdk/examples/npu/npu_device.h
              sdk/examples/npu/npu_device.cc sdk/examples/npu/npu_plugin.cc
              sdk/examples/npu/npu_elementwise.h sdk/examples/npu/npu_graph.h
              sdk/examples/npu/npu_graph.cc
              sdk/examples/npu/npu_c_kernels.h sdk/examples/npu/npu_c_kernels.c
  DESTINATION ${TESSERA_INSTALL_DATA_DIR}/examples/npu)
install(FILES examples/c/CMakeLists.txt examples/c/c_plugin.c examples/c/c_embedding.c
  DESTINATION ${TESSERA_INSTALL_DATA_DIR}/examples/c)
install(DIRECTORY stable_abi/tests/frozen/ DESTINATION ${TESSERA_INSTALL_DATA_DIR}/abi/frozen)
install(FILES stable_abi/abi.lock stable_abi/releases DESTINATION ${TESSERA_INSTALL_DATA_DIR}/abi)
install(DIRECTORY docs/ DESTINATION ${TESSERA_INSTALL_DOC_DIR})

configure_package_config_file(cmake/TesseraConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TesseraConfig.cmake
  INSTALL_DESTINATION ${TESSERA_INSTALL_CMAKE_DIR}
  PATH_VARS TESSERA_INSTALL_PLUGIN_DIR TESSERA_INSTALL_EXAMPLE_PLUGIN_DIR TESSERA_INSTALL_DATA_DIR
            TESSERA_INSTALL_EXPORTS_MAP)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TesseraConfig.cmake
              ${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
  DESTINATION ${TESSERA_INSTALL_CMAKE_DIR})

# pkg-config files, written at install time so that they name the prefix actually installed to
# (`cmake --install build --prefix P` included) with normalised paths; a relocatable
# ${pcfiledir}/../.. would print -I.../lib/pkgconfig/../../include.
foreach(dir LIBDIR INCLUDEDIR DATADIR)
  if(dir STREQUAL "DATADIR")
    set(path ${TESSERA_INSTALL_DATA_DIR})
  else()
    set(path ${CMAKE_INSTALL_${dir}})
  endif()
  if(IS_ABSOLUTE "${path}")
    set(TESSERA_PC_${dir} "${path}")
  else()
    set(TESSERA_PC_${dir} "\\\${prefix}/${path}")  # a literal ${prefix}/... in the .pc file
  endif()
endforeach()
foreach(pc tessera tessera-plugin)
  install(CODE "
    set(TESSERA_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    set(TESSERA_PC_LIBDIR \"${TESSERA_PC_LIBDIR}\")
    set(TESSERA_PC_INCLUDEDIR \"${TESSERA_PC_INCLUDEDIR}\")
    set(TESSERA_PC_DATADIR \"${TESSERA_PC_DATADIR}\")
    set(PROJECT_VERSION \"${PROJECT_VERSION}\")
    configure_file(\"${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in\"
                   \"${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc\" @ONLY)")
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
