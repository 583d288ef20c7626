# A Debian package of everything `cmake --install` installs: the headers, the C libraries,
# the drop-in malloc libraries, the `strata` command with its helper programs, recorder,
# Valgrind tool and data files, and the CMake and pkg-config files.
#   cmake --build build --target package     (or: cd build && cpack -G DEB)
# makes build/strata_<version>_<arch>.deb, installed under /usr. The command finds its helpers
# relative to its own executable, so it works from /usr as from the build tree.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME strata)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "Strata")
set(CPACK_PACKAGE_CONTACT "Strata developers <strata@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "memory allocators composed from heap layers, and tools that record, replay and judge them")
set(CPACK_PACKAGE_DESCRIPTION
  "A C++20 header-only library of heap layers that compose into memory allocators; reaps,\
 regions and GNU obstacks from C; drop-in malloc libraries (libstrata.so, libstrata-lea.so,\
 libstrata-kingsley.so); and the strata command, which records a program's allocations,\
 replays them on glibc, jemalloc, mimalloc, tcmalloc and Strata's own allocators, runs the\
 program live on each, and says which allocator and settings suit it.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The shared libraries the programs link (libc, libstdc++, libzstd, zlib) from dpkg-shlibdeps;
# what some commands start or preload, as recommendations.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
  "python3-matplotlib, valgrind, binutils, libjemalloc2, libmimalloc2.0, libtcmalloc-minimal4")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "heaptrack, libunwind8, g++")
include(CPack)
