package mutators

import "github.com/faultline/faultline/parser"

// fdTable follows which path each descriptor of each process names, from
// the opens, dups and closes of the trace itself, so that a trace recorded
// without -y can still be selected by path on its read, write, fsync and
// close lines. It is a best effort over what the trace shows: descriptors
// inherited from outside the trace, or passed over sockets, stay unknown.
type fdTable map[int]map[int64]string

func (t fdTable) of(pid int) map[int64]string {
	m := t[pid]
	if m == nil {
		m = map[int64]string{}
		t[pid] = m
	}
	return m
}

// paths returns the known paths of the call's descriptor arguments, as the
// process's table stood before the call.
func (t fdTable) paths(c *Call) []string {
	m := t[c.Pid]
	if m == nil {
		return nil
	}
	var out []string
	for _, fd := range c.FDs() {
		if p, ok := m[fd]; ok {
			out = append(out, p)
		}
	}
	return out
}

// update applies the call's effect on the descriptor table.
func (t fdTable) update(c *Call) {
	if !c.Succeeded() {
		return
	}
	ret, ok := c.ResultInt()
	if !ok {
		return
	}
	m := t.of(c.Pid)
	switch c.Name {
	case "open", "openat", "openat2", "creat":
		if _, resolved := c.PathArgs(); len(resolved) > 0 {
			m[ret] = resolved[0]
		} else {
			delete(m, ret)
		}
	case "close":
		if fds := c.FDs(); len(fds) == 1 {
			delete(m, fds[0])
		}
	case "dup", "dup2", "dup3":
		if fds := c.FDs(); len(fds) > 0 {
			if p, ok := m[fds[0]]; ok {
				m[ret] = p
			} else {
				delete(m, ret)
			}
		}
	case "fcntl", "fcntl64":
		if len(c.Args) > 1 && c.Args[1].Value != nil {
			if id, ok := c.Args[1].Value.Head.(*parser.Ident); ok && (id.Name == "F_DUPFD" || id.Name == "F_DUPFD_CLOEXEC") {
				if fds := c.FDs(); len(fds) > 0 {
					if p, ok := m[fds[0]]; ok {
						m[ret] = p
					}
				}
			}
		}
	case "clone", "clone3", "fork", "vfork":
		// The child starts with a copy of the parent's table (shared for
		// threads, which the copy approximates until one of them changes it).
		if ret > 0 {
			child := make(map[int64]string, len(m))
			for k, v := range m {
				child[k] = v
			}
			t[int(ret)] = child
		}
	}
}
