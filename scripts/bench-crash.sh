#!/bin/sh
# End-to-end time of `faultline crash` on the C³ subjects (k=2, default
# amplification, unamplified comparison on), each run RUNS times; the
# figure is the median. Baseline, measured in the same run: the same
# command under `strace -f -o /dev/null` in a scratch dir (what merely
# tracing the program costs), so the ratio says how much more the whole
# crash check costs than one traced run. Target: under 10 s per subject.
#
# Usage: scripts/bench-crash.sh [RUNS]   (needs root, gcc, jq, strace)
set -eu
cd "$(dirname "$0")/.."
runs=${1:-3}
work=$(mktemp -d /tmp/faultline-bench-crash.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

CGO_ENABLED=0 go build -o "$work/faultline" ./cmd/faultline
gcc -O2 -o "$work/save" crash/testdata/save.c

lines='i=0; while [ $i -lt 200 ]; do echo "line $(( (i * 7919) % 200 )) of the unsorted input"; i=$((i+1)); done > data'
doc='i=0; while [ $i -lt 300 ]; do echo "old version of the document $i"; i=$((i+1)); done > doc'

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# bench NAME SETUP FLAGS -- CMD...
bench() {
	name=$1 setup=$2 flags=$3
	shift 4
	: >"$work/times"
	: >"$work/base"
	for _ in $(seq "$runs"); do
		rc=0
		t0=$(date +%s.%N)
		# shellcheck disable=SC2086
		"$work/faultline" crash --json --setup "$setup" $flags -- "$@" >"$work/report.json" 2>"$work/err" || rc=$?
		t1=$(date +%s.%N)
		if [ "$rc" -eq 2 ]; then
			echo "$name: faultline failed:" >&2
			cat "$work/err" >&2
			exit 2
		fi
		echo "$t1 - $t0" | bc -l >>"$work/times"

		rm -rf "$work/scratch" && mkdir "$work/scratch"
		(cd "$work/scratch" && sh -c "$setup")
		t0=$(date +%s.%N)
		(cd "$work/scratch" && strace -f -o /dev/null "$@" >/dev/null 2>&1) || true
		t1=$(date +%s.%N)
		echo "$t1 - $t0" | bc -l >>"$work/base"
	done
	total=$(median <"$work/times")
	base=$(median <"$work/base")
	jq -r --arg name "$name" --arg total "$total" --arg base "$base" '
		[$name, .verdict, (.expected_snapshots|tostring), (.crash_sites|tostring),
		 (.inconsistent_sites|tostring), (.findings|length|tostring),
		 ($total|tonumber*100|round/100|tostring),
		 (.stage_seconds.profile // 0 |.*100|round/100|tostring),
		 (.stage_seconds.record // 0 |.*100|round/100|tostring),
		 (."stage_seconds"."crash sites" // 0 |.*100|round/100|tostring),
		 (.crash_sites / ((."stage_seconds"."crash sites") // 1) | round | tostring),
		 ($total|tonumber / ($base|tonumber) | round | tostring)]
		| @tsv' "$work/report.json"
}

printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' subject verdict ES sites bad groups total_s profile_s record_s sites_s sites_per_s x_strace
{
	bench "sort -o (amplified)" "$lines" "" -- sort data -o data
	bench "sort -o (--no-amplify)" "$lines" "--no-amplify" -- sort data -o data
	bench "gzip" "$lines" "" -- gzip data
	bench "gzip --synchronous" "$lines" "" -- gzip --synchronous data
	bench "save: tmp+fsync+rename" "$doc" "" -- "$work/save" doc fsync 12000
	bench "save: tmp+rename, no fsync" "$doc" "" -- "$work/save" doc nofsync 12000
	bench "sort -o --kill-points" "$lines" "--no-amplify --kill-points" -- sort data -o data
} | column -t -s "$(printf '\t')"
echo "median of $runs runs each; total_s is wall time of the whole command, x_strace its ratio to one strace -f run of the program; target < 10 s"
