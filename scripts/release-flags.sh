#!/usr/bin/env bash
# The compiler flags of a release build, printed for `swift build -c release $(scripts/release-flags.sh)`.
# On x86-64 the code targets Haswell and newer (AVX2, POPCNT, BMI2: every x86 server CPU since
# 2013): the catalog engine counts sets with popcounts, which the baseline x86-64 target has to
# emulate (~3x slower facet counts at a million books). Override with RELEASE_CPU=x86-64 for an
# older machine, or RELEASE_CPU=native for this one.
cpu=${RELEASE_CPU:-haswell}
if [ "$(uname -m)" = x86_64 ]; then
    echo "-Xswiftc -target-cpu -Xswiftc $cpu"
fi
