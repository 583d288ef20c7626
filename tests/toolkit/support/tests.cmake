# The toolkit's shared helpers (toolkit/support), linked alone, without the command: options,
# child processes and /proc (support_test.cpp), the JSON reader (json_value_test.cpp), the
# live runs' RSS sampler (rss_sampler_test.cpp), the JSON writer (json_writer_test), and the
# rule that no other file writes JSON by hand (check_json_fragments.cmake, run on the checkout
# and on hand_written/, which breaks it twice and must be named for both).
strata_gtest(support_test ${CMAKE_CURRENT_LIST_DIR}/support_test.cpp)
target_link_libraries(support_test PRIVATE strata_support)
add_dependencies(support_test strata_exec)
target_compile_definitions(support_test PRIVATE STRATA_EXEC_PATH="$<TARGET_FILE:strata_exec>")

strata_gtest(json_value_test ${CMAKE_CURRENT_LIST_DIR}/json_value_test.cpp)
target_link_libraries(json_value_test PRIVATE strata_support)

# The live runs' RSS sampler (rss_sampler_test.cpp): a program with a known resident size,
# run through support::runChild with samples taken.
add_executable(rss_program ${CMAKE_CURRENT_LIST_DIR}/rss_program.c)
# Never sanitized: a sanitizer's shadow memory would add to the resident size it checks.
target_compile_options(rss_program PRIVATE -fno-sanitize=all)
target_link_options(rss_program PRIVATE -fno-sanitize=all)
strata_warnings(rss_program)
strata_gtest(rss_sampler_test ${CMAKE_CURRENT_LIST_DIR}/rss_sampler_test.cpp TIMEOUT 120)
target_compile_definitions(rss_sampler_test PRIVATE
  STRATA_RSS_PROGRAM="$<TARGET_FILE:rss_program>"
  STRATA_EXEC_PATH="$<TARGET_FILE:strata_exec>")
target_link_libraries(rss_sampler_test PRIVATE strata_support)
add_dependencies(rss_sampler_test rss_program strata_exec)

strata_gtest(json_writer_test ${CMAKE_CURRENT_LIST_DIR}/json_writer_test.cpp)
target_link_libraries(json_writer_test PRIVATE strata_support)

strata_tree_check(toolkit.json_written_by_the_writer toolkit.json_check_catches_hand_written
  ${CMAKE_CURRENT_LIST_DIR}/check_json_fragments.cmake ${CMAKE_CURRENT_LIST_DIR}/hand_written
  "keys.cpp:5: JSON written by hand.*keys.cpp:8: JSON written by hand.*[^0-9]2 lines write JSON")
