add_executable(sptd_pingpong ${CMAKE_CURRENT_LIST_DIR}/pingpong.c)
