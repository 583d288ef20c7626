# The drop-in malloc libraries (layers/malloc):
# - malloc_conformance (conformance.c + conformance_cxx.cpp): every C and C++ allocation
#   entry point, run on glibc as the reference, then on each Strata library by LD_PRELOAD
#   and by linking (malloc_conformance_linked_<lib>, proving the libraries work when linked);
# - helper C2's preload tests (stress, fork, real programs) from preload_tests.cmake.
# Nothing is preloaded into a sanitized program (ASan owns malloc), and the glibc reference
# would then check ASan's allocator, so under STRATA_SANITIZE only the executables build.
# Each conformance run must exit 0 with exactly two lines on stdout, the library malloc
# resolves into and "conformance ok", and no "FAIL" line (stderr holds malloc_stats output).
set(STRATA_MALLOC_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

function(strata_malloc_conformance_exe name)
  add_executable(${name} ${STRATA_MALLOC_TEST_DIR}/conformance.c
                         ${STRATA_MALLOC_TEST_DIR}/conformance_cxx.cpp)
  set_target_properties(${name} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)
  # -fno-builtin: the calls under test must not be folded or elided by the compiler.
  # -Wno-use-after-free (GCC's): the test reads blocks after a realloc that failed on purpose.
  # -fsized-deallocation: clang before 19 declares no sized operator delete without it.
  target_compile_options(${name} PRIVATE -fno-builtin
                         $<$<COMPILE_LANG_AND_ID:C,GNU>:-Wno-use-after-free>
                         $<$<COMPILE_LANG_AND_ID:CXX,Clang>:-fsized-deallocation>)
  strata_warnings(${name})
  target_link_libraries(${name} PRIVATE ${CMAKE_DL_LIBS})
endfunction()

strata_malloc_conformance_exe(malloc_conformance)

if(NOT STRATA_SANITIZE)
  strata_add_expect_test(NAME malloc.conformance.glibc COMMAND malloc_conformance
    STDOUT "malloc from .*/libc\\.so\\.6" "conformance ok" EXACT stdout FORBID "FAIL .*")
  set_tests_properties(malloc.conformance.glibc PROPERTIES TIMEOUT 120)
  foreach(pair IN ITEMS strata_malloc_kingsley:strata-kingsley strata_malloc_lea:strata-lea
                        strata_malloc:strata strata_malloc_secure:strata-secure)
    string(REPLACE ":" ";" pair ${pair})
    list(GET pair 0 target)
    list(GET pair 1 lib)
    if(NOT TARGET ${target})
      continue()
    endif()
    strata_add_expect_test(NAME malloc.conformance.preload.${lib}
      COMMAND malloc_conformance --expect lib${lib}.so ENV "LD_PRELOAD=$<TARGET_FILE:${target}>"
      STDOUT "malloc from .*/lib${lib}\\.so" "conformance ok" EXACT stdout FORBID "FAIL .*")
    set_tests_properties(malloc.conformance.preload.${lib} PROPERTIES TIMEOUT 120)

    strata_malloc_conformance_exe(malloc_conformance_linked_${lib})
    target_link_libraries(malloc_conformance_linked_${lib} PRIVATE ${target})
    strata_add_expect_test(NAME malloc.conformance.linked.${lib}
      COMMAND malloc_conformance_linked_${lib} --expect lib${lib}.so
      STDOUT "malloc from .*/lib${lib}\\.so" "conformance ok" EXACT stdout FORBID "FAIL .*")
    set_tests_properties(malloc.conformance.linked.${lib} PROPERTIES TIMEOUT 120)
  endforeach()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/preload_tests.cmake OPTIONAL)
