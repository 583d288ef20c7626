# Builds TARGET in BUILD_DIR, which must fail with a diagnostic matching EXPECT.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but the composition is wrong and must not")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "${TARGET} failed to compile, but not with '${EXPECT}':\n${out}${err}")
endif()
message(STATUS "${TARGET} was rejected as expected ('${EXPECT}')")
