#!/usr/bin/env bash
# bench/targets.sh: re-measures the checker and reader targets of the issues through the CLI,
# on the public histories in ../shared/data/bench (docs/benchmarks.md, "Third session").
# Each line: what, the load average before it, wall/CPU/peak RSS of the whole process
# (reading included), and the verdict line. Run it on a quiet machine; CPU time is the fairer
# figure when the machine is shared.
#
#   bench/targets.sh [SHARED_DATA_DIR]     (default: ../shared/data)
set -uo pipefail
cd "$(dirname "$0")/.."
data=${1:-../shared/data}
B=$data/bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/isovet" ./cmd/isovet || exit 1
I=$work/isovet

T() {
	local name=$1
	shift
	local load
	load=$(cut -d' ' -f1 /proc/loadavg)
	( ulimit -v 10000000; /usr/bin/time -f "%e s wall, %U+%S s CPU, %M KB" timeout 300 "$@" >"$work/out" 2>"$work/err" )
	local rc=$?
	printf '%-58s load %-5s %-40s exit %s  %s\n' "$name" "$load" "$(tail -n 1 "$work/err")" "$rc" \
		"$(grep -m1 -E 'checked by' "$work/out" | sed 's/, checked by [a-z]*//')"
}

echo "# readers"
go test ./format/native ./format/chronos -run '^$' -bench 'Read|Serial' -benchtime 2x | grep -E '^Benchmark.*1000000'
# 10k reads take 10 ms: two of them say little, so 100.
go test ./format/native ./format/chronos -run '^$' -bench '(Read|Serial)//txns=10000$' -benchtime 100x | grep -E '^Benchmark'

echo "# strict serializability on Vbox's interval histories (issue #4)"
for i in 1 2 3; do
	T "strict blindw_wr_10000 #$i" "$I" check --level strict-serializable "$B/vbox/blindw_wr_10000"
	T "strict blindw_wr_100000 #$i" "$I" check --level strict-serializable "$B/vbox/blindw_wr_100000"
done

echo "# VeriStrong's histories, SER and SI (issues #4, #5)"
for n in RH BL WH HD; do
	T "strong-session-serializable $n-10k" "$I" check --level strong-session-serializable "$B/veristrong-10k/$n-10k/hist-00000"
	T "strong-session-snapshot-isolation $n-10k" "$I" check --level strong-session-snapshot-isolation "$B/veristrong-10k/$n-10k/hist-00000"
done
for n in tpcc twitter rubis; do
	T "strong-session-serializable $n-10k" "$I" check --level strong-session-serializable "$B/veristrong-10k/$n-10k"
	T "strong-session-snapshot-isolation $n-10k" "$I" check --level strong-session-snapshot-isolation "$B/veristrong-10k/$n-10k"
done

echo "# Vbox's histories at every level"
for f in blindw_rh_10000 blindw_wh_10000 blindw_wr_10000 ctwitter_10000 blindw_wr_100000; do
	for l in serializable strong-session-serializable snapshot-isolation strong-session-snapshot-isolation strong-snapshot-isolation; do
		T "$l $f" "$I" check --level "$l" "$B/vbox/$f"
	done
done

echo "# BlindW-Pred, 10,000 transactions from memdb (issue #9)"
for r in 10 100 1000; do
	# The run's own check is cut short (its verdict does not matter here; the file does).
	"$I" run --db memdb://serializable --workload blindw-pred --txns 10000 --range-max "$r" \
		--check-timeout 1s --out "$work/pred$r" >/dev/null 2>&1
	for l in strict-serializable strong-session-serializable serializable snapshot-isolation; do
		T "pred 1-$r rows $l" "$I" check --level "$l" "$work/pred$r/history.jsonl"
	done
done
for f in blindw_pred_100 blindw_pred_1000; do
	for l in strict-serializable serializable strong-snapshot-isolation snapshot-isolation; do
		T "$l $f" "$I" check --level "$l" "$B/vbox/$f"
	done
done

echo "# online service (issue #6)"
"$I" bench-serve --via http | grep -E 'via|applied|server|pipeline|lag'
"$I" bench-serve --via nats | grep -E 'via|applied|server|pipeline|lag'
