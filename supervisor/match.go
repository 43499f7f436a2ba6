package supervisor

import (
	"regexp"
	"strings"
	"sync"

	"github.com/faultline/faultline/parser"
	"github.com/faultline/faultline/tracer"
)

// Matching: a live call matches its line when the name and the identity
// arguments agree: paths, descriptors, flags, sizes. Addresses, pointers,
// times, pids and the bytes a write sends are not identity: they differ
// from run to run without the program doing anything different.
//
// Only the entry half is compared (the live call has not run yet when
// lockstep must decide whether to run it); the values are compared as
// text after normalising what cannot repeat, so every kind of value the
// printer knows is covered by one rule set.

var (
	reComment = lazyRegexp(`\s*/\*.*?\*/`)
	reHex     = lazyRegexp(`\b0x[0-9a-fA-F]+\b`)
	reNull    = lazyRegexp(`\bNULL\b`)
	reInode   = lazyRegexp(`:\[\d+\]`)
	reTime    = lazyRegexp(`\b(tv_sec|tv_nsec|tv_usec|st_[amc]time(_nsec)?|stx_[abcm]time)=(\{[^}]*\}|[^,}\]]+)`)
)

// lazyRegexp compiles expr on first use: every command links this
// package, and compiling at start-up is paid by those that never match.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// ignoredArgs are argument positions that are not identity for a call.
var ignoredArgs = map[string][]int{
	// data
	"write": {1}, "pwrite64": {1}, "writev": {1}, "pwritev": {1}, "pwritev2": {1},
	"send": {1}, "sendto": {1, 4}, "sendmsg": {1}, "sendmmsg": {1},
	// pids
	"kill": {0}, "tkill": {0}, "tgkill": {0, 1}, "wait4": {0}, "waitid": {1},
	"pidfd_open": {0}, "setpgid": {0, 1}, "getpgid": {0}, "prlimit64": {0},
	"sched_setaffinity": {0}, "sched_getaffinity": {0}, "process_vm_readv": {0},
	// random and time
	"getrandom": {0}, "futex": {0, 2, 3, 4}, "clock_nanosleep": {2, 3}, "nanosleep": {0, 1},
	"utimensat": {}, "ppoll": {2}, "pselect6": {4}, "select": {4}, "poll": {2},
	"epoll_wait": {3}, "epoll_pwait": {3}, "rt_sigtimedwait": {2},
}

// normArg is an argument's text with what cannot repeat blanked out.
func normArg(a *parser.Arg) string {
	var s string
	if a.Out != nil {
		// "[16 => 28]": only the in half is known at entry.
		cp := *a
		cp.Out = nil
		s = parser.Format(&cp)
	} else {
		s = parser.Format(a)
	}
	s = reComment().ReplaceAllString(s, "")
	s = reTime().ReplaceAllString(s, "$1=?")
	s = reHex().ReplaceAllString(s, "PTR")
	s = reNull().ReplaceAllString(s, "PTR")
	s = reInode().ReplaceAllString(s, ":[?]")
	return s
}

// matchCall reports whether the live entry half got agrees with the
// trace's call want, with the trace's descriptor numbers translated by
// liveFD (see fdmap.go); when not, it says why.
func matchCall(want *parser.Syscall, got *parser.Call, liveFD func(int64) int64) (bool, string) {
	if want.Name != got.Name {
		return false, "a different call"
	}
	skip := map[int]bool{}
	for _, i := range ignoredArgs[got.Name] {
		skip[i] = true
	}
	for _, i := range tracer.FDArgs(got.Name) {
		w, okW := intArg(want.Args, i)
		g, okG := intArg(got.Args, i)
		if !okW || !okG {
			continue // AT_FDCWD and the like compare as text
		}
		if liveFD(w) != g {
			return false, "argument " + itoa(i+1) + " differs: descriptor " + itoa(int(w)) + " is " + itoa(int(liveFD(w))) + " in this run, the program used " + itoa(int(g))
		}
		skip[i] = true
	}
	for i, g := range got.Args {
		if skip[i] || g == nil {
			continue
		}
		if i >= len(want.Args) || want.Args[i] == nil {
			return false, "more arguments than the line"
		}
		if w, gv := normArg(want.Args[i]), normArg(g); w != gv {
			if strings.HasSuffix(w, `"...`) || strings.HasSuffix(gv, `"...`) {
				// A string cut at -s: compare the common prefix.
				if strings.HasPrefix(gv, strings.TrimSuffix(w, "...")) || strings.HasPrefix(w, strings.TrimSuffix(gv, "...")) {
					continue
				}
			}
			return false, "argument " + itoa(i+1) + " differs: " + w + " vs " + gv
		}
	}
	return true, ""
}

// entryText prints a live call's entry half: "openat(AT_FDCWD, "a", ...".
func entryText(c *parser.Call) string {
	cp := &parser.Call{Name: c.Name, Args: c.Args, Pending: " <unfinished ...>"}
	return parser.Format(cp)
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 && i >= 0 {
		return digits[i : i+1]
	}
	var b []byte
	neg := i < 0
	if neg {
		i = -i
	}
	for i > 0 {
		b = append([]byte{digits[i%10]}, b...)
		i /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}
