# ctest format.clang_format: every C, C++ and CUDA source of the tree is as clang-format
# (with the repository's .clang-format) writes it. Run as
#   cmake -DSOURCE_DIR=... -DCLANG_FORMAT=... -P check_format.cmake
# The sources are those under the project's source folders (build folders and anything
# else at the top are not looked at), so the check needs no git history.
if(NOT CLANG_FORMAT)
  message(FATAL_ERROR "clang-format not found: install it (scripts/deps.sh lists it with the test packages)")
endif()
set(sources)
foreach(folder bench cmake kernels profiler samples tests viewer)
  file(GLOB_RECURSE found RELATIVE "${SOURCE_DIR}"
    "${SOURCE_DIR}/${folder}/*.h" "${SOURCE_DIR}/${folder}/*.hpp" "${SOURCE_DIR}/${folder}/*.c"
    "${SOURCE_DIR}/${folder}/*.cc" "${SOURCE_DIR}/${folder}/*.cpp" "${SOURCE_DIR}/${folder}/*.cu"
    "${SOURCE_DIR}/${folder}/*.cuh")
  list(APPEND sources ${found})
endforeach()
list(SORT sources)
list(LENGTH sources count)
if(count EQUAL 0)
  message(FATAL_ERROR "no sources found under ${SOURCE_DIR}")
endif()
execute_process(COMMAND "${CLANG_FORMAT}" --version OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE)

# The files of `batch` that clang-format would change, appended to `unformatted`.
set(unformatted)
function(check_batch)
  execute_process(COMMAND "${CLANG_FORMAT}" --dry-run --Werror --style=file ${batch}
                  WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE rc ERROR_VARIABLE errors)
  if(NOT rc EQUAL 0)
    string(REGEX MATCHALL "[^\n]+:[0-9]+:[0-9]+: error" hits "${errors}")
    foreach(hit ${hits})
      string(REGEX REPLACE ":[0-9]+:[0-9]+: error$" "" file "${hit}")
      list(APPEND unformatted "${file}")
    endforeach()
    if(NOT hits)
      list(APPEND unformatted "(clang-format failed: ${errors})")
    endif()
    set(unformatted "${unformatted}" PARENT_SCOPE)
  endif()
endfunction()

set(batch)
foreach(source ${sources})
  list(APPEND batch "${source}")
  list(LENGTH batch n)
  if(n EQUAL 50)  # in batches: no command line gets long
    check_batch()
    set(batch)
  endif()
endforeach()
if(batch)
  check_batch()
endif()
if(unformatted)
  list(REMOVE_DUPLICATES unformatted)
  list(LENGTH unformatted bad)
  string(REPLACE ";" "\n  " listing "${unformatted}")
  message(FATAL_ERROR "${bad} of ${count} sources differ from what ${version} writes "
                      "(clang-format -i FILE, with the repository's .clang-format):\n  ${listing}")
endif()
message(STATUS "${count} sources formatted as ${version} writes them")
