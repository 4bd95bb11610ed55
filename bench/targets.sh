#!/usr/bin/env bash
# bench/targets.sh: re-measures the checker and reader targets of the issues through the CLI,
# on the public histories in SHARED_DATA_DIR/bench (docs/benchmarks.md).
# Each line: what, the load average before it, wall/CPU/peak RSS of the whole process
# (reading included), and the verdict line. Run it on a quiet machine; CPU time is the fairer
# figure when the machine is shared.
#
#   bench/targets.sh [--against REV] [--only REGEX] [SHARED_DATA_DIR]   (default: $ISOVET_SHARED_DATA)
#
# SHARED_DATA_DIR is the root of the public corpora (the README says how to get them); a
# relative path is taken from the repository's root.
#
# --against REV measures this checkout ("new") and the commit REV ("old") side by side: every
# line runs both binaries one after the other, alternating which goes first, and a last line
# per target gives new/old CPU time. The readers' Go benchmarks run the same way from test
# binaries built in both trees. --only keeps the targets whose name matches REGEX (grep -E).
set -uo pipefail
cd "$(dirname "$0")/.."
against= only=.
while [ $# -gt 0 ]; do
	case $1 in
	--against) against=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	-*) echo "bench/targets.sh: unknown flag $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
data=${1:-${ISOVET_SHARED_DATA:-}}
if [ -z "$data" ]; then
	echo "bench/targets.sh: name the public corpora: SHARED_DATA_DIR, or set ISOVET_SHARED_DATA" >&2
	exit 2
fi
B=$data/bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/isovet" ./cmd/isovet || exit 1
I=$work/isovet
if [ -n "$against" ]; then
	mkdir "$work/old"
	git archive "$against" | tar -x -C "$work/old" || exit 1
	(cd "$work/old" && go build -o "$work/isovet-old" ./cmd/isovet) || exit 1
	echo "# new: $(git describe --always --dirty) against old: $(git rev-parse --short "$against")"
fi
calls=0

# run1 LABEL BIN ARGS...: one timed run of BIN; sets cpu to its user+system seconds.
run1() {
	local label=$1 bin=$2
	shift 2
	local load
	load=$(cut -d' ' -f1 /proc/loadavg)
	( ulimit -v 10000000; /usr/bin/time -f "%e s wall, %U+%S s CPU, %M KB" timeout 300 "$bin" "$@" >"$work/out" 2>"$work/err" )
	local rc=$?
	local t
	t=$(tail -n 1 "$work/err")
	cpu=$(echo "$t" | sed -E 's/.*wall, ([0-9.]+)\+([0-9.]+) s CPU.*/\1 \2/' | awk '{print $1+$2}')
	printf '%-62s load %-5s %-40s exit %s  %s\n' "$label" "$load" "$t" "$rc" \
		"$(grep -m1 -E 'checked by' "$work/out" | sed 's/, checked by [a-z]*//')"
}

# T NAME ARGS...: times `isovet ARGS...`; with --against, the old binary too, in turn.
T() {
	local name=$1
	shift
	echo "$name" | grep -qE "$only" || return 0
	if [ -z "$against" ]; then
		run1 "$name" "$I" "$@"
		return
	fi
	local first=new c_new c_old
	calls=$((calls + 1))
	[ $((calls % 2)) -eq 0 ] && first=old
	for side in $first $([ $first = new ] && echo old || echo new); do
		if [ $side = new ]; then
			run1 "$name [new]" "$I" "$@"
			c_new=$cpu
		else
			run1 "$name [old]" "$work/isovet-old" "$@"
			c_old=$cpu
		fi
	done
	awk -v n="$c_new" -v o="$c_old" -v name="$name" 'BEGIN {printf "%-62s new/old CPU %.2f\n", name, (o > 0 ? n / o : 0)}'
}

# readers PATTERN BENCHTIME: the readers' Go benchmarks matching PATTERN.
readers() {
	local pat=$1 bt=$2 p
	for p in native chronos; do
		if [ -z "$against" ]; then
			go test "./format/$p" -run '^$' -bench "$pat" -benchtime "$bt"
			continue
		fi
		[ -x "$work/$p-new.test" ] || go test -c -o "$work/$p-new.test" "./format/$p" || return
		[ -x "$work/$p-old.test" ] || (cd "$work/old" && go test -c -o "$work/$p-old.test" "./format/$p") || return
		for side in new old old new; do
			(cd "format/$p" && "$work/$p-$side.test" -test.run '^$' -test.bench "$pat" -test.benchtime "$bt") |
				grep -E '^Benchmark' | sed "s/^/[$side] /"
		done
	done
}

if echo readers | grep -qE "$only"; then
	echo "# readers"
	readers 'Read|Serial' 2x | grep -E '1000000'
	# 10k reads take 10 ms: two of them say little, so 100.
	readers '(Read|Serial)//txns=10000$' 100x | grep -E 'Benchmark'
fi

echo "# strict serializability on Vbox's interval histories (issue #4)"
for i in 1 2 3; do
	T "strict blindw_wr_10000 #$i" check --level strict-serializable "$B/vbox/blindw_wr_10000"
	T "strict blindw_wr_100000 #$i" check --level strict-serializable "$B/vbox/blindw_wr_100000"
done

echo "# VeriStrong's histories, SER and SI (issues #4, #5)"
for n in RH BL WH HD; do
	T "strong-session-serializable $n-10k" check --level strong-session-serializable "$B/veristrong-10k/$n-10k/hist-00000"
	T "strong-session-snapshot-isolation $n-10k" check --level strong-session-snapshot-isolation "$B/veristrong-10k/$n-10k/hist-00000"
done
for n in tpcc twitter rubis; do
	T "strong-session-serializable $n-10k" check --level strong-session-serializable "$B/veristrong-10k/$n-10k"
	T "strong-session-snapshot-isolation $n-10k" check --level strong-session-snapshot-isolation "$B/veristrong-10k/$n-10k"
done

echo "# Vbox's histories at every level"
for f in blindw_rh_10000 blindw_wh_10000 blindw_wr_10000 ctwitter_10000 blindw_wr_100000; do
	for l in serializable strong-session-serializable snapshot-isolation strong-session-snapshot-isolation strong-snapshot-isolation; do
		T "$l $f" check --level "$l" "$B/vbox/$f"
	done
done

echo "# the weak levels on VeriStrong's and Vbox's histories (issue #24)"
for l in read-committed read-atomic causal; do
	for n in RH BL WH HD; do
		T "weak $l $n-10k" check --level "$l" "$B/veristrong-10k/$n-10k/hist-00000"
	done
	for f in blindw_rh_10000 blindw_wh_10000 blindw_wr_10000 ctwitter_10000 blindw_pred_100 blindw_pred_1000 blindw_wr_100000; do
		T "weak $l $f" check --level "$l" "$B/vbox/$f"
	done
done

echo "# BlindW-Pred, 10,000 transactions from memdb (issue #9)"
for r in 10 100 1000; do
	echo "pred 1-$r rows" | grep -qE "$only" || continue
	# The run's own check is cut short (its verdict does not matter here; the file does).
	"$I" run --db memdb://serializable --workload blindw-pred --txns 10000 --range-max "$r" \
		--check-timeout 1s --out "$work/pred$r" >/dev/null 2>&1
	for l in strict-serializable strong-session-serializable serializable snapshot-isolation; do
		T "pred 1-$r rows $l" check --level "$l" "$work/pred$r/history.jsonl"
	done
done
for f in blindw_pred_100 blindw_pred_1000; do
	for l in strict-serializable serializable strong-snapshot-isolation snapshot-isolation; do
		T "$l $f" check --level "$l" "$B/vbox/$f"
	done
done

if echo online | grep -qE "$only"; then
	echo "# online service (issue #6)"
	for bin in "$I" ${against:+"$work/isovet-old"}; do
		[ -n "$against" ] && echo "[$([ "$bin" = "$I" ] && echo new || echo old)]"
		go run ./bench/serve -server-bin "$bin" -via http | grep -E 'via|applied|server|pipeline|lag'
		go run ./bench/serve -server-bin "$bin" -via nats | grep -E 'via|applied|server|pipeline|lag'
	done
fi
