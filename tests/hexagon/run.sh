#!/bin/sh
# run.sh: configure, build and run the Hexagon runtime's tests (see
# CMakeLists.txt here): tests/hexagon/run.sh [build-dir]. Only this small
# project is built, at low priority, two jobs at most.
set -e
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build-hexagon-tests}
nice cmake -S "$here" -B "$build" >/dev/null
nice cmake --build "$build" -j 2
cd "$build" && nice ctest --output-on-failure -j 1
