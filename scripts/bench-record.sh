#!/usr/bin/env bash
# bench-record.sh: recording overhead of `faultline record` against strace,
# measured in one run on this machine, the runs of each workload
# alternating (untraced, strace, faultline, ...) so drift hits all alike.
#
#   scripts/bench-record.sh [-n REPS]
#
# Workloads: `true` (the fixed cost of starting to trace, 20 times as
# many runs), a syscall-heavy one (find over a large tree) and a
# compute-heavy one (gzip -9 of a 32 MiB file); each under
#   all calls:  strace -f -o /dev/null        vs  faultline record -f -o /dev/null
#   %file only: strace -f --seccomp-bpf -e trace=%file -o /dev/null
#                                             vs  faultline record -f -e trace=%file -o /dev/null
# It prints the median wall time of each, the ratios faultline/strace
# (time and overhead over untraced; target: both <= 1.0) and the median
# of the paired differences faultline - strace within each round, with
# its interquartile range: on a long compute-heavy run the two overheads
# are a few milliseconds against tens of milliseconds of run-to-run
# noise, and pairing the runs of one round cancels the slow drift.
#
# FAULTLINE=/path/to/binary skips the build. TREE=dir changes the tree.
set -euo pipefail

reps=5
while getopts n: o; do
	case $o in
	n) reps=$OPTARG ;;
	*) echo "usage: $0 [-n REPS]" >&2; exit 2 ;;
	esac
done

cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fl=${FAULTLINE:-}
if [ -z "$fl" ]; then
	# As make build builds it: the front end runs record itself.
	fl=$tmp/faultline
	CGO_ENABLED=0 go build -tags front -o "$fl" ./cmd/faultline
fi
command -v strace >/dev/null || { echo "bench-record: strace not installed" >&2; exit 2; }

tree=${TREE:-/usr/share}
big=$tmp/big.bin
# Compressible but not trivial input: binaries and text from /usr.
find /usr/lib /usr/bin -type f -size +100k 2>/dev/null | head -200 | xargs cat 2>/dev/null | head -c 32M >"$big" || true

# run NAME CMD... times one run, appending to $tmp/NAME. EPOCHREALTIME
# (bash 5) reads the clock without forking, so the timing adds nothing.
run() {
	local name=$1
	shift
	local t0=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 </dev/null || true
	local t1=$EPOCHREALTIME
	echo "$t1 - $t0" | bc -l >>"$tmp/$name"
}

median() { sort -g "$1" | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.4f", m}'; }

# paired A B: median and quartiles of A[i] - B[i] in ms, the runs of one
# round paired.
paired() {
	paste "$1" "$2" | awk '{print ($1 - $2) * 1000}' | sort -g |
		awk '{a[NR]=$1} END {q=int((NR+3)/4); printf "%+.1f [%+.1f, %+.1f]", a[int((NR+1)/2)], a[q], a[NR+1-q]}'
}

workload() {
	local label=$1
	shift
	local w=("$@")
	# Warm the caches once.
	"${w[@]}" >/dev/null 2>&1 </dev/null || true
	local n=$reps
	# A program that does nothing: the fixed cost of starting the tracer,
	# too small for a few runs to measure.
	[ "$label" = start ] && n=$((reps * 20))
	for ((i = 0; i < n; i++)); do
		run "$label.base" "${w[@]}"
		run "$label.strace" strace -f -o /dev/null -- "${w[@]}"
		run "$label.faultline" "$fl" record -f -o /dev/null -- "${w[@]}"
		run "$label.strace-file" strace -f --seccomp-bpf -e trace=%file -o /dev/null -- "${w[@]}"
		run "$label.faultline-file" "$fl" record -f -e trace=%file -o /dev/null -- "${w[@]}"
	done
}

workload start /bin/true
workload find find "$tree"
workload gzip gzip -9 -c "$big"

printf '\nmedian wall time of %d alternating runs (s); ratio = faultline/strace\n\n' "$reps"
printf '%-10s %-9s %9s %9s %9s %11s %15s  %s\n' workload filter untraced strace faultline "time ratio" "overhead ratio" "faultline-strace ms (IQR)"
for label in start find gzip; do
	base=$(median "$tmp/$label.base")
	for mode in all file; do
		sfx=""
		[ $mode = file ] && sfx="-file"
		s=$(median "$tmp/$label.strace$sfx")
		f=$(median "$tmp/$label.faultline$sfx")
		tr=$(echo "$f / $s" | bc -l)
		so=$(echo "$s - $base" | bc -l)
		fo=$(echo "$f - $base" | bc -l)
		if (($(echo "$so > 0.001" | bc -l))); then
			or=$(printf '%.2f' "$(echo "$fo / $so" | bc -l)")
		else
			or="n/a"
		fi
		flt="all"
		[ $mode = file ] && flt="%file"
		pd=$(paired "$tmp/$label.faultline$sfx" "$tmp/$label.strace$sfx")
		printf '%-10s %-9s %9s %9s %9s %11.2f %15s  %s\n' "$label" "$flt" "$base" "$s" "$f" "$tr" "$or" "$pd"
	done
done
