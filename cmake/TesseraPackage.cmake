# The installed C++ package: `cmake --install build --prefix P` installs every tessera library,
# the public headers (include/tessera/) and a CMake package, so that an application does
#
#   find_package(tessera CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE tessera::tessera)
#
# How. The libraries are not listed by hand: every STATIC library named tessera_* defined in the
# project, outside tests/, bench/ and fuzz/, is installed and exported (tesseraTargets.cmake), so a new
# backend folder (src/backends/<name>/ with its tessera_kernels_<name>) is installed without
# touching this file; only a new third-party dependency needs one find_dependency line in
# cmake/tesseraConfig.cmake.in. tessera::tessera is an INTERFACE target that links them all
# and carries the installed include directory.
#
# Two things the export needs that a build-tree-only project does not:
#   - position-independent code, because the Python module (python/) links the same static
#     libraries into a shared object;
#   - build-tree include directories (the source's src/, search/'s parent) wrapped in
#     $<BUILD_INTERFACE:...>: an installed target must not point into the source tree. The
#     installed headers are include/tessera/ only; headers under src/ stay private.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

function(tessera_collect_libraries dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  set(found "")
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "STATIC_LIBRARY" AND t MATCHES "^tessera_")
      list(APPEND found ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${sub})
    if(rel MATCHES "^(tests|bench|fuzz|python)(/|$)")
      continue()
    endif()
    tessera_collect_libraries(${sub} sub_found)
    list(APPEND found ${sub_found})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

tessera_collect_libraries(${CMAKE_SOURCE_DIR} TESSERA_LIBRARIES)

foreach(lib IN LISTS TESSERA_LIBRARIES)
  set_target_properties(${lib} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  get_target_property(dirs ${lib} INTERFACE_INCLUDE_DIRECTORIES)
  if(dirs)
    set(wrapped "")
    foreach(d IN LISTS dirs)
      if(d MATCHES "^\\$<")
        list(APPEND wrapped "${d}")
      else()
        list(APPEND wrapped "$<BUILD_INTERFACE:${d}>")
      endif()
    endforeach()
    set_target_properties(${lib} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${wrapped}")
  endif()
endforeach()

add_library(tessera_package INTERFACE)
set_target_properties(tessera_package PROPERTIES EXPORT_NAME tessera)
target_link_libraries(tessera_package INTERFACE ${TESSERA_LIBRARIES})
target_include_directories(tessera_package INTERFACE
  $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
add_library(tessera::tessera ALIAS tessera_package)

install(TARGETS ${TESSERA_LIBRARIES} tessera_package EXPORT tesseraTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/tessera DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(EXPORT tesseraTargets NAMESPACE tessera:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/tesseraConfig.cmake.in
  ${CMAKE_BINARY_DIR}/tesseraConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tesseraConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tesseraConfig.cmake ${CMAKE_BINARY_DIR}/tesseraConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
