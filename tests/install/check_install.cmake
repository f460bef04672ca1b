# Installs the build into a scratch prefix and checks the tree as a user meets it:
# - bin/flopline runs, and `flopline calibrate --help` answers (with or without CUDA);
# - with CUDA (HAVE_CUDA): the injection library where `flopline run` looks for it
#   (LIBDIR beside bin/), flopline-calibrate where `flopline calibrate` looks for it
#   (LIBEXECDIR/flopline) and run by it, and `flopline run` not missing the library;
# - find_package(flopline) in a project of its own: flopline::trace, and with CUDA
#   flopline::flopline and flopline::kernels, built, linked and run.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}"
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}): ${err}")
endif()

function(expect_file path)
  if(NOT EXISTS "${prefix}/${path}")
    message(FATAL_ERROR "the install has no ${path}")
  endif()
endfunction()

set(flopline "${prefix}/${BINDIR}/flopline")
expect_file("${BINDIR}/flopline")
execute_process(COMMAND "${flopline}" calibrate --help RESULT_VARIABLE rc OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^usage: flopline calibrate")
  message(FATAL_ERROR "installed 'flopline calibrate --help' failed: rc=${rc} out=${out} err=${err}")
endif()

if(HAVE_CUDA)
  expect_file("${LIBDIR}/libflopline_inject.so")
  expect_file("${LIBDIR}/libflopline.so")
  expect_file("${LIBEXECDIR}/flopline/flopline-calibrate")
  expect_file("include/flopline/kernels/matmul.h")
  # A bad option reaches the measuring program, which refuses it before touching a GPU:
  # proof that `flopline calibrate` found and ran it.
  execute_process(COMMAND "${flopline}" calibrate --no-such-option
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "bad argument '--no-such-option'")
    message(FATAL_ERROR "installed 'flopline calibrate' did not run flopline-calibrate: rc=${rc} ${err}")
  endif()
  # Without a driver `flopline run` may stop before it looks for the library, or run
  # the command anyway; either way it must not have missed the library.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=FLOPLINE_INJECT_LIBRARY
    "${flopline}" run --no-summary -o "${WORK_DIR}/run.json" -- "${CMAKE_COMMAND}" -E true
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if("${out}${err}" MATCHES "libflopline_inject.so not found")
    message(FATAL_ERROR "installed 'flopline run' did not find its library: ${out}${err}")
  endif()
endif()

# A sanitized library needs a sanitized program to link it.
set(flags "")
if(SANITIZE)
  set(flags "-fsanitize=address,undefined")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/consumer" -B "${WORK_DIR}/build"
  -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX} "-DCMAKE_PREFIX_PATH=${prefix}"
  "-DCMAKE_CXX_FLAGS=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=${flags}" -DWITH_CUDA=${HAVE_CUDA}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the consumer project failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the consumer project failed: ${rc}")
endif()
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message(STATUS "${out}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "slices=2")
  message(FATAL_ERROR "consumer failed: rc=${rc} output=${out}")
endif()
if(HAVE_CUDA)
  execute_process(COMMAND "${WORK_DIR}/build/consumer_cuda" RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  message(STATUS "${out}")
  if(NOT rc EQUAL 0 OR NOT out MATCHES "session=0 kernels threw: .")
    message(FATAL_ERROR "consumer_cuda failed: rc=${rc} output=${out} ${err}")
  endif()
endif()
