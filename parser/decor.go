package parser

import (
	"strings"
)

// Decor is what -y and -yy print after a file descriptor or a pid, inside
// angle brackets: a path ("/etc/passwd"), a path with its device
// ("/dev/null<char 1:3>"), a socket ("TCP:[127.0.0.1:40->127.0.0.1:80]",
// "UNIX:[1234->1235]"), a pipe ("pipe:[1234]"), an anonymous inode
// ("anon_inode:[eventfd]"), or a process name with -e decode-pids=comm.
type Decor struct {
	Text string // between the outer brackets, escapes kept as strace wrote them
}

// Capture implements participle.Capture.
func (d *Decor) Capture(v []string) error {
	d.Text = v[0][1 : len(v[0])-1]
	return nil
}

// Path returns the file path of a path decoration, without any device
// suffix and with strace's escapes decoded, or "" for sockets, pipes and
// anonymous inodes.
func (d *Decor) Path() string {
	if d == nil || !strings.HasPrefix(d.Text, "/") {
		return ""
	}
	p := d.Text
	if i := strings.LastIndex(p, "<"); i >= 0 && strings.HasSuffix(p, ">") {
		p = p[:i]
	}
	b, err := Unquote(`"` + p + `"`)
	if err != nil {
		return p
	}
	return string(b)
}

// Device returns "char 1:3" or "block 8:1" for a device file, else "".
func (d *Decor) Device() string {
	if d == nil || !strings.HasSuffix(d.Text, ">") {
		return ""
	}
	i := strings.LastIndex(d.Text, "<")
	if i < 0 {
		return ""
	}
	return d.Text[i+1 : len(d.Text)-1]
}

// Kind returns the protocol or object kind of a non-path decoration
// ("TCP", "UNIX", "pipe", "anon_inode", "socket"), or "" for a path.
func (d *Decor) Kind() string {
	if d == nil || strings.HasPrefix(d.Text, "/") {
		return ""
	}
	if i := strings.Index(d.Text, ":["); i > 0 {
		return d.Text[:i]
	}
	return ""
}

// Detail returns what a socket, pipe or inode decoration holds between its
// square brackets ("127.0.0.1:40->127.0.0.1:80", "1234").
func (d *Decor) Detail() string {
	if d == nil {
		return ""
	}
	i := strings.Index(d.Text, ":[")
	if i < 0 || !strings.HasSuffix(d.Text, "]") {
		return ""
	}
	return d.Text[i+2 : len(d.Text)-1]
}
