# The allocator registry (toolkit/registry), linked alone, without the command: the allocators
# Strata knows and where their libraries are (registry_test.cpp), and allocator specs parsed,
# labelled and checked (allocator_spec_test.cpp).
if(TARGET strata_registry)
  strata_gtest(registry_test ${CMAKE_CURRENT_LIST_DIR}/registry_test.cpp)
  target_compile_definitions(registry_test PRIVATE
    STRATA_TEST_MULTIARCH="${CMAKE_LIBRARY_ARCHITECTURE}")
  target_link_libraries(registry_test PRIVATE strata_registry)
  strata_gtest(allocator_spec_test ${CMAKE_CURRENT_LIST_DIR}/allocator_spec_test.cpp)
  target_link_libraries(allocator_spec_test PRIVATE strata_registry)
endif()
