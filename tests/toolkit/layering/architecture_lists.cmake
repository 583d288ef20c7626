# docs/architecture.md names every folder of the code: each folder of layers/include/strata/
# appears as `name/` and each toolkit component as `toolkit/name`. Fails naming the folders
# the page does not mention, so a new folder is drawn when it is added.
#
#   cmake -DSOURCE_DIR=<repository> -P architecture_lists.cmake
cmake_minimum_required(VERSION 3.20)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=DIR -P architecture_lists.cmake")
endif()
set(page ${SOURCE_DIR}/docs/architecture.md)
if(NOT EXISTS ${page})
  message(FATAL_ERROR "${page}: no such file")
endif()
file(READ ${page} text)
# Appends to `missing` each folder of GLOB that the page does not name as PREFIX<name>SUFFIX
# (`name/` for a layer folder, `toolkit/name` for a component); REPORT is how it is listed.
set(missing)
function(check_folders glob prefix suffix report)
  file(GLOB dirs LIST_DIRECTORIES true ${glob})
  foreach(dir IN LISTS dirs)
    get_filename_component(name ${dir} NAME)
    string(FIND "${text}" "`${prefix}${name}${suffix}`" at)
    if(IS_DIRECTORY ${dir} AND at EQUAL -1)
      list(APPEND missing "${report}${name}/")
    endif()
  endforeach()
  set(missing ${missing} PARENT_SCOPE)
endfunction()
check_folders(${SOURCE_DIR}/layers/include/strata/* "" "/" "layers/include/strata/")
check_folders(${SOURCE_DIR}/toolkit/* "toolkit/" "" "toolkit/")
if(missing)
  list(JOIN missing ", " missing_text)
  message(FATAL_ERROR "docs/architecture.md does not mention: ${missing_text}")
endif()
message(STATUS "docs/architecture.md names every folder of layers/include/strata/ and toolkit/")
