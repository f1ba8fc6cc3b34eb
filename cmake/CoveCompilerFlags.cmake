# Warnings, sanitizers and ccache for Cove's own targets.
find_program(COVE_CCACHE ccache)
if(COVE_CCACHE AND COVE_TOP_LEVEL)
  set(CMAKE_C_COMPILER_LAUNCHER ${COVE_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${COVE_CCACHE})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${COVE_CCACHE})
endif()

add_library(cove_warnings INTERFACE)
target_compile_options(cove_warnings INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
  $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-Wall -Wextra -Wpedantic>)

if(COVE_SANITIZE)
  # Host code only: the CUDA plugin (nvcc) is not instrumented. Fortran
  # programs link the instrumented libcove, so they are instrumented too.
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX,Fortran>:-fsanitize=${COVE_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:C,CXX,Fortran>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:C,CXX,Fortran>:-fno-sanitize-recover=all>)
  add_link_options($<$<LINK_LANGUAGE:C,CXX,Fortran>:-fsanitize=${COVE_SANITIZE}>)
endif()
