# Folders are layers (docs/ARCHITECTURE.md, "Layers"): every folder under src/ is one library
# that links only folders below it, so the tree is the architecture. hapair_layer() makes the
# library and, at configure time, reads every file of the folder and refuses the build when one
# includes a folder that is not below it (or a guarded outside library the layer may not see).
#
#   hapair_layer(<folder> [LINKS <folders below>...] [PUBLIC_LIBS <targets>...]
#                [PRIVATE_LIBS <targets>...] [SOURCES <extra sources>...] [PURE]
#                [EXECUTABLE <target>])
#
# LINKS names folders (not targets): the library links hapair_<folder> of each, and the folder may
# include from them and from everything they may include from. PURE: the folder holds protocol
# or driver-kit code, which never includes threads, clocks, streams or random devices
# (docs/STYLE: a core is handle(now, event) -> effects). EXECUTABLE: the top folder (src/cli)
# builds a program of that name instead of a library. The layers and their links are written to
# <build>/layers.txt, which tests/layers/ holds against docs/ARCHITECTURE.md and the tree.
#
# The include check itself is hapair_layer_violations() in cmake/layer_check.cmake, which a test
# also runs in script mode on a tree made to break it.
include(${CMAKE_CURRENT_LIST_DIR}/layer_check.cmake)

set_property(GLOBAL PROPERTY HAPAIR_LAYERS "")
file(WRITE ${CMAKE_BINARY_DIR}/layers.txt "")

function(hapair_layer folder)
  cmake_parse_arguments(L "PURE" "EXECUTABLE" "LINKS;PUBLIC_LIBS;PRIVATE_LIBS;SOURCES" ${ARGN})
  set(dir ${CMAKE_SOURCE_DIR}/src/${folder})
  # What the folder may include: itself and the closure of the folders it links.
  set(below "")
  foreach(lower IN LISTS L_LINKS)
    get_property(known GLOBAL PROPERTY HAPAIR_LAYERS)
    if(NOT lower IN_LIST known)
      message(FATAL_ERROR "layer ${folder} links ${lower}, which is not a layer declared before it "
                          "(declared so far: ${known}); add_subdirectory() the lower folder first")
    endif()
    get_property(lower_below GLOBAL PROPERTY HAPAIR_BELOW_${lower})
    list(APPEND below ${lower} ${lower_below})
  endforeach()
  list(REMOVE_DUPLICATES below)
  set_property(GLOBAL PROPERTY HAPAIR_BELOW_${folder} "${below}")
  set_property(GLOBAL APPEND PROPERTY HAPAIR_LAYERS ${folder})

  file(GLOB files CONFIGURE_DEPENDS ${dir}/*.h ${dir}/*.cpp)
  hapair_layer_violations(problems "${CMAKE_SOURCE_DIR}/src" "${folder}" "${below}" "${L_PURE}" ${files})
  if(problems)
    list(JOIN problems "\n  " text)
    message(FATAL_ERROR "src/${folder} includes what is not below it (docs/ARCHITECTURE.md, \"Layers\"):\n  ${text}")
  endif()

  file(GLOB srcs CONFIGURE_DEPENDS ${dir}/*.cpp)
  if(L_EXECUTABLE)
    set(target ${L_EXECUTABLE})
    add_executable(${target} ${srcs} ${L_SOURCES})
  else()
    set(target hapair_${folder})
    add_library(${target} STATIC ${srcs} ${L_SOURCES})
  endif()
  target_include_directories(${target} PUBLIC ${CMAKE_SOURCE_DIR}/src)
  if(HAPAIR_FUZZ AND folder IN_LIST HAPAIR_FUZZ_COVERED_LAYERS)
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  if(HAPAIR_FUZZ AND folder IN_LIST HAPAIR_FUZZ_O0_LAYERS)
    target_compile_options(${target} PRIVATE -O0)
  endif()
  foreach(lower IN LISTS L_LINKS)
    target_link_libraries(${target} PUBLIC hapair_${lower})
  endforeach()
  if(L_PUBLIC_LIBS)
    target_link_libraries(${target} PUBLIC ${L_PUBLIC_LIBS})
  endif()
  if(L_PRIVATE_LIBS)
    target_link_libraries(${target} PRIVATE ${L_PRIVATE_LIBS})
  endif()
  list(JOIN L_LINKS " " links_text)
  file(APPEND ${CMAKE_BINARY_DIR}/layers.txt "${folder}: ${links_text}\n")
endfunction()

# hapair_embed_web(<name> "<page>,<page>...") writes <build folder>/<name>.cpp: the pages of web/,
# inlined and embedded as byte arrays (scripts/embed_web.cmake), for the library of the folder
# that calls it to list in its SOURCES.
function(hapair_embed_web name pages)
  file(GLOB_RECURSE web_files CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/web/*.html ${CMAKE_SOURCE_DIR}/web/*.js
       ${CMAKE_SOURCE_DIR}/web/*.css)
  add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${name}.cpp
                     COMMAND ${CMAKE_COMMAND} -DWEB=${CMAKE_SOURCE_DIR}/web -DOUT=${CMAKE_CURRENT_BINARY_DIR}/${name}.cpp
                             "-DPAGES=${pages}" -P ${CMAKE_SOURCE_DIR}/scripts/embed_web.cmake
                     DEPENDS ${web_files} ${CMAKE_SOURCE_DIR}/scripts/embed_web.cmake
                     COMMENT "Embedding the web pages ${pages}" VERBATIM)
endfunction()
