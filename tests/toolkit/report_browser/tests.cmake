# report.html in a real browser: the built `strata` makes every kind of report from real runs
# of report_program.c (compare on a trace with sites and live on the command, stats --sites,
# tune, drag, diff of two recordings), then check_report.mjs opens each page in Debian's
# headless Chromium through playwright-core, checks what a person would see and clicks
# (verdict, charts drawn, icicle, the moment chosen on the memory chart, sorting, CSV
# downloads, offline) and saves a full-page screenshot to report-screenshots/KIND.png in the
# build folder. scripts/setup_browser.sh installs chromium and the node modules.
#
# report_browser.make_* make the folders (fixtures report_browser_KIND); report_browser.KIND
# check them. A check whose Chromium or playwright-core is missing exits 77 and is skipped,
# unless STRATA_REQUIRE_DEPS is set (at configure time or when the test runs): then it fails. Without node at configure time the checks
# are not registered and report_browser.requires_node stands in. Recording preloads the
# recorder, which a sanitized build cannot do: nothing is registered there.
if(NOT TARGET strata_cli OR NOT TARGET strata_record OR STRATA_SANITIZE)
  return()
endif()
find_program(STRATA_NODE node)
if(NOT STRATA_NODE)
  strata_missing_dependency_test(report_browser.requires_node
    "node (Debian package: nodejs; then scripts/setup_browser.sh): no report_browser tests")
  return()
endif()

set(strata_rb_src ${CMAKE_CURRENT_LIST_DIR})
set(strata_rb_work ${CMAKE_BINARY_DIR}/report-browser)
set(strata_rb_shots ${CMAKE_BINARY_DIR}/report-screenshots)
set(strata_rb_cli $<TARGET_FILE:strata_cli>)

# Built without optimisation and with frame pointers so its sites are its own functions.
add_executable(report_browser_program ${strata_rb_src}/report_program.c)
set_target_properties(report_browser_program PROPERTIES
  COMPILE_OPTIONS "-O0;-g;-fno-omit-frame-pointer;-fno-builtin;${STRATA_WARNING_FLAGS}"
  LINK_OPTIONS "")
set(strata_rb_program $<TARGET_FILE:report_browser_program>)

# strata_rb_make(<name> <fixture> <dir> <fixtures required> <command...>): removes <dir>, runs
# the command (which makes it), and sets up <fixture> for the checks.
function(strata_rb_make name fixture dir required)
  add_test(NAME report_browser.make_${name}
    COMMAND sh -c "rm -rf \"$1\" && shift && exec \"$@\"" sh ${dir} ${ARGN})
  set_tests_properties(report_browser.make_${name} PROPERTIES
    FIXTURES_SETUP ${fixture} FIXTURES_REQUIRED "${required}" TIMEOUT 180)
endfunction()

# strata_rb_check(<name> <kind> <dir> <fixture> <expect JSON>): the browser check of
# <dir>/report.html, its screenshot report-screenshots/<name>.png.
function(strata_rb_check name kind dir fixture expect)
  add_test(NAME report_browser.${name}
    COMMAND ${STRATA_NODE} ${strata_rb_src}/check_report.mjs --html ${dir}/report.html
            --kind ${kind} --screenshot ${strata_rb_shots}/${name}.png --expect ${expect})
  set_tests_properties(report_browser.${name} PROPERTIES
    FIXTURES_REQUIRED ${fixture} SKIP_RETURN_CODE 77 TIMEOUT 180)
  # Dependencies required when the tree was configured stay required (as in
  # missing_dependency.cmake), whatever the test run's environment says.
  if(NOT "$ENV{STRATA_REQUIRE_DEPS}" STREQUAL "" AND NOT "$ENV{STRATA_REQUIRE_DEPS}" STREQUAL "0")
    set_tests_properties(report_browser.${name} PROPERTIES
      ENVIRONMENT "STRATA_REQUIRE_DEPS=$ENV{STRATA_REQUIRE_DEPS}")
  endif()
endfunction()

# Two recordings of the program, the second with nodes and buffers three times as large.
add_test(NAME report_browser.record
  COMMAND sh -c "rm -rf \"$1\" && mkdir -p \"$1\" && cd \"$1\" && \"$2\" record --sites -o a.trace -- \"$3\" 1 && \"$2\" record --sites -o b.trace -- \"$3\" 3"
          sh ${strata_rb_work}/traces ${strata_rb_cli} ${strata_rb_program})
set_tests_properties(report_browser.record PROPERTIES
  FIXTURES_SETUP report_browser_traces TIMEOUT 120)
set(strata_rb_a ${strata_rb_work}/traces/a.trace)
set(strata_rb_b ${strata_rb_work}/traces/b.trace)

set(strata_rb_both "{\"allocators\":[\"glibc\",\"strata\"]")
strata_rb_make(compare report_browser_compare ${strata_rb_work}/compare report_browser_traces
  ${strata_rb_cli} compare ${strata_rb_a} --sites --runs 1 --no-plots --allocators glibc,strata
  --out ${strata_rb_work}/compare)
strata_rb_check(compare compare ${strata_rb_work}/compare report_browser_compare
  "${strata_rb_both},\"sites\":true}")

# Live runs pause 30 ms after each phase so that the RSS is sampled over the run.
strata_rb_make(compare_live report_browser_compare_live ${strata_rb_work}/compare-live ""
  ${strata_rb_cli} compare --runs 1 --no-plots --allocators glibc,strata
  --out ${strata_rb_work}/compare-live -- ${strata_rb_program} 1 30)
strata_rb_check(compare-live compare ${strata_rb_work}/compare-live report_browser_compare_live
  "${strata_rb_both},\"live\":true}")

strata_rb_make(stats report_browser_stats ${strata_rb_work}/stats report_browser_traces
  ${strata_rb_cli} stats ${strata_rb_a} --sites --out ${strata_rb_work}/stats)
strata_rb_check(stats stats ${strata_rb_work}/stats report_browser_stats "{\"sites\":true}")

strata_rb_make(tune report_browser_tune ${strata_rb_work}/tune report_browser_traces
  ${strata_rb_cli} tune ${strata_rb_a} --budget 40 --repeat 1 --allocators glibc,strata
  --no-plots --out ${strata_rb_work}/tune)
strata_rb_check(tune tune ${strata_rb_work}/tune report_browser_tune "{}")

strata_rb_make(diff report_browser_diff ${strata_rb_work}/diff report_browser_traces
  ${strata_rb_cli} diff ${strata_rb_a} ${strata_rb_b} --out ${strata_rb_work}/diff)
strata_rb_check(diff diff ${strata_rb_work}/diff report_browser_diff "{}")

# drag runs the program under Valgrind with the drag tool, built only where Valgrind's tool
# files are installed (see tests/toolkit/drag_check/tests.cmake).
if(TARGET strata_drag_tool)
  strata_rb_make(drag report_browser_drag ${strata_rb_work}/drag ""
    ${strata_rb_cli} drag --sites -o ${strata_rb_work}/drag -- ${strata_rb_program} 1)
  strata_rb_check(drag drag ${strata_rb_work}/drag report_browser_drag "{}")
else()
  strata_missing_dependency_test(report_browser.requires_valgrind
    "Valgrind's tool files (Debian package: valgrind, on amd64): no drag report to check")
endif()
