# perf.data import speed: bench/bench-import.sh BUILD [ROUNDS] times
# `sysptd import perf.data` next to perf's own paths on the same files.
add_custom_target(bench-import
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/bench-import.sh ${CMAKE_BINARY_DIR} 3
  DEPENDS sysptd USES_TERMINAL)
