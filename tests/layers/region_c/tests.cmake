# The region emulator from C: a C11 program using only <strata/region.h>, linked once with
# the shared library and once with the static one, each run as a CTest test: exit status 0,
# its one line on stdout and nothing on stderr (where it reports failed checks).
foreach(variant shared static)
  if(variant STREQUAL "shared")
    set(lib strata_region)
  else()
    set(lib strata_region_static)
  endif()
  add_executable(region_c_program_${variant} ${CMAKE_CURRENT_LIST_DIR}/region_c_program.c)
  set_target_properties(region_c_program_${variant} PROPERTIES
    C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  strata_warnings(region_c_program_${variant} PEDANTIC)
  target_link_libraries(region_c_program_${variant} PRIVATE ${lib})
  strata_add_expect_test(NAME region_c.${variant} COMMAND region_c_program_${variant}
    STDOUT "region C program: all checks passed" EXACT stdout stderr)
endforeach()
