# The public headers built without exceptions, and what PerClassHeap and Reap promise there.
# (g++ 12 sees malloc's result reach a class's operator delete through the inlined heap and
# calls it a mismatch: the class's own new and delete are a pair, so that warning is off.)
add_executable(no_exceptions_check ${CMAKE_CURRENT_LIST_DIR}/no_exceptions_check.cpp)
target_compile_options(no_exceptions_check PRIVATE -fno-exceptions
                       $<$<CXX_COMPILER_ID:GNU>:-Wno-mismatched-new-delete>)
strata_warnings(no_exceptions_check)
target_link_libraries(no_exceptions_check PRIVATE strata::strata)
add_test(NAME no_exceptions.headers_and_contracts COMMAND no_exceptions_check)
