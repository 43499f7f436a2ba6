#!/usr/bin/env bash
# bench-replay.sh: how long `faultline replay` of an unedited trace takes
# against recording the same run and against the untraced run, measured
# in one run, the three alternating so drift hits all alike.
#
#   scripts/bench-replay.sh [-n REPS]      (needs root: the sandbox)
#
# Subjects: wc, sort and gzip over a 2 MiB text file in a sandbox
# populated from one init directory. Each is recorded once (-f -y), then
# REPS times: untraced in a scratch copy of the init directory, recorded
# again with `faultline record --init`, and replayed. It prints the median
# wall times and the ratios replay/record and replay/untraced, and fails
# (exit 1) if a replay of an unedited trace diverges.
#
# FAULTLINE=/path/to/binary skips the build.
set -euo pipefail

reps=5
while getopts n: o; do
	case $o in
	n) reps=$OPTARG ;;
	*) echo "usage: $0 [-n REPS]" >&2; exit 2 ;;
	esac
done

cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/faultline-bench-replay.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

fl=${FAULTLINE:-}
if [ -z "$fl" ]; then
	fl=$tmp/faultline
	CGO_ENABLED=0 go build -o "$fl" ./cmd/faultline
fi

mkdir "$tmp/init"
# 2 MiB of varied text lines.
find /usr/share/doc /usr/include -type f -name '*.h' -o -type f -name 'copyright' 2>/dev/null |
	head -400 | xargs cat 2>/dev/null | head -c 2M >"$tmp/init/data" || true

now() { date +%s.%N; }
median() { sort -g "$1" | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}'; }

# timed NAME CMD...: one run appended to $tmp/NAME.
timed() {
	local name=$1
	shift
	local t0 t1
	t0=$(now)
	"$@" >/dev/null 2>"$tmp/err" </dev/null || { rc=$?; [ "$name" != "${name%.replay}" ] && { echo "bench-replay: $name failed ($rc):" >&2; cat "$tmp/err" >&2; exit 1; }; }
	t1=$(now)
	echo "$t1 - $t0" | bc -l >>"$tmp/$name"
}

# untraced CMD...: the command in a fresh copy of the init directory.
untraced() {
	rm -rf "$tmp/scratch" && cp -a "$tmp/init" "$tmp/scratch"
	(cd "$tmp/scratch" && "$@")
}

subject() {
	local label=$1
	shift
	local trace=$tmp/$label.strace
	(cd "$tmp" && "$fl" record -f -y --init init -o "$trace" -- "$@" >/dev/null)
	for ((i = 0; i < reps; i++)); do
		timed "$label.base" untraced "$@"
		timed "$label.record" sh -c 'cd "$1" && shift && exec "$@"' _ "$tmp" "$fl" record -f -y --init init -o "$tmp/again.strace" -- "$@"
		timed "$label.replay" "$fl" replay "$trace"
	done
}

subject wc wc -l data
subject sort sort data -o sorted
subject gzip gzip -k data

printf '\nmedian wall time of %d alternating runs (s)\n\n' "$reps"
printf '%-6s %9s %9s %9s %14s %16s\n' subject untraced record replay replay/record replay/untraced
for label in wc sort gzip; do
	b=$(median "$tmp/$label.base")
	r=$(median "$tmp/$label.record")
	p=$(median "$tmp/$label.replay")
	printf '%-6s %9s %9s %9s %14.2f %16.1f\n' "$label" "$b" "$r" "$p" "$(echo "$p / $r" | bc -l)" "$(echo "$p / $b" | bc -l)"
done
