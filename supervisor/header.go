package supervisor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/faultline/faultline/parser"
	"github.com/faultline/faultline/tracer"
)

// Header is what a faultline trace's '#' header says about the world the
// program was recorded in: everything replay needs to start it again.
type Header struct {
	Command []string // argv
	Path    string   // the program as resolved at recording
	Cwd     string
	Env     []string // nil when the trace has no "# env:" lines
	Umask   int      // -1 when unknown

	Follow, Verbose, DecodeFDs bool
	StringLimit                int
	Filter                     string // -e trace= spec; "" for all calls

	Sandbox *Sandbox // nil when recorded outside a sandbox
	Anomaly string   // "# anomaly: NAME", written by faultline mutate
}

// Header comment keys the supervisor writes (after the tracer's own).
const (
	keySandboxFS    = "sandbox-fs"
	keySandboxDir   = "sandbox-dir"
	keySandboxInit  = "sandbox-init"
	keySandboxSetup = "sandbox-setup"
	keySandboxUser  = "sandbox-user"
	keyAnomaly      = "anomaly"
)

// ParseHeader reads the header comments at the top of a trace (it stops
// at the first line that is not a comment). A trace with no header gives
// a zero Header with Umask -1.
func ParseHeader(lines []*parser.Line) (*Header, error) {
	h := &Header{Umask: -1, StringLimit: 32}
	var sb Sandbox
	sandbox := false
	for _, l := range lines {
		c, ok := l.Body.(*parser.Comment)
		if !ok {
			break
		}
		text := strings.TrimSpace(strings.TrimPrefix(c.Text, "#"))
		key, val, ok := strings.Cut(text, ": ")
		if !ok {
			continue
		}
		unq := func() (string, error) {
			s, err := strconv.Unquote(val)
			if err != nil {
				return "", fmt.Errorf("line %d: %s: %w", l.Pos.Line, key, err)
			}
			return s, nil
		}
		var err error
		switch key {
		case "command":
			h.Command, err = shellSplit(val)
			if err != nil {
				return nil, fmt.Errorf("line %d: command: %w", l.Pos.Line, err)
			}
		case "path":
			h.Path = val
		case "cwd":
			h.Cwd = val
		case "env":
			e, err := unq()
			if err != nil {
				return nil, err
			}
			h.Env = append(h.Env, e)
		case "identity":
			for _, f := range strings.Fields(val) {
				if v, ok := strings.CutPrefix(f, "umask="); ok {
					if n, err := strconv.ParseUint(v, 8, 32); err == nil {
						h.Umask = int(n)
					}
				}
			}
		case "options":
			f := strings.Fields(val)
			for i := 0; i < len(f); i++ {
				switch f[i] {
				case "-f":
					h.Follow = true
				case "-v":
					h.Verbose = true
				case "-y":
					h.DecodeFDs = true
				case "-s":
					if i+1 < len(f) {
						h.StringLimit, _ = strconv.Atoi(f[i+1])
						i++
					}
				}
			}
		case "traced":
			if spec, _, ok := strings.Cut(val, " (filtered"); ok {
				h.Filter = spec
			}
		case keySandboxFS:
			sandbox = true
			sb.FS = val
		case keySandboxDir:
			sandbox = true
			if sb.Dir, err = unq(); err != nil {
				return nil, err
			}
		case keySandboxInit:
			sandbox = true
			if sb.Init, err = unq(); err != nil {
				return nil, err
			}
		case keySandboxSetup:
			sandbox = true
			if sb.Setup, err = unq(); err != nil {
				return nil, err
			}
		case keySandboxUser:
			sandbox = true
			if sb.User, err = unq(); err != nil {
				return nil, err
			}
		case keyAnomaly:
			h.Anomaly = strings.TrimSpace(val)
		}
	}
	if sandbox {
		if sb.Dir == "" {
			sb.Dir = h.Cwd
		}
		sb.Umask = h.Umask
		h.Sandbox = &sb
	}
	return h, nil
}

// TracerFilter is the header's -e trace= filter, nil for all calls.
func (h *Header) TracerFilter() (*tracer.Filter, error) {
	if h.Filter == "" {
		return nil, nil
	}
	return tracer.ParseFilter(h.Filter)
}

// AnomalyLine is the header comment naming the anomaly a mutation wrote
// ("anomaly: rename-exdev"), for faultline mutate to insert.
func AnomalyLine(name string) string { return keyAnomaly + ": " + name }

// headerLines describes the sandbox for the trace header (without "# ").
func (s *Sandbox) headerLines() []string {
	out := []string{
		keySandboxFS + ": " + s.fsName(),
		keySandboxDir + ": " + strconv.Quote(s.Dir),
	}
	if s.Init != "" {
		out = append(out, keySandboxInit+": "+strconv.Quote(s.Init))
	}
	if s.Setup != "" {
		out = append(out, keySandboxSetup+": "+strconv.Quote(s.Setup))
	}
	if s.User != "" {
		out = append(out, keySandboxUser+": "+strconv.Quote(s.User))
	}
	return out
}

// shellSplit undoes the tracer's shell quoting of the command line:
// words separated by spaces, each bare or in single quotes, with '\”
// for a quote inside.
func shellSplit(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord, inQuote := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote:
			if c == '\'' {
				inQuote = false
			} else {
				cur.WriteByte(c)
			}
		case c == '\'':
			inQuote, inWord = true, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
