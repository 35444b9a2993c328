# The installed layout and the Debian package: data under share/mkb, desktop integration, man pages, CPack.
# Installed binaries find their data at <bindir>/../share/mkb (core/util/paths.cpp), wherever the tree is unpacked.

# Data: the problem suite (with _solutions) and the resources the binaries read at run time. The grader package is
# installed by core/CMakeLists.txt. Desktop integration and compiled-in icons are installed below or not at all.
install(DIRECTORY "${CMAKE_SOURCE_DIR}/problems/" DESTINATION "${MKB_DATA_SUBDIR}/problems"
  PATTERN "__pycache__" EXCLUDE
  PATTERN "*.pyc" EXCLUDE)
install(DIRECTORY "${CMAKE_SOURCE_DIR}/resources/" DESTINATION "${MKB_DATA_SUBDIR}/resources"
  PATTERN "__pycache__" EXCLUDE
  PATTERN "*.desktop" EXCLUDE
  PATTERN "*.metainfo.xml" EXCLUDE
  PATTERN "*.qrc" EXCLUDE
  PATTERN "icons" EXCLUDE)

# The guide and the reference documents.
install(DIRECTORY "${CMAKE_SOURCE_DIR}/docs/" DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/mkb-workbench"
  FILES_MATCHING PATTERN "*.md" PATTERN "*.png")

# Generators for the man pages and the icon sizes. The package test needs them built before it runs cpack.
add_subdirectory("${CMAKE_SOURCE_DIR}/packaging")
if(TARGET packaging_deb)
  foreach(generated IN ITEMS mkb-manpage mkb-workbench-manpage mkb-app-icons)
    if(TARGET ${generated})
      add_dependencies(packaging_deb ${generated})
    endif()
  endforeach()
endif()

set(CPACK_PACKAGE_NAME "mkb-workbench")
set(CPACK_PACKAGE_VENDOR "MetaKernelBench Workbench")
set(CPACK_PACKAGE_CONTACT "MetaKernelBench Workbench developers <mkb-workbench@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "benchmark GPU-kernel knowledge transfer between kernel DSLs")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR "DEB")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_COMPRESSION_TYPE "gzip")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "Runs and studies kernel knowledge-transfer benchmarks: a model solves a
fused-subgraph problem in one kernel DSL, distils what it learned into a skill,
and a fresh attempt in another DSL gets that skill. Kernels are graded on a
local NVIDIA GPU by a cheat-resistant Python grader; results are kept in one
SQLite file per project. Ships the headless CLI mkb, the Qt 6 workbench
mkb-workbench, the grader package and the problem suite with solutions.")
# Library dependencies (Qt 6, QCustomPlot, SQLite, curl) come from dpkg-shlibdeps; the grader needs Python 3,
# and grading kernels needs PyTorch (Debian's CPU build, or pip's CUDA build on a GPU host).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.9)")
if(NOT MKB_HEADLESS)
  # The desktop platform plugins live here on some Debian-based releases.
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-qpa-plugins")
endif()
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-torch")
include(CPack)
