# The GNU obstack C API (<strata/obstack.h>, library strata_obstack):
# - obstack_differential_test: driver.c compiled once against glibc's <obstack.h> and once
#   against <strata/obstack.h> (-DSTRATA_DRIVER), compared by a gtest on many seeds;
# - obstack.c_program(_static): a plain C11 program using only <strata/obstack.h>, linked with
#   the shared and the static library: exit status 0, "obstack ok" alone on stdout, nothing
#   on stderr (where it reports failed checks).
set(STRATA_OBSTACK_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

add_library(obstack_driver_glibc OBJECT ${STRATA_OBSTACK_TEST_DIR}/driver.c)
set_target_properties(obstack_driver_glibc PROPERTIES C_STANDARD 11 C_EXTENSIONS ON)
strata_warnings(obstack_driver_glibc)

add_library(obstack_driver_strata OBJECT ${STRATA_OBSTACK_TEST_DIR}/driver.c)
set_target_properties(obstack_driver_strata PROPERTIES C_STANDARD 11 C_EXTENSIONS OFF)
target_compile_definitions(obstack_driver_strata PRIVATE STRATA_DRIVER)
strata_warnings(obstack_driver_strata PEDANTIC)
target_link_libraries(obstack_driver_strata PRIVATE strata::strata)

strata_gtest(obstack_differential_test ${STRATA_OBSTACK_TEST_DIR}/obstack_differential_test.cpp
  $<TARGET_OBJECTS:obstack_driver_glibc> $<TARGET_OBJECTS:obstack_driver_strata> TIMEOUT 900)
target_link_libraries(obstack_differential_test PRIVATE strata_obstack)

foreach(kind IN ITEMS "" "_static")
  add_executable(obstack_c_program${kind} ${STRATA_OBSTACK_TEST_DIR}/c_program.c)
  set_target_properties(obstack_c_program${kind} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON
                                                            C_EXTENSIONS OFF)
  strata_warnings(obstack_c_program${kind} PEDANTIC)
  target_link_libraries(obstack_c_program${kind} PRIVATE strata_obstack${kind})
  strata_add_expect_test(NAME obstack.c_program${kind} COMMAND obstack_c_program${kind}
    STDOUT "obstack ok" EXACT stdout stderr)
endforeach()
