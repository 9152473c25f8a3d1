# perf.data import (collector/perfdata_*.c): real PT recordings compared
# with perf's own decode, a sched_switch recording made in the test (root),
# bad files.
sptd_add_test(test_perfdata SOURCES ${SPTD_TEST_DIR}/test_perfdata.c
              LIBS sptd_col sptd_store sptd_decode)
if(TARGET test_perfdata)
  target_include_directories(test_perfdata PRIVATE ${CMAKE_SOURCE_DIR}/collector)
  set_tests_properties(test_perfdata PROPERTIES TIMEOUT 120)
endif()
