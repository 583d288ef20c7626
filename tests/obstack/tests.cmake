# The GNU obstack C API (<strata/obstack.h>, library strata_obstack):
# - obstack_differential_test: driver.c compiled once against glibc's <obstack.h> and once
#   against <strata/obstack.h> (-DSTRATA_DRIVER), compared by a gtest on many seeds;
# - obstack.c_program(_static): a plain C11 program using only <strata/obstack.h>, linked with
#   the shared and the static library.
set(STRATA_OBSTACK_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

add_library(obstack_driver_glibc OBJECT ${STRATA_OBSTACK_TEST_DIR}/driver.c)
set_target_properties(obstack_driver_glibc PROPERTIES C_STANDARD 11 C_EXTENSIONS ON)
target_compile_options(obstack_driver_glibc PRIVATE -Wall -Wextra -Werror)

add_library(obstack_driver_strata OBJECT ${STRATA_OBSTACK_TEST_DIR}/driver.c)
set_target_properties(obstack_driver_strata PROPERTIES C_STANDARD 11 C_EXTENSIONS OFF)
target_compile_definitions(obstack_driver_strata PRIVATE STRATA_DRIVER)
target_compile_options(obstack_driver_strata PRIVATE -Wall -Wextra -Werror -pedantic)
target_link_libraries(obstack_driver_strata PRIVATE strata::strata)

add_executable(obstack_differential_test ${STRATA_OBSTACK_TEST_DIR}/obstack_differential_test.cpp
  $<TARGET_OBJECTS:obstack_driver_glibc> $<TARGET_OBJECTS:obstack_driver_strata>)
target_compile_options(obstack_differential_test PRIVATE -Wall -Wextra -Werror)
target_link_libraries(obstack_differential_test PRIVATE strata_obstack GTest::gtest GTest::gtest_main)
gtest_discover_tests(obstack_differential_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 900)

foreach(kind IN ITEMS "" "_static")
  add_executable(obstack_c_program${kind} ${STRATA_OBSTACK_TEST_DIR}/c_program.c)
  set_target_properties(obstack_c_program${kind} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON
                                                            C_EXTENSIONS OFF)
  target_compile_options(obstack_c_program${kind} PRIVATE -Wall -Wextra -Werror -pedantic)
  target_link_libraries(obstack_c_program${kind} PRIVATE strata_obstack${kind})
  add_test(NAME obstack.c_program${kind} COMMAND obstack_c_program${kind})
  set_tests_properties(obstack.c_program${kind} PROPERTIES PASS_REGULAR_EXPRESSION "obstack ok")
endforeach()
