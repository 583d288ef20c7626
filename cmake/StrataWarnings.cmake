# The project's warning flags, set here and nowhere else. Warnings are errors only when asked
# for (-DSTRATA_WERROR=ON, as the project's own scripts and CI do), so that a user's compiler,
# flags or build type never decide whether Strata builds.
option(STRATA_WERROR "Treat the project's compiler warnings as errors" OFF)
set(STRATA_WARNING_FLAGS -Wall -Wextra)
if(STRATA_WERROR)
  list(APPEND STRATA_WARNING_FLAGS -Werror)
endif()

# strata_warnings(TARGET... [PEDANTIC]): the project's warnings on each target's own sources.
function(strata_warnings)
  cmake_parse_arguments(arg "PEDANTIC" "" "" ${ARGN})
  set(flags ${STRATA_WARNING_FLAGS})
  # GCC 12 at -O3 (Release) reports overlaps and overflows inside libstdc++'s std::string and
  # std::vector that cannot happen (GCC bugs 105329, 105651, 107852: a literal assigned or
  # prepended to a string, a range inserted into a vector). They stay warnings, never errors.
  if(STRATA_WERROR AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    foreach(w IN ITEMS restrict array-bounds stringop-overflow stringop-overread)
      list(APPEND flags $<$<COMPILE_LANGUAGE:CXX>:-Wno-error=${w}>)
    endforeach()
  endif()
  if(arg_PEDANTIC)
    list(APPEND flags -pedantic)
  endif()
  foreach(target IN LISTS arg_UNPARSED_ARGUMENTS)
    target_compile_options(${target} PRIVATE ${flags})
  endforeach()
endfunction()
