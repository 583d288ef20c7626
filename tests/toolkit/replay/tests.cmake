# Replay (toolkit/replay): replay_test checks the plan decoder and the replay loop in-process and,
# when the `strata` command is built, `strata replay` end to end (STRATA_CLI_PATH); its
# replay_touch_threads_test.cpp the touch-aware writes, threads started and ended as recorded,
# allocator time, the replayer's own memory and the result fields. Replays on other
# allocators go by LD_PRELOAD into strata-replayer, which a sanitized build cannot take, so
# those run only without STRATA_SANITIZE (STRATA_TEST_PRELOAD).
if(TARGET strata_replay)
  strata_gtest(replay_test ${CMAKE_CURRENT_LIST_DIR}/replay_test.cpp
                           ${CMAKE_CURRENT_LIST_DIR}/replay_touch_threads_test.cpp)
  target_link_libraries(replay_test PRIVATE strata_replay)
  if(NOT STRATA_SANITIZE)
    # The in-process replays call glibc's malloc (a sanitizer's allocator fills, poisons and
    # quarantines memory, so what pages an object leaves untouched cannot be measured there).
    target_compile_definitions(replay_test PRIVATE STRATA_TEST_GLIBC_MALLOC=1)
  endif()
  if(TARGET strata_cli)
    target_compile_definitions(replay_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>")
    add_dependencies(replay_test strata_cli strata_probe)
    if(NOT STRATA_SANITIZE)
      # broken_malloc: an allocator that hands out overlapping blocks, to show --verify fails.
      add_library(replay_broken_malloc SHARED ${CMAKE_CURRENT_LIST_DIR}/broken_malloc.c)
      strata_warnings(replay_broken_malloc)
      add_dependencies(replay_test replay_broken_malloc)
      target_compile_definitions(replay_test PRIVATE STRATA_TEST_PRELOAD=1
        STRATA_TEST_BROKEN_MALLOC="$<TARGET_FILE:replay_broken_malloc>"
        STRATA_TEST_REPLAYER="$<TARGET_FILE:strata_replayer>")
      if(TARGET strata_malloc)
        add_dependencies(replay_test strata_malloc)
      endif()
    endif()
  endif()
endif()

# `strata replay` and `strata compare`'s peak memory at a fixed live set and ten times the
# objects (replay_bounded_test.cpp). Not in a STRATA_SANITIZE build: ASan's quarantine and
# shadow grow with what is freed, not with what is kept.
if(TARGET strata_cli AND NOT STRATA_SANITIZE)
  strata_gtest(replay_bounded_test ${CMAKE_CURRENT_LIST_DIR}/replay_bounded_test.cpp)
  target_compile_definitions(replay_bounded_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>")
  add_dependencies(replay_bounded_test strata_cli strata_replayer)
endif()
