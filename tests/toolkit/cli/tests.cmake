# The `strata` command end to end: cli_test runs the built executable (its path passed as
# STRATA_CLI_PATH) with arguments and checks output and exit status.
if(TARGET strata_cli)
  strata_gtest(cli_test ${CMAKE_CURRENT_LIST_DIR}/cli_test.cpp)
  target_compile_definitions(cli_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    STRATA_TEST_MULTIARCH="${CMAKE_LIBRARY_ARCHITECTURE}")
  add_dependencies(cli_test strata_cli strata_replayer strata_exec strata_probe spec_report_preload)
  target_compile_definitions(cli_test PRIVATE STRATA_TEST_ENV_LIB="$<TARGET_FILE:spec_report_preload>")
endif()
# The stand-in allocators of the spec tests: one reports its environment and takes over
# malloc, one preloads without taking it over. Never sanitized: they are preloaded into
# programs that are not.
foreach(kind report no_takeover)
  add_library(spec_${kind}_preload SHARED ${CMAKE_CURRENT_LIST_DIR}/env_report_preload.c)
  target_compile_options(spec_${kind}_preload PRIVATE -fno-sanitize=all)
  strata_warnings(spec_${kind}_preload)
  target_link_options(spec_${kind}_preload PRIVATE -fno-sanitize=all)
endforeach()
target_compile_definitions(spec_no_takeover_preload PRIVATE STRATA_TEST_NO_TAKEOVER)
if(TARGET strata_cli AND TARGET strata_malloc)
  if(STRATA_SANITIZE)
    set(strata_spec_preload 0)
  else()
    set(strata_spec_preload 1)
  endif()
  strata_gtest(spec_cli_test ${CMAKE_CURRENT_LIST_DIR}/spec_cli_test.cpp)
  target_compile_definitions(spec_cli_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    STRATA_TEST_ENV_LIB="$<TARGET_FILE:spec_report_preload>"
    STRATA_TEST_NO_TAKEOVER_LIB="$<TARGET_FILE:spec_no_takeover_preload>"
    STRATA_TEST_STRATA_LIB="$<TARGET_FILE:strata_malloc>"
    STRATA_TEST_PRELOAD=${strata_spec_preload})
  add_dependencies(spec_cli_test strata_cli strata_replayer strata_exec strata_probe
    spec_report_preload spec_no_takeover_preload)
endif()
# `strata tune` end to end (tune_test.cpp): replays on glibc's tunables and a live run of
# tune_program.c. Not in a sanitizer build: there the replayer's malloc is the sanitizer's,
# which glibc's tunables do not touch, and nothing can be preloaded into it.
if(TARGET strata_cli AND TARGET strata_record AND NOT STRATA_SANITIZE)
  add_executable(tune_program ${CMAKE_CURRENT_LIST_DIR}/tune_program.c)
  target_compile_options(tune_program PRIVATE -O1 -fno-builtin)
  strata_warnings(tune_program)
  strata_gtest(tune_test ${CMAKE_CURRENT_LIST_DIR}/tune_test.cpp)
  target_compile_definitions(tune_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    STRATA_TEST_ENV_LIB="$<TARGET_FILE:spec_report_preload>"
    STRATA_TEST_TUNE_PROGRAM="$<TARGET_FILE:tune_program>")
  add_dependencies(tune_test strata_cli strata_replayer strata_exec strata_probe strata_record
    strata_malloc strata_share_files spec_report_preload tune_program)
endif()
# `strata build` end to end: it runs the system C++ compiler on strata.hpp, strata-probe on
# the result, and malloc_origin (a C program that says where malloc comes from) under
# `strata run` with the library preloaded. malloc_origin is never sanitized, as the stand-in
# libraries above: the library it preloads is not.
if(TARGET strata_cli)
  add_executable(malloc_origin ${CMAKE_CURRENT_LIST_DIR}/malloc_origin.c)
  target_compile_options(malloc_origin PRIVATE -fno-sanitize=all)
  strata_warnings(malloc_origin)
  target_link_options(malloc_origin PRIVATE -fno-sanitize=all)
  target_link_libraries(malloc_origin PRIVATE ${CMAKE_DL_LIBS})
  strata_gtest(build_cli_test ${CMAKE_CURRENT_LIST_DIR}/build_cli_test.cpp)
  target_compile_definitions(build_cli_test PRIVATE STRATA_CLI_PATH="$<TARGET_FILE:strata_cli>"
    STRATA_TEST_MALLOC_ORIGIN="$<TARGET_FILE:malloc_origin>")
  add_dependencies(build_cli_test strata_cli strata_probe malloc_origin)
endif()

# The main job builds the target strata_toolkit alone: every target that builds a file the
# command needs (`strata doctor --targets`) must be one of its parts, and in a full build
# `strata doctor` finds every file.
if(TARGET strata_cli)
  get_property(strata_toolkit_parts GLOBAL PROPERTY STRATA_TOOLKIT_PARTS)
  set(strata_optional_built)
  if(TARGET strata_drag_tool)
    list(APPEND strata_optional_built strata_drag_tool)
  endif()
  add_test(NAME toolkit.main_target_builds_every_helper
    COMMAND ${CMAKE_COMMAND} -DSTRATA=$<TARGET_FILE:strata_cli> "-DPARTS=${strata_toolkit_parts}"
            "-DOPTIONAL_BUILT=${strata_optional_built}"
            -P ${CMAKE_CURRENT_LIST_DIR}/toolkit_parts.cmake)
  add_test(NAME toolkit.doctor COMMAND strata_cli doctor)
endif()
