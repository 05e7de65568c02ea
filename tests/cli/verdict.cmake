# One plan, one verdict: estimate, sweep, recommend, fit and check give the same verdict
# for the same plan, on both sides of the threshold and past the GPU's memory.
# llama-2-7b bf16 inference at 4096 tokens on an RTX 4090 (CUDA's 23.52 GiB; 85% = 19.99 GiB):
# batch 2 is 17.75 GiB (fits), batch 4 is 22.44 GiB (above the threshold, within the GPU),
# batch 6 is 27.14 GiB (does not fit).
# -DMEMPLAN=<binary> -DWORKDIR=<scratch folder>
cmake_minimum_required(VERSION 3.25)

function(verdict_of out)
  execute_process(COMMAND "${MEMPLAN}" ${ARGN} --format json OUTPUT_VARIABLE json ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 AND NOT rc EQUAL 1)
    message(FATAL_ERROR "memplan ${ARGN} exited ${rc}: ${err}")
  endif()
  set(${out} "${json}" PARENT_SCOPE)
endfunction()

foreach(case "2;fits" "4;above_threshold" "6;does_not_fit")
  list(GET case 0 batch)
  list(GET case 1 expected)
  set(plan llama-2-7b --gpu rtx-4090 --seq 4096 --batch ${batch})

  verdict_of(json estimate ${plan})
  string(JSON estimate GET "${json}" verdict)
  verdict_of(json sweep llama-2-7b --gpu rtx-4090 --seq 4096 --batch ${batch})
  string(JSON sweep GET "${json}" rows 0 verdict)
  verdict_of(json recommend ${plan})
  string(JSON recommend GET "${json}" verdict)
  verdict_of(json fit ${plan} --vary batch)
  string(JSON fit GET "${json}" given verdict)
  file(WRITE "${WORKDIR}/verdict-${batch}.yaml"
       "model: llama-2-7b\nworkload:\n  kind: inference\n  batch_size: ${batch}\n  seq_len: 4096\nbudget: rtx-4090\n")
  verdict_of(json check "${WORKDIR}/verdict-${batch}.yaml")
  string(JSON check GET "${json}" plans 0 verdict)

  foreach(command estimate sweep recommend fit check)
    if(NOT "${${command}}" STREQUAL "${expected}")
      message(FATAL_ERROR "batch ${batch}: ${command} says ${${command}}, expected ${expected} "
                          "(estimate ${estimate}, sweep ${sweep}, recommend ${recommend}, fit ${fit}, check ${check})")
    endif()
  endforeach()
  message(STATUS "batch ${batch}: all five commands say ${expected}")
endforeach()
