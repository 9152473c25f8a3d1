# The emulated-PT generator (tests/ptgen/) and the programs it runs
# (tests/progs/).  See docs/PTGEN.md.
file(GLOB SPTD_PTGEN_SRC CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/ptgen/*.c)
list(FILTER SPTD_PTGEN_SRC EXCLUDE REGEX "ptgen_test\\.c$")
add_executable(sptd-ptgen ${SPTD_PTGEN_SRC})
target_link_libraries(sptd-ptgen PRIVATE sptd_ipt PkgConfig::LIBELF)
set_target_properties(sptd-ptgen PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# Test programs: small, mostly static so libc is in the image and nothing
# runs in ld.so after main.  -fno-inline keeps the call structure.
set(SPTD_PROGS_DIR ${CMAKE_BINARY_DIR}/progs)
function(sptd_ptgen_prog name src)
  cmake_parse_arguments(P "" "" "FLAGS;LIBS" ${ARGN})
  add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/progs/${src})
  # Inputs, not project code: their own flags only (the project's warning
  # set is C-only and would break the C++ one).
  set_property(TARGET ${name} PROPERTY COMPILE_OPTIONS ${P_FLAGS})
  target_link_options(${name} PRIVATE ${P_FLAGS})
  target_link_libraries(${name} PRIVATE ${P_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${SPTD_PROGS_DIR})
endfunction()
sptd_ptgen_prog(ptprog-fib fib.c FLAGS -O1 -fno-inline -fno-optimize-sibling-calls -static)
sptd_ptgen_prog(ptprog-fib-pie fib.c FLAGS -O1 -fno-inline -fno-optimize-sibling-calls -fPIE -pie -Wl,-z,now)
sptd_ptgen_prog(ptprog-fptr fptr.c FLAGS -O2 -fno-inline -static)
sptd_ptgen_prog(ptprog-tailcall tailcall.c FLAGS -O2 -fno-inline -static)
sptd_ptgen_prog(ptprog-syscalls syscalls.c FLAGS -O1 -fno-inline -static)
sptd_ptgen_prog(ptprog-threads threads.c FLAGS -O1 -fno-inline -static -pthread)
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
    # Dynamic: a static binary registers .eh_frame with libgcc, whose first
  # throw sorts every FDE (millions of instructions); dynamically it is a
  # binary search over .eh_frame_hdr.  -z now: no lazy binding after main.
  sptd_ptgen_prog(ptprog-exc exc.cpp FLAGS -O1 -fno-inline -no-pie -Wl,-z,now)
endif()

# End-to-end: the generator on every program, --verify on, 1 to 3 CPUs.
set(SPTD_PTGEN_PROGS ptprog-fib ptprog-fib-pie ptprog-fptr ptprog-tailcall ptprog-syscalls
    ptprog-threads)
if(TARGET ptprog-exc)
  list(APPEND SPTD_PTGEN_PROGS ptprog-exc)
  sptd_add_test(test_ptgen SOURCES ${CMAKE_CURRENT_LIST_DIR}/ptgen/ptgen_test.c
                ARGS $<TARGET_FILE:sptd-ptgen> ${SPTD_PROGS_DIR} LABELS ptgen)
  add_dependencies(test_ptgen sptd-ptgen ${SPTD_PTGEN_PROGS})
  set_tests_properties(test_ptgen PROPERTIES TIMEOUT 300)
else()
  message(STATUS "sysptd: no C++ compiler: test_ptgen (needs the C++ exception program) not registered")
endif()
