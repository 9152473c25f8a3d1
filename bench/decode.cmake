# PT decode throughput (bench/bench-decode.sh runs it next to perf script).
add_executable(bench_decode ${CMAKE_CURRENT_SOURCE_DIR}/bench_decode.c)
target_link_libraries(bench_decode PRIVATE sptd_decode sptd_ipt)

# The SQL floor of an import: sptd_store's slice path against the same rows
# in bare SQLite, same run (BENCHMARKS.md, rows 2 and 3).
add_executable(bench_store ${CMAKE_CURRENT_SOURCE_DIR}/bench_store.c)
target_link_libraries(bench_store PRIVATE sptd_store PkgConfig::SQLITE3)
