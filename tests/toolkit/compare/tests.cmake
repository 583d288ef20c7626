# `strata compare` end to end (tests/toolkit/compare/compare_test.cpp): the built `strata` executable
# run with arguments, its tables, results.json, report.txt and plot files checked; plots.py
# run on a hand-made results.json; bad input. The runs that preload an allocator (every
# allocator but glibc, and recording a command) are skipped under STRATA_SANITIZE: a
# sanitized program cannot take another malloc by LD_PRELOAD.
if(TARGET strata_cli)
  add_executable(compare_alloc_program ${CMAKE_CURRENT_LIST_DIR}/alloc_program.c)
  target_compile_options(compare_alloc_program PRIVATE -O1)
  strata_warnings(compare_alloc_program)

  strata_gtest(compare_test ${CMAKE_CURRENT_LIST_DIR}/compare_test.cpp)
  if(STRATA_SANITIZE)
    set(strata_cmp_preload 0)
  else()
    set(strata_cmp_preload 1)
  endif()
  target_compile_definitions(compare_test PRIVATE
    STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    STRATA_PLOTS_PATH="${CMAKE_BINARY_DIR}/share/strata/plots.py"
    STRATA_TEST_PROGRAM="$<TARGET_FILE:compare_alloc_program>"
    STRATA_TEST_PRELOAD=${strata_cmp_preload})
  target_link_libraries(compare_test PRIVATE strata::strata strata_tracetools)
  add_dependencies(compare_test strata_cli compare_alloc_program strata_share_files)
  # What the runs use: the replayer, the recorder and the allocators' libraries.
  foreach(strata_cmp_dep strata_replayer strata_probe strata_record strata_malloc
          strata_malloc_lea strata_malloc_kingsley strata_malloc_secure)
    if(TARGET ${strata_cmp_dep})
      add_dependencies(compare_test ${strata_cmp_dep})
    endif()
  endforeach()

  # Judging every process of a command and the live runs (compare_live_test.cpp): a program
  # that starts a second process, and a misbehaving stand-in for libstrata.so.
  add_executable(compare_fork_program ${CMAKE_CURRENT_LIST_DIR}/fork_program.c)
  target_compile_options(compare_fork_program PRIVATE -O1)
  strata_warnings(compare_fork_program)
  add_executable(compare_calloc_program ${CMAKE_CURRENT_LIST_DIR}/calloc_program.c)
  target_compile_options(compare_calloc_program PRIVATE -O1 -fno-builtin)
  strata_warnings(compare_calloc_program)
  add_library(compare_misbehave_preload SHARED ${CMAKE_CURRENT_LIST_DIR}/misbehave_preload.c)
  # Never sanitized: strata-probe, which is not, preloads it.
  target_compile_options(compare_misbehave_preload PRIVATE -fno-sanitize=all)
  strata_warnings(compare_misbehave_preload)
  target_link_options(compare_misbehave_preload PRIVATE -fno-sanitize=all)
  strata_gtest(compare_live_test ${CMAKE_CURRENT_LIST_DIR}/compare_live_test.cpp)
  target_compile_definitions(compare_live_test PRIVATE
    STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    STRATA_TEST_PROGRAM="$<TARGET_FILE:compare_alloc_program>"
    STRATA_TEST_FORK_PROGRAM="$<TARGET_FILE:compare_fork_program>"
    STRATA_TEST_CALLOC_PROGRAM="$<TARGET_FILE:compare_calloc_program>"
    STRATA_TEST_MISBEHAVE_LIB="$<TARGET_FILE:compare_misbehave_preload>"
    $<$<TARGET_EXISTS:strata_record>:STRATA_TEST_RECORD_LIB="$<TARGET_FILE:strata_record>">
    STRATA_TEST_PRELOAD=${strata_cmp_preload})
  add_dependencies(compare_live_test strata_cli compare_alloc_program compare_fork_program
    compare_calloc_program compare_misbehave_preload)
  foreach(strata_cmp_dep strata_replayer strata_probe strata_record strata_malloc strata_exec)
    if(TARGET ${strata_cmp_dep})
      add_dependencies(compare_live_test ${strata_cmp_dep})
    endif()
  endforeach()

  # The verdict and agreement arithmetic on hand-made figures, through compare's library.
  strata_gtest(compare_verdict_test ${CMAKE_CURRENT_LIST_DIR}/verdict_test.cpp)
  target_link_libraries(compare_verdict_test PRIVATE strata_compare)

  # The options checked together, and allocators and inputs refused before anything runs.
  strata_gtest(compare_options_test ${CMAKE_CURRENT_LIST_DIR}/options_test.cpp)
  target_link_libraries(compare_options_test PRIVATE strata_compare)

  # The RSS curve of the median live run and report.html, end to end
  # (compare_rss_series_test.cpp).
  strata_gtest(compare_rss_series_test ${CMAKE_CURRENT_LIST_DIR}/compare_rss_series_test.cpp)
  target_compile_definitions(compare_rss_series_test PRIVATE
    STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    STRATA_RSS_PROGRAM="$<TARGET_FILE:rss_program>")
  add_dependencies(compare_rss_series_test strata_cli rss_program strata_exec strata_probe)
endif()
