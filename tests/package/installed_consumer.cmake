# Installs a memplan build into a fresh prefix and builds tests/package/consumer against
# the INSTALLED tree, as a user's project would: find_package(memplan) with only
# CMAKE_PREFIX_PATH=<prefix>, then the same main.cpp with pkg-config's flags.
# -DBUILD_DIR=<memplan build> -DWORK=<scratch dir> -DCONSUMER=<consumer source>
# -DGENERATOR=<cmake generator> -DMAKE_PROGRAM=<make/ninja> -DCXX=<compiler> -DCONFIG=<config>
# [-DSANITIZE_FLAGS=<list>: a sanitized memplan needs its consumer built with the same runtime]
set(prefix "${WORK}/prefix")
set(build "${WORK}/consumer-build")
file(REMOVE_RECURSE "${WORK}")  # nothing stale may stand in for what the install must provide

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${what} failed (${code}):\n${ARGN}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

function(expect what text)
  foreach(pattern IN LISTS ARGN)
    if(NOT text MATCHES "${pattern}")
      message(FATAL_ERROR "${what}: output does not match '${pattern}':\n${text}")
    endif()
  endforeach()
endfunction()

# What the consumer must print: llama-2-7b resolved to bf16 on an RTX 4090, its exact
# weights (2 B x 6,738,415,616) and KV cache (2 x 32 layers x 32 heads x 128 x 4096 x 2 B).
set(expected
  "memplan [0-9]+\\.[0-9]+\\.[0-9]+ \\(headers [0-9]+\\.[0-9]+\\.[0-9]+, commit "
  "llama-2-7b: 6738415616 parameters\n"
  "precision: bf16 \\("
  "  weights: 13476831232 bytes\n"
  "  kv_cache: 2147483648 bytes\n"
  "  total: 15624314880 bytes\n"
  "rtx-4090 \\([0-9]+ bytes\\): fits\n"
  "rtx-3060 \\([0-9]+ bytes\\): does not fit\n"
  "rejected \\(invalid_input\\): unknown precision 'int3'")

set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()

# 1. Install.
run("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" ${config_args})
foreach(path IN ITEMS include/memplan/memplan.hpp include/memplan/version_config.hpp
                      include/memplan/core/error.hpp share/memplan/gpus.yaml share/memplan/models/llama-2-7b.yaml)
  if(NOT EXISTS "${prefix}/${path}")
    message(FATAL_ERROR "the install did not lay out ${path}")
  endif()
endforeach()
file(GLOB_RECURSE config_files "${prefix}/*/memplanConfig.cmake")
file(GLOB_RECURSE version_files "${prefix}/*/memplanConfigVersion.cmake")
file(GLOB_RECURSE pc_files "${prefix}/*/memplan.pc")
if(NOT config_files OR NOT version_files OR NOT pc_files)
  message(FATAL_ERROR "the install lacks memplanConfig.cmake, memplanConfigVersion.cmake or memplan.pc")
endif()

# 2. The installed CLI runs (a shared build finds its libraries through its RUNPATH).
run("installed memplan --version" "${prefix}/bin/memplan" --version)
expect("installed memplan --version" "${out}" "^memplan [0-9]+\\.[0-9]+\\.[0-9]+")

# 3. The consumer, through find_package. No package registry: only the prefix may answer.
set(generator_args -G "${GENERATOR}")
if(MAKE_PROGRAM)
  list(APPEND generator_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
set(build_type_args "")
if(CONFIG)
  set(build_type_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
endif()
string(REPLACE ";" " " sanitize_flags "${SANITIZE_FLAGS}")
if(sanitize_flags)
  list(APPEND build_type_args "-DCMAKE_CXX_FLAGS=${sanitize_flags}" "-DCMAKE_EXE_LINKER_FLAGS=${sanitize_flags}")
endif()
run("configuring the consumer" "${CMAKE_COMMAND}" -S "${CONSUMER}" -B "${build}" ${generator_args}
    "-DCMAKE_CXX_COMPILER=${CXX}" ${build_type_args}
    "-DCMAKE_PREFIX_PATH=${prefix}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)
file(STRINGS "${build}/CMakeCache.txt" memplan_dir REGEX "^memplan_DIR:")
string(FIND "${memplan_dir}" "${prefix}/" at)
if(NOT at GREATER -1)
  message(FATAL_ERROR "find_package(memplan) found '${memplan_dir}', not the installed tree under ${prefix}")
endif()
run("building the consumer" "${CMAKE_COMMAND}" --build "${build}" ${config_args})
file(GLOB_RECURSE consumer "${build}/memplan_consumer" "${build}/memplan_consumer.exe")
run("running the consumer" ${consumer})
expect("the consumer" "${out}" ${expected})
message(STATUS "find_package consumer:\n${out}")

# 4. The same program with pkg-config's flags, when pkg-config is there.
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(PKG_CONFIG)
  get_filename_component(pc_dir "${pc_files}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
  run("pkg-config" "${PKG_CONFIG}" --cflags --libs memplan)
  separate_arguments(pc_flags UNIX_COMMAND "${out}")
  run("pkg-config libdir" "${PKG_CONFIG}" --variable=libdir memplan)
  string(STRIP "${out}" libdir)
  run("building the consumer with pkg-config" "${CXX}" -std=c++20 ${SANITIZE_FLAGS} "${CONSUMER}/main.cpp"
      -o "${WORK}/memplan_consumer_pc" ${pc_flags} "-Wl,-rpath,${libdir}")
  run("running the pkg-config consumer" "${WORK}/memplan_consumer_pc")
  expect("the pkg-config consumer" "${out}" ${expected})
  message(STATUS "pkg-config consumer: ok (${pc_flags})")
else()
  message(STATUS "pkg-config not found: the pkg-config build is not checked")
endif()
