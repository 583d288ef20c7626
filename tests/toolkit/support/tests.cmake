# The toolkit's support library (toolkit/support): the JSON writer (json_writer_test), and the
# rule that no other file writes JSON by hand (check_json_fragments.cmake, run on the checkout
# and on hand_written/, which breaks it twice and must be named for both).
strata_gtest(json_writer_test ${CMAKE_CURRENT_LIST_DIR}/json_writer_test.cpp)
target_link_libraries(json_writer_test PRIVATE strata_support)

add_test(NAME toolkit.json_written_by_the_writer
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -P ${CMAKE_CURRENT_LIST_DIR}/check_json_fragments.cmake)
add_test(NAME toolkit.json_check_catches_hand_written
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}/hand_written
          -P ${CMAKE_CURRENT_LIST_DIR}/check_json_fragments.cmake)
# The output, not the exit status (1 here, as it should be), decides.
set_tests_properties(toolkit.json_check_catches_hand_written PROPERTIES PASS_REGULAR_EXPRESSION
  "keys.cpp:5: JSON written by hand.*keys.cpp:8: JSON written by hand.*[^0-9]2 lines write JSON")
