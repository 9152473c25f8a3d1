# query/: SQL runner, printers and reports (test_query, on real incident
# files written with store/'s API) and `sysptd query` itself (test_query_cmd:
# runs $SPTD_BIN when it has been built, else calls sptd_col_cmd_query).
sptd_add_test(test_query SOURCES ${SPTD_TEST_DIR}/test_query.c
              LIBS sptd_query sptd_store LABELS query)
sptd_add_test(test_query_cmd SOURCES ${SPTD_TEST_DIR}/test_query_cmd.c
              LIBS sptd_col LABELS query)
