# A 1.2 MB config.json of 100,000 "1e400" strings and one number 1e400 outside them: the
# error is located in one pass (it took minutes when each candidate rescanned the text).
# Its column: '{"model_type": "gpt2", "x": [' is 29 characters, the strings 100,000 x 8,
# ' 0], "n_embd": ' 15 more: 1e400 starts at column 29 + 800,000 + 15 + 1 = 800,045.
# -DMEMPLAN=<binary> -DWORKDIR=<scratch folder>
cmake_minimum_required(VERSION 3.25)
string(REPEAT "\"1e400\"," 100000 strings)
file(WRITE "${WORKDIR}/many-strings.json" "{\"model_type\": \"gpt2\", \"x\": [${strings} 0], \"n_embd\": 1e400}")
execute_process(COMMAND "${MEMPLAN}" estimate "${WORKDIR}/many-strings.json" ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 2 OR NOT err MATCHES "many-strings\\.json:1:800045: JSON number 1e400 is out of range")
  message(FATAL_ERROR "exit ${rc}: ${err}")
endif()
