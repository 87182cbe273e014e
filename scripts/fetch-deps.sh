#!/usr/bin/env bash
# Fetch the pinned ggml + libllama sources from the npm package llama.rn and
# strip its symbol prefix, so our CMake can build them as plain ggml/llama.
#
# Usage: scripts/fetch-deps.sh [DEST]     (default: deps/llama.rn)
#
# The package's integrity (sha512, as npm reports it) is pinned below. The
# extracted tree carries a stamp holding that integrity; when the stamp matches
# the script does nothing, so re-running it is free and never touches mtimes.
set -euo pipefail

PKG_NAME=llama.rn
PKG_VERSION=0.12.9
PKG_INTEGRITY='sha512-uRsTVARp1KnDkDg00FvOGIrN6SZfMqYVJfCOdxN9FSyGufLC+Aad6oFWZVEO8vmtNqu+JBlsCGevP4sJGifAvg=='

top=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$top/deps/$PKG_NAME}
stamp=$dest/.fetched

die() { printf 'fetch-deps: %s\n' "$*" >&2; exit 1; }

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$PKG_INTEGRITY" ]; then
    exit 0
fi

command -v npm >/dev/null 2>&1 ||
    die "npm not found. Install Node.js and npm (Debian: apt-get install npm) and run make again."
command -v node >/dev/null 2>&1 ||
    die "node not found. Install Node.js (Debian: apt-get install nodejs) and run make again."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "fetch-deps: downloading $PKG_NAME@$PKG_VERSION with npm"
if ! (cd "$work" && npm pack "$PKG_NAME@$PKG_VERSION" --silent >pack.log 2>&1); then
    cat "$work/pack.log" >&2 || true
    die "npm pack $PKG_NAME@$PKG_VERSION failed (network or registry problem); check that the npm registry is reachable and run make again."
fi
tarball=$work/$PKG_NAME-$PKG_VERSION.tgz
[ -f "$tarball" ] || die "npm pack did not produce $tarball"

# npm's integrity string is "sha512-" + base64 of the raw digest.
got=$(node -e '
const fs = require("fs"), crypto = require("crypto");
const h = crypto.createHash("sha512").update(fs.readFileSync(process.argv[1]));
process.stdout.write("sha512-" + h.digest("base64"));' "$tarball")
if [ "$got" != "$PKG_INTEGRITY" ]; then
    die "integrity mismatch for $PKG_NAME@$PKG_VERSION:
  expected $PKG_INTEGRITY
  got      $got
The registry served a different tarball than the one this project pins. Do not build from it; report it."
fi

mkdir -p "$work/x"
tar -xzf "$tarball" -C "$work/x"
src=$work/x/package/cpp
[ -d "$src" ] || die "the package has no cpp/ folder; is the pinned version right?"

# What we build: ggml core, ggml-cpu and libllama with their headers. The
# package's other backends (hexagon, opencl, metal, blas), its React Native
# glue (rn-*, jsi/), common/, tools/ and nlohmann/ stay out.
out=$work/out
mkdir -p "$out"
(
    cd "$src"
    cp LICENSE ggml.c ggml.h ggml-alloc.c ggml-alloc.h \
       ggml-backend.cpp ggml-backend.h ggml-backend-impl.h ggml-backend-reg.cpp \
       ggml-backend-dl.cpp ggml-backend-dl.h ggml-backend-meta.cpp \
       ggml-common.h ggml-cpp.h ggml-cpu.h ggml-impl.h ggml-opt.cpp ggml-opt.h \
       ggml-quants.c ggml-quants.h ggml-threading.cpp ggml-threading.h \
       gguf.cpp gguf.h unicode.cpp unicode.h unicode-data.cpp unicode-data.h \
       "$out"/
    cp llama*.cpp llama*.h "$out"/
    cp -r ggml-cpu models "$out"/
)

# Remove the package's prefix. Only these four spellings are prefixed; other
# names that merely contain "LM_" (LLM_TENSOR_*, LLM_ARCH_*) are untouched
# because none of them continue with GGML/GGUF.
find "$out" -type f \( -name '*.c' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) -print0 |
    xargs -0 sed -i -e 's/lm_ggml/ggml/g' -e 's/LM_GGML/GGML/g' -e 's/lm_gguf/gguf/g' -e 's/LM_GGUF/GGUF/g'

if grep -rlE 'lm_ggml|LM_GGML|lm_gguf|LM_GGUF' "$out" >/dev/null; then
    die "prefix removal left prefixed names behind"
fi

printf '%s' "$PKG_INTEGRITY" >"$out/.fetched"
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$out" "$dest"
echo "fetch-deps: $PKG_NAME@$PKG_VERSION ready in $dest"
