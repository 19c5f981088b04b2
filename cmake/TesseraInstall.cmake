# Installation: headers under include/tessera/, libtessera.so, plugins under
# lib/tessera/plugins/ (default discovery), the sample vendor plugin under lib/tessera/examples/
# (loaded by path only), the CMake package under lib/cmake/Tessera/ and tessera.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TESSERA_INSTALL_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR}/tessera/plugins)
set(TESSERA_INSTALL_EXAMPLE_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR}/tessera/examples)
set(TESSERA_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)

set_target_properties(tessera PROPERTIES EXPORT_NAME runtime)
set_target_properties(tessera_stable_abi PROPERTIES EXPORT_NAME stable_abi)
set_target_properties(tessera_sdk PROPERTIES EXPORT_NAME sdk)
install(TARGETS tessera tessera_stable_abi tessera_sdk EXPORT TesseraTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY stable_abi/include/tessera sdk/include/tessera
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# tessera-plugin-info, exported as Tessera::plugin_info for the package's tessera_add_plugin();
# it finds libtessera.so beside it.
set_target_properties(tessera_plugin_info PROPERTIES
  EXPORT_NAME plugin_info INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS tessera_plugin_info EXPORT TesseraTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tessera_cpu LIBRARY DESTINATION ${TESSERA_INSTALL_PLUGIN_DIR})
install(TARGETS npu LIBRARY DESTINATION ${TESSERA_INSTALL_EXAMPLE_PLUGIN_DIR})
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${TESSERA_INSTALL_CMAKE_DIR})

configure_package_config_file(cmake/TesseraConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TesseraConfig.cmake
  INSTALL_DESTINATION ${TESSERA_INSTALL_CMAKE_DIR}
  PATH_VARS TESSERA_INSTALL_PLUGIN_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TesseraConfig.cmake
              ${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
              sdk/plugin_exports.map
  DESTINATION ${TESSERA_INSTALL_CMAKE_DIR})
configure_file(cmake/tessera.pc.in ${PROJECT_BINARY_DIR}/tessera.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tessera.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
