# sched/: slice builder (table-driven, no root), page parser and ftrace
# instance (root + tracefs: a real instance, real pages).
sptd_add_test(test_sched_builder SOURCES ${SPTD_TEST_DIR}/test_sched_builder.c LIBS sptd_sched)
sptd_add_test(test_sched_trace SOURCES ${SPTD_TEST_DIR}/test_sched_trace.c LIBS sptd_sched
              LABELS root)
sptd_add_test(test_sched_parser SOURCES ${SPTD_TEST_DIR}/test_sched_parser.c LIBS sptd_sched
              LABELS root)
