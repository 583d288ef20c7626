# The include graph runs downward (docs/architecture.md, "Who depends on whom"): a file of a
# toolkit component includes headers of its own component, of components before it in
# COMPONENTS (toolkit/CMakeLists.txt's list, bottom-up) and of the layers; a file of layers/
# includes nothing of toolkit/. Reads every `#include "..."` and `#include <strata/...>` line
# of toolkit/ and layers/, and fails naming each include that points up.
#
#   cmake -DSOURCE_DIR=<repository> -DCOMPONENTS="support;trace;..." -P check.cmake
#
# An include is looked up as the compiler would: beside the including file first, then in
# the include directories (toolkit/<component>/, toolkit/<component>/include/,
# layers/include/). A name found in none of them (a system or Valgrind header) is skipped; a
# name found in several components is fine when one of them is allowed.
cmake_minimum_required(VERSION 3.20)
if(NOT SOURCE_DIR OR NOT COMPONENTS)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=DIR -DCOMPONENTS=LIST -P check.cmake")
endif()

# The component a path in the repository belongs to: a toolkit component, "layers", or "".
function(component_of path out)
  file(RELATIVE_PATH rel ${SOURCE_DIR} ${path})
  if(rel MATCHES "^layers/")
    set(${out} layers PARENT_SCOPE)
  elseif(rel MATCHES "^toolkit/([^/]+)/")
    set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# The components whose include directories hold `name`, layers first.
function(components_holding name out)
  set(found)
  if(EXISTS ${SOURCE_DIR}/layers/include/${name})
    list(APPEND found layers)
  endif()
  foreach(c IN LISTS COMPONENTS)
    if(EXISTS ${SOURCE_DIR}/toolkit/${c}/${name} OR EXISTS ${SOURCE_DIR}/toolkit/${c}/include/${name})
      list(APPEND found ${c})
    endif()
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# What each component may include: itself, those before it, the layers. layers: itself.
set(allowed_layers layers)
set(below layers)
foreach(c IN LISTS COMPONENTS)
  list(APPEND below ${c})
  set(allowed_${c} ${below})
endforeach()

file(GLOB_RECURSE sources LIST_DIRECTORIES false
  ${SOURCE_DIR}/layers/*.h ${SOURCE_DIR}/layers/*.hpp ${SOURCE_DIR}/layers/*.c
  ${SOURCE_DIR}/layers/*.cpp ${SOURCE_DIR}/toolkit/*.h ${SOURCE_DIR}/toolkit/*.hpp
  ${SOURCE_DIR}/toolkit/*.c ${SOURCE_DIR}/toolkit/*.cpp)
list(JOIN COMPONENTS " " order_text)
set(order_text "layers, then ${order_text}")
set(violations 0)
set(checked 0)
foreach(src IN LISTS sources)
  component_of(${src} own)
  if(NOT DEFINED allowed_${own})
    message(SEND_ERROR "${src}: in no component of the list (add toolkit/${own} to COMPONENTS)")
    math(EXPR violations "${violations} + 1")
    continue()
  endif()
  get_filename_component(dir ${src} DIRECTORY)
  file(STRINGS ${src} lines REGEX "^[ \t]*#[ \t]*include[ \t]*(\"[^\"]+\"|<strata/[^>]+>)")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "(\"([^\"]+)\"|<(strata/[^>]+)>)" _ "${line}")
    set(name "${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
    if(CMAKE_MATCH_2 AND EXISTS ${dir}/${name})
      get_filename_component(target ${dir}/${name} ABSOLUTE)
      component_of(${target} holder)
      set(holders ${holder})
    else()
      components_holding(${name} holders)
    endif()
    if(NOT holders)
      continue()  # a system or third-party header
    endif()
    math(EXPR checked "${checked} + 1")
    set(ok FALSE)
    foreach(h IN LISTS holders)
      if(h IN_LIST allowed_${own})
        set(ok TRUE)
      endif()
    endforeach()
    if(NOT ok)
      file(RELATIVE_PATH rel ${SOURCE_DIR} ${src})
      list(JOIN holders ", " holders_text)
      message(SEND_ERROR "${rel}: ${own} includes \"${name}\" of ${holders_text}, which is not "
                         "below it (bottom-up: ${order_text})")
      math(EXPR violations "${violations} + 1")
    endif()
  endforeach()
endforeach()
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} includes point up the component graph")
endif()
message(STATUS "${checked} includes of Strata headers checked: all point down")
