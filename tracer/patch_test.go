package tracer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

// The patch tests run testdata/patch/probe.c (each call Patch knows,
// made by raw syscall, with what it got printed) under the tracer twice:
// once to record the trace, once with an Exit hook that patches every
// call from the recorded line, one line edited per case. The program's
// own output must show the edit, and nothing but the edited line may
// produce a change.

// buildProbe compiles the probe into a temporary directory.
func buildProbe(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	bin := filepath.Join(t.TempDir(), "probe")
	out, err := exec.Command("gcc", "-O1", "-Wall", "-o", bin, filepath.Join("testdata", "patch", "probe.c")).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc probe.c: %v\n%s", err, out)
	}
	return bin
}

// probeWorld is the directory the probe looks at.
func probeWorld(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "file"), []byte("hello, patched world: 0123456789\n"), 0644))
	must(os.Symlink("file", filepath.Join(dir, "link")))
	must(os.MkdirAll(filepath.Join(dir, "sub", "dir"), 0755))
	must(os.WriteFile(filepath.Join(dir, "sub", "a"), nil, 0644))
	must(os.WriteFile(filepath.Join(dir, "sub", "bb"), nil, 0644))
	return dir
}

// probeRun is one traced run of the probe.
type probeRun struct {
	bin, dir string
	verbose  bool
	limit    int
	hooks    Hooks
	// noTrace runs without an Output, as a supervisor that only needs
	// the hooks does: nothing is decoded but what Patch reads.
	noTrace bool
}

// run traces the probe and returns its trace and what it printed. The
// program's stdout is the same file on every run, so that its fstat of
// stdout gives the same inode each time.
func (r probeRun) run(t *testing.T) (string, map[string]map[string]string) {
	t.Helper()
	outPath := filepath.Join(filepath.Dir(r.bin), "stdout")
	stdout, err := os.OpenFile(outPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0644)
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	var trace bytes.Buffer
	c := &Cmd{Path: r.bin, Args: []string{r.bin, r.dir}, Verbose: r.verbose, StringLimit: r.limit,
		Output: &trace, Stdout: stdout, Hooks: r.hooks}
	if r.noTrace {
		c.Output = nil
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatalf("trace the probe: %v", err)
	}
	if c.Status.ExitStatus() != 0 {
		t.Fatalf("the probe exited %d", c.Status.ExitStatus())
	}
	b, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	return trace.String(), parseProbe(string(b))
}

// parseProbe reads "name k=v k=v" lines; words without '=' (getdents64's
// entries) are collected under "entries".
func parseProbe(out string) map[string]map[string]string {
	m := map[string]map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		name := f[0]
		if _, dup := m[name]; dup {
			name += "#2"
		}
		kv := map[string]string{}
		for _, w := range f[1:] {
			if k, v, ok := strings.Cut(w, "="); ok {
				kv[k] = v
			} else {
				kv["entries"] += " " + w
			}
		}
		kv["entries"] = strings.TrimSpace(kv["entries"])
		m[name] = kv
	}
	return m
}

// calls parses a trace and returns its complete calls in order.
func calls(t *testing.T, trace string) []*parser.Call {
	t.Helper()
	var out []*parser.Call
	for _, l := range parseAll(t, trace) {
		if c, ok := l.Body.(*parser.Call); ok && c.Result != nil && !c.Pending.Unfinished() {
			out = append(out, c)
		}
	}
	return out
}

// find returns the first call named name whose text contains sub.
func find(t *testing.T, cs []*parser.Call, name, sub string) *parser.Call {
	t.Helper()
	for _, c := range cs {
		if c.Name == name && strings.Contains(parser.Format(c), sub) {
			return c
		}
	}
	t.Fatalf("no %s call with %q in the trace", name, sub)
	return nil
}

// decodeAt decodes the call at an exit stop as the recorder would print
// it, through text and back, so Patch sees a parsed line.
func decodeAt(t *testing.T, s *Stop) *parser.Call {
	se := lookup(s.Nr)
	sc := &scall{nr: s.Nr, se: se}
	sc.d = dec{t: s.t, pid: s.Tid, nr: s.Nr, name: se.name, args: s.Regs.Args(), sp: s.Regs.SP(), retFn: se.ret}
	sc.decodeEntry()
	sc.d.exiting = true
	sc.d.ret = s.Regs.Ret()
	_, args := sc.decodeExit()
	c := &parser.Call{Name: se.name, Args: append(sc.entry, args...), Result: sc.d.result()}
	l, err := parser.ParseLine("decoded", 1, parser.NewLine(0, c).String())
	if err != nil {
		t.Errorf("decoded %s does not parse: %v", s.Name, err)
		return c
	}
	return l.Body.(*parser.Call)
}

func stat(c *parser.Call) *parser.Struct { return mutators.StatStruct(c.Args) }

func setInt(t *testing.T, st *parser.Struct, name string, v int64) {
	t.Helper()
	if err := mutators.SetFieldInt(st, name, v); err != nil {
		t.Fatal(err)
	}
}

func field(c *parser.Call, name string) *parser.Arg { return stat(c).Field(name) }

func markEdited(c *parser.Call) {
	c.Result.Outcome.Notes = append(c.Result.Outcome.Notes, mutators.Injected)
}

func hexOf(s string) string { return hex.EncodeToString([]byte(s)) }

// direntArray builds getdents64's -v array.
func direntArray(ents ...*parser.Expr) *parser.Expr { return parser.NewArray(ents...) }

func direntExpr(t *testing.T, from *parser.Expr, name, typ string) *parser.Expr {
	st := structOf(from)
	return parser.NewStruct(st.Field("d_ino"), st.Field("d_off"), st.Field("d_reclen"),
		parser.Field("d_type", parser.Sym(typ)), parser.Field("d_name", parser.Quoted([]byte(name), parser.QuoteDefault, false)))
}

// entryNamed is the getdents64 entry with that name.
func entryNamed(t *testing.T, c *parser.Call, name string) *parser.Expr {
	t.Helper()
	for _, el := range arrayOf(c.Args[1].Value).Elems {
		if st := structOf(el.Value); st != nil {
			if b, _, _, _ := strOf(st.Field("d_name").Value); string(b) == name {
				return el.Value
			}
		}
	}
	t.Fatalf("getdents64 has no entry %q", name)
	return nil
}

type patchCase struct {
	name string
	// edit changes the recorded calls and returns the one it edited.
	edit func(t *testing.T, cs []*parser.Call) *parser.Call
	// check looks at the probe's output.
	check func(t *testing.T, out map[string]map[string]string)
	// change is a description Patch must return for the edited call.
	change string
	// exact: decoding the call after the patch must print the line.
	exact bool
	// brief: the trace is recorded without -v and with -s 8.
	brief bool
	// err is what Patch's error must say ("": no error).
	err string
	// entry: PrepareEntry runs at the edited call's entry stop.
	entry bool
}

func expect(t *testing.T, out map[string]map[string]string, name, key, want string) {
	t.Helper()
	if got := out[name][key]; got != want {
		t.Errorf("the probe saw %s %s=%q, want %q (all: %v)", name, key, got, want, out[name])
	}
}

func patchCases() []patchCase {
	const content = "hello, patched world: 0123456789\n"
	return []patchCase{
		// Not exact: a device prints st_rdev where a file prints st_size.
		{name: "stat S_IFCHR", exact: false, change: "st_mode S_IFREG|0644 -> S_IFCHR|0644",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "stat", `"file"`)
				mutators.SetFileType(mutators.ModeField(stat(c)), "S_IFCHR")
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) { expect(t, out, "stat", "mode", "20644") }},
		{name: "stat ino nlink size uid gid blocks blksize", exact: true, change: "st_ino ",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "stat", `"file"`)
				setInt(t, stat(c), "st_ino", 4242)
				setInt(t, stat(c), "st_nlink", 3)
				setInt(t, stat(c), "st_size", 1<<40)
				setInt(t, stat(c), "st_uid", 1001)
				setInt(t, stat(c), "st_gid", 1002)
				setInt(t, stat(c), "st_blocks", 99)
				setInt(t, stat(c), "st_blksize", 512)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				for k, v := range map[string]string{"ino": "4242", "nlink": "3", "size": "1099511627776", "uid": "1001",
					"gid": "1002", "blocks": "99", "blksize": "512"} {
					expect(t, out, "stat", k, v)
				}
			}},
		{name: "lstat S_IFDIR", exact: true, change: "st_mode S_IFLNK|0777 -> S_IFDIR|0777",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "lstat", `"link"`)
				mutators.SetFileType(mutators.ModeField(stat(c)), "S_IFDIR")
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) { expect(t, out, "lstat", "mode", "40777") }},
		{name: "fstat S_IFBLK with rdev", exact: false, change: "st_rdev makedev(0, 0) -> makedev(0x8, 0x1)",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "fstat", "st_size=33")
				mutators.SetFileType(mutators.ModeField(stat(c)), "S_IFBLK")
				f := field(c, "st_size")
				f.Name, f.Value = "st_rdev", parser.CallExpr("makedev", parser.Hex(8), parser.Hex(1))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "fstat", "mode", "60644")
				expect(t, out, "fstat", "rdev", "801")
				expect(t, out, "fstat", "size", "33")
			}},
		{name: "newfstatat S_IFIFO marked: unedited times stay live", exact: false, change: "st_mode S_IFREG|0644 -> S_IFIFO|0644",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "newfstatat", `AT_FDCWD, "file"`)
				mutators.SetFileType(mutators.ModeField(stat(c)), "S_IFIFO")
				// A recording made at another time: the number and its
				// date agree, so the value was not edited.
				field(c, "st_atime").Value = parser.Dec(1000000000).WithComment(isoComment(1000000000, 0))
				field(c, "st_atime_nsec").Value = parser.Udec(0)
				markEdited(c)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "newfstatat", "mode", "10644")
				if strings.HasPrefix(out["newfstatat"]["atime"], "1000000000.") {
					t.Errorf("an unedited st_atime was patched: %v", out["newfstatat"])
				}
			}},
		{name: "newfstatat edited mtime, no marker", exact: true, change: "st_mtime ",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "newfstatat", `AT_FDCWD, "file"`)
				setInt(t, stat(c), "st_mtime", 1000000000)
				setInt(t, stat(c), "st_mtime_nsec", 5)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "newfstatat", "mtime", "1000000000.000000005")
			}},
		{name: "fstat hand-edited ctime, stale date", exact: true, change: "st_ctime ",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "fstat", "st_size=33")
				f := field(c, "st_ctime")
				f.Value = parser.Dec(1600000000).WithComment(commentText(f.Value.Comment))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				if !strings.HasPrefix(out["fstat"]["ctime"], "1600000000.") {
					t.Errorf("the probe saw ctime %s, want 1600000000.*", out["fstat"]["ctime"])
				}
			}},
		{name: "statx S_IFSOCK ino size nlink", exact: true, change: "stx_mode S_IFREG|0644 -> S_IFSOCK|0644",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "statx", `"file"`)
				mutators.SetFileType(mutators.ModeField(stat(c)), "S_IFSOCK")
				setInt(t, stat(c), "stx_ino", 77)
				setInt(t, stat(c), "stx_size", 5000)
				setInt(t, stat(c), "stx_nlink", 2)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "statx", "mode", "140644")
				expect(t, out, "statx", "ino", "77")
				expect(t, out, "statx", "size", "5000")
				expect(t, out, "statx", "nlink", "2")
			}},
		{name: "statx edited mtime", exact: true, change: "stx_mtime ",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "statx", `"file"`)
				field(c, "stx_mtime").Value = tsStruct(timespec{1234567890, 42})
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "statx", "mtime", "1234567890.000000042")
			}},
		{name: "read short: count, data, offset", exact: true, change: "result 33 -> 10 (file offset moved by -23)",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "read", `"hello, patched`)
				c.Args[1].Value = parser.Quoted([]byte(content[:10]), parser.QuoteDefault, false)
				c.Result = parser.Ret(parser.Dec(10))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "read", "ret", "10")
				expect(t, out, "read", "data", hexOf(content[:10]))
				// The program's next read gets the rest.
				expect(t, out, "read2", "ret", "23")
				expect(t, out, "read2", "data", hexOf(content[10:]))
			}},
		{name: "read data", exact: true, change: `buf "hello, patched world: 0123456789\n" -> "HELLO, patched world: 0123456789\n"`,
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "read", `"hello, patched`)
				c.Args[1].Value = parser.Quoted([]byte(strings.ToUpper(content[:5])+content[5:]), parser.QuoteDefault, false)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "read", "ret", "33")
				expect(t, out, "read", "data", hexOf("HELLO"+content[5:]))
			}},
		{name: "read longer with whole data", exact: true, change: "result 33 -> 40 (file offset moved by 7)",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "read", `"hello, patched`)
				c.Args[1].Value = parser.Quoted([]byte(content+"grown!\n"), parser.QuoteDefault, false)
				c.Result = parser.Ret(parser.Dec(40))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "read", "ret", "40")
				expect(t, out, "read", "data", hexOf(content+"grown!\n"))
				expect(t, out, "read2", "ret", "0")
			}},
		{name: "pread64 short and changed", exact: true, change: "result 16 -> 4",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "pread64", `"llo, patched wor"`)
				c.Args[1].Value = parser.Quoted([]byte("LLO!"), parser.QuoteDefault, false)
				c.Result = parser.Ret(parser.Dec(4))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "pread64", "ret", "4")
				expect(t, out, "pread64", "data", hexOf("LLO!"))
			}},
		{name: "readv short across vectors", exact: false, change: "result 33 -> 6 (file offset moved by -27)",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "readv", `"hell"`)
				arr := arrayOf(c.Args[1].Value)
				structOf(arr.Elems[1].Value).Field("iov_base").Value = parser.Quoted([]byte("o,"), parser.QuoteDefault, false)
				c.Result = parser.Ret(parser.Dec(6))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "readv", "ret", "6")
				expect(t, out, "readv", "v0", hexOf("hell"))
				expect(t, out, "readv", "v1", hexOf("o,"))
				expect(t, out, "readv", "pos", "6")
			}},
		{name: "preadv data across vectors", exact: true, change: "iov ",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "preadv", `"ello"`)
				arr := arrayOf(c.Args[1].Value)
				structOf(arr.Elems[0].Value).Field("iov_base").Value = parser.Quoted([]byte("ELLO"), parser.QuoteDefault, false)
				structOf(arr.Elems[1].Value).Field("iov_base").Value = parser.Quoted([]byte(strings.ToUpper(content[5:])), parser.QuoteDefault, false)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "preadv", "ret", "32")
				expect(t, out, "preadv", "v0", hexOf("ELLO"))
				expect(t, out, "preadv", "v1", hexOf(strings.ToUpper(content[5:])))
			}},
		{name: "getdents64 entry removed, renamed, retyped", exact: false, change: "entries [",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "getdents64", `"bb"`)
				var el []*parser.Expr
				for _, n := range []string{".", "..", "a", "dir"} {
					e := entryNamed(t, c, n)
					switch n {
					case "a":
						e = direntExpr(t, e, "a-much-longer-name-than-before", "DT_REG")
					case "dir":
						e = direntExpr(t, e, "dir", "DT_FIFO")
					}
					el = append(el, e)
				}
				c.Args[1].Value = direntArray(el...)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				ents := out["getdents64"]["entries"]
				if strings.Contains(ents, "bb/") || !strings.Contains(ents, "a-much-longer-name-than-before/8/") ||
					!strings.Contains(ents, "dir/1/") || !strings.HasPrefix(ents, "./4/") {
					t.Errorf("the probe saw entries %q", ents)
				}
				// ".", "..", "dir": 24 bytes each; the long name: 19+30+1
				// rounded up to 56.
				expect(t, out, "getdents64", "ret", "128")
			}},
		{name: "readlink target", exact: true, change: `target "file" -> "elsewhere/target"`,
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "readlink", `"link"`)
				c.Args[1].Value = parser.Quoted([]byte("elsewhere/target"), parser.QuoteDefault, false)
				c.Result = parser.Ret(parser.Dec(16))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "readlink", "ret", "16")
				expect(t, out, "readlink", "target", "elsewhere/target")
			}},
		{name: "readlinkat shorter target", exact: true, change: `target "file" -> "fi"`,
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "readlinkat", `"link"`)
				c.Args[2].Value = parser.Quoted([]byte("fi"), parser.QuoteDefault, false)
				c.Result = parser.Ret(parser.Dec(2))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "readlinkat", "ret", "2")
				expect(t, out, "readlinkat", "target", "fi")
			}},
		{name: "clock_gettime when marked", exact: true, change: "tv_sec=",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "clock_gettime", "CLOCK_REALTIME")
				c.Args[1].Value = tsStruct(timespec{1000000000, 7})
				markEdited(c)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "clock_gettime", "sec", "1000000000")
				expect(t, out, "clock_gettime", "nsec", "7")
			}},
		{name: "clock_gettime left alone unmarked",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "clock_gettime", "CLOCK_REALTIME")
				c.Args[1].Value = tsStruct(timespec{1000000000, 7})
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				if out["clock_gettime"]["sec"] == "1000000000" {
					t.Errorf("an unmarked clock reading was patched")
				}
			}},
		{name: "gettimeofday when marked", exact: true, change: "tv_usec=",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "gettimeofday", "tv_usec")
				c.Args[0].Value = tvStruct(timespec{2000000000, 9})
				markEdited(c)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "gettimeofday", "sec", "2000000000")
				expect(t, out, "gettimeofday", "usec", "9")
			}},
		{name: "time when marked", exact: false, change: "tloc [",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "time", "[")
				c.Args[0].Value = parser.NewArray(parser.Dec(1500000000))
				c.Result = parser.Ret(parser.Dec(1500000000))
				markEdited(c)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "time", "ret", "1500000000")
				expect(t, out, "time", "tloc", "1500000000")
			}},
		{name: "success made a failure", exact: true, change: "result 0 -> -1 EACCES (Permission denied) (the call was performed: its effects stay)",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "access", `"file"`)
				c.Result = parser.Fail("EACCES", "Permission denied")
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "access", "ret", "-1")
				expect(t, out, "access", "errno", "13")
			}},
		{name: "failure made a success", exact: true, change: "result -1 ENOENT (No such file or directory) -> 0 (the call failed: its effects are missing)",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "unlink", `"no-such-file"`)
				c.Result = parser.Ret(parser.Dec(0))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "unlink", "ret", "0")
			}},
		{name: "write short, patched at exit", exact: true, change: "result 20 -> 8 (file offset moved by -12)",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "write", `"0123456789abcdefghij"`)
				c.Result = parser.Ret(parser.Dec(8))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "write", "ret", "8")
				expect(t, out, "written", "tries", "2")
				expect(t, out, "written", "content", "0123456789abcdefghij")
			}},
		{name: "write short, prepared at entry", entry: true, exact: true, change: "count 20 -> 8",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "write", `"0123456789abcdefghij"`)
				c.Result = parser.Ret(parser.Dec(8))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "write", "ret", "8")
				expect(t, out, "written", "tries", "2")
				expect(t, out, "written", "content", "0123456789abcdefghij")
			}},
		{name: "pipe read short, prepared at entry", entry: true, exact: true, change: "count 10 -> 4",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "read", `"PIPEDATA12"`)
				c.Args[1].Value = parser.Quoted([]byte("PIPE"), parser.QuoteDefault, false)
				c.Result = parser.Ret(parser.Dec(4))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "piperead", "data", hexOf("PIPE"))
				expect(t, out, "piperead2", "data", hexOf("DATA12"))
			}},
		{name: "pipe read short, patched at exit", exact: true, change: "(not seekable: the 6 bytes past the new count are gone)",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "read", `"PIPEDATA12"`)
				c.Args[1].Value = parser.Quoted([]byte("PIPE"), parser.QuoteDefault, false)
				c.Result = parser.Ret(parser.Dec(4))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "piperead", "data", hexOf("PIPE"))
				expect(t, out, "piperead2", "ret", "0")
			}},
		{name: "brief stat S_IFCHR", brief: true, exact: false, change: "st_mode S_IFREG|0644 -> S_IFCHR|0644",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "stat", `"file"`)
				mutators.SetFileType(mutators.ModeField(stat(c)), "S_IFCHR")
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "stat", "mode", "20644")
				expect(t, out, "stat", "size", "33")
			}},
		{name: "brief fstat grows", brief: true, exact: true, change: "st_size 33 -> 66",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "fstat", "st_size=33")
				setInt(t, stat(c), "st_size", 66)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) { expect(t, out, "fstat", "size", "66") }},
		{name: "brief statx size", brief: true, exact: true, change: "stx_size 33 -> 10",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "statx", `"file"`)
				setInt(t, stat(c), "stx_size", 10)
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) { expect(t, out, "statx", "size", "10") }},
		{name: "brief read short, data cut by -s", brief: true, exact: true, change: "result 33 -> 10 (file offset moved by -23)",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "read", `"hello, p"...`)
				c.Result = parser.Ret(parser.Dec(10))
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "read", "ret", "10")
				expect(t, out, "read", "data", hexOf(content[:10]))
				expect(t, out, "read2", "data", hexOf(content[10:]))
			}},
		{name: "brief getdents64 fewer entries", brief: true, exact: false, change: "entries [",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "getdents64", "5 entries")
				c.Args[1].Value = parser.Hex(0x1000).WithComment("2 entries")
				return c
			},
			check: func(t *testing.T, out map[string]map[string]string) {
				expect(t, out, "getdents64", "ret", "48")
				if n := len(strings.Fields(out["getdents64"]["entries"])); n != 2 {
					t.Errorf("the probe saw %d entries, want 2: %v", n, out["getdents64"])
				}
			}},
		{name: "error: unknown member", err: "member st_sise",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "stat", `"file"`)
				st := stat(c)
				st.Fields = append(st.Fields, parser.Field("st_sise", parser.Dec(1)))
				return c
			}},
		{name: "error: unknown file type", err: "unknown mode bit S_IFXXX",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "stat", `"file"`)
				mutators.ModeField(stat(c)).Value = parser.Flags("S_IFXXX", "0644")
				return c
			}},
		{name: "error: read data and count disagree", err: "holds 3 bytes but its result says 33",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "read", `"hello, patched`)
				c.Args[1].Value = parser.Quoted([]byte("abc"), parser.QuoteDefault, false)
				return c
			}},
		{name: "error: read count beyond the buffer", err: "exceeds the program's buffer of 64",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "read", `"hello, patched`)
				c.Args[1].Value = parser.Quoted(bytes.Repeat([]byte("x"), 100), parser.QuoteDefault, false)
				c.Result = parser.Ret(parser.Dec(100))
				return c
			}},
		{name: "error: brief read grows past what it shows", brief: true, err: "cannot be made up",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "read", `"hello, p"...`)
				c.Result = parser.Ret(parser.Dec(40))
				return c
			}},
		{name: "error: brief getdents64 more entries", brief: true, err: "without -v",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "getdents64", "5 entries")
				c.Args[1].Value = parser.Hex(0x1000).WithComment("9 entries")
				return c
			}},
		{name: "error: a dirent name with a slash", err: "is not a file name",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "getdents64", `"bb"`)
				c.Args[1].Value = direntArray(direntExpr(t, entryNamed(t, c, "bb"), "b/b", "DT_REG"))
				return c
			}},
		{name: "error: made to succeed with out-values", err: "its out-values cannot be made up",
			edit: func(t *testing.T, cs []*parser.Call) *parser.Call {
				c := find(t, cs, "stat", `"missing"`)
				c.Result = parser.Ret(parser.Dec(0))
				return c
			}},
	}
}

// replay runs the probe with an Exit hook that patches every call from
// its recorded line (matched by name, in order) up to the edited one;
// after it the program runs free, as it does after a divergence (its
// output, and so its writes, differ). It returns the probe's output, the
// changes made to the edited call, and the changes made to any other
// (there must be none).
func replay(t *testing.T, r probeRun, cs []*parser.Call, edited *parser.Call, entry bool) (map[string]map[string]string, []string, []string, error) {
	t.Helper()
	r.noTrace = true
	queue := map[string][]*parser.Call{}
	nth := -1 // the edited call's place among the calls of its name
	for _, c := range cs {
		if c == edited {
			nth = len(queue[c.Name])
		}
		queue[c.Name] = append(queue[c.Name], c)
	}
	var mine, others []string
	var mineErr error
	var asked [6]uint64 // the edited call's arguments before PrepareEntry
	if entry {
		entered := map[string]int{}
		r.hooks.Enter = func(s *Stop) {
			entered[s.Name]++
			if s.Name == edited.Name && entered[s.Name]-1 == nth {
				asked = s.Regs.Args()
				ch, err := s.PrepareEntry(edited)
				if err != nil {
					t.Errorf("PrepareEntry(%s): %v", parser.Format(edited), err)
				}
				mine = append(mine, ch...)
			}
		}
	}
	exactText := ""
	done := false
	r.hooks.Exit = func(s *Stop) {
		if done {
			return
		}
		q := queue[s.Name]
		if len(q) == 0 {
			t.Errorf("%s: no recorded line left", s.Name)
			return
		}
		want := q[0]
		queue[s.Name] = q[1:]
		ch, err := s.Patch(want)
		if err != nil && want != edited {
			t.Errorf("Patch(%s): %v", parser.Format(want), err)
		}
		if want == edited {
			mine, mineErr = append(mine, ch...), err
			var now Regs
			if err := ptraceGetRegs(s.Tid, &now); err != nil {
				t.Error(err)
			}
			if entry && now.Args() != asked {
				t.Errorf("after Patch the arguments are %v, want the program's %v back", now.Args(), asked)
			}
			exactText = parser.Format(decodeAt(t, s))
			done = true
		} else {
			for _, c := range ch {
				others = append(others, s.Name+": "+c)
			}
		}
	}
	_, out := r.run(t)
	if edited != nil && exactText == "" {
		t.Errorf("the edited %s call was never reached", edited.Name)
	}
	out["decoded"] = map[string]string{"text": exactText}
	return out, mine, others, mineErr
}

func TestPatchEdits(t *testing.T) {
	bin := buildProbe(t)
	dir := probeWorld(t)
	full := probeRun{bin: bin, dir: dir, verbose: true, limit: 4096}
	brief := probeRun{bin: bin, dir: dir, verbose: false, limit: 8}
	full.run(t) // settle atime, so the recording's stat is what later runs see
	traces := map[bool]string{}
	traces[false], _ = full.run(t)
	traces[true], _ = brief.run(t)
	for _, tc := range patchCases() {
		t.Run(tc.name, func(t *testing.T) {
			r := full
			if tc.brief {
				r = brief
			}
			cs := calls(t, traces[tc.brief])
			edited := tc.edit(t, cs)
			wantText := parser.Format(edited)
			out, mine, others, err := replay(t, r, cs, edited, tc.entry)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("Patch(%s) = %v, want an error with %q", wantText, err, tc.err)
				}
			} else if err != nil {
				t.Errorf("Patch(%s): %v", wantText, err)
			}
			if tc.check != nil {
				tc.check(t, out)
			}
			if len(others) > 0 {
				t.Errorf("unedited calls were patched:\n%s", strings.Join(others, "\n"))
			}
			if tc.change == "" && len(mine) > 0 {
				t.Errorf("changes %q, want none", mine)
			}
			if tc.change != "" && !strings.Contains(strings.Join(mine, "\n"), tc.change) {
				t.Errorf("changes %q, want one with %q", mine, tc.change)
			}
			if got := out["decoded"]["text"]; tc.exact && stripMarks(got) != stripMarks(wantText) {
				t.Errorf("after the patch the call decodes as\n%s\nwant\n%s", got, wantText)
			}
		})
	}
}

// stripMarks drops the INJECTED notes (the decoded line has none) and
// comments (an edited number keeps none).
func stripMarks(s string) string {
	s = strings.ReplaceAll(s, " "+mutators.Injected, "")
	return commentRE.ReplaceAllString(s, "")
}

var commentRE = regexp.MustCompile(` /\* [^*]* \*/`)

// An unedited line is patched nowhere: decoding then encoding every call
// of a run, in the run, with every option on, changes nothing, in every
// printing mode.
func TestPatchRoundTrip(t *testing.T) {
	bin := buildProbe(t)
	dir := probeWorld(t)
	for _, mode := range []struct {
		verbose bool
		limit   int
	}{{true, 4096}, {false, 32}, {true, 8}, {false, 4096}} {
		seen := map[string]int{}
		var bad []string
		r := probeRun{bin: bin, dir: dir, verbose: mode.verbose, limit: mode.limit}
		r.hooks.Exit = func(s *Stop) {
			c := decodeAt(t, s)
			ch, err := s.PatchWith(c, PatchOptions{Times: true, Devices: true, DirOffsets: true, Results: true})
			if err != nil {
				t.Errorf("-v=%v -s %d: Patch(%s): %v", mode.verbose, mode.limit, parser.Format(c), err)
			}
			if len(ch) > 0 {
				bad = append(bad, parser.Format(c)+": "+strings.Join(ch, "; "))
			}
			seen[s.Name]++
		}
		r.run(t)
		if len(bad) > 0 {
			t.Errorf("-v=%v -s %d: unedited calls were patched:\n%s", mode.verbose, mode.limit, strings.Join(bad, "\n"))
		}
		for name := range outPatchers {
			if name == "preadv2" {
				continue
			}
			if seen[name] == 0 {
				t.Errorf("the probe made no %s call", name)
			}
		}
	}
}

// Patch refuses to work where it cannot: before the call ran, from a
// line of another call, from no line.
func TestPatchMisuse(t *testing.T) {
	var errs []string
	c := &Cmd{Path: "true", Args: []string{"true"}}
	c.Hooks.Enter = func(s *Stop) {
		if s.Name == "brk" && len(errs) == 0 {
			_, err := s.Patch(parser.NewCall("brk", nil, parser.Ret(parser.Dec(0))))
			errs = append(errs, errText(err))
		}
	}
	c.Hooks.Exit = func(s *Stop) {
		if s.Name == "brk" && len(errs) == 1 {
			_, err := s.Patch(parser.NewCall("read", nil, parser.Ret(parser.Dec(0))))
			errs = append(errs, errText(err))
			_, err = s.Patch(nil)
			errs = append(errs, errText(err))
		}
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"has not run yet", "the line is a read call", "no line to patch from"}
	if len(errs) != len(want) {
		t.Fatalf("errors %q, want %d", errs, len(want))
	}
	for i, w := range want {
		if !strings.Contains(errs[i], w) || !strings.Contains(errs[i], "patch brk in ") {
			t.Errorf("error %q, want one naming the call and saying %q", errs[i], w)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
