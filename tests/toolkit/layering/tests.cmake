# The component graph holds: no file of a toolkit component includes a header of a component
# above it in toolkit/CMakeLists.txt's list, and no file of layers/ includes anything of
# toolkit/ (check.cmake). The second test runs the check on wrong_tree/, which has one
# include of each kind pointing up, and passes when it names both.
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
  "wrong.hpp: layers includes \"strata/trace/format.hpp\".*down.cpp: support includes \"command_table.hpp\" of cli.*2 includes point up")
