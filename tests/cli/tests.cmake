# The `strata` command end to end: cli_test runs the built executable (its path passed as
# STRATA_CLI_PATH) with arguments and checks output and exit status, and tests the allocator
# registry it shares with bench/preload_table directly.
if(TARGET strata_cli)
  add_executable(cli_test ${CMAKE_CURRENT_LIST_DIR}/cli_test.cpp)
  target_compile_options(cli_test PRIVATE -Wall -Wextra -Werror)
  target_compile_definitions(cli_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    STRATA_TEST_MULTIARCH="${CMAKE_LIBRARY_ARCHITECTURE}")
  target_link_libraries(cli_test PRIVATE strata_registry GTest::gtest GTest::gtest_main)
  add_dependencies(cli_test strata_cli)
  gtest_discover_tests(cli_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)
endif()
