# A safetensors index naming 100,000 shards reaches its first error (the first shard is
# missing) at once: collecting the shard names was quadratic (19 s, minutes on a busy machine).
# -DMEMPLAN=<binary> -DWORKDIR=<scratch folder>
cmake_minimum_required(VERSION 3.25)
set(dir "${WORKDIR}/many-shards")
file(MAKE_DIRECTORY "${dir}")
# seq and sed write the 100,000 entries in a blink; a CMake loop appending them does not.
execute_process(COMMAND sh -c "{ printf '{\"weight_map\": {'; seq 1 100000 | sed 's/.*/\"t&\": \"s&.safetensors\",/' | tr -d '\\n'; printf '\"t0\": \"s0.safetensors\"}}'; } > model.safetensors.index.json"
                WORKING_DIRECTORY "${dir}" RESULT_VARIABLE written)
if(NOT written EQUAL 0)
  message(FATAL_ERROR "could not write the index")
endif()
execute_process(COMMAND "${MEMPLAN}" import "${dir}/model.safetensors.index.json" ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 2 OR NOT err MATCHES "s0\\.safetensors: no such file")
  message(FATAL_ERROR "exit ${rc}: ${err}")
endif()
