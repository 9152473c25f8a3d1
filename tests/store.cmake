# store/: the incident file.  test_store checks every function on real
# SQLite files; test_store_bulk prints the bulk insert rate (never asserted);
# test_store_diskfull needs root to mount a small tmpfs (skips otherwise).
sptd_add_test(test_store SOURCES ${SPTD_TEST_DIR}/test_store.c
              LIBS sptd_store PkgConfig::SQLITE3 LABELS store)
sptd_add_test(test_store_bulk SOURCES ${SPTD_TEST_DIR}/test_store_bulk.c
              LIBS sptd_store LABELS store)
sptd_add_test(test_store_diskfull SOURCES ${SPTD_TEST_DIR}/test_store_diskfull.c
              LIBS sptd_store LABELS store)
