# Configures a headless build with every Qt package hidden, builds mkb and runs `mkb --version`.
# Unoptimised and without debug info: the test proves the build works without Qt, and -O0 compiles it in 249 s where
# Release takes 378 s on a 2-core machine (the CI's test time is bounded).
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}" -G "${GENERATOR}"
    -DMKB_HEADLESS=ON -DMKB_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0
    -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=TRUE -DCMAKE_DISABLE_FIND_PACKAGE_QCustomPlotQt6=TRUE
  RESULT_VARIABLE configure_result)
if(NOT configure_result EQUAL 0)
  message(FATAL_ERROR "headless configure failed (${configure_result})")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}" --target mkb RESULT_VARIABLE build_result)
if(NOT build_result EQUAL 0)
  message(FATAL_ERROR "headless build of mkb failed (${build_result})")
endif()
execute_process(COMMAND "${WORK_DIR}/app/mkb" --version OUTPUT_VARIABLE version_output RESULT_VARIABLE run_result)
if(NOT run_result EQUAL 0 OR NOT version_output MATCHES "^mkb ")
  message(FATAL_ERROR "headless mkb --version failed: ${version_output}")
endif()
execute_process(COMMAND ldd "${WORK_DIR}/app/mkb" OUTPUT_VARIABLE linked_libraries)
if(linked_libraries MATCHES "libQt")
  message(FATAL_ERROR "the headless mkb links Qt:\n${linked_libraries}")
endif()
message(STATUS "headless build OK: ${version_output}")
