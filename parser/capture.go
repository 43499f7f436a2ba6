package parser

import (
	"strconv"
	"strings"
)

// Prefix is what may stand before a line's body: the pid and the -t/-tt/
// -ttt/-r timestamp.
type Prefix struct {
	Pid  Pid
	Time string
}

// Pid is the process prefix of a line: "1234  " as strace -f -o writes it,
// or "[pid  1234] " as it writes to a terminal. The zero Pid is no prefix.
type Pid struct {
	N       int
	Bracket bool
}

func parsePid(s string) (Pid, error) {
	p := Pid{Bracket: strings.HasPrefix(s, "[")}
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, "[pid"), "]"))
	n, err := strconv.Atoi(s)
	p.N = n
	return p, err
}

// Pending is the marker of a call that another thread's line interrupted:
// "<unfinished ...>", or "<detached ...>" when strace let go of the process.
// The comma strace prints before the marker is part of it.
type Pending string

// Unfinished reports whether the call was split (either marker).
func (p Pending) Unfinished() bool { return p != "" }

// Detached reports whether strace detached while the call was in flight.
func (p Pending) Detached() bool { return strings.HasSuffix(string(p), "<detached ...>") }

// Comma reports whether the marker follows an argument separator.
func (p Pending) Comma() bool { return strings.HasPrefix(string(p), ",") }

// Key is the name before '=' in a named argument or struct member.
type Key string

// ResumedName is the call name in "<... read resumed>".
type ResumedName string

// Capture implements participle.Capture.
func (r *ResumedName) Capture(v []string) error {
	s := strings.TrimPrefix(v[0], "<... ")
	*r = ResumedName(strings.TrimSuffix(s, " resumed>"))
	return nil
}
