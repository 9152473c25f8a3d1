# decode/: PT decoding on the real captures, phase-2 stacks, argument checks.
sptd_add_test(test_dec_fixtures SOURCES ${SPTD_TEST_DIR}/test_dec_fixtures.c
              LIBS sptd_decode sptd_ipt)
sptd_add_test(test_dec_stack SOURCES ${SPTD_TEST_DIR}/test_dec_stack.c
              LIBS sptd_decode)
sptd_add_test(test_dec_import SOURCES ${SPTD_TEST_DIR}/test_dec_import.c
              LIBS sptd_col sptd_store)
# The decoder always ends: crafted PT that leaves libipt on a `jmp .`
# (decode/flow.c's stall guard).
sptd_add_test(test_dec_stall SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_dec_stall.c
              LIBS sptd_decode sptd_ipt)
if(TARGET test_dec_stall)
  set_tests_properties(test_dec_stall PROPERTIES TIMEOUT 60)
endif()
# phase 2's event order against a plain stable sort of the same keys
sptd_add_test(test_dec_sort SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_dec_sort.c LIBS sptd_decode)
if(TARGET test_dec_sort)
  target_include_directories(test_dec_sort PRIVATE ${CMAKE_SOURCE_DIR}/decode)
endif()
# PIP/CR3 cross-check of the sched timeline: sptd-ptgen on 2 CPUs imported
# with the true sched.txt (no mismatch) and a swapped one (mismatches + gap).
sptd_add_test(test_dec_pip SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_dec_pip.c
              ${CMAKE_CURRENT_LIST_DIR}/truth_compare.c
              LIBS sptd_store sptd_decode
              ARGS $<TARGET_FILE:sptd-ptgen> ${CMAKE_BINARY_DIR}/progs)
if(TARGET test_dec_pip)
  add_dependencies(test_dec_pip sysptd sptd-ptgen ptprog-fib ptprog-fptr)
  set_tests_properties(test_dec_pip PROPERTIES TIMEOUT 60)
endif()
