# Builds TARGET in BUILD_DIR, which must fail with a diagnostic matching the regex in SOURCE's
# "// expect: " lines: joined as they are after that prefix, so a long regex takes several
# lines (a line continuing after a space starts with it); read here, at test time, so an
# edited regex counts without a new configure. The regex names the failure the case is
# about (the layer, the concept or static_assert it fails, the type it fails with), not a
# word that any error about the composition contains: it must stop matching when the
# constraint under test is removed. Each case has a g++ alternative and, after "|", a clang
# one.
cmake_minimum_required(VERSION 3.25)
file(STRINGS ${SOURCE} expect_lines REGEX "^// expect: ")
list(TRANSFORM expect_lines REPLACE "^// expect: " "")
string(JOIN "" EXPECT ${expect_lines})
if(EXPECT STREQUAL "")
  message(FATAL_ERROR "${SOURCE}: no '// expect: REGEX' line (or an empty regex)")
endif()
if(EXPECT MATCHES ";")
  message(FATAL_ERROR "${SOURCE}: the expect lines read as '${EXPECT}': no ';' in them, and "
                      "each line's [ ] balanced (CMake lists group what brackets enclose)")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but the composition is wrong and must not")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "${TARGET} failed to compile, but not with '${EXPECT}':\n${out}${err}")
endif()
message(STATUS "${TARGET} was rejected as expected ('${EXPECT}')")
