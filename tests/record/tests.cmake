# `strata record` and the recorder (libstrata-record.so, src/record/): record_test runs the
# built `strata` executable on small programs with known allocation sequences (a sequence
# through every entry point, each entry of the shared entry-point list called once, threads
# with cross-thread frees, objects handed between threads while all of them allocate, fork,
# crashes and exits) and checks the traces event for event; it also checks bad usage. The
# programs run with the recorder preloaded, which a sanitized build cannot do (the sanitizer
# owns malloc, and a sanitized recorder cannot go into a plain program), so there only the
# usage cases run.
# The recorder's units on their own, in every build, linked with the same static library of
# them as the recorder (strata_record_parts): record_touch_test the page logic (touch.cpp),
# record_object_map_test the address map, record_rings_test the per-thread event rings and
# their merge, record_prepared_table_test the lock-free table of measured large objects.
foreach(unit record_touch record_object_map record_rings record_prepared_table)
  add_executable(${unit}_test ${CMAKE_CURRENT_LIST_DIR}/${unit}_test.cpp)
  target_compile_options(${unit}_test PRIVATE -Wall -Wextra -Werror)
  target_link_libraries(${unit}_test PRIVATE strata_record_parts GTest::gtest GTest::gtest_main
                        Threads::Threads)
  gtest_discover_tests(${unit}_test DISCOVERY_TIMEOUT 60)
endforeach()
if(TARGET strata_cli AND TARGET strata_record)
  set(strata_rec_dir ${CMAKE_CURRENT_LIST_DIR})
  add_executable(record_test ${strata_rec_dir}/record_test.cpp)
  target_compile_options(record_test PRIVATE -Wall -Wextra -Werror)
  target_link_libraries(record_test PRIVATE strata::strata GTest::gtest GTest::gtest_main)
  target_compile_definitions(record_test PRIVATE
    STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>")
  add_dependencies(record_test strata_cli strata_record)
  if(NOT STRATA_SANITIZE AND TARGET strata_reap AND TARGET strata_region)
    # -fno-builtin and -fno-allocation-dce: every allocation call in the source is made.
    foreach(prog sequence threads fork crash handoff touch lifetimes entry_points merger)
      add_executable(record_${prog}_program ${strata_rec_dir}/${prog}_program.cpp)
      target_compile_options(record_${prog}_program PRIVATE -O1 -fno-builtin -fno-allocation-dce
                             -Wall -Wextra -Werror)
      target_link_libraries(record_${prog}_program PRIVATE strata::strata)
      add_dependencies(record_test record_${prog}_program)
    endforeach()
    target_link_libraries(record_sequence_program PRIVATE strata_reap strata_region)
    target_link_libraries(record_fork_program PRIVATE strata_reap)
    target_link_libraries(record_lifetimes_program PRIVATE Threads::Threads)
    # Declares the sized operator delete forms (clang does not by default), to call them.
    target_compile_options(record_entry_points_program PRIVATE -fsized-deallocation)
    target_compile_definitions(record_test PRIVATE STRATA_RECORD_PRELOAD_TESTS=1
      RECORD_SEQUENCE="$<TARGET_FILE:record_sequence_program>"
      RECORD_THREADS="$<TARGET_FILE:record_threads_program>"
      RECORD_FORK="$<TARGET_FILE:record_fork_program>"
      RECORD_CRASH="$<TARGET_FILE:record_crash_program>"
      RECORD_HANDOFF="$<TARGET_FILE:record_handoff_program>"
      RECORD_TOUCH="$<TARGET_FILE:record_touch_program>"
      RECORD_LIFETIMES="$<TARGET_FILE:record_lifetimes_program>"
      RECORD_ENTRY_POINTS="$<TARGET_FILE:record_entry_points_program>"
      RECORD_MERGER="$<TARGET_FILE:record_merger_program>")
  endif()
  gtest_discover_tests(record_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
  # The same tests with the merger thread started at the first recorded call instead of
  # after many (merger.hpp): the programs above are too small to start it on their own.
  gtest_discover_tests(record_test TEST_PREFIX "merger." DISCOVERY_TIMEOUT 60
                       PROPERTIES TIMEOUT 300 ENVIRONMENT "STRATA_TRACE_MERGER=1")
endif()
