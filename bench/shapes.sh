#!/usr/bin/env bash
# bench/shapes.sh: the pathological shapes of issue #26 (docs/benchmarks.md), generated in the
# text format at each size, checked at serializable by this checkout ("new") and, with
# --against REV, by the commit REV ("old") too, alternating which runs first. Each line:
# shape, size, binary, wall seconds, peak RSS and the verdict (exit code) of the whole
# process, reading included.
#
#   bench/shapes.sh [--against REV] [--timeout DURATION] [--sizes "1024 102400 10485760"] [--old-max BYTES]
#
# --old-max skips the old binary above that size (default 102400: it is quadratic there).
set -uo pipefail
cd "$(dirname "$0")/.."
against= timeout=20s sizes="1024 102400 10485760" oldmax=102400
while [ $# -gt 0 ]; do
	case $1 in
	--against) against=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--old-max) oldmax=$2; shift 2 ;;
	*) echo "bench/shapes.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/new" ./cmd/isovet || exit 2
if [ -n "$against" ]; then
	git worktree add -q --detach "$tmp/old-src" "$against" || exit 2
	(cd "$tmp/old-src" && go build -o "$tmp/old" ./cmd/isovet) || exit 2
	git worktree remove --force "$tmp/old-src"
fi
# gen SHAPE SIZE: transactions of SHAPE until the output holds SIZE bytes.
gen() {
	awk -v shape="$1" -v size="$2" 'BEGIN {
		for (t = 1; n < size || (t - 1) % 10 != 0; t++) { # whole groups of 10 (ten-identical)
			if (shape == "blind-writes") s = sprintf("w(1,1,%d,%d)\n", t % 8, t)
			else if (shape == "read-write-back") s = sprintf("r(1,1,%d,%d)\nw(1,1,%d,%d)\n", t % 8, t, t % 8, t)
			else { g = int((t - 1) / 10) + 1; s = sprintf("r(%d,1,%d,%d)\nw(%d,1,%d,%d)\n", g, t, t, g, t, t) }
			printf "%s", s; n += length(s)
		}
	}'
}
run() { # BIN FILE -> "wall s, RSS MB, exit"
	/usr/bin/time -f "%e %M" -o "$tmp/time" "$tmp/$1" check --timeout "$timeout" "$2" > /dev/null 2>&1
	local rc=$?
	read -r wall rss < <(tail -n 1 "$tmp/time") # time writes "Command exited ..." first on a non-zero exit
	printf "%s s, %d MB, exit %d" "$wall" $((rss / 1024)) "$rc"
}
i=0
for shape in blind-writes read-write-back ten-identical; do
	for size in $sizes; do
		gen "$shape" "$size" > "$tmp/h.txt"
		bins=new
		if [ -n "$against" ] && [ "$size" -le "$oldmax" ]; then
			if [ $((i % 2)) -eq 0 ]; then bins="old new"; else bins="new old"; fi
		fi
		for b in $bins; do
			echo "$shape $size $b: $(run "$b" "$tmp/h.txt")"
		done
		i=$((i + 1))
	done
done
