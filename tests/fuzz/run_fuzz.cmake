# Runs the reader fuzzer for a bounded time over a copy of the seed corpus; fails
# when the fuzzer reports a crash, a leak, a timeout or running out of memory.
#   cmake -DFUZZER=path -DSEEDS=dir -DWORK=dir -DSECONDS=n -P run_fuzz.cmake
foreach(var FUZZER SEEDS WORK SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzz.cmake: -D${var}=... is required")
  endif()
endforeach()

# The fuzzer adds what it finds to its corpus folder: work on a copy, so the seeds in
# the source tree stay as committed.
set(corpus "${WORK}/corpus")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${corpus}" "${WORK}/artifacts")
file(GLOB seeds "${SEEDS}/*")
if(NOT seeds)
  message(FATAL_ERROR "run_fuzz.cmake: no seeds in ${SEEDS}")
endif()
file(COPY ${seeds} DESTINATION "${corpus}")

execute_process(
  COMMAND "${FUZZER}" "${corpus}" -max_total_time=${SECONDS} -rss_limit_mb=2048 -timeout=30
          -max_len=1048576 -print_final_stats=1 "-artifact_prefix=${WORK}/artifacts/"
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
file(WRITE "${WORK}/fuzz.log" "${output}")
file(GLOB artifacts "${WORK}/artifacts/*")
if(NOT result EQUAL 0 OR artifacts)
  string(LENGTH "${output}" n)
  if(n GREATER 6000)
    math(EXPR start "${n} - 6000")
    string(SUBSTRING "${output}" ${start} 6000 output)
  endif()
  message("${output}")
  message(FATAL_ERROR "reader fuzzer failed (exit ${result}); inputs kept in ${WORK}/artifacts: ${artifacts}")
endif()
string(REGEX MATCH "stat::number_of_executed_units: *[0-9]+" runs "${output}")
message(STATUS "reader fuzzer: no crash in ${SECONDS} s (${runs})")
