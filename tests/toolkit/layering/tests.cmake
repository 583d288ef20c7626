# The toolkit's seams hold (check.cmake): no file of a toolkit component includes a header of a
# component above it in toolkit/CMakeLists.txt's list, none names another component's header
# by a bare name or reaches into its subfolders, every component's code is in its namespace,
# and no file of layers/ includes anything of toolkit/. The control runs the check on
# wrong_tree/, which breaks each rule once, and passes when it names each break and no more
# (the files are read in sorted order, so layers/ comes first).
get_property(strata_components GLOBAL PROPERTY STRATA_TOOLKIT_COMPONENTS)
string(REPLACE ";" "\\;" strata_components "${strata_components}")  # one argument, still a list
strata_tree_check(toolkit.layering toolkit.layering_catches_upward_includes
  ${CMAKE_CURRENT_LIST_DIR}/check.cmake ${CMAKE_CURRENT_LIST_DIR}/wrong_tree
  "wrong.hpp: layers includes \"strata/trace/format.hpp\".*reach.cpp: cli includes \"record/recorder/real.hpp\".*space.cpp: cli declares namespace strata::support.*down.cpp: support includes \"cli/command_table.hpp\" of cli.*down.cpp: support includes \"command_table.hpp\" by a bare.*[^0-9]5 includes or namespaces break"
  "-DCOMPONENTS=${strata_components}")

# docs/architecture.md names every folder of layers/include/strata/ and toolkit/
# (architecture_lists.cmake); the control's page, in wrong_tree/, names two of its folders.
strata_tree_check(toolkit.architecture_lists_folders toolkit.architecture_lists_catches_missing
  ${CMAKE_CURRENT_LIST_DIR}/architecture_lists.cmake ${CMAKE_CURRENT_LIST_DIR}/wrong_tree
  "does not mention: layers/include/strata/unlisted/,.*toolkit/record/,.*toolkit/trace/")
