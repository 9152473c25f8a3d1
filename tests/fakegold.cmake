# The PT capture path against exact ground truth: sptd-ptgen's PT served by
# the fake intel_pt PMU (tests/fakepmu/), captured and decoded as sysptd
# record does, every interval compared with truth.txt (tests/truth_compare.c).
# Needs root for ptrace (skips otherwise).  The generator and its programs
# come from ptgen.cmake (dependencies resolve at generate time).
sptd_add_test(test_pt_fakegold SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pt_fakegold.c
              ${CMAKE_CURRENT_LIST_DIR}/truth_compare.c ${CMAKE_CURRENT_LIST_DIR}/fakepmu/fakepmu.c
              ${CMAKE_CURRENT_LIST_DIR}/fakepmu/fakepmu_gen.c ${CMAKE_CURRENT_LIST_DIR}/fakepmu/fakepmu_cut.c
              LIBS sptd_col sptd_store sptd_decode sptd_ipt
              ARGS $<TARGET_FILE:sptd-ptgen> ${CMAKE_BINARY_DIR}/progs LABELS golden)
if(TARGET test_pt_fakegold)
  target_include_directories(test_pt_fakegold PRIVATE ${CMAKE_SOURCE_DIR}/collector)
  add_dependencies(test_pt_fakegold sptd-ptgen ptprog-fib)
  set_tests_properties(test_pt_fakegold PROPERTIES TIMEOUT 120)
endif()
