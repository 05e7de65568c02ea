# validate_json(COMMAND TEXT LABEL RESULT): checks TEXT, the JSON `memplan COMMAND ... --format json`
# printed, against docs/schemas/COMMAND.schema.json with tests/cli/validate_json.py. Sets RESULT
# to "" when it matches (or when there is nothing to check it with) and else to the
# validator's message; the document is kept beside the test's output for a look.
# Included by run_case.cmake, fit_boundary.cmake and recommend_roundtrip.cmake, which take
# -DJSON_PYTHON=<a python3 with python3-jsonschema> -DJSON_SCHEMAS=<docs/schemas> from
# tests/cli/CMakeLists.txt (set only where that python was found at configure time).
set(validate_json_script "${CMAKE_CURRENT_LIST_DIR}/validate_json.py")

function(validate_json command text label result)
  set(${result} "" PARENT_SCOPE)
  set(schema "${JSON_SCHEMAS}/${command}.schema.json")
  if(NOT JSON_PYTHON OR NOT JSON_SCHEMAS OR NOT EXISTS "${schema}")
    return()
  endif()
  # A name of its own: the cases run in parallel, and one script validates several outputs.
  string(MAKE_C_IDENTIFIER "${label}" id)
  string(RANDOM LENGTH 8 salt)
  set(document "${CMAKE_CURRENT_BINARY_DIR}/json-output/${id}-${salt}.json")
  file(WRITE "${document}" "${text}")
  execute_process(COMMAND "${JSON_PYTHON}" "${validate_json_script}" "${schema}" "${document}"
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(code STREQUAL "0")
    file(REMOVE "${document}")
  else()
    set(${result} "${err}${out}(exit ${code}; the document is kept as ${document})" PARENT_SCOPE)
  endif()
endfunction()
