# posenc_service_harness (fuzz/service_harness.h): a fresh PosencServer per
# input, checked against the MPFR references of tests/numerics. Included by
# fuzz/CMakeLists.txt (the libFuzzer targets) and tests/fuzz (the corpus
# replay test), whichever is configured.
if(TARGET posenc_service_harness)
  return()
endif()
if(NOT TARGET posenc_mpfr_reference)
  # The fuzz preset builds no tests: the same sources, without GTest.
  add_library(posenc_mpfr_reference STATIC
    ${PROJECT_SOURCE_DIR}/tests/numerics/mpfr_reference.cc
    ${PROJECT_SOURCE_DIR}/tests/numerics/rope_reference.cc
    ${PROJECT_SOURCE_DIR}/tests/numerics/real_reference.cc
    ${PROJECT_SOURCE_DIR}/tests/numerics/grid_reference.cc
    ${PROJECT_SOURCE_DIR}/tests/numerics/multi_axis_reference.cc)
  target_link_libraries(posenc_mpfr_reference
    PUBLIC posenc_core PRIVATE posenc_warnings)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND
     CMAKE_CXX_COMPILER_VERSION VERSION_LESS 15)
    # clang < 15 has no _Float16 on x86-64. The reference only converts
    # values that are exact float16s (no rounding), which the storage type
    # __fp16 does as well, with compiler-rt's conversion routines.
    execute_process(
      COMMAND ${CMAKE_CXX_COMPILER} -rtlib=compiler-rt --print-libgcc-file-name
      OUTPUT_VARIABLE POSENC_CLANG_BUILTINS OUTPUT_STRIP_TRAILING_WHITESPACE)
    target_compile_definitions(posenc_mpfr_reference PRIVATE _Float16=__fp16)
    target_link_libraries(posenc_mpfr_reference PUBLIC ${POSENC_CLANG_BUILTINS})
  endif()
endif()
add_library(posenc_service_harness STATIC
  ${PROJECT_SOURCE_DIR}/fuzz/service_harness.cc)
target_link_libraries(posenc_service_harness
  PUBLIC posenc_server_lib posenc_convert posenc_mpfr_reference
  PRIVATE posenc_warnings)
