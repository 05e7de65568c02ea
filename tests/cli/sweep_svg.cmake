# memplan sweep --svg FILE writes a self-contained SVG chart atomically: a missing directory is
# exit 2 and creates nothing; a good run leaves exactly the chart (no temporary file).
# -DMEMPLAN=<memplan binary> -DWORKDIR=<dir>
set(dir "${WORKDIR}/sweep-svg")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")

execute_process(COMMAND "${MEMPLAN}" sweep llama-2-7b mistral-7b-v0.1 --seq 512,1024,2048,4096 --batch 1,4 -p bf16,int4
                        --gpu rtx-4090 --svg "${dir}/chart.svg"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "sweep --svg: exit ${code}\n${out}\n${err}")
endif()
file(GLOB entries LIST_DIRECTORIES true RELATIVE "${dir}" "${dir}/*" "${dir}/.*")
if(NOT entries STREQUAL "chart.svg")
  message(FATAL_ERROR "expected only chart.svg in ${dir}, found [${entries}]")
endif()
file(READ "${dir}/chart.svg" svg)
string(REGEX MATCHALL "<polyline " lines "${svg}")
list(LENGTH lines n_lines)
# 2 models x 2 precisions x 2 batches = 8 lines over 4 sequence lengths.
if(NOT n_lines EQUAL 8 OR NOT svg MATCHES "^<svg xmlns=\"http://www.w3.org/2000/svg\" "
   OR NOT svg MATCHES "limit 19\\.99 GiB \\(85%\\)" OR NOT svg MATCHES "rtx-4090 23\\.52 GiB"
   OR NOT svg MATCHES "llama-2-7b inference int4-g128 batch=4" OR NOT svg MATCHES "</svg>\n$"
   OR svg MATCHES "<script" OR svg MATCHES "href=")
  message(FATAL_ERROR "unexpected chart (${n_lines} lines):\n${svg}")
endif()
find_program(XMLLINT xmllint)
if(XMLLINT)
  execute_process(COMMAND "${XMLLINT}" --noout "${dir}/chart.svg" RESULT_VARIABLE bad ERROR_VARIABLE why)
  if(bad)
    message(FATAL_ERROR "chart.svg is not well-formed XML: ${why}")
  endif()
endif()

execute_process(COMMAND "${MEMPLAN}" sweep gpt2 --seq 128,256 --svg "${dir}/no-such-dir/chart.svg"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT code EQUAL 2 OR NOT err MATCHES "no-such-dir/chart\\.svg: cannot write: directory '[^']*no-such-dir' does not exist")
  message(FATAL_ERROR "sweep --svg into a missing directory: exit ${code}\n${out}\n${err}")
endif()
if(EXISTS "${dir}/no-such-dir")
  message(FATAL_ERROR "a failed --svg created ${dir}/no-such-dir")
endif()
