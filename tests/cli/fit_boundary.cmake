# memplan fit agrees with memplan estimate at the boundary: the value fit reports fits under
# the limit and value + 1 does not, re-estimated by `memplan estimate` with the same plan.
# -DMEMPLAN=<memplan binary> -DARGS=<fit arguments joined by @@>
string(REPLACE "@@" ";" ARGS "${ARGS}")

function(run_json out_var)
  execute_process(COMMAND "${MEMPLAN}" ${ARGN} --format json RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 60)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "memplan ${ARGN}: exit ${code}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

run_json(fit fit ${ARGS})
string(JSON value GET "${fit}" value)
string(JSON option GET "${fit}" option)
string(JSON limit GET "${fit}" limit_bytes)
string(JSON total GET "${fit}" total_bytes)
string(JSON next ERROR_VARIABLE no_next GET "${fit}" next_total_bytes)
if(value LESS 1 OR no_next)
  message(FATAL_ERROR "expected a boundary inside the search (value >= 1, a next total):\n${fit}")
endif()

# The same plan for estimate: fit's own options (--vary, --threshold) left out.
set(plan "")
set(skip FALSE)
foreach(arg IN LISTS ARGS)
  if(skip)
    set(skip FALSE)
  elseif(arg STREQUAL "--vary" OR arg STREQUAL "--threshold")
    set(skip TRUE)
  else()
    list(APPEND plan "${arg}")
  endif()
endforeach()

math(EXPR above "${value} + 1")
run_json(at estimate ${plan} ${option} ${value})
run_json(over estimate ${plan} ${option} ${above})
string(JSON at_total GET "${at}" total_bytes)
string(JSON over_total GET "${over}" total_bytes)
if(NOT at_total STREQUAL total)
  message(FATAL_ERROR "fit says ${option} ${value} needs ${total} B, estimate says ${at_total} B")
endif()
if(NOT over_total STREQUAL next)
  message(FATAL_ERROR "fit says ${option} ${above} needs ${next} B, estimate says ${over_total} B")
endif()
# Totals are below 2^53, so CMake's comparison is exact.
if(at_total GREATER limit OR NOT over_total GREATER limit)
  message(FATAL_ERROR "not a boundary: ${option} ${value} -> ${at_total} B, ${above} -> ${over_total} B, limit ${limit} B")
endif()
message(STATUS "${option} ${value}: ${at_total} <= ${limit} < ${over_total}")
