# `strata record` and the recorder (libstrata-record.so, toolkit/record/): record_test runs the
# built `strata` executable on small programs with known allocation sequences (a sequence
# through every entry point, each entry of the shared entry-point list called once, threads
# with cross-thread frees, objects handed between threads while all of them allocate, fork,
# crashes and exits: record_exit_test.cpp; what a program touched of its large objects:
# record_touched_pages_test.cpp) and checks the traces event for event; it also checks bad
# usage. The programs run with the recorder preloaded, which a sanitized build cannot do (the
# sanitizer owns malloc, and a sanitized recorder cannot go into a plain program), so there
# only the usage cases run.
# The recorder's units on their own, in every build, linked with the same static library of
# them as the recorder (strata_record_parts): record_touch_test the page logic (touch.cpp),
# record_object_map_test the address map, record_rings_test the per-thread event rings and
# their merge, record_prepared_table_test the lock-free table of measured large objects,
# record_site_table_test the interning of stacks, record_stack_walk_test the stack walk and
# the loaded-object scan (with record_sites_plugin, a library to load).
add_library(record_sites_plugin MODULE ${CMAKE_CURRENT_LIST_DIR}/sites_plugin.c)
target_compile_options(record_sites_plugin PRIVATE -O0 -g -fno-builtin)
strata_warnings(record_sites_plugin)
foreach(unit record_touch record_object_map record_rings record_prepared_table record_site_table
        record_stack_walk)
  strata_gtest(${unit}_test ${CMAKE_CURRENT_LIST_DIR}/${unit}_test.cpp)
  target_link_libraries(${unit}_test PRIVATE strata_record_parts Threads::Threads)
endforeach()
target_compile_definitions(record_stack_walk_test PRIVATE
  RECORD_SITES_PLUGIN="$<TARGET_FILE:record_sites_plugin>")
add_dependencies(record_stack_walk_test record_sites_plugin)
# record_session_test: `strata record`'s side (strata_record_session): the recorder's
# environment, the trace names, and a command recorded with this build's recorder (not in a
# sanitized build, where nothing can be preloaded into a plain program).
strata_gtest(record_session_test ${CMAKE_CURRENT_LIST_DIR}/record_session_test.cpp TIMEOUT 120)
target_link_libraries(record_session_test PRIVATE strata_record_session)
if(NOT STRATA_SANITIZE)
  add_dependencies(record_session_test strata_record)
  target_compile_definitions(record_session_test PRIVATE
    STRATA_RECORDER_DIR="$<TARGET_FILE_DIR:strata_record>")
endif()

if(TARGET strata_cli AND TARGET strata_record)
  set(strata_rec_dir ${CMAKE_CURRENT_LIST_DIR})
  strata_gtest(record_test ${strata_rec_dir}/record_test.cpp ${strata_rec_dir}/record_exit_test.cpp
                          ${strata_rec_dir}/record_touched_pages_test.cpp
                          ${strata_rec_dir}/record_compression_test.cpp)
  target_link_libraries(record_test PRIVATE strata::strata strata_trace_zstd strata_protocol)
  target_compile_definitions(record_test PRIVATE
    STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>")
  add_dependencies(record_test strata_cli strata_record)
  if(NOT STRATA_SANITIZE AND TARGET strata_reap AND TARGET strata_region AND TARGET strata_obstack)
    # -fno-builtin and GCC's -fno-allocation-dce: every allocation call in the source is made
    # (clang has no such switch: its builds are not optimised).
    foreach(prog sequence threads fork crash handoff touch lifetimes entry_points)
      add_executable(record_${prog}_program ${strata_rec_dir}/${prog}_program.cpp)
      target_compile_options(record_${prog}_program PRIVATE -O1 -fno-builtin
                             $<IF:$<CXX_COMPILER_ID:GNU>,-fno-allocation-dce,-O0>)
      strata_warnings(record_${prog}_program)
      target_link_libraries(record_${prog}_program PRIVATE strata::strata)
      add_dependencies(record_test record_${prog}_program)
    endforeach()
    target_link_libraries(record_sequence_program PRIVATE strata_reap strata_region strata_obstack)
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
      RECORD_ENTRY_POINTS="$<TARGET_FILE:record_entry_points_program>")
  endif()

  # record_sites_test: `strata record --sites` on sites_program, a C program built with debug
  # information three ways: with frame pointers, without (as Debian builds its programs), and
  # without frame pointers or unwind tables (a stack the walk cannot go past). -O0: every
  # call stays on its line and none becomes a tail call.
  if(NOT STRATA_SANITIZE)
    strata_gtest(record_sites_test ${strata_rec_dir}/record_sites_test.cpp)
    target_link_libraries(record_sites_test PRIVATE strata::strata strata_trace_zstd)
    add_dependencies(record_sites_test strata_cli strata_record record_sites_plugin)
    # `strata compare` (one test) replays on glibc: the replayer and the probe.
    foreach(dep strata_replayer strata_probe)
      if(TARGET ${dep})
        add_dependencies(record_sites_test ${dep})
      endif()
    endforeach()
    set(strata_sites_fp_flags -fno-omit-frame-pointer)
    set(strata_sites_nofp_flags -fomit-frame-pointer)
    set(strata_sites_nounwind_flags -fomit-frame-pointer -fno-asynchronous-unwind-tables
        -fno-unwind-tables)
    foreach(build fp nofp nounwind)
      add_executable(record_sites_${build}_program ${strata_rec_dir}/sites_program.c)
      target_compile_options(record_sites_${build}_program PRIVATE -O0 -g -fno-builtin
                             ${strata_sites_${build}_flags})
      strata_warnings(record_sites_${build}_program)
      target_link_libraries(record_sites_${build}_program PRIVATE Threads::Threads
                            ${CMAKE_DL_LIBS})
      add_dependencies(record_sites_test record_sites_${build}_program)
    endforeach()
    target_compile_definitions(record_sites_test PRIVATE
      STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
      RECORD_SITES_FP="$<TARGET_FILE:record_sites_fp_program>"
      RECORD_SITES_NOFP="$<TARGET_FILE:record_sites_nofp_program>"
      RECORD_SITES_NOUNWIND="$<TARGET_FILE:record_sites_nounwind_program>"
      RECORD_SITES_SOURCE="${strata_rec_dir}/sites_program.c"
      RECORD_SITES_PLUGIN="$<TARGET_FILE:record_sites_plugin>"
      RECORD_SITES_PLUGIN_SOURCE="${strata_rec_dir}/sites_plugin.c")
    if(TARGET record_sequence_program)  # every entry point, reaps and regions included
      target_compile_definitions(record_sites_test PRIVATE
        RECORD_SEQUENCE="$<TARGET_FILE:record_sequence_program>")
      add_dependencies(record_sites_test record_sequence_program)
    endif()
  endif()
endif()
