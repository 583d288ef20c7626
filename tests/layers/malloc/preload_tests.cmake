# Stress, fork and real-program tests of the drop-in malloc libraries (included by
# tests/layers/malloc/tests.cmake):
# - malloc_stress and malloc_fork_threads are plain programs linked against libc only, so that
#   LD_PRELOAD decides the allocator; each runs once on glibc as the reference
#   (malloc.stress.glibc, malloc.fork_threads.glibc);
# - for each Strata library target that exists, with LD_PRELOAD set to it:
#   malloc.in_effect.NAME (every entry point resolves to the library), malloc.stress.NAME,
#   malloc.fork_threads.NAME, and malloc.real_programs.NAME (python3, perl, gcc, git, sqlite3
#   compared with a run on glibc).
# Nothing may be preloaded into a sanitized program (the sanitizer owns malloc), so under
# STRATA_SANITIZE only the stress reference run is registered, with fewer operations.
include_guard(GLOBAL)

set(STRATA_MALLOC_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

foreach(prog stress fork_threads)
  add_executable(malloc_${prog} ${STRATA_MALLOC_TEST_DIR}/${prog}.cpp)
  # -fsized-deallocation: clang before 19 declares no sized operator delete without it.
  target_compile_options(malloc_${prog} PRIVATE -O2 -pthread
                         $<$<COMPILE_LANG_AND_ID:CXX,Clang>:-fsized-deallocation>)
  strata_warnings(malloc_${prog})
  target_link_options(malloc_${prog} PRIVATE -pthread)
endforeach()

# The reference runs: on glibc; under a sanitizer only the stress program, on the sanitizer's
# allocator (named "sanitized"), where it checks the program itself. (GCC 12's ASan allocator
# keeps its size-class locks across fork(): children of malloc_fork_threads then hang in
# asan_malloc, which is exactly what that test detects, so it is not run there.) --max-rss-mib 1024: the stress run peaks at about
# 90-230 MiB on glibc, jemalloc, tcmalloc and Strata's libraries; an allocator that never
# reuses the caches of the thousands of threads that exit during the run goes far above.
# (Variables are prefixed: this file is included into the tests directory's scope.)
if(STRATA_SANITIZE)
  set(strata_c2_ref sanitized)
  set(strata_c2_stress_args --ops 2000000)
else()
  set(strata_c2_ref glibc)
  set(strata_c2_stress_args --expect-lib libc.so --max-rss-mib 1024)
endif()
add_test(NAME malloc.stress.${strata_c2_ref} COMMAND malloc_stress ${strata_c2_stress_args})
set_tests_properties(malloc.stress.${strata_c2_ref} PROPERTIES TIMEOUT 300 PROCESSORS 2)
if(NOT STRATA_SANITIZE)
  add_test(NAME malloc.fork_threads.glibc COMMAND malloc_fork_threads)
  set_tests_properties(malloc.fork_threads.glibc PROPERTIES TIMEOUT 300 PROCESSORS 2)
endif()

if(NOT STRATA_SANITIZE)
  set(strata_c2_libs
    strata_malloc_kingsley strata-kingsley
    strata_malloc_lea strata-lea
    strata_malloc strata
    strata_malloc_secure strata-secure)
  while(strata_c2_libs)
    list(POP_FRONT strata_c2_libs strata_c2_target strata_c2_name)
    if(NOT TARGET ${strata_c2_target})
      continue()
    endif()
    set(strata_c2_preload "LD_PRELOAD=$<TARGET_FILE:${strata_c2_target}>")
    add_test(NAME malloc.in_effect.${strata_c2_name}
      COMMAND malloc_stress --check-only --all-symbols
              --expect-lib $<TARGET_FILE_NAME:${strata_c2_target}>)
    add_test(NAME malloc.stress.${strata_c2_name}
      COMMAND malloc_stress --expect-lib $<TARGET_FILE_NAME:${strata_c2_target}> --max-rss-mib 1024)
    add_test(NAME malloc.fork_threads.${strata_c2_name} COMMAND malloc_fork_threads)
    set_tests_properties(malloc.in_effect.${strata_c2_name} malloc.stress.${strata_c2_name}
      malloc.fork_threads.${strata_c2_name} PROPERTIES ENVIRONMENT "${strata_c2_preload}")
    set_tests_properties(malloc.stress.${strata_c2_name} malloc.fork_threads.${strata_c2_name}
      PROPERTIES TIMEOUT 300 PROCESSORS 2)
    add_test(NAME malloc.real_programs.${strata_c2_name}
      COMMAND bash ${STRATA_MALLOC_TEST_DIR}/real_programs.sh $<TARGET_FILE:${strata_c2_target}>)
    set_tests_properties(malloc.real_programs.${strata_c2_name} PROPERTIES
      TIMEOUT 600 PROCESSORS 2)
  endwhile()
endif()
