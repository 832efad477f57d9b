# The include rule of the layers (cmake/layers.cmake), as one function that the configure step
# and a test (tests/layers/, in CMake's script mode) both run.
#
# hapair_layer_violations(<out var> <src root> <folder> "<folders below>" <pure: TRUE/FALSE> <files>...)
# sets <out var> to one line per include that breaks the rule, "file:line: why", empty when none:
#   - `#include "X/..."` where X is a folder under <src root> must be <folder> or one below it;
#   - an outside library is seen only by the layer that owns it (Cap'n Proto: protocols, the
#     codec; ZeroMQ: runtime; Boost.Program_options: cli; Boost.Beast and Asio: demo);
#   - a pure folder includes no threads, clocks, streams, files or random devices.

set(HAPAIR_GUARDED_INCLUDES
    "capnp/=protocols" "kj/=protocols" "zmq=runtime" "boost/program_options=cli" "boost/beast=demo"
    "boost/asio=demo")
set(HAPAIR_IMPURE_INCLUDES thread chrono iostream random mutex fstream condition_variable future)

function(hapair_layer_violations out src_root folder below pure)
  set(problems "")
  foreach(file IN LISTS ARGN)
    file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    file(RELATIVE_PATH rel ${src_root} ${file})
    # file(STRINGS) drops line numbers: find each include's line by reading the file once more.
    file(READ ${file} text)
    string(REPLACE ";" "\\;" text "${text}")
    string(REPLACE "\n" ";" all_lines "${text}")
    set(number 0)
    foreach(line IN LISTS all_lines)
      math(EXPR number "${number} + 1")
      if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^>\"]+)[>\"]")
        continue()
      endif()
      set(quote "${CMAKE_MATCH_1}")
      set(path "${CMAKE_MATCH_2}")
      if(quote STREQUAL "\"" AND path MATCHES "^([A-Za-z0-9_]+)/")
        set(top "${CMAKE_MATCH_1}")
        if(IS_DIRECTORY ${src_root}/${top} AND NOT top STREQUAL folder AND NOT top IN_LIST below)
          list(APPEND problems "src/${rel}:${number}: includes ${path}, but ${top} is not below ${folder}")
        endif()
      elseif(quote STREQUAL "<")
        foreach(guard IN LISTS HAPAIR_GUARDED_INCLUDES)
          string(REPLACE "=" ";" parts "${guard}")
          list(GET parts 0 prefix)
          list(GET parts 1 owner)
          string(LENGTH "${prefix}" n)
          string(SUBSTRING "${path}" 0 ${n} head)
          if(head STREQUAL prefix AND NOT folder STREQUAL owner)
            list(APPEND problems "src/${rel}:${number}: includes <${path}>, which only src/${owner} may see")
          endif()
        endforeach()
        if(pure AND path IN_LIST HAPAIR_IMPURE_INCLUDES)
          list(APPEND problems "src/${rel}:${number}: includes <${path}> in a pure layer (no threads, clocks, streams, files or random devices)")
        endif()
      endif()
    endforeach()
  endforeach()
  set(${out} "${problems}" PARENT_SCOPE)
endfunction()
