cmake_minimum_required(VERSION 3.25)
# Fails unless every CMake target that `strata doctor --targets` names (the files the command
# starts or loads) is a part of strata_toolkit, the target the main job builds.
# -DSTRATA=<the strata executable> -DPARTS=<strata_toolkit's parts>
# -DOPTIONAL_BUILT=<the optional targets this build defines>
execute_process(COMMAND ${STRATA} doctor --targets OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "strata doctor --targets exited with ${rc}")
endif()
string(REPLACE "\n" ";" lines "${out}")
set(checked 0)
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(REPLACE " " ";" words "${line}")
  list(GET words 0 target)
  list(LENGTH words n)
  if(n GREATER 1 AND NOT target IN_LIST OPTIONAL_BUILT)
    continue()  # optional, and not built here
  endif()
  if(NOT target IN_LIST PARTS)
    message(FATAL_ERROR "strata needs the files of ${target}, which the main job's target "
                        "strata_toolkit does not build (add strata_toolkit_part(${target}))")
  endif()
  math(EXPR checked "${checked} + 1")
endforeach()
if(checked LESS 5)
  message(FATAL_ERROR "strata doctor --targets named only ${checked} targets:\n${out}")
endif()
message(STATUS "${checked} targets, all parts of strata_toolkit")
