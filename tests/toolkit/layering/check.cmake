# The toolkit's seams (docs/architecture.md, "Who depends on whom" and "Names"), checked on
# every `#include "..."` and `#include <strata/...>` line and every `namespace strata...` line
# of toolkit/ and layers/; fails naming each line that breaks one of them:
#
# - The include graph runs downward: a file of a toolkit component includes headers of its
#   own component, of components before it in COMPONENTS (toolkit/CMakeLists.txt's list,
#   bottom-up) and of the layers; a file of layers/ includes nothing of toolkit/.
# - Another component's header is named by a rooted path: "<component>/<file>" (rooted at
#   toolkit/) or "strata/<component>/<file>" (the header-only trace and protocol). A bare name
#   reaches only a file beside the including one, never into another component.
# - A component's subfolders (record/recorder/, drag/tool/) are private to it: no other
#   component includes "<component>/<subfolder>/...".
# - A toolkit component's code is in its own namespace, strata::<component> or one inside it.
#
#   cmake -DSOURCE_DIR=<repository> -DCOMPONENTS="support;trace;..." -P check.cmake
#
# A name found in no component (a system or Valgrind header, a generated file) is skipped.
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

# The components whose include/ folders (or layers/include/) hold the rooted `name`.
function(components_holding name out)
  set(found)
  if(EXISTS ${SOURCE_DIR}/layers/include/${name})
    list(APPEND found layers)
  endif()
  foreach(c IN LISTS COMPONENTS)
    if(EXISTS ${SOURCE_DIR}/toolkit/${c}/include/${name})
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
# Every toolkit header outside an include/ folder by its file name, for the bare-name check.
foreach(src IN LISTS sources)
  file(RELATIVE_PATH rel ${SOURCE_DIR} ${src})
  if(rel MATCHES "^toolkit/[^/]+/include/")
    continue()
  endif()
  if(rel MATCHES "^toolkit/([^/]+)/(.*/)?([^/]+\\.h(pp)?)$")
    string(MAKE_C_IDENTIFIER "${CMAKE_MATCH_3}" key)
    list(APPEND header_${key} "${CMAKE_MATCH_1}/${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
  endif()
endforeach()

list(JOIN COMPONENTS " " order_text)
set(order_text "layers, then ${order_text}")
set(violations 0)
set(checked 0)
macro(violation text)
  file(RELATIVE_PATH rel ${SOURCE_DIR} ${src})
  message(SEND_ERROR "${rel}: ${text}")
  math(EXPR violations "${violations} + 1")
endmacro()

foreach(src IN LISTS sources)
  component_of(${src} own)
  if(NOT DEFINED allowed_${own})
    violation("in no component of the list (add toolkit/${own} to COMPONENTS)")
    continue()
  endif()
  get_filename_component(dir ${src} DIRECTORY)
  file(STRINGS ${src} lines REGEX "^[ \t]*#[ \t]*include[ \t]*(\"[^\"]+\"|<strata/[^>]+>)")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "(\"([^\"]+)\"|<(strata/[^>]+)>)" _ "${line}")
    set(name "${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
    set(holders)
    if(CMAKE_MATCH_2 AND EXISTS ${dir}/${name})
      get_filename_component(target ${dir}/${name} ABSOLUTE)
      component_of(${target} holders)
    elseif(name MATCHES "^strata/")
      components_holding(${name} holders)
    elseif(name MATCHES "^([^/]+)/(.+)$")
      set(first ${CMAKE_MATCH_1})
      set(rest ${CMAKE_MATCH_2})
      if(first IN_LIST COMPONENTS)
        set(holders ${first})
        if(rest MATCHES "/" AND NOT own STREQUAL first)
          violation("${own} includes \"${name}\", which is private to ${first} (a subfolder)")
        endif()
      endif()
    else()
      string(MAKE_C_IDENTIFIER "${name}" key)
      if(DEFINED header_${key} AND NOT own STREQUAL "layers")
        list(JOIN header_${key} "\" or \"" where)
        violation("${own} includes \"${name}\" by a bare name, not as \"${where}\"")
        continue()
      endif()
    endif()
    if(NOT holders)
      continue()  # a system, third-party or generated header
    endif()
    math(EXPR checked "${checked} + 1")
    set(ok FALSE)
    foreach(h IN LISTS holders)
      if(h IN_LIST allowed_${own})
        set(ok TRUE)
      endif()
    endforeach()
    if(NOT ok)
      list(JOIN holders ", " holders_text)
      violation("${own} includes \"${name}\" of ${holders_text}, which is not below it "
                "(bottom-up: ${order_text})")
    endif()
  endforeach()
  if(NOT own STREQUAL "layers")
    file(STRINGS ${src} spaces REGEX "^[ \t]*namespace[ \t]+strata[a-z_:]*[ \t]*{")
    foreach(line IN LISTS spaces)
      string(REGEX MATCH "strata[a-z_:]*" space "${line}")
      if(NOT space MATCHES "^strata::${own}(::|$)")
        violation("${own} declares namespace ${space}; its code is in strata::${own}")
      endif()
    endforeach()
  endif()
endforeach()
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} includes or namespaces break the toolkit's seams")
endif()
message(STATUS "${checked} includes of Strata headers checked: all point down, by rooted names")
