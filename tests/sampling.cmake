# Tests of the sampling source, perf ring arithmetic and symbols (owner:
# sampling).  Fixture programs are built here so tests can compare symbol
# lookups with what nm/readelf say about a real binary.
sptd_add_test(test_ring SOURCES ${SPTD_TEST_DIR}/test_ring.c LIBS sptd_col)

# symfix: a small PIE with a static function, a global one and a C++ method.
set(SPTD_SYMFIX_SRC ${SPTD_TEST_DIR}/fixtures-src)
set(SPTD_SYMFIX ${CMAKE_CURRENT_BINARY_DIR}/symfix)
find_program(SPTD_GXX NAMES g++ c++)
if(SPTD_GXX)
  add_custom_command(OUTPUT ${SPTD_SYMFIX}
    COMMAND ${SPTD_GXX} -O1 -g0 -fPIE -pie -Wl,--build-id
            -x c ${SPTD_SYMFIX_SRC}/symfix.c -x c++ ${SPTD_SYMFIX_SRC}/symfix_cxx.cpp
            -o ${SPTD_SYMFIX}
    DEPENDS ${SPTD_SYMFIX_SRC}/symfix.c ${SPTD_SYMFIX_SRC}/symfix_cxx.cpp
    COMMENT "Building test fixture symfix (C + C++)")
  add_custom_target(sptd_symfix DEPENDS ${SPTD_SYMFIX})
  set(SPTD_SYMFIX_CXX 1)
else()
  add_executable(symfix ${SPTD_SYMFIX_SRC}/symfix.c ${SPTD_SYMFIX_SRC}/symfix_nocxx.c)
  target_link_options(symfix PRIVATE -Wl,--build-id)
  set_target_properties(symfix PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  add_custom_target(sptd_symfix DEPENDS symfix)
  set(SPTD_SYMFIX_CXX 0)
endif()

sptd_add_test(test_symfile SOURCES ${SPTD_TEST_DIR}/test_symfile.c LIBS sptd_decode)
add_dependencies(test_symfile sptd_symfix)
target_compile_definitions(test_symfile PRIVATE SPTD_SYMFIX="${SPTD_SYMFIX}"
                           SPTD_SYMFIX_CXX=${SPTD_SYMFIX_CXX})

sptd_add_test(test_sampler SOURCES ${SPTD_TEST_DIR}/test_sampler.c LIBS sptd_col)

sptd_add_test(test_symcap SOURCES ${SPTD_TEST_DIR}/test_symcap.c LIBS sptd_col)
