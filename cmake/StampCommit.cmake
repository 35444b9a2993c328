# Writes generated/mkb/commit.h naming the commit of SOURCE_DIR (run at every build; the file changes only when the
# commit does). Without git, an archive made by `git archive` names its commit in cmake/archive-commit.txt.
execute_process(
  COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
  OUTPUT_VARIABLE MKB_GIT_COMMIT
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET)
if(NOT MKB_GIT_COMMIT AND EXISTS "${SOURCE_DIR}/cmake/archive-commit.txt")
  file(READ "${SOURCE_DIR}/cmake/archive-commit.txt" archived)
  string(STRIP "${archived}" archived)
  if(archived MATCHES "^[0-9a-f]+$")
    string(SUBSTRING "${archived}" 0 12 MKB_GIT_COMMIT)
  endif()
endif()
if(NOT MKB_GIT_COMMIT)
  set(MKB_GIT_COMMIT "unknown")
endif()
set(content "// The git commit this build was made from (generated at build time by cmake/StampCommit.cmake).
#pragma once

namespace mkb {
inline constexpr const char* kGitCommit = \"${MKB_GIT_COMMIT}\";
} // namespace mkb
")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" existing)
endif()
if(NOT existing STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
