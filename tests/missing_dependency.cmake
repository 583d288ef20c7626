# Stands in for tests that were not registered because a dependency is missing (registered
# by strata_missing_dependency_test, tests/StrataTestHelpers.cmake): says what is missing and
# is reported as skipped (SKIP_REGULAR_EXPRESSION), or fails when STRATA_REQUIRE_DEPS is set
# (to anything but "" or "0") now or was when the tree was configured.
#   cmake -DWHAT=<what is missing> [-DCONFIGURE_REQUIRE_DEPS=<value>] -P missing_dependency.cmake
cmake_minimum_required(VERSION 3.25)
set(required "")
foreach(value IN ITEMS "$ENV{STRATA_REQUIRE_DEPS}" "${CONFIGURE_REQUIRE_DEPS}")
  if(NOT value STREQUAL "" AND NOT value STREQUAL "0")
    set(required "${value}")
  endif()
endforeach()
if(NOT required STREQUAL "")
  message(FATAL_ERROR "STRATA_REQUIRE_DEPS=${required}, and a dependency is missing: ${WHAT}")
endif()
message(STATUS "strata: skipped, missing dependency: ${WHAT}")
