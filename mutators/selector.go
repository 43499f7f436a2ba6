package mutators

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Selector picks the calls a mutation applies to. Every filter that is set
// must match; Nth then picks one of the calls that pass the filters and the
// mutation's own test (the n-th, counting from 1 in trace order).
//
// Textual form (ParseSelector), comma-separated key=value pairs:
//
//	syscall=NAME[|NAME...]   call names or strace classes: %file %desc
//	                         %process %network %memory %signal %stat
//	path=GLOB                a path argument or a -y fd path; a glob
//	                         without '/' matches the base name, one with
//	                         '/' the whole path (resolved to absolute
//	                         where the trace allows); '*' stops at '/'
//	fd=N                     a descriptor argument
//	pid=N                    the process (the line's pid prefix)
//	nth=N                    the N-th call that passes everything else
//	all                      every call (the same as no selector)
//
// Example: --select 'syscall=rename|renameat2,path=*.tmp,nth=2'.
type Selector struct {
	Syscalls []string // names and %classes; empty: any
	Path     string   // glob; "": any
	FD       *int64   // nil: any
	Pid      *int     // nil: any
	Nth      int      // 0: every match
	Text     string   // as written, for messages
}

// ParseSelector reads the textual form. Errors name the bad key or value.
func ParseSelector(text string) (Selector, error) {
	s := Selector{Text: text}
	if strings.TrimSpace(text) == "" {
		return s, fmt.Errorf("selector is empty (use \"all\" to select every call)")
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(text, ",") {
		part = strings.TrimSpace(part)
		key, val, hasVal := strings.Cut(part, "=")
		key = strings.TrimSpace(key)
		val = strings.TrimSpace(val)
		if seen[key] {
			return s, fmt.Errorf("selector %q: key %q given twice", text, key)
		}
		seen[key] = true
		if key == "all" {
			if hasVal {
				return s, fmt.Errorf("selector %q: \"all\" takes no value", text)
			}
			continue
		}
		if !hasVal || val == "" {
			return s, fmt.Errorf("selector %q: key %q needs a value (%s=...)", text, key, key)
		}
		switch key {
		case "syscall":
			for _, n := range strings.Split(val, "|") {
				n = strings.TrimSpace(n)
				if strings.HasPrefix(n, "%") && !knownClass(n) {
					return s, fmt.Errorf("selector %q: unknown class %q (want one of %%%s)",
						text, n, strings.Join(Classes(), " %"))
				}
				if n == "" || strings.ContainsAny(n, " \t=") {
					return s, fmt.Errorf("selector %q: bad syscall name %q", text, n)
				}
				s.Syscalls = append(s.Syscalls, n)
			}
		case "path":
			if _, err := path.Match(val, ""); err != nil {
				return s, fmt.Errorf("selector %q: bad glob %q: %w", text, val, err)
			}
			s.Path = val
		case "fd":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return s, fmt.Errorf("selector %q: fd=%q is not a number", text, val)
			}
			s.FD = &n
		case "pid":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return s, fmt.Errorf("selector %q: pid=%q is not a process id", text, val)
			}
			s.Pid = &n
		case "nth":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return s, fmt.Errorf("selector %q: nth=%q is not a positive number (nth counts from 1)", text, val)
			}
			s.Nth = n
		default:
			return s, fmt.Errorf("selector %q: unknown key %q (want syscall, path, fd, pid, nth or all)", text, key)
		}
	}
	return s, nil
}

func knownClass(c string) bool {
	c = strings.TrimLeft(c, "%")
	for _, k := range Classes() {
		if k == c {
			return true
		}
	}
	return false
}

// String is the selector as written, or a canonical form when built in code.
func (s Selector) String() string {
	if s.Text != "" {
		return s.Text
	}
	var parts []string
	if len(s.Syscalls) > 0 {
		parts = append(parts, "syscall="+strings.Join(s.Syscalls, "|"))
	}
	if s.Path != "" {
		parts = append(parts, "path="+s.Path)
	}
	if s.FD != nil {
		parts = append(parts, "fd="+strconv.FormatInt(*s.FD, 10))
	}
	if s.Pid != nil {
		parts = append(parts, "pid="+strconv.Itoa(*s.Pid))
	}
	if s.Nth > 0 {
		parts = append(parts, "nth="+strconv.Itoa(s.Nth))
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, ",")
}

// Matches reports whether the call passes the selector's filters (all but
// Nth, which Apply counts).
func (s Selector) Matches(c *Call) bool {
	if len(s.Syscalls) > 0 && !matchName(s.Syscalls, c.Name) {
		return false
	}
	if s.Pid != nil && c.Pid != *s.Pid {
		return false
	}
	if s.FD != nil && !containsInt(c.FDs(), *s.FD) {
		return false
	}
	if s.Path != "" && !matchAnyPath(s.Path, c) {
		return false
	}
	return true
}

func matchName(names []string, name string) bool {
	for _, n := range names {
		if n == name || (strings.HasPrefix(n, "%") && InClass(n, name)) {
			return true
		}
	}
	return false
}

func containsInt(xs []int64, x int64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func matchAnyPath(glob string, c *Call) bool {
	written, resolved := c.PathArgs()
	cands := append(append(written, resolved...), c.FDPaths()...)
	for _, p := range cands {
		if MatchPath(glob, p) {
			return true
		}
	}
	return false
}

// MatchPath matches a selector glob against a path: the base name when the
// glob has no '/', else the whole path.
func MatchPath(glob, p string) bool {
	if !strings.Contains(glob, "/") {
		p = path.Base(p)
	}
	ok, _ := path.Match(glob, p)
	return ok
}
