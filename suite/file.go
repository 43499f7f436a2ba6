package suite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/faultline/faultline/anomalies"
	"github.com/faultline/faultline/mutators"
)

// Suite is a loaded suite file: the program, its world, and its checks in
// file order. Paths in it are absolute.
type Suite struct {
	File    string // the suite file, as given
	Name    string
	Program Program
	// Trace, when set, is a recorded trace to use instead of recording
	// afresh (a pinned recording: patches then apply exactly).
	Trace  string
	Checks []*Check
}

// Program is what a suite runs and the world it runs in.
type Program struct {
	Command []string
	Env     []string // extra KEY=VALUE; the sandbox's defaults otherwise
	Init    string   // directory copied into the sandbox, absolute; or ""
	Setup   string   // shell command run in the sandbox before the program; or ""
	FS      string   // file system of the sandbox ("" = the engine's default, ext4)
	User    string   // run the program as this user; "" = root
	Timeout time.Duration
}

// Check is one check of a suite with its expected outcome.
type Check struct {
	Name   string
	Kind   Kind
	Expect Outcome // "" in an audit: anything is observed, nothing expected

	Anomaly string              // KindAnomaly: catalogue name
	Select  []mutators.Selector // KindAnomaly: selectors; none = every matching call
	Patch   string              // KindPatch: the patch file, absolute
	Crash   CrashOptions        // KindCrash

	// Site is, in an audit, the recorded line the check changes, for
	// the report ("read(3</data/f>, ...)" at line 42).
	Site *SiteInfo
}

// CrashOptions are the crash check's knobs (faultline crash's flags).
type CrashOptions struct {
	K          int    // writes dropped per epoch at most; 0 = the default (2)
	FS         string // file system; "" = the sandbox's
	Amplify    string // "on" (default), "off", "wide"
	Tolerance  int    // bytes; 0 = oracle.DefaultTolerance
	KillPoints bool   // also judge kills at each metadata call
}

// The TOML model. Field names are the keys a person writes; every key
// not here is an error naming its line.
type fileModel struct {
	Name    string            `toml:"name,omitempty"`
	Command []string          `toml:"command"`
	Env     []string          `toml:"env,omitempty"`
	Timeout string            `toml:"timeout,omitempty"`
	Trace   string            `toml:"trace,omitempty"`
	Sandbox sandboxModel      `toml:"sandbox,omitempty"`
	Crash   *crashModel       `toml:"crash,omitempty"`
	Anomaly []anomalyModel    `toml:"anomaly,omitempty"`
	Patch   []patchModel      `toml:"patch,omitempty"`
	Expect  map[string]string `toml:"expect,omitempty"`
}

type sandboxModel struct {
	Init  string `toml:"init,omitempty"`
	Setup string `toml:"setup,omitempty"`
	FS    string `toml:"fs,omitempty"`
	User  string `toml:"user,omitempty"`
}

type crashModel struct {
	Expect     string `toml:"expect"`
	K          int    `toml:"k,omitempty"`
	FS         string `toml:"fs,omitempty"`
	Amplify    string `toml:"amplify,omitempty"`
	Tolerance  int    `toml:"tolerance,omitempty"`
	KillPoints bool   `toml:"kill-points,omitempty"`
}

type anomalyModel struct {
	Name   string   `toml:"name"`
	ID     string   `toml:"id,omitempty"`
	Select []string `toml:"select,omitempty"`
	Expect string   `toml:"expect"`
}

type patchModel struct {
	File   string `toml:"file"`
	ID     string `toml:"id,omitempty"`
	Expect string `toml:"expect"`
}

// Load reads and validates a suite file.
func Load(path string) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading suite: %w", err)
	}
	return Parse(path, data)
}

// FileError is a mistake in a suite file: where, which key, what.
type FileError struct {
	File string
	Line int    // 0 when unknown
	Col  int    // 0 when unknown
	Key  string // dotted key at fault ("anomaly[2].expect"), or ""
	Msg  string
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// FileErrors is every mistake found in one file, so a person fixes them
// in one go.
type FileErrors []*FileError

func (es FileErrors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Parse reads a suite from data; file names it in errors and anchors its
// relative paths.
func Parse(file string, data []byte) (*Suite, error) {
	var m fileModel
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, decodeError(file, m, err)
	}
	pos := indexPositions(data)
	v := &validator{file: file, pos: pos, dir: filepath.Dir(file)}
	s := v.suite(&m)
	if len(v.errs) > 0 {
		return nil, v.errs
	}
	return s, nil
}

// decodeError turns go-toml's errors into FileErrors with the key at fault.
func decodeError(file string, m fileModel, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		var es FileErrors
		for i := range strict.Errors {
			de := &strict.Errors[i]
			row, col := de.Position()
			key := keyString(de.Key())
			es = append(es, &FileError{File: file, Line: row, Col: col, Key: key,
				Msg: "unknown key" + knownKeys(de.Key())})
		}
		return es
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return FileErrors{{File: file, Line: row, Col: col, Key: keyString(de.Key()), Msg: plainTypeError(de.Error())}}
	}
	return FileErrors{{File: file, Msg: err.Error()}}
}

var typeError = lazyRegexp(`cannot decode TOML (\w+) into (struct field \S+ of type|a Go value of type) (\S+)`)

// plainTypeError says what a key takes in TOML's words rather than Go's.
func plainTypeError(msg string) string {
	msg = strings.TrimPrefix(msg, "toml: ")
	m := typeError().FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want := map[string]string{
		"string": "a string", "[]string": "an array of strings", "int": "an integer", "bool": "true or false",
		"map[string]string": "a table of strings",
	}[m[3]]
	if want == "" {
		want = "a table"
	}
	return fmt.Sprintf("a TOML %s is not what this key takes: want %s", m[1], want)
}

func keyString(k toml.Key) string { return strings.Join(k, ".") }

// knownKeys says which keys the table holding an unknown key accepts.
func knownKeys(k toml.Key) string {
	table := map[string][]string{
		"":        {"name", "command", "env", "timeout", "trace", "[sandbox]", "[crash]", "[[anomaly]]", "[[patch]]", "[expect]"},
		"sandbox": {"init", "setup", "fs", "user"},
		"crash":   {"expect", "k", "fs", "amplify", "tolerance", "kill-points"},
		"anomaly": {"name", "id", "select", "expect"},
		"patch":   {"file", "id", "expect"},
	}
	parent := ""
	if len(k) > 1 {
		parent = k[0]
	}
	keys, ok := table[parent]
	if !ok {
		return ""
	}
	return " (want " + strings.Join(keys, ", ") + ")"
}

// validator checks the decoded model and builds the Suite, collecting
// every mistake with its line.
type validator struct {
	file string
	dir  string
	pos  positions
	errs FileErrors
}

func (v *validator) fail(key, format string, args ...any) {
	line := v.pos.line(key)
	v.errs = append(v.errs, &FileError{File: v.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(v.dir, p)
}

func (v *validator) suite(m *fileModel) *Suite {
	s := &Suite{File: v.file, Name: m.Name}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(v.file), filepath.Ext(v.file))
	}
	if len(m.Command) == 0 || m.Command[0] == "" {
		v.fail("command", "the program to run is missing (command = [\"prog\", \"arg\", ...])")
	}
	s.Program = Program{
		Command: m.Command,
		Env:     m.Env,
		Init:    v.abs(m.Sandbox.Init),
		Setup:   m.Sandbox.Setup,
		FS:      m.Sandbox.FS,
		User:    m.Sandbox.User,
	}
	for i, e := range m.Env {
		if !strings.Contains(e, "=") {
			v.fail(fmt.Sprintf("env[%d]", i+1), "%q is not KEY=VALUE", e)
		}
	}
	if m.Timeout != "" {
		d, err := time.ParseDuration(m.Timeout)
		if err != nil || d <= 0 {
			v.fail("timeout", "%q is not a duration (like \"30s\" or \"2m\")", m.Timeout)
		}
		s.Program.Timeout = d
	}
	if m.Sandbox.Init != "" && m.Sandbox.Setup != "" {
		v.fail("sandbox.setup", "give either init or setup, not both")
	}
	if m.Sandbox.Init != "" {
		if st, err := os.Stat(s.Program.Init); err != nil || !st.IsDir() {
			v.fail("sandbox.init", "%s is not a directory", s.Program.Init)
		}
	}
	v.fsName("sandbox.fs", m.Sandbox.FS)
	if m.Trace != "" {
		s.Trace = v.abs(m.Trace)
		if _, err := os.Stat(s.Trace); err != nil {
			v.fail("trace", "%v", err)
		}
	}

	names := map[string]string{} // check name -> key that defined it
	add := func(c *Check, key string) {
		if prev, dup := names[c.Name]; dup {
			v.fail(key, "a second check named %q (the first is %s); give one an id", c.Name, prev)
			return
		}
		names[c.Name] = key
		s.Checks = append(s.Checks, c)
	}
	if m.Crash != nil {
		if c := v.crash(m.Crash, "crash.expect"); c != nil {
			add(c, "crash")
		}
	}
	for i := range m.Anomaly {
		key := fmt.Sprintf("anomaly[%d]", i+1)
		if c := v.anomaly(key, &m.Anomaly[i]); c != nil {
			add(c, key)
		}
	}
	for i := range m.Patch {
		key := fmt.Sprintf("patch[%d]", i+1)
		if c := v.patch(key, &m.Patch[i]); c != nil {
			add(c, key)
		}
	}
	// The short form: [expect] rename-exdev = "recovered", crash = ...,
	// "edit.patch" = "handled-error".
	keys := make([]string, 0, len(m.Expect))
	for k := range m.Expect {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return v.pos.line("expect."+a) - v.pos.line("expect."+b) })
	for _, k := range keys {
		key := "expect." + k
		var c *Check
		switch {
		case k == "crash":
			if m.Crash != nil {
				v.fail(key, "crash is given in [crash] already")
				continue
			}
			c = v.crash(&crashModel{Expect: m.Expect[k]}, key)
		case strings.HasSuffix(k, ".patch") || strings.HasSuffix(k, ".diff"):
			c = v.patchAt(key, key, &patchModel{File: k, Expect: m.Expect[k]})
		default:
			c = v.anomalyAt(key, key, &anomalyModel{Name: k, Expect: m.Expect[k]})
		}
		if c != nil {
			add(c, key)
		}
	}
	if len(s.Checks) == 0 && len(v.errs) == 0 {
		v.fail("", "no checks: add [crash], [[anomaly]], [[patch]] or an [expect] table")
	}
	return s
}

func (v *validator) fsName(key, fs string) {
	switch fs {
	case "", "ext4", "xfs", "btrfs":
	default:
		v.fail(key, "%q is not a file system faultline can record (want ext4, xfs or btrfs)", fs)
	}
}

func (v *validator) crash(m *crashModel, expectKey string) *Check {
	key := "crash"
	o, err := parseOutcome(KindCrash, m.Expect)
	if err != nil {
		v.fail(expectKey, "%v", err)
		return nil
	}
	switch m.Amplify {
	case "", "on", "off", "wide":
	default:
		v.fail(key+".amplify", "%q: want on, off or wide", m.Amplify)
	}
	if m.K < 0 {
		v.fail(key+".k", "%d: the number of dropped writes cannot be negative", m.K)
	}
	if m.Tolerance < 0 {
		v.fail(key+".tolerance", "%d: the tolerance cannot be negative", m.Tolerance)
	}
	v.fsName(key+".fs", m.FS)
	amp := m.Amplify
	if amp == "" {
		amp = "on"
	}
	return &Check{Name: "crash", Kind: KindCrash, Expect: o,
		Crash: CrashOptions{K: m.K, FS: m.FS, Amplify: amp, Tolerance: m.Tolerance, KillPoints: m.KillPoints}}
}

func (v *validator) anomaly(key string, m *anomalyModel) *Check {
	return v.anomalyAt(key+".name", key+".expect", m)
}

func (v *validator) anomalyAt(nameKey, expectKey string, m *anomalyModel) *Check {
	ok := true
	if m.Name == "" {
		v.fail(nameKey, "the anomaly's name is missing (see 'faultline anomalies')")
		return nil
	}
	if _, found := anomalies.Lookup(m.Name); !found {
		msg := fmt.Sprintf("no anomaly named %q", m.Name)
		if s := anomalies.Suggest(m.Name); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, ", ") + "?"
		} else {
			msg += " (list them with 'faultline anomalies')"
		}
		v.fail(nameKey, "%s", msg)
		ok = false
	}
	o, err := parseOutcome(KindAnomaly, m.Expect)
	if err != nil {
		v.fail(expectKey, "%v", err)
		ok = false
	}
	c := &Check{Name: m.Name, Kind: KindAnomaly, Expect: o, Anomaly: m.Name}
	base := strings.TrimSuffix(nameKey, ".name")
	for i, text := range m.Select {
		sel, err := mutators.ParseSelector(text)
		if err != nil {
			v.fail(fmt.Sprintf("%s.select[%d]", base, i+1), "%v", err)
			ok = false
			continue
		}
		c.Select = append(c.Select, sel)
	}
	switch {
	case m.ID != "":
		c.Name = m.ID
	case len(m.Select) > 0:
		c.Name = m.Name + " " + strings.Join(m.Select, " ")
	}
	if !ok {
		return nil
	}
	return c
}

func (v *validator) patch(key string, m *patchModel) *Check {
	return v.patchAt(key+".file", key+".expect", m)
}

func (v *validator) patchAt(fileKey, expectKey string, m *patchModel) *Check {
	if m.File == "" {
		v.fail(fileKey, "the patch file is missing (file = \"edit.patch\", next to the suite)")
		return nil
	}
	p := v.abs(m.File)
	ok := true
	if data, err := os.ReadFile(p); err != nil {
		v.fail(fileKey, "%v", err)
		ok = false
	} else if _, err := parsePatch(p, data); err != nil {
		v.fail(fileKey, "%v", err)
		ok = false
	}
	o, err := parseOutcome(KindPatch, m.Expect)
	if err != nil {
		v.fail(expectKey, "%v", err)
		ok = false
	}
	if !ok {
		return nil
	}
	name := m.ID
	if name == "" {
		name = m.File
	}
	return &Check{Name: name, Kind: KindPatch, Expect: o, Patch: p}
}

// tomlEncoder writes suite files the way people write them by hand.
func tomlEncoder(w io.Writer) *toml.Encoder {
	return toml.NewEncoder(w).SetIndentTables(false).SetArraysMultiline(false)
}
