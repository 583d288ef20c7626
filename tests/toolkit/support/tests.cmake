# The toolkit's support library (toolkit/support): the JSON writer (json_writer_test).
strata_gtest(json_writer_test ${CMAKE_CURRENT_LIST_DIR}/json_writer_test.cpp)
target_link_libraries(json_writer_test PRIVATE strata_support)
