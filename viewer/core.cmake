# flopline_viewer_core: everything of flopline-view that needs no display — viewport
# maths, layout, level of detail, hit testing, selection and flows, search, the FLOP/s
# table, roofline, colours, loading off the UI thread, state dumps. Built whenever the
# trace library is (no ImGui, GLFW or OpenGL), so its unit tests run everywhere.
find_package(ZLIB REQUIRED)  # reading args back from .json.gz files
find_package(Threads REQUIRED)
file(GLOB FLOPLINE_VIEWER_CORE_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/src/core/*.cc")
add_library(flopline_viewer_core STATIC ${FLOPLINE_VIEWER_CORE_SOURCES})
# Headers are included as "core/viewport.h".
target_include_directories(flopline_viewer_core PUBLIC ${CMAKE_CURRENT_LIST_DIR}/src)
target_link_libraries(flopline_viewer_core
  PUBLIC flopline_trace Threads::Threads
  PRIVATE ZLIB::ZLIB nlohmann_json::nlohmann_json flopline_warnings)
