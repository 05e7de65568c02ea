# Configures and builds web/ (the calculator) with emscripten into BUILD/web, from the
# built-in tables this build writes. Included by the top-level CMakeLists.txt.
set(MEMPLAN_WEB_DIR "${PROJECT_BINARY_DIR}/web")
# nlohmann/json and fmt are header-only: the wasm build reads Debian's copies through a
# folder of their own (not all of /usr/include, which holds the host's C library).
file(MAKE_DIRECTORY "${MEMPLAN_WEB_DIR}/header-only")
foreach(library nlohmann fmt)
  file(CREATE_LINK "/usr/include/${library}" "${MEMPLAN_WEB_DIR}/header-only/${library}" SYMBOLIC)
endforeach()
# Debian's emscripten runs its JavaScript tools with the machine's node, which finds Debian's
# node modules (acorn) only on NODE_PATH.
set(MEMPLAN_WEB_ENV "${CMAKE_COMMAND}" -E env "NODE_PATH=/usr/share/nodejs:/usr/lib/nodejs")
add_custom_command(
  OUTPUT "${MEMPLAN_WEB_DIR}/build.ninja"
  COMMAND ${MEMPLAN_WEB_ENV} "${MEMPLAN_EMCMAKE}" "${CMAKE_COMMAND}" -S "${PROJECT_SOURCE_DIR}/web"
          -B "${MEMPLAN_WEB_DIR}" -G Ninja -DCMAKE_BUILD_TYPE=Release
          "-DMEMPLAN_BUILTIN_TABLES_CPP=${MEMPLAN_BUILTIN_TABLES_CPP}"
          "-DMEMPLAN_HEADER_ONLY_INCLUDES=${MEMPLAN_WEB_DIR}/header-only" "-DMEMPLAN_GIT_COMMIT=${MEMPLAN_GIT_COMMIT}"
  DEPENDS "${PROJECT_SOURCE_DIR}/web/CMakeLists.txt"
  COMMENT "Configuring the web calculator (emscripten)"
  VERBATIM)
# Always run: the inner build knows its own sources; with nothing to do it takes a moment.
add_custom_target(memplan_web ALL
  COMMAND ${MEMPLAN_WEB_ENV} "${CMAKE_COMMAND}" --build "${MEMPLAN_WEB_DIR}"
  DEPENDS "${MEMPLAN_WEB_DIR}/build.ninja" "${MEMPLAN_BUILTIN_TABLES_CPP}"
  COMMENT "Building the web calculator (emscripten) into ${MEMPLAN_WEB_DIR}/site"
  USES_TERMINAL
  VERBATIM)
add_dependencies(memplan_web memplan_builtin_tables_cpp)
