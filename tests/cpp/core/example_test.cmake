# Installs the build tree into a scratch prefix, builds examples/cpp against
# the installed package with find_package(dotcompute CONFIG) and runs it.
# Variables: BUILD_DIR, SOURCE_DIR, WORK_DIR, CONFIG_SUBDIR, GENERATOR.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(LAST_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

run("install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
set(config_dir "${WORK_DIR}/prefix/${CONFIG_SUBDIR}")
if(NOT EXISTS "${config_dir}/dotcompute-config.cmake")
  message(FATAL_ERROR "no dotcompute-config.cmake in ${config_dir}")
endif()
run("configure the example" "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/cpp" -B "${WORK_DIR}/example"
    -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release "-Ddotcompute_DIR=${config_dir}")
run("build the example" "${CMAKE_COMMAND}" --build "${WORK_DIR}/example")
# Only the installed package may be used: no plugin folders from the environment.
run("run the example" "${CMAKE_COMMAND}" -E env --unset=DOTCOMPUTE_PLUGIN_DIR --unset=DOTCOMPUTE_PLUGIN_PATH
    "DOTCOMPUTE_CACHE_DIR=${WORK_DIR}/cache" "${WORK_DIR}/example/vector_add")
message("${LAST_OUTPUT}")
if(NOT LAST_OUTPUT MATCHES "correct")
  message(FATAL_ERROR "the example did not report a correct result")
endif()
