# Stamps the version and paths into a generated header at configure time, and the git commit into another at every
# build, so that `mkb --version` names the commit a binary was built from even when CMake did not run again.
configure_file("${CMAKE_SOURCE_DIR}/cmake/version.h.in" "${CMAKE_BINARY_DIR}/generated/mkb/version.h" @ONLY)
add_custom_target(mkb_commit_stamp
  COMMAND "${CMAKE_COMMAND}" "-DSOURCE_DIR=${CMAKE_SOURCE_DIR}" "-DOUTPUT=${CMAKE_BINARY_DIR}/generated/mkb/commit.h"
          -P "${CMAKE_SOURCE_DIR}/cmake/StampCommit.cmake"
  BYPRODUCTS "${CMAKE_BINARY_DIR}/generated/mkb/commit.h"
  VERBATIM)
