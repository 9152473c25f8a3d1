# collector/: parsers, tasks, retention (unit), and the recording service
# end to end (root + tracefs: real ftrace instance, real perf events).
sptd_add_test(test_parse SOURCES ${SPTD_TEST_DIR}/test_parse.c LIBS sptd_col)
target_include_directories(test_parse PRIVATE ${CMAKE_SOURCE_DIR}/collector)
sptd_add_test(test_record SOURCES ${SPTD_TEST_DIR}/test_record.c LIBS sptd_store Threads::Threads
              LABELS root)
set_tests_properties(test_record PROPERTIES TIMEOUT 120)
add_test(NAME test_cli COMMAND sh ${SPTD_TEST_DIR}/test_cli.sh)
set_tests_properties(test_cli PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS root
                     ENVIRONMENT "SPTD_BIN=${CMAKE_BINARY_DIR}/sysptd")
sptd_add_test(test_lookup SOURCES ${SPTD_TEST_DIR}/test_lookup.c LIBS sptd_sched sptd_decode)
# Each of these runs a whole sysptd service: one lock, one "sysptd" ftrace
# instance per machine, so `ctest -j` must not run them side by side.
set_tests_properties(test_record test_cli PROPERTIES RESOURCE_LOCK sysptd_service)
