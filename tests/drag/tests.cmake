# The drag tool (src/drag/tool/) and its run helper (strata_drag_run): drag_test runs
# drag_program, which issues the drag requests itself, under Valgrind with the tool and checks
# the last-use files. drag_program is built without the sanitizers of a sanitized build
# (they do not run under Valgrind); the test itself may have them.
add_executable(drag_test ${CMAKE_CURRENT_LIST_DIR}/drag_test.cpp)
strata_warnings(drag_test)
target_link_libraries(drag_test PRIVATE strata_drag_run strata_support GTest::gtest
                      GTest::gtest_main)
if(TARGET strata_drag_tool)
  add_executable(drag_program ${CMAKE_CURRENT_LIST_DIR}/drag_program.c)
  target_include_directories(drag_program PRIVATE ${PROJECT_SOURCE_DIR}/include)
  set_target_properties(drag_program PROPERTIES COMPILE_OPTIONS "-O1;-g;${STRATA_WARNING_FLAGS}"
                        LINK_OPTIONS "")
  add_dependencies(drag_test drag_program strata_drag_tool)
  target_compile_definitions(drag_test PRIVATE
    STRATA_DRAG_TOOL_PATH="$<TARGET_PROPERTY:strata_drag_tool,STRATA_TOOL_PATH>"
    STRATA_DRAG_PROGRAM="$<TARGET_FILE:drag_program>")
endif()
gtest_discover_tests(drag_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 120)
