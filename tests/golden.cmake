# Golden end-to-end PT decode: sptd-ptgen's PT through `sysptd import --pt`,
# every interval compared with the generator's truth.txt (needs root for
# ptrace; skips otherwise).  The generator and its programs are defined in
# ptgen.cmake, included after this file: dependencies resolve at generate
# time.  Without a C++ compiler there is no ptprog-exc (the test leaves the
# cases that need it out, saying so).
include(CheckLanguage)
check_language(CXX)
set(SPTD_GOLDEN_DEPS sysptd sptd-ptgen ptprog-fib ptprog-fib-pie ptprog-fptr ptprog-tailcall
    ptprog-syscalls ptprog-threads)
if(CMAKE_CXX_COMPILER)
  list(APPEND SPTD_GOLDEN_DEPS ptprog-exc)
endif()
sptd_add_test(test_golden SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_golden.c
              ${CMAKE_CURRENT_LIST_DIR}/truth_compare.c
              LIBS sptd_store sptd_decode
              ARGS $<TARGET_FILE:sptd-ptgen> ${CMAKE_BINARY_DIR}/progs LABELS golden)
if(TARGET test_golden)
  add_dependencies(test_golden ${SPTD_GOLDEN_DEPS})
  set_tests_properties(test_golden PROPERTIES TIMEOUT 120)
endif()
