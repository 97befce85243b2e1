#!/usr/bin/env bash
# docs/architecture.md against the build: every directory under src/ is named in it ("src/NAME/"),
# and its floor table has one row per static library of src/*/CMakeLists.txt with the directory
# that defines it, exactly the fabscope_* libraries its target_link_libraries name (PUBLIC and
# PRIVATE, conditional ones included; a foreach variable is expanded over the foreach's list) and
# the floor they imply: 0 with no library of src/ below it, else one above the highest it links.
# Usage: architecture_test.sh SOURCE_DIR   (exit 0 when current, 1 with every difference listed)
set -euo pipefail
src_dir=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
doc=$src_dir/docs/architecture.md
[ -r "$doc" ] || { echo "architecture_test: cannot read $doc"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
problem() { echo "docs/architecture.md: $*"; fail=1; }

# 1. Every module directory is named.
for d in "$src_dir"/src/*/; do
  name=$(basename "$d")
  grep -qF "src/$name/" "$doc" || problem "does not name src/$name/"
done

# 2. The libraries and their links, as CMake declares them: "lib DIR dep..." per static library.
for f in "$src_dir"/src/*/CMakeLists.txt; do
  dir=$(basename "$(dirname "$f")")
  awk -v dir="$dir" '
    { sub(/#.*/, ""); text = text " " $0 }
    END {
      while (match(text, /[A-Za-z_]+\([^)]*\)/)) {
        stmt = substr(text, RSTART, RLENGTH); text = substr(text, RSTART + RLENGTH)
        p = index(stmt, "("); cmd = tolower(substr(stmt, 1, p - 1))
        n = 0; m = split(substr(stmt, p + 1, length(stmt) - p - 1), raw, /[ \t]+/)
        for (i = 1; i <= m; i++) if (raw[i] != "") a[++n] = raw[i]
        if (cmd == "foreach" && n > 0) {
          var = a[1]; items = ""
          for (i = 2; i <= n; i++) items = items " " a[i]
        } else if (cmd == "endforeach") {
          var = ""
        } else if (cmd == "add_library" && n > 1 && a[2] == "STATIC") {
          print "lib", a[1], dir
        } else if (cmd == "target_link_libraries" && n > 0) {
          for (i = 2; i <= n; i++) {
            t = a[i]
            if (var != "" && index(t, "${" var "}")) {
              k = split(items, it, " ")
              for (j = 1; j <= k; j++)
                if (it[j] != "") { e = t; sub("\\$\\{" var "\\}", it[j], e); print "dep", a[1], e }
            } else if (t ~ /^fabscope_[a-z_]+$/) print "dep", a[1], t
          }
        }
      }
    }' "$f"
done > "$work/cmake"
awk '$1 == "lib" { sub(/^fabscope_/, "", $2); print $2, $3 }' "$work/cmake" | sort > "$work/libs"
# Links of static libraries only (executables and plugins of src/ link too), without the prefix.
awk 'NR == FNR { lib["fabscope_" $1] = 1; next }
     $1 == "dep" && ($2 in lib) && $3 != $2 {
       sub(/^fabscope_/, "", $2); sub(/^fabscope_/, "", $3); print $2, $3
     }' \
  "$work/libs" "$work/cmake" | sort -u > "$work/deps"
[ -s "$work/libs" ] || { echo "architecture_test: no add_library(... STATIC) under $src_dir/src"; exit 1; }

# 3. The floor table of the doc: "| floor | lib | src/DIR/ | dep, dep (a note) |", the library
# without its fabscope_ prefix; a row with empty floor and library cells continues the links.
awk -F'|' '!/^\|/ { last = ""; next }
  $2 ~ /^ *[0-9]+ *$/ && $3 ~ /^ *`?[a-z_]+`? *$/ {
    last = $3; gsub(/[ `]/, "", last); sub(/^fabscope_/, "", last)
    fl = $2; gsub(/ /, "", fl)
    d = $4; gsub(/[ `]/, "", d); sub(/^src\//, "", d); sub(/\/$/, "", d)
    print "row", last, fl, d
  }
  $2 ~ /^ *$/ && $3 ~ /^ *$/ && last == "" { next }
  last != "" {
    l = $5; gsub(/\([^)]*\)/, "", l); gsub(/[`,]/, " ", l)
    n = split(l, x, /[ \t]+/)
    for (i = 1; i <= n; i++)
      if (x[i] != "" && x[i] != "-" && x[i] != "—") print "link", last, x[i]
  }' "$doc" > "$work/doc"
awk '$1 == "row" { print $2, $4 }' "$work/doc" | sort > "$work/doc_libs"
awk '$1 == "link" { print $2, $3 }' "$work/doc" | sort -u > "$work/doc_deps"
[ -s "$work/doc_libs" ] || problem "no floor table (rows '| N | lib | src/DIR/ | links |')"

while read -r lib dir; do
  grep -qx "$lib $dir" "$work/doc_libs" ||
    problem "floor table lacks fabscope_$lib in src/$dir/ (src/$dir/CMakeLists.txt defines it)"
done < "$work/libs"
while read -r lib dir; do
  grep -qx "$lib $dir" "$work/libs" ||
    problem "floor table lists fabscope_$lib in src/$dir/, which CMake does not define there"
done < "$work/doc_libs"
while read -r lib dep; do
  grep -qx "$lib $dep" "$work/doc_deps" ||
    problem "fabscope_$lib links fabscope_$dep (target_link_libraries); its row lacks $dep"
done < "$work/deps"
while read -r lib dep; do
  grep -qx "$lib $dep" "$work/deps" ||
    problem "the row of fabscope_$lib lists $dep, which its target_link_libraries do not name"
done < "$work/doc_deps"

# 4. Floors: 0 without a library of src/ below, else 1 + the highest floor among its links.
awk 'NR == FNR { lib[$1] = 1; next } { dep[$1] = dep[$1] " " $2 }
     END {
       for (round = 0; round < 64; round++) {
         changed = 0
         for (l in lib) {
           f = 0; n = split(dep[l], d, " ")
           for (i = 1; i <= n; i++) if ((d[i] in lib) && floor[d[i]] + 1 > f) f = floor[d[i]] + 1
           if (floor[l] != f) { floor[l] = f; changed = 1 }
         }
         if (!changed) break
       }
       if (changed) { print "cycle"; exit }
       for (l in lib) print l, floor[l] + 0
     }' "$work/libs" "$work/deps" | sort > "$work/floors"
if grep -qx cycle "$work/floors"; then
  problem "the links of src/ form a cycle (target_link_libraries)"
else
  while read -r lib fl; do
    row=$(awk -v l="$lib" '$1 == "row" && $2 == l { print $3 }' "$work/doc")
    [ -z "$row" ] || [ "$row" = "$fl" ] ||
      problem "fabscope_$lib is on floor $fl by its links, the table says $row"
  done < "$work/floors"
fi

if [ "$fail" = 0 ]; then
  echo "ok: $(wc -l < "$work/libs") libraries, $(wc -l < "$work/deps") links, every src/ directory named"
fi
exit "$fail"
