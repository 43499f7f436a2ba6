#!/bin/sh
# check-clean.sh: fails when anything of faultline's is left on this
# machine: loop devices backed by its images, mounts under its runtime
# directory or its sandboxes, FUSE servers named faultline, live
# runtime directories. Run after the whole test suite (make test does).
set -u
root=/run/faultline
left=$( {
	losetup -a 2>/dev/null | grep -F "$root/" | sed 's/^/loop: /'
	grep -E "$root/|faultline-sandbox|^faultline " /proc/mounts | sed 's/^/mount: /'
	for d in "$root"/[0-9]*; do [ -d "$d" ] && echo "runtime dir: $d"; done
} )
if [ -n "$left" ]; then
	echo "check-clean: faultline left these behind:" >&2
	echo "$left" >&2
	exit 1
fi
echo "check-clean: nothing of faultline's is left (loop devices, mounts, runtime dirs)"
