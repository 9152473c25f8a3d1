# PT decode throughput (bench/bench-decode.sh runs it next to perf script).
add_executable(bench_decode ${CMAKE_CURRENT_SOURCE_DIR}/bench_decode.c)
target_link_libraries(bench_decode PRIVATE sptd_decode sptd_ipt)
