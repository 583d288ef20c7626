# Runs a program and checks its exit status exactly and its output line by line (CTest's
# PASS_REGULAR_EXPRESSION ignores the exit status and matches anywhere in the output).
#
#   cmake -DCMD=<program;arg;...> [-DEXPECT_EXIT=N] [-DEXPECT_STDOUT=<regex;...>]
#         [-DEXPECT_STDERR=<regex;...>] [-DEXACT=<stdout;stderr>] [-DFORBID=<regex;...>]
#         [-DENV=<VAR=value;...>] -P run_expect.cmake
#
# EXPECT_EXIT    the exit status the program must end with (default 0); a program killed by
#                a signal never passes.
# EXPECT_STDOUT, EXPECT_STDERR
#                regular expressions, each of which must match a whole line of that stream
#                (anchored at both ends: "large requests: 1" does not match
#                "large requests: 12"), in the order given; other lines may come between.
# EXACT          the streams that must hold the expected lines and nothing else (a stream
#                named here with no expected lines must be empty).
# FORBID         regular expressions no whole line of either stream may match.
# ENV            variables set for the program only (LD_PRELOAD: not for cmake itself).
# Usually registered with strata_add_expect_test (tests/StrataTestHelpers.cmake). On failure
# it prints what failed, the exit status and both streams.
cmake_minimum_required(VERSION 3.25)  # IN_LIST, and quoted if() arguments left alone
if(NOT DEFINED CMD OR CMD STREQUAL "")
  message(FATAL_ERROR "run_expect.cmake: CMD (the program and its arguments) is not set")
endif()
if(NOT DEFINED EXPECT_EXIT OR EXPECT_EXIT STREQUAL "")
  set(EXPECT_EXIT 0)
endif()
foreach(assignment IN LISTS ENV)
  if(NOT assignment MATCHES "^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
    message(FATAL_ERROR "run_expect.cmake: ENV entry '${assignment}' is not VAR=value")
  endif()
  set(ENV{${CMAKE_MATCH_1}} "${CMAKE_MATCH_2}")
endforeach()

execute_process(COMMAND ${CMD} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)

# The lines of `text` (a final newline ends the last line; it does not start an empty one),
# as numbered variables ${prefix}_0 .. and their count ${prefix}_n: a CMake list would split
# at any ';' and treat '[' ']' specially, and the output may hold either.
function(split_lines text prefix)
  set(n 0)
  while(NOT text STREQUAL "")
    string(FIND "${text}" "\n" at)
    if(at EQUAL -1)
      set(line "${text}")
      set(text "")
    else()
      string(SUBSTRING "${text}" 0 ${at} line)
      math(EXPR next "${at} + 1")
      string(SUBSTRING "${text}" ${next} -1 text)
    endif()
    set(${prefix}_${n} "${line}" PARENT_SCOPE)
    math(EXPR n "${n} + 1")
  endwhile()
  set(${prefix}_n ${n} PARENT_SCOPE)
endfunction()

split_lines("${out}" stdout)
split_lines("${err}" stderr)

set(problems "")
if(NOT "${status}" STREQUAL "${EXPECT_EXIT}")
  string(APPEND problems "  exit status ${status}, expected ${EXPECT_EXIT}\n")
endif()

foreach(stream IN ITEMS stdout stderr)
  string(TOUPPER ${stream} upper)
  set(expected "${EXPECT_${upper}}")
  list(LENGTH expected wanted)
  if(stream IN_LIST EXACT)
    # Line i must match regex i, and there must be no more lines and no fewer.
    set(i 0)
    while(i LESS ${${stream}_n} AND i LESS wanted)
      list(GET expected ${i} re)
      if(NOT "${${stream}_${i}}" MATCHES "^(${re})$")
        math(EXPR shown_i "${i} + 1")
        string(APPEND problems
          "  ${stream} line ${shown_i}, '${${stream}_${i}}', does not match '${re}'\n")
      endif()
      math(EXPR i "${i} + 1")
    endwhile()
    if(NOT ${${stream}_n} EQUAL wanted)
      string(APPEND problems
        "  ${stream} has ${${stream}_n} lines, expected exactly ${wanted} (one per regex)\n")
    endif()
  else()
    # The expected regexes in order, each matched by a later line than the one before.
    set(next 0)
    set(i 0)
    while(i LESS ${${stream}_n} AND next LESS wanted)
      list(GET expected ${next} re)
      if("${${stream}_${i}}" MATCHES "^(${re})$")
        math(EXPR next "${next} + 1")
      endif()
      math(EXPR i "${i} + 1")
    endwhile()
    if(next LESS wanted)
      list(GET expected ${next} re)
      if(next EQUAL 0)
        string(APPEND problems "  no ${stream} line matches '${re}'\n")
      else()
        math(EXPR prev "${next} - 1")
        list(GET expected ${prev} prev_re)
        string(APPEND problems
          "  no ${stream} line matches '${re}' after the line matching '${prev_re}'\n")
      endif()
    endif()
  endif()
  set(i 0)
  while(i LESS ${${stream}_n})
    foreach(re IN LISTS FORBID)
      if("${${stream}_${i}}" MATCHES "^(${re})$")
        string(APPEND problems "  ${stream} line '${${stream}_${i}}' matches the forbidden '${re}'\n")
      endif()
    endforeach()
    math(EXPR i "${i} + 1")
  endwhile()
endforeach()

list(JOIN CMD " " shown)
if(NOT problems STREQUAL "")
  message(FATAL_ERROR "${shown}:\n${problems}--- exit status: ${status}\n"
                      "--- stdout:\n${out}--- stderr:\n${err}--- end")
endif()
message(STATUS "${shown}: exit status ${status}, output as expected")
