#!/usr/bin/env bash
# include-cycles.sh [DIR]: cycles in the module graph of the C sources under
# DIR (default: src). A module is a .c file and the .h beside it of the same
# name (foo.c + foo.h); a header with no .c of its name is a module alone. An
# arrow A -> B means some file of A includes B's header ("quoted" includes,
# resolved against the including file's folder, then src/). Prints each
# strongly connected group of more than one module and the count; exits 1 if
# there is any.
set -euo pipefail
dir=${1:-src}
cd "$(dirname "$0")/.."

find "$dir" -name '*.[ch]' | sort | while read -r f; do
    { grep -oE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]+"' "$f" || true; } | sed -E 's/.*"([^"]+)"/\1/' |
        while read -r inc; do
            for cand in "$(dirname "$f")/$inc" "src/$inc"; do
                if [ -f "$cand" ]; then
                    echo "$f $(realpath --relative-to=. "$cand")"
                    break
                fi
            done
        done
done | sed -E 's/\.[ch]( |$)/\1/g' | awk '
    $1 != $2 { edge[$1, $2] = 1; node[$1] = 1; node[$2] = 1; out[$1] = out[$1] " " $2 }
    # Tarjan: strongly connected components of the module graph.
    function visit(v,    n, i, w, ws, comp, size) {
        index_of[v] = low[v] = ++counter
        stack[++sp] = v; on[v] = 1
        n = split(out[v], ws, " ")
        for (i = 1; i <= n; i++) {
            w = ws[i]
            if (!(w in index_of)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
            else if (on[w] && index_of[w] < low[v]) low[v] = index_of[w]
        }
        if (low[v] == index_of[v]) {
            comp = ""; size = 0
            do { w = stack[sp--]; on[w] = 0; comp = comp " " w; size++ } while (w != v)
            if (size > 1) { cycles++; print "cycle:" comp }
        }
    }
    END {
        for (v in node) if (!(v in index_of)) visit(v)
        printf "%d include cycle(s) among the modules of '"$dir"'\n", cycles
        exit cycles > 0
    }'
