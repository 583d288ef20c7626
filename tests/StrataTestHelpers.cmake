# Helpers for registering tests, shared by tests/, bench/ and the top-level CMakeLists.txt
# (included by tests/CMakeLists.txt; CMake functions are global once defined).
include_guard(GLOBAL)

# strata_add_expect_test(NAME <name> COMMAND <program or target> [<arg>...] [EXIT <status>]
#                        [STDOUT <regex>...] [STDERR <regex>...] [EXACT stdout|stderr...]
#                        [FORBID <regex>...] [ENV <VAR=value>...])
# A test that runs the program and passes only if it exits with EXIT (default 0) and its
# output has the lines given: each STDOUT/STDERR regex must match a whole line of that
# stream, in order; a stream named in EXACT must hold those lines and nothing else; no line
# may match a FORBID regex. ENV is set for the program alone (not for the cmake that runs
# it). tests/run_expect.cmake does the checking. Regexes must not contain ';'.
function(strata_add_expect_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;EXIT"
                        "COMMAND;STDOUT;STDERR;EXACT;FORBID;ENV")
  if(NOT arg_NAME OR NOT arg_COMMAND)
    message(FATAL_ERROR "strata_add_expect_test: NAME and COMMAND are required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "strata_add_expect_test(${arg_NAME}): unknown arguments "
                        "${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT DEFINED arg_EXIT)
    set(arg_EXIT 0)
  endif()
  foreach(stream IN LISTS arg_EXACT)
    if(NOT stream MATCHES "^(stdout|stderr)$")
      message(FATAL_ERROR "strata_add_expect_test(${arg_NAME}): EXACT takes stdout, stderr")
    endif()
  endforeach()
  # add_test resolves a target name only as its own command; here the command is cmake.
  list(GET arg_COMMAND 0 program)
  if(TARGET ${program})
    list(POP_FRONT arg_COMMAND)
    list(PREPEND arg_COMMAND "$<TARGET_FILE:${program}>")
  endif()
  add_test(NAME ${arg_NAME}
    COMMAND ${CMAKE_COMMAND} "-DCMD=${arg_COMMAND}" "-DEXPECT_EXIT=${arg_EXIT}"
            "-DEXPECT_STDOUT=${arg_STDOUT}" "-DEXPECT_STDERR=${arg_STDERR}"
            "-DEXACT=${arg_EXACT}" "-DFORBID=${arg_FORBID}" "-DENV=${arg_ENV}"
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/run_expect.cmake)
endfunction()

# strata_missing_dependency_test(<name> <what>)
# For tests that are not registered because a dependency is missing: registers <name>, which
# says what is missing (<what>: name the Debian package). It is reported as skipped, unless
# STRATA_REQUIRE_DEPS is set (to anything but "" or "0") in the environment of the configure
# or of the test run: then it fails (scripts/test.sh installs every dependency first).
function(strata_missing_dependency_test name what)
  message(STATUS "${name}: stands in for tests not registered: missing ${what}")
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} "-DWHAT=${what}" "-DCONFIGURE_REQUIRE_DEPS=$ENV{STRATA_REQUIRE_DEPS}"
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/missing_dependency.cmake)
  set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "strata: skipped, missing")
endfunction()

# strata_gtest(<name> <source>... [TIMEOUT <seconds>]): a GoogleTest executable of the
# project's tests: its sources built with the project's warnings and the one precompiled
# <gtest/gtest.h> (strata_gtest_pch, made by tests/CMakeLists.txt), linked with GoogleTest's
# main, and its tests discovered by CTest, each with TIMEOUT (default 300 s) and the labels
# of the folder it was declared in (STRATA_TEST_LABELS, set by tests/CMakeLists.txt). The
# caller adds its own libraries, definitions and dependencies.
function(strata_gtest name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TIMEOUT" "")
  if(NOT arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "strata_gtest(${name}): no sources")
  endif()
  if(NOT DEFINED arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  if(NOT STRATA_TEST_LABELS)
    message(FATAL_ERROR "strata_gtest(${name}): STRATA_TEST_LABELS is not set")
  endif()
  add_executable(${name} ${arg_UNPARSED_ARGUMENTS})
  strata_warnings(${name})
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gtest_main)
  target_precompile_headers(${name} REUSE_FROM strata_gtest_pch)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
    PROPERTIES TIMEOUT ${arg_TIMEOUT} LABELS "${STRATA_TEST_LABELS}")
endfunction()

# strata_tree_check(<name> <control> <script> <fixture> <expect> [-D<var>=<value>...]): a rule of
# the source tree checked by a CMake script (`cmake -DSOURCE_DIR=<tree> -P <script>`, which fails
# naming what breaks the rule), and its control <control>: the same script run on <fixture>, a
# tree that breaks the rule on purpose, passing when the output matches <expect> (there the exit
# status, 1, does not decide). Without the control, a check that finds nothing could not fail.
function(strata_tree_check name control script fixture expect)
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} ${ARGN} -P ${script})
  add_test(NAME ${control} COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${fixture} ${ARGN} -P ${script})
  set_tests_properties(${control} PROPERTIES PASS_REGULAR_EXPRESSION "${expect}")
endfunction()
