#!/usr/bin/env bash
# Fails when a C++ source under engine/, tests/ (or later source folders) differs from
# what clang-format makes of it with the committed .clang-format, and names every such file.
# One clang-format process per batch of files, one batch per core at a time (starting a
# process per file was most of the time).
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed" >&2; exit 1; }
mapfile -d '' files < <(find engine projections workers app bpf scenarios ui tests \
  -type f \( -name '*.cc' -o -name '*.h' \) -print0 2>/dev/null | sort -z)

# Checks the files given; prints one line per file that is not formatted. clang-format names
# each such file in its diagnostics ("FILE:LINE:COL: error: code should be clang-formatted");
# if the rest of the batch still fails (an unreadable file, say), it is checked file by file.
check_batch() {
  local out f
  local -a named rest=()
  local -A seen=()
  out=$(clang-format --dry-run -Werror --ferror-limit=1 "$@" 2>&1 >/dev/null) && return 0
  mapfile -t named < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' \
                         <<<"$out" | sort -u)
  for f in "${named[@]}"; do
    echo "check-format: $f is not clang-formatted (run: clang-format -i $f)"
    seen["$f"]=1
  done
  for f in "$@"; do [ -n "${seen["$f"]:-}" ] || rest+=("$f"); done
  if [ "${#rest[@]}" -gt 0 ] && ! clang-format --dry-run -Werror "${rest[@]}" >/dev/null 2>&1; then
    for f in "${rest[@]}"; do
      clang-format --dry-run -Werror "$f" >/dev/null 2>&1 ||
        echo "check-format: $f is not clang-formatted, or clang-format fails on it"
    done
  fi
  return 1
}
export -f check_batch

bad=0
if [ "${#files[@]}" -gt 0 ]; then
  jobs=$(nproc 2>/dev/null || echo 2)
  # Four batches per core, so one slow batch does not leave a core idle for long.
  per_batch=$(( (${#files[@]} + 4 * jobs - 1) / (4 * jobs) ))
  report=$(printf '%s\0' "${files[@]}" |
    xargs -0 -n "$per_batch" -P "$jobs" bash -c 'check_batch "$@"' check_batch) || bad=1
  [ -z "$report" ] || sort <<<"$report"
fi
echo "check-format: ${#files[@]} files checked"
exit $bad
