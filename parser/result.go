package parser

import "strings"

// Failed reports whether the call returned an error: "= -1 ENOENT (...)"
// or "= ? ERESTARTSYS (...)".
func (r *Result) Failed() bool { return r != nil && r.Outcome.Errno != "" }

// ErrText is the message after the errno name ("No such file or
// directory"), or "".
func (r *Result) ErrText() string {
	if !r.Failed() || len(r.Outcome.Notes) == 0 {
		return ""
	}
	n := r.Outcome.Notes[0]
	return n[1 : len(n)-1]
}

// Injected reports whether the result carries strace's or faultline's
// tampering marker, "(INJECTED)" or "(INJECTED: ...)".
func (r *Result) Injected() bool {
	for _, n := range r.Outcome.Notes {
		if strings.HasPrefix(n, "(INJECTED") {
			return true
		}
	}
	return false
}

// Int returns the result value as a number, and false for "?" and
// non-numeric values.
func (r *Result) Int() (int64, bool) {
	if r == nil || r.Value == nil || len(r.Value.Tail) > 0 {
		return 0, false
	}
	i, ok := r.Value.Head.(*Int)
	if !ok {
		return 0, false
	}
	return i.Int64()
}
