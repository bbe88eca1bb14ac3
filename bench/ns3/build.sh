#!/bin/sh
# Build bench/ns3/dumbbell (bbrlab's ns-3 reference dumbbell) against Debian 12's libns3-dev
# (ns-3.37):  apt-get install -y --no-install-recommends libns3-dev g++ pkg-config
#
# Debian packaging bug: ns3-core.pc lists /usr/lib/x86_64-linux-gnu/libgsl.so and
# libgslcblas.so as link arguments, files that only libgsl-dev (not a dependency of
# libns3-dev) installs. libns3-core.so already depends on the runtime libgsl, so those two
# arguments are dropped here rather than asking for libgsl-dev as well.
#
# Usage: sh bench/ns3/build.sh [OUTPUT [SOURCE]]   (default: bench/ns3/dumbbell from dumbbell.cc;
#        sh bench/ns3/build.sh bench/ns3/dctcp_fig17 bench/ns3/dctcp_fig17.cc for the Fig. 17 run)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/dumbbell}
src=${2:-$here/dumbbell.cc}
modules="ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications ns3-traffic-control"
if ! pkg-config --exists $modules 2>/dev/null; then
    echo "build.sh: ns-3 development files not found (pkg-config $modules); install them with:" >&2
    echo "  apt-get install -y --no-install-recommends libns3-dev g++ pkg-config" >&2
    exit 1
fi
cflags=""
for arg in $(pkg-config --cflags $modules); do
    case $arg in
        *\;*) ;; # ns3-core.pc also writes a CMake list separator into one -I ("-I/usr;")
        *) cflags="$cflags $arg" ;;
    esac
done
libs=""
for arg in $(pkg-config --libs $modules); do
    case $arg in
        */libgsl.so | */libgslcblas.so) ;; # the packaging bug above
        *) libs="$libs $arg" ;;
    esac
done
# -O2 as Debian builds libns3 itself; only this file is compiled here.
set -x
g++ -O2 -std=c++17 $cflags -o "$out" "$src" $libs
