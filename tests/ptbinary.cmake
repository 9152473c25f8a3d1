# The real `sysptd --source pt --trigger ... --once` against the fake
# intel_pt PMU: tests/fakepmu/preload.c, LD_PRELOADed into sysptd, serves
# sptd-ptgen's PT and sideband for the intel_pt and dummy events and leaves
# every other perf event and ftrace real; the incident must decode to the
# generator's truth.txt (tests/truth_compare.c).  Needs root (skips
# otherwise).  sptd-ptgen and its programs come from ptgen.cmake.
add_library(sptd-fakepmu-preload SHARED ${CMAKE_CURRENT_LIST_DIR}/fakepmu/preload.c
            ${CMAKE_CURRENT_LIST_DIR}/fakepmu/fakepmu.c ${CMAKE_CURRENT_LIST_DIR}/fakepmu/fakepmu_gen.c)
target_compile_definitions(sptd-fakepmu-preload PRIVATE FAKEPMU_PRELOAD)
target_include_directories(sptd-fakepmu-preload PRIVATE ${CMAKE_SOURCE_DIR}/collector
                           ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(sptd-fakepmu-preload PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(sptd-fakepmu-preload PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
sptd_add_test(test_pt_binary SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pt_binary.c
              ${CMAKE_CURRENT_LIST_DIR}/truth_compare.c ${CMAKE_CURRENT_LIST_DIR}/fakepmu/fakepmu.c
              ${CMAKE_CURRENT_LIST_DIR}/fakepmu/fakepmu_gen.c ${CMAKE_CURRENT_LIST_DIR}/fakepmu/fakepmu_cut.c
              LIBS sptd_col sptd_store sptd_decode sptd_ipt
              ARGS $<TARGET_FILE:sptd-ptgen> ${CMAKE_BINARY_DIR}/progs
                   $<TARGET_FILE:sptd-fakepmu-preload> LABELS golden)
if(TARGET test_pt_binary)
  target_include_directories(test_pt_binary PRIVATE ${CMAKE_SOURCE_DIR}/collector)
  add_dependencies(test_pt_binary sysptd sptd-ptgen ptprog-fib sptd-fakepmu-preload)
  set_tests_properties(test_pt_binary PROPERTIES TIMEOUT 180 RESOURCE_LOCK sysptd_service)
endif()
