# FindCHOLMOD: SuiteSparse's CHOLMOD for Debian's SuiteSparse 5, which ships no CMake config.
# Defines CHOLMOD_FOUND and the imported target CHOLMOD::CHOLMOD (CHOLMOD, its orderings, SuiteSparse_config).
include(FindPackageHandleStandardArgs)
find_path(CHOLMOD_INCLUDE_DIR cholmod.h PATH_SUFFIXES suitesparse)
find_library(CHOLMOD_LIBRARY cholmod)
find_library(SUITESPARSECONFIG_LIBRARY suitesparseconfig)
find_library(AMD_LIBRARY amd)
find_library(CAMD_LIBRARY camd)
find_library(COLAMD_LIBRARY colamd)
find_library(CCOLAMD_LIBRARY ccolamd)
find_package_handle_standard_args(CHOLMOD REQUIRED_VARS CHOLMOD_LIBRARY CHOLMOD_INCLUDE_DIR
  SUITESPARSECONFIG_LIBRARY AMD_LIBRARY COLAMD_LIBRARY)
if(CHOLMOD_FOUND AND NOT TARGET CHOLMOD::CHOLMOD)
  add_library(CHOLMOD::CHOLMOD UNKNOWN IMPORTED)
  set_target_properties(CHOLMOD::CHOLMOD PROPERTIES
    IMPORTED_LOCATION "${CHOLMOD_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CHOLMOD_INCLUDE_DIR}")
  set(_cholmod_deps ${SUITESPARSECONFIG_LIBRARY} ${AMD_LIBRARY} ${COLAMD_LIBRARY})
  if(CAMD_LIBRARY)
    list(APPEND _cholmod_deps ${CAMD_LIBRARY})
  endif()
  if(CCOLAMD_LIBRARY)
    list(APPEND _cholmod_deps ${CCOLAMD_LIBRARY})
  endif()
  # CHOLMOD's supernodal kernels run on the system BLAS/LAPACK, and dualgibbs' selected inversion calls them
  # directly (dense blocks of the factor), so they are linked explicitly.
  find_package(LAPACK REQUIRED)
  list(APPEND _cholmod_deps LAPACK::LAPACK)
  set_property(TARGET CHOLMOD::CHOLMOD PROPERTY INTERFACE_LINK_LIBRARIES "${_cholmod_deps}")
endif()
mark_as_advanced(CHOLMOD_INCLUDE_DIR CHOLMOD_LIBRARY SUITESPARSECONFIG_LIBRARY AMD_LIBRARY CAMD_LIBRARY
  COLAMD_LIBRARY CCOLAMD_LIBRARY)
