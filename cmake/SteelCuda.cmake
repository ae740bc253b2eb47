# The CUDA backend (impl/cuda/, docs/cuda.md). STEEL_CUDA=AUTO builds it when nvcc is found,
# ON requires it, OFF leaves it out; without it STEEL_BACKEND_CUDA answers UNSUPPORTED.
# Sets STEEL_WITH_CUDA. Sanitizer and fuzzer builds leave it out: nvcc does not take their flags
# and the sanitizers cannot see into device code anyway.
set(STEEL_WITH_CUDA OFF)
if(STEEL_CUDA STREQUAL "OFF")
  message(STATUS "Steel: CUDA backend off (STEEL_CUDA=OFF)")
elseif(STEEL_SANITIZE OR STEEL_SANITIZE_THREAD OR STEEL_BUILD_FUZZERS)
  if(STEEL_CUDA STREQUAL "ON")
    message(FATAL_ERROR "STEEL_CUDA=ON cannot be combined with STEEL_SANITIZE, STEEL_SANITIZE_THREAD or STEEL_BUILD_FUZZERS")
  endif()
  message(STATUS "Steel: CUDA backend off in sanitizer and fuzzer builds")
else()
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(STEEL_NVCC nvcc PATHS /usr/local/cuda/bin NO_CACHE)
    if(STEEL_NVCC)
      set(CMAKE_CUDA_COMPILER ${STEEL_NVCC})
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Hopper machine code plus PTX, which the driver compiles for anything newer. One
    # architecture keeps CI's compile short; add yours with -DCMAKE_CUDA_ARCHITECTURES=...
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "90-real;90-virtual")
    endif()
    if(NOT CMAKE_CUDA_HOST_COMPILER)
      set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
    set(STEEL_WITH_CUDA ON)
    # nvcc's own warnings, and the host compiler's on the host half of .cu files.
    target_compile_options(steel_warnings INTERFACE
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wshadow>
      $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${STEEL_WERROR}>>:--Werror=all-warnings -Xcompiler=-Werror>)
    message(STATUS "Steel: CUDA backend on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures "
                   "${CMAKE_CUDA_ARCHITECTURES})")
  elseif(STEEL_CUDA STREQUAL "ON")
    message(FATAL_ERROR "STEEL_CUDA=ON but no CUDA compiler was found (set CUDACXX or CMAKE_CUDA_COMPILER)")
  else()
    message(STATUS "Steel: CUDA backend off (no nvcc found)")
  endif()
endif()
