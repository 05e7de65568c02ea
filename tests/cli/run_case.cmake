# Runs one CLI case and checks its exit code and output.
# -DCOMMAND=<program@@arg@@arg...> -DEXPECT_EXIT=<n> [-DSTDOUT=<regex>] [-DSTDERR=<regex>]
# [-DSTDOUT_EMPTY=ON] [-DSTDERR_EMPTY=ON] [-DWORKDIR=<dir>]
# [-DJSON_COMMAND=<subcommand> -DJSON_PYTHON=<python3> -DJSON_SCHEMAS=<docs/schemas> -DNAME=<case>]:
# stdout is `memplan JSON_COMMAND ... --format json`; it must match JSON_SCHEMAS/JSON_COMMAND.schema.json.
include("${CMAKE_CURRENT_LIST_DIR}/validate_json.cmake")
if(NOT WORKDIR)
  set(WORKDIR "${CMAKE_CURRENT_BINARY_DIR}")
endif()
string(REPLACE "@@" ";" COMMAND "${COMMAND}")
execute_process(COMMAND ${COMMAND}
                WORKING_DIRECTORY "${WORKDIR}"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 30)
set(report "command: ${COMMAND}\nexit: ${code}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
if(NOT code STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "expected exit ${EXPECT_EXIT}\n${report}")
endif()
if(DEFINED STDOUT AND NOT out MATCHES "${STDOUT}")
  message(FATAL_ERROR "stdout does not match '${STDOUT}'\n${report}")
endif()
if(DEFINED STDERR AND NOT err MATCHES "${STDERR}")
  message(FATAL_ERROR "stderr does not match '${STDERR}'\n${report}")
endif()
if(STDOUT_EMPTY AND NOT out STREQUAL "")
  message(FATAL_ERROR "expected no stdout\n${report}")
endif()
if(STDERR_EMPTY AND NOT err STREQUAL "")
  message(FATAL_ERROR "expected no stderr\n${report}")
endif()
if(JSON_COMMAND)
  if(out STREQUAL "")
    # An error (exit 2) prints nothing on stdout; a result must print its document.
    if(NOT EXPECT_EXIT STREQUAL "2")
      message(FATAL_ERROR "expected a JSON document on stdout\n${report}")
    endif()
  else()
    validate_json("${JSON_COMMAND}" "${out}" "${NAME}" why)
    if(why)
      message(FATAL_ERROR "stdout does not match docs/schemas/${JSON_COMMAND}.schema.json:\n${why}\n${report}")
    endif()
  endif()
endif()
