# Stamps the version and the git commit into a generated header.
execute_process(
  COMMAND git -C "${CMAKE_SOURCE_DIR}" rev-parse --short=12 HEAD
  OUTPUT_VARIABLE MKB_GIT_COMMIT
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET)
if(NOT MKB_GIT_COMMIT)
  set(MKB_GIT_COMMIT "unknown")
endif()
configure_file("${CMAKE_SOURCE_DIR}/cmake/version.h.in" "${CMAKE_BINARY_DIR}/generated/mkb/version.h" @ONLY)
