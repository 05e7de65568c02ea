# memplan measure attention --svg FILE writes a log-log chart atomically: one dashed
# estimate line and one dot per measured point for each variant; a missing directory is
# exit 2, prints nothing and creates nothing.
# -DMEMPLAN=<memplan binary> -DWORKDIR=<dir>
set(dir "${WORKDIR}/measure-svg")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")

execute_process(COMMAND "${MEMPLAN}" measure attention --variant eager,linear,causal_linear_naive --seq 32,64,128
                        --batch 1 --heads 1 --head-dim 8 --repeats 1 --svg "${dir}/attention.svg"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "measure --svg: exit ${code}\n${out}\n${err}")
endif()
file(GLOB entries LIST_DIRECTORIES true RELATIVE "${dir}" "${dir}/*" "${dir}/.*")
if(NOT entries STREQUAL "attention.svg")
  message(FATAL_ERROR "expected only attention.svg in ${dir}, found [${entries}]")
endif()
file(READ "${dir}/attention.svg" svg)
string(REGEX MATCHALL "<polyline " lines "${svg}")
string(REGEX MATCHALL "<title>[a-z_]+ seq=[0-9]+: measured " dots "${svg}")
list(LENGTH lines n_lines)
list(LENGTH dots n_dots)
# 3 variants: 3 estimate lines, 3 x 3 measured dots.
if(NOT n_lines EQUAL 3 OR NOT n_dots EQUAL 9 OR NOT svg MATCHES "^<svg xmlns=\"http://www.w3.org/2000/svg\" "
   OR NOT svg MATCHES "memplan measure attention on cpu, fp32" OR NOT svg MATCHES "causal_linear_naive seq=128: measured"
   OR NOT svg MATCHES "</svg>\n$" OR svg MATCHES "<script" OR svg MATCHES "href=")
  message(FATAL_ERROR "unexpected chart (${n_lines} lines, ${n_dots} dots):\n${svg}")
endif()

execute_process(COMMAND "${MEMPLAN}" measure attention --variant eager --seq 32 --batch 1 --heads 1 --head-dim 8
                        --repeats 1 --svg "${dir}/no-such-dir/attention.svg"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT code EQUAL 2 OR NOT err MATCHES "no-such-dir/attention\\.svg: cannot write")
  message(FATAL_ERROR "measure --svg into a missing directory: exit ${code}\n${out}\n${err}")
endif()
if(EXISTS "${dir}/no-such-dir")
  message(FATAL_ERROR "a failed --svg created ${dir}/no-such-dir")
endif()
