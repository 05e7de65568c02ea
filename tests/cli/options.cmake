# CLI cases of the option table: options that do not apply, edges of numbers, did-you-mean,
# TransformerLens' negative pos_slice, help and completion made from the table.
cli_case(option_for_another_workload EXIT 2 ARGS estimate gpt2 -w inference --lanczos-k 50 STDOUT_EMPTY
         STDERR "^memplan: error: --lanczos-k applies to lanczos; this plan's workload is inference\n$")
cli_case(option_negative_batch EXIT 2 ARGS estimate gpt2 --batch -1 STDOUT_EMPTY
         STDERR "^memplan: error: --batch must be an integer from 1 to 1,099,511,627,776, got -1\n$")
cli_case(option_zero_seq EXIT 2 ARGS estimate gpt2 --seq 0 STDOUT_EMPTY STDERR "--seq must be an integer from 1 .*got 0")
cli_case(option_negative_dp EXIT 2 ARGS estimate gpt2 -w training --dp -1 STDOUT_EMPTY STDERR "--dp must be an integer")
cli_case(option_unknown_flag EXIT 2 ARGS estimate gpt2 --kv-precison fp8 STDOUT_EMPTY
         STDERR "unknown option '--kv-precison' for 'memplan estimate' \\(did you mean '--kv-precision'\\?\\)")
cli_case(option_without_its_value EXIT 2 ARGS estimate gpt2 --batch STDOUT_EMPTY
         STDERR "^memplan: error: --batch needs a value\nRun 'memplan --help'")
cli_case(option_short_without_its_value EXIT 2 ARGS estimate gpt2 -w STDOUT_EMPTY
         STDERR "^memplan: error: --workload needs a value\n")
cli_case(option_list_without_its_value EXIT 2 ARGS sweep gpt2 --batch STDOUT_EMPTY
         STDERR "^memplan: error: --batch needs a value\n")
cli_case(option_unknown_command EXIT 2 ARGS estimat gpt2 STDOUT_EMPTY
         STDERR "'estimat' is not a memplan command \\(did you mean 'estimate'\\?\\)")
cli_case(option_lanczos_k_past_iterations EXIT 2 ARGS estimate gpt2 -w lanczos --lanczos-k 200 STDOUT_EMPTY
         STDERR "--lanczos-k 200 asks for more eigenvalues than --lanczos-iterations 100")
cli_case(option_zlib_ratio_without_zlib EXIT 2 ARGS estimate gpt2 -w tracin --zlib-ratio 4 STDOUT_EMPTY
         STDERR "--zlib-ratio applies to --compress int8\\+zlib")
# pos_slice -1 keeps the last position (TransformerLens run_with_cache(pos_slice=-1)): the
# residual stream after each of gpt2's 12 blocks, 1 position x 768 x 2 B (bf16) = 1,536 B
# each, 18,432 B = 18.00 KiB in all.
cli_case(option_negative_pos_slice EXIT 0 ARGS estimate gpt2 -w extraction --filter blocks.*.hook_resid_post --pos-slice -1
         STDOUT "\nactivations +18\\.00 KiB")
cli_case(option_negative_pos_slice_too_far EXIT 2 ARGS estimate gpt2 -w extraction --pos-slice -2000 STDOUT_EMPTY
         STDERR "--pos-slice -2000 is before the first of 1024 positions")
cli_case(help_options_for_a_workload EXIT 0 ARGS help options lanczos
         STDOUT "--lanczos-k N +\\(plan file: lanczos_k\\).*--lanczos-iterations N")
cli_case(estimate_help_points_to_all_options EXIT 0 ARGS estimate --help STDOUT "memplan help options \\[WORKLOAD\\]")
cli_case(completion_bash EXIT 0 ARGS completion bash STDOUT "complete -F _memplan memplan")
add_test(NAME cli.every_numeric_option_refuses_bad_values
         COMMAND "${CMAKE_COMMAND}" "-DMEMPLAN=$<TARGET_FILE:memplan>" -P "${CMAKE_CURRENT_SOURCE_DIR}/every_option.cmake")
set_tests_properties(cli.every_numeric_option_refuses_bad_values PROPERTIES LABELS cli)
add_test(NAME cli.options_doc_current
         COMMAND "${CMAKE_COMMAND}" "-DMEMPLAN=$<TARGET_FILE:memplan>" "-DDOC=${PROJECT_SOURCE_DIR}/docs/options.md"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/options_doc.cmake")
set_tests_properties(cli.options_doc_current PROPERTIES LABELS cli)
