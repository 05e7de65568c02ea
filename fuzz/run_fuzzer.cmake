# One bounded libFuzzer run, as ctest runs it: from the committed corpus, with a fixed seed
# (a failure reproduces), new inputs and any crasher kept in the build tree, never in fuzz/.
# -DFUZZER=<binary> -DCORPUS=<fuzz/corpus/NAME> -DDICT=<fuzz/dict/NAME.dict> -DWORK=<dir> -DRUNS=<n>
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus")
# -timeout: one input taking 10 s is a hang; -rss_limit_mb (also the malloc limit): one
# asking for 2 GiB is a finding; -max_total_time: a slow machine stops early instead of failing.
execute_process(COMMAND "${FUZZER}" -runs=${RUNS} -seed=1 -timeout=10 -rss_limit_mb=2048 -max_total_time=120
                        "-dict=${DICT}" "-artifact_prefix=${WORK}/" "${WORK}/corpus" "${CORPUS}"
                RESULT_VARIABLE code ERROR_VARIABLE log OUTPUT_VARIABLE out)
string(REGEX MATCH "Done [0-9]+ runs in [0-9]+ second" done "${log}")
if(NOT code EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (exit ${code}); the input is in ${WORK}/\n${out}\n${log}")
endif()
message(STATUS "${done}")
