# Finds the parallel HDF5 >= 1.14 in COVE_HDF5_ROOT and makes cove_hdf5, an
# imported target for it (headers, libhdf5, MPI). Only that prefix is looked
# at, so Debian's HDF5 1.10 (bench-compare's baseline) is never picked up.
# Sets COVE_HDF5_FOUND, COVE_HDF5_VERSION and, when not found, COVE_HDF5_WHY.
set(COVE_HDF5_FOUND OFF)
set(COVE_HDF5_WHY "")
set(_h5_public "${COVE_HDF5_ROOT}/include/H5public.h")
set(_h5_lib "${COVE_HDF5_ROOT}/lib/libhdf5${CMAKE_SHARED_LIBRARY_SUFFIX}")
if(NOT EXISTS "${_h5_public}" OR NOT EXISTS "${_h5_lib}")
  set(COVE_HDF5_WHY "no include/H5public.h or lib/libhdf5.so")
elseif(NOT MPI_FOUND)
  set(COVE_HDF5_WHY "MPI was not found")
else()
  file(STRINGS "${_h5_public}" _h5_major REGEX "^#define H5_VERS_MAJOR +[0-9]+")
  file(STRINGS "${_h5_public}" _h5_minor REGEX "^#define H5_VERS_MINOR +[0-9]+")
  file(STRINGS "${_h5_public}" _h5_release REGEX "^#define H5_VERS_RELEASE +[0-9]+")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _h5_major "${_h5_major}")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _h5_minor "${_h5_minor}")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _h5_release "${_h5_release}")
  set(COVE_HDF5_VERSION "${_h5_major}.${_h5_minor}.${_h5_release}")
  file(STRINGS "${COVE_HDF5_ROOT}/include/H5pubconf.h" _h5_parallel REGEX "^#define H5_HAVE_PARALLEL 1")
  if(COVE_HDF5_VERSION VERSION_LESS 1.14)
    set(COVE_HDF5_WHY "version ${COVE_HDF5_VERSION} < 1.14")
  elseif(NOT _h5_parallel)
    set(COVE_HDF5_WHY "HDF5 ${COVE_HDF5_VERSION} is not built with MPI")
  else()
    set(COVE_HDF5_FOUND ON)
    if(NOT TARGET cove_hdf5)
      add_library(cove_hdf5 SHARED IMPORTED GLOBAL)
      set_target_properties(cove_hdf5 PROPERTIES
        IMPORTED_LOCATION "${_h5_lib}"
        INTERFACE_INCLUDE_DIRECTORIES "${COVE_HDF5_ROOT}/include"
        INTERFACE_LINK_LIBRARIES MPI::MPI_C)
    endif()
    message(STATUS "HDF5 ${COVE_HDF5_VERSION} (parallel) for the VOL connector: ${COVE_HDF5_ROOT}")
  endif()
endif()
