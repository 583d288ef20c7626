# report.html (tests/toolkit/report/): report_test.cpp, the result folder read (errors naming the file),
# CSV downsampling and the page's embedded bundle; report_cli_test.cpp, `strata compare` then
# `strata report` end to end, the bundle parsed back out of the page.
if(TARGET strata_report)
  # CSV parsing and downsampling; the folder read, the bundle, the page, writing.
  foreach(strata_report_test csv_table_test report_folder_test)
    strata_gtest(${strata_report_test} ${CMAKE_CURRENT_LIST_DIR}/${strata_report_test}.cpp)
    target_link_libraries(${strata_report_test} PRIVATE strata_report)
  endforeach()
endif()

if(TARGET strata_cli)
  # `strata compare` on a bundled workload, then `strata report`: the replayer and strata-probe run.
  strata_gtest(report_cli_test ${CMAKE_CURRENT_LIST_DIR}/report_cli_test.cpp)
  target_compile_definitions(report_cli_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>")
  target_link_libraries(report_cli_test PRIVATE strata_support)
  add_dependencies(report_cli_test strata_cli)
  foreach(strata_report_dep strata_replayer strata_probe strata_share_files)
    if(TARGET ${strata_report_dep})
      add_dependencies(report_cli_test ${strata_report_dep})
    endif()
  endforeach()
endif()

# The build refuses a page asset holding "</script" (any case), naming the file: embedding it
# would end the page's inline <script> early.
add_test(NAME report.embed_refuses_script_close
  COMMAND ${CMAKE_COMMAND} -DWEB_DIR=${CMAKE_CURRENT_LIST_DIR}/bad_web
          -DOUT=${CMAKE_CURRENT_BINARY_DIR}/report_bad_web_assets.cpp
          -P ${PROJECT_SOURCE_DIR}/toolkit/report/embed_assets.cmake)
set_tests_properties(report.embed_refuses_script_close PROPERTIES
  PASS_REGULAR_EXPRESSION "bad_web/closes.js: holds \"</script\"")
