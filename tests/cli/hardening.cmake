# The bad-input suite (docs/hardening.md): malformed and hostile inputs of every
# kind memplan reads. Each case expects exit 2, nothing on stdout, and one message on stderr
# naming the file (with line and column where there is one) and the problem. Included by
# tests/cli/CMakeLists.txt, which defines cli_case; the cases above it cover the first
# malformed model files and plans.
set(st_bad "${PROJECT_SOURCE_DIR}/tests/data/safetensors/bad")
set(one_error "^memplan: error: [^\n]*\n$")  # exactly one line on stderr

# Model files.
cli_case(bad_truncated_yaml EXIT 2 ARGS estimate "${data}/truncated.yaml" STDOUT_EMPTY
         STDERR "truncated\\.yaml:[45]:[0-9]+: YAML syntax error")
cli_case(bad_dev_zero_model EXIT 2 ARGS estimate /dev/zero STDOUT_EMPTY
         STDERR "^memplan: error: /dev/zero: is a character device, not a model file\n$")
cli_case(bad_absurd_layers_extraction EXIT 2 ARGS estimate "${data}/absurd-layers.yaml" -w extraction --seq 16 STDOUT_EMPTY
         STDERR "^memplan: error: absurd-layers has 1,000,000,000,000 blocks: up to 20,000,000,000,000 hooks, more than the 1,000,000 memplan lists for a hook cache\n$")
cli_case(bad_layer_at_top_of_uint64 EXIT 2 ARGS estimate gpt2 -w extraction --layers 18446744073709551615 STDOUT_EMPTY
         STDERR "^memplan: error: layer 18446744073709551615 does not exist: gpt2 has blocks 0-11\n$")
cli_case(bad_filter_explosion EXIT 2 ARGS estimate gpt2 -w extraction --filter "blocks.{0,1}{0,1}{0,1}{0,1}{0,1}{0,1}{0,1}{0,1}{0,1}{0,1}{0,1}{0,1}{0,1}{0,1}.hook_z" STDOUT_EMPTY
         STDERR "expands to more than 1,000 names")

# Arithmetic at the edges: exact, or a clear overflow. 10,054,540,001,280 params x 2 B and two
# fp32 rotary buffers of 128 / 2 elements.
cli_case(edge_ten_trillion_weights EXIT 0 ARGS estimate "${data}/ten-trillion.yaml" -w weights -p bf16 --format json
         STDOUT "\"params\": 10054540001280,.*\"total_bytes\": 20109080003072")
# 2 x 164 layers x 65,536 x 1,048,576 tokens x 64 KV heads x 128 x 2 B.
cli_case(edge_million_token_kv_cache EXIT 0 ARGS estimate "${data}/ten-trillion.yaml" --seq 1048576 -b 65536 -p fp16
         --no-overhead --format json STDOUT "\"name\": \"kv_cache\",\n +\"bytes\": 369295169444380672")
cli_case(edge_overflow EXIT 2 ARGS estimate "${data}/ten-trillion.yaml" -w extraction --seq 1048576 -b 65536 STDOUT_EMPTY
         STDERR "^memplan: error: arithmetic overflow computing [^\n]*: [0-9]+ \\* [0-9]+ exceeds 2\\^64 - 1\n$")
cli_case(edge_plan_overflow EXIT 2 ARGS check "${bad_plans}/overflow.yaml" STDOUT_EMPTY
         STDERR "^memplan: error: [^\n]*overflow\\.yaml:4:3: arithmetic overflow computing [^\n]* exceeds 2\\^64 - 1\n$")

# config.json.
cli_case(bad_config_number_overflow EXIT 2 ARGS import "${hf_bad}/number-overflow.json" STDOUT_EMPTY
         STDERR "^memplan: error: [^\n]*number-overflow\\.json:4:19: JSON number 1e400 is out of range")
cli_case(bad_config_empty EXIT 2 ARGS import "${hf_bad}/empty.json" STDOUT_EMPTY
         STDERR "^memplan: error: [^\n]*empty\\.json:1:1: JSON syntax error: ")
cli_case(bad_config_not_utf8 EXIT 2 ARGS import "${hf_bad}/not-utf8.json" STDOUT_EMPTY
         STDERR "not-utf8\\.json:3:21: JSON syntax error: [^\n]*ill-formed UTF-8 byte")
cli_case(bad_config_not_an_object EXIT 2 ARGS import "${hf_bad}/not-an-object.json" STDOUT_EMPTY
         STDERR "not-an-object\\.json:1:1: expected a Hugging Face config as a JSON object \\{\\.\\.\\.\\}, got an array")
cli_case(bad_config_wrong_type EXIT 2 ARGS import "${hf_bad}/wrong-type.json" STDOUT_EMPTY
         STDERR "wrong-type\\.json:3:18: 'hidden_size' must be a whole number, got a string \"4096\"")
cli_case(bad_config_zero_layers EXIT 2 ARGS estimate "${hf_bad}/zero-layers.json" STDOUT_EMPTY
         STDERR "zero-layers\\.json:4:24: 'num_hidden_layers' must be from 1 to")
cli_case(bad_config_directory EXIT 2 ARGS import hf "${hf}/gpt2" STDOUT_EMPTY STDERR "gpt2: is a directory, not a config\\.json")
cli_case(bad_config_dev_zero EXIT 2 ARGS import hf /dev/zero STDOUT_EMPTY
         STDERR "/dev/zero: is a character device, not a config\\.json")

# safetensors: hostile headers (tests/data/safetensors/make_fixtures.py writes them).
cli_case(bad_st_huge_header_length EXIT 2 ARGS import "${st_bad}/huge-header-length.safetensors" STDOUT_EMPTY
         STDERR "huge-header-length\\.safetensors: header length 9,223,372,036,854,775,808 bytes is over the 100 MiB limit")
cli_case(bad_st_out_of_range EXIT 2 ARGS import "${st_bad}/out-of-range.safetensors" STDOUT_EMPTY
         STDERR "out-of-range\\.safetensors: tensor 'a': data_offsets \\[0, 16\\] run past the end of the data area \\(8 bytes\\)")
cli_case(bad_st_unknown_dtype EXIT 2 ARGS import "${st_bad}/unknown-dtype.safetensors" STDOUT_EMPTY
         STDERR "unknown-dtype\\.safetensors: tensor 'a': unknown dtype 'F12'")
cli_case(bad_st_shape_mismatch EXIT 2 ARGS import "${st_bad}/shape-mismatch.safetensors" STDOUT_EMPTY
         STDERR "shape-mismatch\\.safetensors: tensor 'a': shape \\[2\\] of F32 needs 8 bytes but data_offsets \\[0, 4\\] hold 4")
cli_case(bad_st_duplicate_tensor EXIT 2 ARGS import "${st_bad}/duplicate-tensor.safetensors" STDOUT_EMPTY
         STDERR "duplicate-tensor\\.safetensors: tensor 'a': appears twice in the header")
cli_case(bad_st_huge_shape EXIT 2 ARGS import "${st_bad}/huge-shape.safetensors" STDOUT_EMPTY
         STDERR "huge-shape\\.safetensors: tensor 'a': shape \\[4294967296, 4294967296, 2\\] of F32 holds more than 2\\^64 bits")
cli_case(bad_st_not_an_object EXIT 2 ARGS import "${st_bad}/not-an-object.safetensors" STDOUT_EMPTY
         STDERR "not-an-object\\.safetensors: the header must be a JSON object of tensor names, got an array")
cli_case(bad_st_deep_nesting EXIT 2 ARGS import "${st_bad}/deep-nesting.safetensors" STDOUT_EMPTY
         STDERR "deep-nesting\\.safetensors: at byte [0-9]+: JSON nested more than 64 levels deep")
cli_case(bad_st_number_overflow EXIT 2 ARGS import "${st_bad}/number-overflow.safetensors" STDOUT_EMPTY
         STDERR "number-overflow\\.safetensors: at byte 37: JSON number 1e400 is out of range")
cli_case(bad_st_not_utf8 EXIT 2 ARGS import "${st_bad}/not-utf8.safetensors" STDOUT_EMPTY
         STDERR "not-utf8\\.safetensors: at byte [0-9]+: JSON syntax error: [^\n]*UTF-8")
cli_case(bad_st_too_short EXIT 2 ARGS import "${st_bad}/too-short.safetensors" STDOUT_EMPTY
         STDERR "too-short\\.safetensors: is 3 bytes: too short for a safetensors file")
cli_case(bad_st_empty EXIT 2 ARGS import "${st_bad}/empty.safetensors" STDOUT_EMPTY
         STDERR "empty\\.safetensors: is 0 bytes: too short for a safetensors file")
cli_case(bad_st_device EXIT 2 ARGS import safetensors /dev/zero STDOUT_EMPTY
         STDERR "^memplan: error: /dev/zero: is a character device, not a checkpoint file\n$")
cli_case(bad_st_directory EXIT 2 ARGS import safetensors "${st}/tiny-llama" STDOUT_EMPTY
         STDERR "tiny-llama: is a directory, not a checkpoint file")
cli_case(bad_st_missing EXIT 2 ARGS import "${st}/no-such.safetensors" STDOUT_EMPTY STDERR "no-such\\.safetensors: no such file")
cli_case(bad_st_escaping_index EXIT 2 ARGS import "${st_bad}/escaping-index/model.safetensors.index.json" STDOUT_EMPTY
         STDERR "model\\.safetensors\\.index\\.json:2:17: weight_map puts tensor 'a' in '\\.\\./\\.\\./tiny-llama/model\\.safetensors': shard files must be relative paths inside the index's directory")

# Plan files.
cli_case(bad_plan_truncated EXIT 2 ARGS check "${bad_plans}/truncated.yaml" STDOUT_EMPTY
         STDERR "truncated\\.yaml:5:[0-9]+: 'budget'|truncated\\.yaml: the plan names no budget")
cli_case(bad_plan_empty EXIT 2 ARGS check "${bad_plans}/empty.yaml" STDOUT_EMPTY
         STDERR "empty\\.yaml: the file is empty: expected a plan as a YAML mapping")
cli_case(bad_plan_wrong_types EXIT 2 ARGS check "${bad_plans}/wrong-types.yaml" STDOUT_EMPTY
         STDERR "wrong-types\\.yaml:4:15: 'batch_size' must be a single value, not a list")
cli_case(bad_plan_negative_batch EXIT 2 ARGS check "${bad_plans}/negative-batch.yaml" STDOUT_EMPTY
         STDERR "negative-batch\\.yaml:4:15: 'batch_size' must be an integer from 1 to .*got -8")
cli_case(bad_plan_zero_budget EXIT 2 ARGS check "${bad_plans}/zero-budget.yaml" STDOUT_EMPTY
         STDERR "zero-budget\\.yaml:3:9: a budget must be more than 0 bytes")
cli_case(bad_plan_not_utf8 EXIT 2 ARGS check "${bad_plans}/not-utf8.yaml" STDOUT_EMPTY
         STDERR "not-utf8\\.yaml:3:9: unknown GPU '\\\\xff\\\\xfeGiB'")
cli_case(bad_plan_brace_explosion EXIT 2 ARGS check "${bad_plans}/brace-explosion.yaml" STDOUT_EMPTY
         STDERR "brace-explosion\\.yaml:5:[0-9]+: hook pattern 'blocks\\.\\{0,1\\}[{},01]*\\.hook_resid_post' expands to more than 1,000 names")
cli_case(bad_plan_last_layer EXIT 2 ARGS check "${bad_plans}/last-layer-of-2-64.yaml" STDOUT_EMPTY
         STDERR "last-layer-of-2-64\\.yaml:5:11: layer 18446744073709551615 does not exist: gpt2 has blocks 0-11")
cli_case(bad_plan_directory EXIT 2 ARGS check "${bad_plans}" STDOUT_EMPTY STDERR "plans: is a directory, not a plan file")
cli_case(bad_plan_dev_zero EXIT 2 ARGS check /dev/zero STDOUT_EMPTY
         STDERR "/dev/zero: is a character device, not a plan file")

# Output files: a failed write is exit 2 and leaves nothing behind (import -o and check
# --junit are also checked end to end by import_no_partial.cmake and check_junit.cmake).
cli_case(bad_output_is_a_directory EXIT 2 ARGS import "${hf}/gpt2/config.json" -o "${CMAKE_CURRENT_BINARY_DIR}"
         STDOUT_EMPTY STDERR "cannot write: it is a directory; name a file")
cli_case(bad_junit_parent_is_a_file EXIT 2 ARGS check "${plans}/gpt2-selective-cache-rtx3060.yaml" --junit "${data}/tiny-gpt2.yaml/report.xml"
         STDERR "report\\.xml: cannot write: '[^']*tiny-gpt2\\.yaml' is not a directory")

if(MEMPLAN_SANITIZE)
  # These compare measured heap peaks read by the counting heap, which a sanitizer's malloc
  # replaces (memplan measure then prints "not measured" and why). Reported as disabled;
  # scripts/test runs them.
  set_tests_properties(cli.measure_attention cli.measure_attention_json cli.measure_attention_csv cli.measure_svg
                       cli.measure_lanczos cli.measure_fisher_block PROPERTIES DISABLED TRUE)
endif()

# Every writer goes through write_file_atomically: sweep's and measure's --svg too.
cli_case(bad_sweep_svg_into_directory EXIT 2 ARGS sweep gpt2 --seq 128 --svg "${CMAKE_CURRENT_BINARY_DIR}"
         STDERR "^memplan: error: [^\n]*: cannot write: it is a directory; name a file\n$")
cli_case(bad_measure_svg_missing_directory EXIT 2
         ARGS measure attention --variant eager --seq 32 --batch 1 --heads 1 --head-dim 8 --repeats 1
              --svg "${CMAKE_CURRENT_BINARY_DIR}/no-such-dir/m.svg"
         STDERR "no-such-dir/m\\.svg: cannot write: directory '[^']*no-such-dir' does not exist\n$")

# ---- round two: special files, output targets, caches, relative paths
# A FIFO as an input is refused before it is opened (opening it would block).
add_test(NAME cli.fifo_input_refused
         COMMAND sh -c "rm -f fifo-plan.yaml && mkfifo fifo-plan.yaml && timeout 10 \"$0\" check fifo-plan.yaml; echo \"exit $?\"" "$<TARGET_FILE:memplan>"
         WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(cli.fifo_input_refused PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "memplan: error: fifo-plan\\.yaml: is a FIFO \\(named pipe\\), not a plan file\nexit 2")
# A device is not replaced by a regular file, and an output never overwrites an input.
cli_case(output_device_refused EXIT 2 ARGS check "${PROJECT_SOURCE_DIR}/configs/plans/gpt2-selective-cache-rtx3060.yaml" --junit /dev/null
         STDOUT_EMPTY STDERR "^memplan: error: /dev/null: cannot write: it is a character device; memplan writes regular files only")
add_test(NAME cli.output_is_an_input_refused
         COMMAND sh -c "cp \"$1\" own-plan.yaml && \"$0\" check own-plan.yaml --junit ./own-plan.yaml; echo \"exit $?\"; cmp -s \"$1\" own-plan.yaml && echo unchanged"
                 "$<TARGET_FILE:memplan>" "${PROJECT_SOURCE_DIR}/configs/plans/gpt2-selective-cache-rtx3060.yaml"
         WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(cli.output_is_an_input_refused PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "cannot write: it is one of this command's inputs \\('own-plan\\.yaml'\\)\nexit 2\nunchanged")
cli_case(sweep_svg_over_a_model_refused EXIT 2 ARGS sweep "${data}/tiny-gpt2.yaml" --svg "${data}/tiny-gpt2.yaml"
         STDOUT_EMPTY STDERR "cannot write: it is one of this command's inputs")
# `model: ./gpt2` is the file beside the plan, never the built-in gpt2, from any folder.
add_test(NAME cli.plan_dot_slash_is_a_path COMMAND memplan check dot-slash-builtin-name.yaml
         WORKING_DIRECTORY "${data}/plans-relative")
set_tests_properties(cli.plan_dot_slash_is_a_path PROPERTIES LABELS cli PASS_REGULAR_EXPRESSION "PASS dot-slash-builtin-name\\.yaml  gpt2 inference  524\\.12 MiB")
add_test(NAME cli.plan_dot_slash_is_a_path_from_elsewhere COMMAND memplan check "${data}/plans-relative/dot-slash-builtin-name.yaml")
set_tests_properties(cli.plan_dot_slash_is_a_path_from_elsewhere PROPERTIES LABELS cli PASS_REGULAR_EXPRESSION "dot-slash-builtin-name\\.yaml  gpt2 inference  524\\.12 MiB")
# A damaged calibration cache is a warning and the documented defaults, never an internal error.
foreach(kind wrong-types negative huge directory)
  cli_case(calibration_cache_${kind} EXIT 0 ARGS estimate llama-2-7b --probe
           STDOUT "cuda_context +512\\.00 MiB.*warning: calibration cache .*calibration-${kind}/calibration\\.json not used")
  set_tests_properties("cli.calibration_cache_${kind}" PROPERTIES ENVIRONMENT
    "MEMPLAN_CUDA_LIBRARY=$<TARGET_FILE:memplan_fake_driver>;MEMPLAN_NVML_LIBRARY=$<TARGET_FILE:memplan_fake_driver>;MEMPLAN_FAKE_DRIVER_SCENARIO=two_gpus;MEMPLAN_CACHE_DIR=${data}/calibration-${kind}")
endforeach()
# Input that is not understood is refused, not dropped: a second YAML document, nested lists.
cli_case(plan_two_documents EXIT 2 ARGS check "${bad_plans}/two-documents.yaml" STDOUT_EMPTY
         STDERR "two-documents\\.yaml:4:1: the file holds more than one YAML document \\(separated by '---'\\); memplan reads one per file")
cli_case(plan_nested_layers EXIT 2 ARGS check "${bad_plans}/nested-layers.yaml" STDOUT_EMPTY
         STDERR "nested-layers\\.yaml:4:11: 'layers' lists words or numbers, not nested lists or mappings")
# Escape sequences from a file never reach the terminal or a file memplan writes: the
# config's _name_or_path carries ESC [2J (clear the screen) and a CR before "family: bert".
cli_case(escape_in_a_name_printed EXIT 0 ARGS estimate "${data}/hf-escape/config.json" -w weights
         STDOUT "^model +evil\\\\x1b\\[2J\\\\x0dfamily: bert \\(gpt2, 172,288 parameters")
add_test(NAME cli.escape_in_a_name_written
         COMMAND sh -c "\"$0\" import \"$1\" -o escaped.yaml >/dev/null && grep -c '^family:' escaped.yaml && grep -c \"$(printf '\\r')\" escaped.yaml"
                 "$<TARGET_FILE:memplan>" "${data}/hf-escape/config.json"
         WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
# One family: line (gpt2), and no carriage return anywhere in the file.
set_tests_properties(cli.escape_in_a_name_written PROPERTIES LABELS cli PASS_REGULAR_EXPRESSION "^1\n0\n$")
# Every error from an input names the file, the place and the key: past a byte order mark,
# and at the second of two equal keys (JSON keeps the last one silently).
cli_case(config_with_a_bom_located EXIT 2 ARGS estimate "${data}/hf-bom/config.json" STDOUT_EMPTY
         STDERR "hf-bom/config\\.json:4:14: 'n_layer' must be an integer from 1 to")
cli_case(config_duplicate_key EXIT 2 ARGS estimate "${data}/hf-duplicate/config.json" STDOUT_EMPTY
         STDERR "hf-duplicate/config\\.json:6:3: key 'n_layer' appears twice")
add_test(NAME cli.json_error_located_in_one_pass
         COMMAND "${CMAKE_COMMAND}" "-DMEMPLAN=$<TARGET_FILE:memplan>" "-DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/json_many_strings.cmake")
# A bound, not a benchmark: the quadratic locator ran for minutes.
set_tests_properties(cli.json_error_located_in_one_pass PROPERTIES LABELS cli TIMEOUT 60)
# Sizes of memplan's own kernels: checked arithmetic (n x n wrapped to 0 and crashed), and a
# run that cannot fit in this machine's memory is refused before it allocates (it ended in
# std::bad_alloc, exit 3). n = 2^20: the operator alone is 4 TiB.
cli_case(measure_lanczos_overflow EXIT 2 ARGS measure lanczos --dim 4294967296 STDOUT_EMPTY
         STDERR "overflow computing the n x n operator: 4294967296 \\* 4294967296 exceeds 2\\^64 - 1")
cli_case(measure_block_eig_overflow EXIT 2 ARGS measure block-eig --block-size 4294967296 STDOUT_EMPTY
         STDERR "overflow computing the blocks")
cli_case(measure_too_big_for_the_machine EXIT 2 ARGS measure lanczos --dim 1048576 --reorth on STDOUT_EMPTY
         STDERR "lanczos at n 1048576 needs [0-9.]+ TiB \\(its inputs and the estimated peak\\); this machine has [0-9.]+ [GMT]iB available")
cli_case(measure_negative_size EXIT 2 ARGS measure lanczos --dim -1 STDOUT_EMPTY STDERR "--dim: Value -1 not in range")
add_test(NAME cli.index_with_many_shards_fails_fast
         COMMAND "${CMAKE_COMMAND}" "-DMEMPLAN=$<TARGET_FILE:memplan>" "-DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/index_many_shards.cmake")
# A bound, not a benchmark: the quadratic version ran for minutes.
set_tests_properties(cli.index_with_many_shards_fails_fast PROPERTIES LABELS cli TIMEOUT 60)
# Sizes each in range that multiply past 64 bits: the error names the file, the place and
# the key (it said only "arithmetic overflow computing matrix elements").
cli_case(model_sizes_overflow_located EXIT 2 ARGS estimate "${data}/overflowing-sizes.yaml" -w weights STDOUT_EMPTY
         STDERR "overflowing-sizes\\.yaml:2:10: the model's parameter count does not fit in 64 bits \\(arithmetic overflow computing [^)]*\\); 'd_model' 4294967296 is the largest of its sizes")
cli_case(config_sizes_overflow_located EXIT 2 ARGS estimate "${data}/hf-overflow/config.json" -w weights STDOUT_EMPTY
         STDERR "hf-overflow/config\\.json:1:[0-9]+: the model's parameter count does not fit in 64 bits")
# A file name that is not UTF-8: JSON output stays valid JSON (it exited 3), a JUnit report
# stays valid XML (the name's bad byte becomes U+FFFD).
add_test(NAME cli.non_utf8_name_in_json
         COMMAND sh -c "cp \"$1\" \"$(printf 'latin1-\\351.yaml')\" && \"$0\" estimate \"$(printf 'latin1-\\351.yaml')\" -w weights --format json > latin1.json; echo \"exit $?\"; /usr/bin/python3 -c 'import json; print(ascii(json.load(open(\"latin1.json\"))[\"model\"][\"origin\"]))'"
                 "$<TARGET_FILE:memplan>" "${data}/tiny-gpt2.yaml"
         WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(cli.non_utf8_name_in_json PROPERTIES LABELS cli PASS_REGULAR_EXPRESSION "^exit 0\n'latin1-\\\\ufffd\\.yaml'\n$")
add_test(NAME cli.non_utf8_name_in_junit
         COMMAND sh -c "cp \"$1\" \"$(printf 'plan-\\351.yaml')\" && \"$0\" check \"$(printf 'plan-\\351.yaml')\" --junit latin1.xml > /dev/null; echo \"exit $?\"; /usr/bin/python3 -c 'import xml.dom.minidom as m; print(ascii(m.parse(\"latin1.xml\").getElementsByTagName(\"testcase\")[0].getAttribute(\"name\")))'"
                 "$<TARGET_FILE:memplan>" "${PROJECT_SOURCE_DIR}/configs/plans/gpt2-selective-cache-rtx3060.yaml"
         WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(cli.non_utf8_name_in_junit PROPERTIES LABELS cli PASS_REGULAR_EXPRESSION "^exit 0\n'plan-\\\\ufffd\\.yaml'\n$")
# A driver library override that is a FIFO is refused, not opened (dlopen would block).
add_test(NAME cli.driver_override_fifo_refused
         COMMAND sh -c "rm -f fifo-libcuda.so && mkfifo fifo-libcuda.so && MEMPLAN_CUDA_LIBRARY=$PWD/fifo-libcuda.so MEMPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 timeout 10 \"$0\" probe; echo \"exit $?\"" "$<TARGET_FILE:memplan>"
         WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(cli.driver_override_fifo_refused PROPERTIES LABELS cli
  PASS_REGULAR_EXPRESSION "status +no_driver: no NVIDIA driver: [^\n]*fifo-libcuda\\.so could not be loaded \\([^\n]*is not a regular file\\).*exit 0")
# The numeric options outside the table are range-checked too.
cli_case(attention_negative_batch EXIT 2 ARGS attention --batch -1 STDOUT_EMPTY STDERR "--batch: Value -1 not in range")
cli_case(hooks_zero_seq EXIT 2 ARGS hooks gpt2 --seq 0 STDOUT_EMPTY STDERR "--seq: Value 0 not in range")
cli_case(budget_table_infinite_ratio EXIT 2 ARGS budget-table --zlib-ratio inf STDOUT_EMPTY
         STDERR "--zlib-ratio: Value inf is not a finite number")
cli_case(budget_table_nan_efficiency EXIT 2 ARGS budget-table --efficiency nan STDOUT_EMPTY
         STDERR "--efficiency: Value nan is not a finite number")
