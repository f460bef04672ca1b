# flopline_warnings: an interface target every flopline target links privately.
add_library(flopline_warnings INTERFACE)
target_compile_options(flopline_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wimplicit-fallthrough>)
if(FLOPLINE_WERROR)
  target_compile_options(flopline_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
