package supervisor

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// What lockstep needs to know of a live thread that ptrace does not say:
// its thread group and parent (to map it to a trace pid and a descriptor
// table) and which signals it catches (to tell a handler run in the
// trace). All of it is in /proc/TID/status.

// procStatus returns the values of the given keys of /proc/TID/status
// ("" for a key that is missing or a thread that is gone).
func procStatus(tid int, keys ...string) []string {
	out := make([]string, len(keys))
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return out
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		for i, want := range keys {
			if k == want {
				out[i] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

// procTgid is the thread group a live thread belongs to, and its parent.
func procTgid(tid int) (tgid, ppid int) {
	v := procStatus(tid, "Tgid", "PPid")
	tgid, err := strconv.Atoi(v[0])
	if err != nil {
		tgid = tid
	}
	ppid, _ = strconv.Atoi(v[1])
	return tgid, ppid
}

// catches reports whether tid has a handler for sig.
func catches(tid int, sig unix.Signal) bool {
	mask, err := strconv.ParseUint(procStatus(tid, "SigCgt")[0], 16, 64)
	return err == nil && sig >= 1 && sig <= 64 && mask&(1<<(uint(sig)-1)) != 0
}
