# The drop-in malloc libraries (src/malloc):
# - malloc_conformance (conformance.c + conformance_cxx.cpp): every C and C++ allocation
#   entry point, run on glibc as the reference, then on each Strata library by LD_PRELOAD
#   and by linking (malloc_conformance_linked_<lib>, proving the libraries work when linked);
# - helper C2's preload tests (stress, fork, real programs) from preload_tests.cmake.
# Nothing is preloaded into a sanitized program (ASan owns malloc), and the glibc reference
# would then check ASan's allocator, so under STRATA_SANITIZE only the executables build.
set(STRATA_MALLOC_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

function(strata_malloc_conformance_exe name)
  add_executable(${name} ${STRATA_MALLOC_TEST_DIR}/conformance.c
                         ${STRATA_MALLOC_TEST_DIR}/conformance_cxx.cpp)
  set_target_properties(${name} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)
  # -fno-builtin: the calls under test must not be folded or elided by the compiler.
  # -Wno-use-after-free: the test reads blocks after a realloc that failed on purpose.
  target_compile_options(${name} PRIVATE -Wall -Wextra -Werror -fno-builtin
                                         $<$<COMPILE_LANGUAGE:C>:-Wno-use-after-free>)
  target_link_libraries(${name} PRIVATE ${CMAKE_DL_LIBS})
endfunction()

strata_malloc_conformance_exe(malloc_conformance)

if(NOT STRATA_SANITIZE)
  add_test(NAME malloc.conformance.glibc COMMAND malloc_conformance)
  set_tests_properties(malloc.conformance.glibc PROPERTIES
    PASS_REGULAR_EXPRESSION "conformance ok" FAIL_REGULAR_EXPRESSION "FAIL" TIMEOUT 120)
  foreach(pair IN ITEMS strata_malloc_kingsley:strata-kingsley strata_malloc_lea:strata-lea
                        strata_malloc:strata)
    string(REPLACE ":" ";" pair ${pair})
    list(GET pair 0 target)
    list(GET pair 1 lib)
    if(NOT TARGET ${target})
      continue()
    endif()
    add_test(NAME malloc.conformance.preload.${lib}
      COMMAND malloc_conformance --expect lib${lib}.so)
    set_tests_properties(malloc.conformance.preload.${lib} PROPERTIES
      ENVIRONMENT "LD_PRELOAD=$<TARGET_FILE:${target}>"
      PASS_REGULAR_EXPRESSION "conformance ok" FAIL_REGULAR_EXPRESSION "FAIL" TIMEOUT 120)

    strata_malloc_conformance_exe(malloc_conformance_linked_${lib})
    target_link_libraries(malloc_conformance_linked_${lib} PRIVATE ${target})
    add_test(NAME malloc.conformance.linked.${lib}
      COMMAND malloc_conformance_linked_${lib} --expect lib${lib}.so)
    set_tests_properties(malloc.conformance.linked.${lib} PROPERTIES
      PASS_REGULAR_EXPRESSION "conformance ok" FAIL_REGULAR_EXPRESSION "FAIL" TIMEOUT 120)
  endforeach()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/preload_tests.cmake OPTIONAL)
