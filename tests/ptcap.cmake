# Intel PT capture (collector/pt_*.c; owner: ptcap).  No PT hardware is
# needed: a fake intel_pt PMU (tests/fakepmu/) serves sysfs trees of several
# CPU generations and AUX/data rings filled with real captured PT.
set(SPTD_FAKEPMU ${SPTD_TEST_DIR}/fakepmu/fakepmu.c)
sptd_add_test(test_pt_attr SOURCES ${SPTD_TEST_DIR}/test_pt_attr.c ${SPTD_FAKEPMU}
              LIBS sptd_col)
sptd_add_test(test_pt_ring SOURCES ${SPTD_TEST_DIR}/test_pt_ring.c ${SPTD_FAKEPMU}
              LIBS sptd_col sptd_store)
if(TARGET test_pt_ring)
  target_include_directories(test_pt_ring PRIVATE ${CMAKE_SOURCE_DIR}/collector)
endif()
sptd_add_test(test_pt_fake SOURCES ${SPTD_TEST_DIR}/test_pt_fake.c ${SPTD_FAKEPMU}
              LIBS sptd_col sptd_store sptd_decode)
if(TARGET test_pt_fake)
  target_include_directories(test_pt_fake PRIVATE ${CMAKE_SOURCE_DIR}/collector)
  set_tests_properties(test_pt_fake PROPERTIES TIMEOUT 120)
endif()
sptd_add_test(test_pt_images SOURCES ${SPTD_TEST_DIR}/test_pt_images.c ${SPTD_FAKEPMU}
              LIBS sptd_col sptd_store sptd_decode)
if(TARGET test_pt_images)
  target_include_directories(test_pt_images PRIVATE ${CMAKE_SOURCE_DIR}/collector)
endif()
sptd_add_test(test_pt_auxpause SOURCES ${SPTD_TEST_DIR}/test_pt_auxpause.c ${SPTD_FAKEPMU}
              LIBS sptd_col sptd_store sptd_sched)
if(TARGET test_pt_auxpause)
  target_include_directories(test_pt_auxpause PRIVATE ${CMAKE_SOURCE_DIR}/collector)
endif()
