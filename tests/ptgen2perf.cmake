# sptd-ptgen2perf (tests/ptgen2perf/): the emulated-PT generator's output as
# a perf.data file (intel_pt + switch events), and test_ptgen2perf: generated
# cases imported with `sysptd import perf.data` equal truth.txt, and perf
# script decodes the same calls and returns (root for ptrace; skip 77).
file(GLOB SPTD_P2P_SRC CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/ptgen2perf/*.c)
add_executable(sptd-ptgen2perf ${SPTD_P2P_SRC})
target_link_libraries(sptd-ptgen2perf PRIVATE PkgConfig::LIBELF)
set_target_properties(sptd-ptgen2perf PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
if(TARGET sptd-ptgen)
  sptd_add_test(test_ptgen2perf SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_ptgen2perf.c
                ${CMAKE_CURRENT_LIST_DIR}/truth_compare.c
                LIBS sptd_store sptd_decode
                ARGS $<TARGET_FILE:sptd-ptgen> $<TARGET_FILE:sptd-ptgen2perf> ${CMAKE_BINARY_DIR}/progs
                LABELS ptgen root)
  if(TARGET test_ptgen2perf)
    add_dependencies(test_ptgen2perf sptd-ptgen sptd-ptgen2perf sysptd ptprog-fib ptprog-fptr
                     ptprog-threads ptprog-fib-pie)
    set_tests_properties(test_ptgen2perf PROPERTIES TIMEOUT 120)
  endif()
endif()
