# The include rule of the layers (cmake/layer_check.cmake) refuses what it must: run in CMake's
# script mode by CTest (tests/CMakeLists.txt), it builds a small tree in a scratch folder with a
# lower and an upper layer and checks every kind of violation is found, and that a tree that
# keeps the rule passes.
#   cmake -DSCRATCH=<dir> -P tests/layers/upward_include_test.cmake
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/layer_check.cmake)
if(NOT SCRATCH)
  message(FATAL_ERROR "give -DSCRATCH=<a scratch folder>")
endif()
set(root ${SCRATCH}/src)
file(REMOVE_RECURSE ${SCRATCH})
file(WRITE ${root}/low/low.h "#pragma once\n#include <vector>\n")
file(WRITE ${root}/high/high.h "#pragma once\n#include \"low/low.h\"\n")
set(failures "")
macro(expect what folder below pure expected)
  file(GLOB files ${root}/${folder}/*.h ${root}/${folder}/*.cpp)
  hapair_layer_violations(found ${root} ${folder} "${below}" ${pure} ${files})
  list(LENGTH found n)
  if(NOT n EQUAL ${expected})
    list(APPEND failures "${what}: expected ${expected} problem(s), found ${n}: ${found}")
  endif()
endmacro()

# The tree as written keeps the rule.
expect("a downward include" high "low" FALSE 0)
expect("no include of another layer" low "" FALSE 0)
# An upward include: the lower layer includes the upper one.
file(APPEND ${root}/low/low.h "#include \"high/high.h\"\n")
expect("an upward include" low "" FALSE 1)
# A sideways include: a folder that is not linked is not below, even if it exists.
file(WRITE ${root}/side/side.h "#pragma once\n")
file(WRITE ${root}/high/side_user.cpp "#include \"side/side.h\"\n")
expect("a sideways include" high "low" FALSE 1)
file(REMOVE ${root}/high/side_user.cpp)
# An outside library only its owner may see (ZeroMQ: runtime).
file(WRITE ${root}/high/socket.cpp "#include <zmq.hpp>\n")
expect("ZeroMQ outside runtime" high "low" FALSE 1)
file(REMOVE ${root}/high/socket.cpp)
# A pure layer with a clock.
file(WRITE ${root}/high/clock.cpp "#include <chrono>\n")
expect("a clock in a pure layer" high "low" TRUE 1)
expect("a clock in a driver" high "low" FALSE 0)
# The problem names the file and line.
file(WRITE ${root}/low/low.h "#pragma once\n\n#include \"high/high.h\"\n")
file(GLOB files ${root}/low/*.h)
hapair_layer_violations(found ${root} low "" FALSE ${files})
if(NOT found MATCHES "src/low/low.h:3: includes high/high.h, but high is not below low")
  list(APPEND failures "the problem should name src/low/low.h:3, got: ${found}")
endif()
file(REMOVE_RECURSE ${SCRATCH})
if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "layer check:\n  ${text}")
endif()
message(STATUS "layer check: every violation found, the rule-keeping tree passes")
