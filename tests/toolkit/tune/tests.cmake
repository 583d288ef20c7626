# `strata tune`'s library on its own (tune_spaces_test.cpp): the search-space file read, its
# errors with the line at fault, and a setting turned into environment, words and a spec.
if(TARGET strata_tune)
  strata_gtest(tune_spaces_test ${CMAKE_CURRENT_LIST_DIR}/tune_spaces_test.cpp)
  target_link_libraries(tune_spaces_test PRIVATE strata_tune)

  # tune.json (tune_json_test.cpp) from a hand-made report, read with the compare tests' JSON
  # reader.
  strata_gtest(tune_json_test ${CMAKE_CURRENT_LIST_DIR}/tune_json_test.cpp TIMEOUT 120)
  target_link_libraries(tune_json_test PRIVATE strata_tune)
endif()
