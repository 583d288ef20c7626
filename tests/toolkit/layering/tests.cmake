# The toolkit's seams hold (check.cmake): no file of a toolkit component includes a header of a
# component above it in toolkit/CMakeLists.txt's list, none names another component's header
# by a bare name or reaches into its subfolders, every component's code is in its namespace,
# and no file of layers/ includes anything of toolkit/. The second test runs the check on
# wrong_tree/, which breaks each rule once, and passes when it names each break and no more.
get_property(strata_components GLOBAL PROPERTY STRATA_TOOLKIT_COMPONENTS)
add_test(NAME toolkit.layering
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} "-DCOMPONENTS=${strata_components}"
          -P ${CMAKE_CURRENT_LIST_DIR}/check.cmake)
add_test(NAME toolkit.layering_catches_upward_includes
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}/wrong_tree
          "-DCOMPONENTS=${strata_components}" -P ${CMAKE_CURRENT_LIST_DIR}/check.cmake)
# The output, not the exit status (1 here, as it should be), decides; the files are read in
# sorted order, so layers/ comes first.
set_tests_properties(toolkit.layering_catches_upward_includes PROPERTIES PASS_REGULAR_EXPRESSION
  "wrong.hpp: layers includes \"strata/trace/format.hpp\".*reach.cpp: cli includes \"record/recorder/real.hpp\".*space.cpp: cli declares namespace strata::support.*down.cpp: support includes \"cli/command_table.hpp\" of cli.*down.cpp: support includes \"command_table.hpp\" by a bare.*[^0-9]5 includes or namespaces break")

# docs/architecture.md names every folder of layers/include/strata/ and toolkit/
# (architecture_lists.cmake); the second runs it on wrong_tree/, whose page names two of its
# folders, and passes when it names the others.
add_test(NAME toolkit.architecture_lists_folders
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -P ${CMAKE_CURRENT_LIST_DIR}/architecture_lists.cmake)
add_test(NAME toolkit.architecture_lists_catches_missing
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}/wrong_tree
          -P ${CMAKE_CURRENT_LIST_DIR}/architecture_lists.cmake)
set_tests_properties(toolkit.architecture_lists_catches_missing PROPERTIES PASS_REGULAR_EXPRESSION
  "does not mention: layers/include/strata/unlisted/,.*toolkit/record/,.*toolkit/trace/")
