# query/perfetto*: the Perfetto (protobuf) and Chrome JSON export.
# test_perfetto decodes exports of synthetic incidents with the independent
# reader in pftrace_reader.c and compares them with the incident's rows;
# test_perfetto_big does the same for 1,000,000 slices and prints the export
# time (never asserted); test_perfetto_protoc checks the bytes with
# `protoc --decode` against tests/perfetto/sysptd_trace.proto (skips without
# protoc).
set(SPTD_PFT_READER ${SPTD_TEST_DIR}/pftrace_reader.c ${SPTD_TEST_DIR}/test_perfetto_check.c)
sptd_add_test(test_perfetto SOURCES ${SPTD_TEST_DIR}/test_perfetto.c ${SPTD_PFT_READER}
              LIBS sptd_query sptd_store LABELS perfetto)
target_include_directories(test_perfetto PRIVATE ${CMAKE_SOURCE_DIR}/query)
sptd_add_test(test_perfetto_big SOURCES ${SPTD_TEST_DIR}/test_perfetto_big.c ${SPTD_PFT_READER}
              LIBS sptd_query sptd_store LABELS perfetto)
sptd_add_test(test_perfetto_protoc SOURCES ${SPTD_TEST_DIR}/test_perfetto_protoc.c
              LIBS sptd_query sptd_store LABELS perfetto)
