# Checks that the chart docs/estimators.md shows (docs/ssm-vs-transformer.svg) is what
# `memplan sweep --svg` draws now, or with -DUPDATE=ON redraws it.
# -DMEMPLAN=<the memplan binary> -DDOCS=<the docs directory> -DWORK=<a scratch directory> [-DUPDATE=ON]
cmake_minimum_required(VERSION 3.25)

set(chart "${DOCS}/ssm-vs-transformer.svg")
set(drawn "${WORK}/ssm-vs-transformer.svg")
file(MAKE_DIRECTORY "${WORK}")
file(REMOVE "${drawn}")
execute_process(COMMAND "${MEMPLAN}" sweep mamba-codestral-7b llama-3.1-8b -w generation --batch 4
                        --seq 2048,8192,32768,65536 --gpu h200 --svg "${drawn}"
                OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "memplan sweep --svg exited ${rc}: ${err}")
endif()
if(UPDATE)
  file(COPY_FILE "${drawn}" "${chart}")
  return()
endif()
file(READ "${drawn}" now)
file(READ "${chart}" kept)
if(NOT now STREQUAL kept)
  message(FATAL_ERROR "${chart} is out of date: run scripts/update-doc-outputs")
endif()
