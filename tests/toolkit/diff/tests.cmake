# `strata diff` (toolkit/diff): the model on traces and compare folders written by hand
# (diff_model_test, linked to the library), and the built `strata diff` run as a user runs it
# (diff_cli_test): exit statuses, errors, diff.json, and real pairs recorded with `strata record
# --sites` and compared with `strata compare`.
if(TARGET strata_diff)
  strata_gtest(diff_model_test ${CMAKE_CURRENT_LIST_DIR}/diff_model_test.cpp TIMEOUT 120)
  target_link_libraries(diff_model_test PRIVATE strata_diff strata_trace_zstd)
endif()

if(TARGET strata_cli)
  strata_gtest(diff_cli_test ${CMAKE_CURRENT_LIST_DIR}/diff_cli_test.cpp)
  if(STRATA_SANITIZE)
    set(strata_diff_preload 0)
  else()
    set(strata_diff_preload 1)
  endif()
  target_compile_definitions(diff_cli_test PRIVATE
    STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    STRATA_TEST_PRELOAD=${strata_diff_preload})
  target_link_libraries(diff_cli_test PRIVATE strata_support strata_trace_zstd)
  add_dependencies(diff_cli_test strata_cli)
  # What the real pairs use: the recorder, the replayer and the allocators.
  foreach(strata_diff_dep strata_replayer strata_probe strata_record strata_malloc)
    if(TARGET ${strata_diff_dep})
      add_dependencies(diff_cli_test ${strata_diff_dep})
    endif()
  endforeach()
endif()

# `strata diff`'s peak memory at a fixed live set and ten times the objects
# (diff_bounded_test.cpp). Not in a STRATA_SANITIZE build: ASan's quarantine and shadow grow
# with what the pass frees, not with what it keeps.
if(TARGET strata_cli AND NOT STRATA_SANITIZE)
  strata_gtest(diff_bounded_test ${CMAKE_CURRENT_LIST_DIR}/diff_bounded_test.cpp)
  target_compile_definitions(diff_bounded_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>")
  add_dependencies(diff_bounded_test strata_cli)
endif()
