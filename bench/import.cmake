# perf.data import speed (rows 2 and 3 of BENCHMARKS.md): bench/bench-import.sh
# BUILD [ROUNDS] times `sysptd import` against `perf script` on the real
# captures, bench/bench-import-dense.sh BUILD [ROUNDS] on a dense
# single-CPU trace it generates from sptd_bench_dense.
add_custom_target(bench-import
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bench-import.sh ${CMAKE_BINARY_DIR} 7
  DEPENDS sysptd USES_TERMINAL)

# The program behind the dense trace: real work with many calls (a small
# bytecode machine calling hash, table, sort and recursive functions), a
# PIE linked -z now (nothing lazy after main).  An input, like tests/progs:
# its own flags only.
add_executable(sptd_bench_dense ${CMAKE_CURRENT_LIST_DIR}/dense.c)
set_property(TARGET sptd_bench_dense PROPERTY COMPILE_OPTIONS -O1 -fno-inline -fPIE)
target_link_options(sptd_bench_dense PRIVATE -pie -Wl,-z,now)
add_custom_target(bench-import-dense
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bench-import-dense.sh ${CMAKE_BINARY_DIR} 5
  DEPENDS sysptd sptd-ptgen sptd-ptgen2perf sptd_bench_dense USES_TERMINAL)
