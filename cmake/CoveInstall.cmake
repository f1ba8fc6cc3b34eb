# Install rules so that find_package(Cove) works from another CMake project.
include(CMakePackageConfigHelpers)

install(TARGETS cove cove_c EXPORT CoveTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/cove/export.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cove)
# The Fortran module (cove::fortran): the library, and the .mod files, which
# only the compiler that wrote them (its name and major version) can read.
if(COVE_ENABLE_FORTRAN)
  install(TARGETS cove_fortran EXPORT CoveTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY ${COVE_FORTRAN_MODULE_DIR}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cove/fortran)
  # cove::fortran_mpi (the module cove_mpi) in a file of its own, which
  # CoveConfig.cmake reads only for consumers that enable Fortran (it needs
  # MPI's Fortran bindings).
  if(COVE_FORTRAN_MPI)
    install(TARGETS cove_fortran_mpi EXPORT CoveFortranMpiTargets
            LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
            RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    install(EXPORT CoveFortranMpiTargets NAMESPACE cove:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cove)
  endif()
endif()
if(COVE_ENABLE_KOKKOS)
  install(TARGETS cove_kokkos EXPORT CoveTargets
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES ${PROJECT_BINARY_DIR}/include/cove/kokkos_export.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cove)
endif()
# The HDF5 VOL connector: a plugin, alone in its folder (HDF5_PLUGIN_PATH),
# not a target to link; it finds libcove two folders up and the HDF5 it was
# built against where that is.
if(COVE_ENABLE_HDF5)
  install(TARGETS cove_h5vol LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/cove/h5vol-plugin)
endif()
install(EXPORT CoveTargets NAMESPACE cove::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cove)

if(BUILD_SHARED_LIBS)
  set(COVE_STATIC_LIBRARY FALSE)
else()
  set(COVE_STATIC_LIBRARY TRUE)
endif()
if(NOT COVE_ENABLE_UCX)
  set(COVE_ENABLE_UCX FALSE)
endif()
configure_package_config_file(cmake/CoveConfig.cmake.in
  ${PROJECT_BINARY_DIR}/CoveConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cove)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/CoveConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/CoveConfig.cmake
              ${PROJECT_BINARY_DIR}/CoveConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cove)
