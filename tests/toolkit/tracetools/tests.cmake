# The trace tools (toolkit/tracetools): statistics, the bundled workloads, mtrace and heaptrack import,
# export, drag (tracetools_test, linked to the library), and `strata stats|generate|import|export` run as
# a user runs them (tracetools_cli_test, on the built executable).
#
# mtrace_test makes a real glibc mtrace: mtrace_program is run with libc_malloc_debug.so.0 in
# LD_PRELOAD. It is built without sanitizers even in a STRATA_SANITIZE build (an ASan program
# cannot take a preloaded malloc and glibc's hooks would not see ASan's allocations), so the
# test runs in every build; it skips visibly when the library is not installed (fails, under
# STRATA_REQUIRE_DEPS: tests/common/require.hpp).
find_file(STRATA_LIBC_MALLOC_DEBUG libc_malloc_debug.so.0
  PATHS /lib/${CMAKE_LIBRARY_ARCHITECTURE} /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE} /lib64 /usr/lib64
        /lib /usr/lib
  NO_DEFAULT_PATH)
if(NOT STRATA_LIBC_MALLOC_DEBUG)
  set(STRATA_LIBC_MALLOC_DEBUG "")
endif()

add_executable(mtrace_program ${CMAKE_CURRENT_LIST_DIR}/mtrace_program.c)
set_target_properties(mtrace_program PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)
# -O0 -fno-builtin: every allocation call happens as written.
target_compile_options(mtrace_program PRIVATE -O0 -fno-builtin -fno-sanitize=all)
strata_warnings(mtrace_program)
target_link_options(mtrace_program PRIVATE -fno-sanitize=all)

strata_gtest(tracetools_test
  ${CMAKE_CURRENT_LIST_DIR}/trace_stats_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/workloads_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mtrace_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/site_stats_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/site_tally_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/heaptrack_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/heaptrack_input_test.cpp)
target_compile_definitions(tracetools_test PRIVATE
  STRATA_MTRACE_PROGRAM="$<TARGET_FILE:mtrace_program>"
  STRATA_LIBC_MALLOC_DEBUG="${STRATA_LIBC_MALLOC_DEBUG}"
  STRATA_HEAPTRACK_DATA="${CMAKE_CURRENT_LIST_DIR}/data")
target_include_directories(tracetools_test PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(tracetools_test PRIVATE strata_tracetools)
add_dependencies(tracetools_test mtrace_program)

# sites_program writes a trace whose sites point into itself (built with debug information
# and without optimisation, so its marked calls stay on their lines) for the --sites tests.
add_executable(sites_program ${CMAKE_CURRENT_LIST_DIR}/sites_program.cpp)
target_compile_options(sites_program PRIVATE -O0 -g)
strata_warnings(sites_program)
target_link_libraries(sites_program PRIVATE strata::strata strata_trace_zstd)

# heaptrack_program: the known sequence heaptrack records in the heaptrack import tests
# (heaptrack_cli_test runs the installed heaptrack on it; data/ holds a recording made so).
# Without sanitizers and optimisation, as mtrace_program; with debug information, so that
# `strata stats --sites` names its functions and lines.
add_executable(heaptrack_program ${CMAKE_CURRENT_LIST_DIR}/heaptrack_program.c)
set_target_properties(heaptrack_program PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)
target_compile_options(heaptrack_program PRIVATE -O0 -g -fno-builtin -fno-sanitize=all)
strata_warnings(heaptrack_program)
target_link_options(heaptrack_program PRIVATE -fno-sanitize=all)

if(TARGET strata_cli)
  strata_gtest(tracetools_cli_test ${CMAKE_CURRENT_LIST_DIR}/tracetools_cli_test.cpp
                                   ${CMAKE_CURRENT_LIST_DIR}/sites_cli_test.cpp
                                   ${CMAKE_CURRENT_LIST_DIR}/heaptrack_cli_test.cpp)
  target_compile_definitions(tracetools_cli_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    STRATA_SITES_PROGRAM="$<TARGET_FILE:sites_program>"
    STRATA_SITES_SOURCE="${CMAKE_CURRENT_LIST_DIR}/sites_program.cpp"
    STRATA_HEAPTRACK_PROGRAM="$<TARGET_FILE:heaptrack_program>"
    STRATA_HEAPTRACK_DATA="${CMAKE_CURRENT_LIST_DIR}/data")
  add_dependencies(tracetools_cli_test sites_program heaptrack_program)
  target_include_directories(tracetools_cli_test PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(tracetools_cli_test PRIVATE strata::strata strata_trace_zstd)
  add_dependencies(tracetools_cli_test strata_cli)
endif()

# site_timeline_test: the figures by site behind the sites document (never freed, temporary,
# the timeline at its moments, the live-bytes curve) and the document itself (the sites it
# lists, "other", the totals, the frames), on traces built by hand (timeline_traces.hpp).
strata_gtest(site_timeline_test ${CMAKE_CURRENT_LIST_DIR}/site_timeline_test.cpp
                                ${CMAKE_CURRENT_LIST_DIR}/sites_document_test.cpp)
target_include_directories(site_timeline_test PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(site_timeline_test PRIVATE strata_tracetools)

# sites_folder_test: `strata record --sites` of heaptrack_program, then `strata stats --sites
# --out DIR` (stats.json, sites.json, report.html) and `strata compare --sites`
# (<name>-sites.json) read back. Not in a STRATA_SANITIZE build, as the recorder's own tests.
if(TARGET strata_cli AND NOT STRATA_SANITIZE)
  strata_gtest(sites_folder_test ${CMAKE_CURRENT_LIST_DIR}/sites_folder_test.cpp)
  target_compile_definitions(sites_folder_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    STRATA_HEAPTRACK_PROGRAM="$<TARGET_FILE:heaptrack_program>")
  target_include_directories(sites_folder_test PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(sites_folder_test PRIVATE strata::strata strata_trace_zstd strata_support)
  add_dependencies(sites_folder_test strata_cli strata_record heaptrack_program)
  foreach(dep strata_replayer strata_probe)  # compare replays on glibc
    if(TARGET ${dep})
      add_dependencies(sites_folder_test ${dep})
    endif()
  endforeach()
endif()

# `strata stats`'s peak memory at a fixed live set and ten times the events
# (stats_bounded_test.cpp). Not in a STRATA_SANITIZE build: ASan's quarantine and shadow grow
# with what the pass frees, not with what it keeps.
if(TARGET strata_cli AND NOT STRATA_SANITIZE)
  strata_gtest(stats_bounded_test ${CMAKE_CURRENT_LIST_DIR}/stats_bounded_test.cpp)
  target_compile_definitions(stats_bounded_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>")
  add_dependencies(stats_bounded_test strata_cli)
  # The same for `strata stats --sites` and `strata export` (sites_bounded_test.cpp).
  strata_gtest(sites_bounded_test ${CMAKE_CURRENT_LIST_DIR}/sites_bounded_test.cpp)
  target_compile_definitions(sites_bounded_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>")
  target_link_libraries(sites_bounded_test PRIVATE strata_trace)
  add_dependencies(sites_bounded_test strata_cli)
endif()
