# `strata drag` end to end: drag_check_test runs the built `strata drag` on drag_check_program.c,
# the reaps paper's situations (prompt freeing, a region kept to the end, a long-lived reap
# whose objects die early, the reap C API as a region, a crash, no allocation), under Valgrind
# with the drag tool and the recorder, and checks the figures against answers worked out by
# hand. The program runs with the recorder preloaded, which a sanitized build cannot do (the
# sanitizer owns malloc), and needs the drag tool, which is built only where Valgrind's tool
# files are installed: without them drag_check.requires_valgrind stands in, skipped, or failed
# under STRATA_REQUIRE_DEPS (strata_missing_dependency_test).
if(TARGET strata_cli AND TARGET strata_record AND NOT TARGET strata_drag_tool
   AND NOT STRATA_SANITIZE)
  strata_missing_dependency_test(drag_check.requires_valgrind
    "Valgrind's tool files (Debian package: valgrind, on amd64): no drag tool, no drag_check_test")
endif()
if(TARGET strata_cli AND TARGET strata_record AND TARGET strata_drag_tool AND NOT STRATA_SANITIZE
   AND TARGET strata_reap AND TARGET strata_region AND TARGET strata_obstack)
  add_executable(drag_check_program ${CMAKE_CURRENT_LIST_DIR}/drag_check_program.c)
  # -fno-builtin: every allocation and access in the source is made as written.
  target_compile_options(drag_check_program PRIVATE -O1 -fno-builtin)
  strata_warnings(drag_check_program)
  target_link_libraries(drag_check_program PRIVATE strata::strata strata_reap strata_region
                        strata_obstack)
  strata_gtest(drag_check_test ${CMAKE_CURRENT_LIST_DIR}/drag_check_test.cpp)
  target_link_libraries(drag_check_test PRIVATE strata_drag)
  target_compile_definitions(drag_check_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    DRAG_PROGRAM="$<TARGET_FILE:drag_check_program>")
  add_dependencies(drag_check_test strata_cli strata_record strata_drag_tool drag_check_program)
endif()
