# Every numeric plan option refuses -1, 2^64 and non-finite values by name, with exit 2:
# the class of "negative numbers become 2^64-1" and "inf is a number". The options come
# from `memplan help options` (the table), so a new option is covered the day it is added.
# -DMEMPLAN=<binary>
cmake_minimum_required(VERSION 3.25)

execute_process(COMMAND "${MEMPLAN}" help options OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "memplan help options exited ${rc}")
endif()
string(REGEX MATCHALL "\n  (-[a-z], )?--[a-z0-9-]+ [NX] " lines "${listing}")
list(LENGTH lines count)
if(count LESS 40)
  message(FATAL_ERROR "expected the table's 40-odd numeric options, found ${count}:\n${listing}")
endif()
set(checked 0)
foreach(line IN LISTS lines)
  string(REGEX MATCH "--[a-z0-9-]+" flag "${line}")
  string(REGEX MATCH " [NX] $" kind "${line}")
  if(kind STREQUAL " N ")
    set(values "-1" "18446744073709551616" "1.5")
  else()
    set(values "inf" "nan" "1e309" "-1e309")
  endif()
  foreach(value IN LISTS values)
    execute_process(COMMAND "${MEMPLAN}" estimate gpt2 "${flag}" "${value}"
                    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
    if(NOT rc EQUAL 2 OR NOT err MATCHES "^memplan: error: ${flag} " OR NOT out STREQUAL "")
      message(FATAL_ERROR "estimate gpt2 ${flag} ${value}: exit ${rc}, stdout '${out}', stderr '${err}'")
    endif()
    math(EXPR checked "${checked} + 1")
  endforeach()
endforeach()
message(STATUS "${count} numeric options, ${checked} bad values refused by name")
