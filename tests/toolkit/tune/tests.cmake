# `strata tune`'s library on its own (tune_spaces_test.cpp): the search-space file read, its
# errors with the line at fault, and a setting turned into environment, words and a spec.
if(TARGET strata_tune)
  add_executable(tune_spaces_test ${CMAKE_CURRENT_LIST_DIR}/tune_spaces_test.cpp)
  strata_warnings(tune_spaces_test)
  target_link_libraries(tune_spaces_test PRIVATE strata_tune GTest::gtest GTest::gtest_main)
  gtest_discover_tests(tune_spaces_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)

  # tune.json (tune_json_test.cpp) from a hand-made report, read with the compare tests' JSON
  # reader.
  add_executable(tune_json_test ${CMAKE_CURRENT_LIST_DIR}/tune_json_test.cpp)
  strata_warnings(tune_json_test)
  target_link_libraries(tune_json_test PRIVATE strata_tune GTest::gtest GTest::gtest_main)
  gtest_discover_tests(tune_json_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 120)
endif()
