# The drag tool (toolkit/drag/tool/) and its library (strata_drag): drag_test runs
# drag_program, which issues the drag requests itself, under Valgrind with the tool and checks
# the last-use files. drag_program is built without the sanitizers of a sanitized build
# (they do not run under Valgrind); the test itself may have them.
strata_gtest(drag_test ${CMAKE_CURRENT_LIST_DIR}/drag_test.cpp TIMEOUT 120)
target_link_libraries(drag_test PRIVATE strata_drag strata_support)
if(TARGET strata_drag_tool)
  add_executable(drag_program ${CMAKE_CURRENT_LIST_DIR}/drag_program.c)
  target_link_libraries(drag_program PRIVATE strata_protocol)
  set_target_properties(drag_program PROPERTIES COMPILE_OPTIONS "-O1;-g;${STRATA_WARNING_FLAGS}"
                        LINK_OPTIONS "")
  add_dependencies(drag_test drag_program strata_drag_tool)
  target_compile_definitions(drag_test PRIVATE
    STRATA_DRAG_TOOL_PATH="$<TARGET_PROPERTY:strata_drag_tool,STRATA_TOOL_PATH>"
    STRATA_DRAG_PROGRAM="$<TARGET_FILE:drag_program>")
endif()

# The drag analyses (last use, drag per object and site, the ideal trace, bounded memory) on
# hand-made traces; the ideal traces go through the replay's plan decoder.
strata_gtest(drag_analysis_test
  ${CMAKE_CURRENT_LIST_DIR}/drag_last_use_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/drag_analysis_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/drag_ideal_trace_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/drag_bounded_test.cpp)
target_include_directories(drag_analysis_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}
  ${CMAKE_CURRENT_LIST_DIR}/../tracetools)
target_compile_definitions(drag_analysis_test PRIVATE STRATA_DRAG_REPLAY_PLAN=1)
target_link_libraries(drag_analysis_test PRIVATE strata_drag strata_replay)

# drag.json (drag_json_test.cpp): written by the report from hand-made analyses, parsed with
# the compare tests' JSON reader and matched against report.txt.
strata_gtest(drag_json_test ${CMAKE_CURRENT_LIST_DIR}/drag_json_test.cpp TIMEOUT 120)
target_include_directories(drag_json_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}
  ${CMAKE_CURRENT_LIST_DIR}/../tracetools)
target_link_libraries(drag_json_test PRIVATE strata_drag)
