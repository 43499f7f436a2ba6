package suite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSuite puts a suite file and the patch files it names in a
// temporary directory.
func writeSuite(t *testing.T, text string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range extra {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "init"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "suite.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseValid(t *testing.T) {
	patch, err := os.ReadFile("testdata/gzip-fstat-chr.patch")
	if err != nil {
		t.Fatal(err)
	}
	p := writeSuite(t, `name = "gzip"
command = ["gzip", "f"]
timeout = "20s"

[sandbox]
init = "init"
fs = "ext4"

[crash]
expect = "inconsistent"
k = 2
amplify = "wide"

[[anomaly]]
name = "rename-exdev"
select = ["syscall=renameat2", "path=*.tmp"]
expect = "recovered"

[[anomaly]]
name = "read-eio"
id = "read fails"
expect = "handled-error"

[[patch]]
file = "chr.patch"
expect = "handled-error"

[expect]
write-enospc = "handled-error"
"chr.patch" = "handled-error"
`, map[string]string{"chr.patch": string(patch)})
	_, err = Load(p)
	// The same patch twice is the same check name twice.
	var fe FileErrors
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), `suite.toml:30: expect.chr.patch: a second check named "chr.patch"`) {
		t.Fatalf("duplicate check: got %v", err)
	}
	text, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(text), `"chr.patch" = "handled-error"`, "", 1)), 0o644)
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Checks {
		got = append(got, string(c.Kind)+":"+c.Name+"="+string(c.Expect))
	}
	want := []string{
		"crash:crash=inconsistent",
		"anomaly:rename-exdev syscall=renameat2 path=*.tmp=recovered",
		"anomaly:read fails=handled-error",
		"patch:chr.patch=handled-error",
		"anomaly:write-enospc=handled-error",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("checks\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s.Program.Init != filepath.Join(filepath.Dir(p), "init") || s.Program.Timeout.String() != "20s" {
		t.Errorf("program %+v", s.Program)
	}
	if c := s.Checks[0].Crash; c.K != 2 || c.Amplify != "wide" {
		t.Errorf("crash options %+v", c)
	}
	if len(s.Checks[1].Select) != 2 || s.Checks[1].Select[1].Path != "*.tmp" {
		t.Errorf("selectors %+v", s.Checks[1].Select)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string // substrings of the error, each "file:line..."
	}{
		{
			name: "unknown key in a table",
			text: "command = [\"true\"]\n[sandbox]\ninti = \"x\"\n[crash]\nexpect = \"consistent\"\n",
			want: []string{`suite.toml:3:1: sandbox.inti: unknown key (want init, setup, fs, user)`},
		},
		{
			name: "unknown key at the top",
			text: "command = [\"true\"]\nprogram = \"x\"\n[crash]\nexpect = \"consistent\"\n",
			want: []string{`suite.toml:2:1: program: unknown key (want name, command`},
		},
		{
			name: "wrong type",
			text: "command = \"gzip f\"\n",
			want: []string{`suite.toml:1:11: command: a TOML string is not what this key takes: want an array of strings`},
		},
		{
			name: "syntax error",
			text: "command = [\"true\"\n[crash]\n",
			want: []string{`suite.toml:2:`},
		},
		{
			name: "unknown anomaly gets close names",
			text: "command = [\"mv\", \"a\", \"b\"]\n\n[[anomaly]]\nname = \"rename-exdve\"\nexpect = \"recovered\"\n",
			want: []string{`suite.toml:4: anomaly[1].name: no anomaly named "rename-exdve"; did you mean rename-exdev?`},
		},
		{
			name: "unknown anomaly in the short form",
			text: "command = [\"mv\", \"a\", \"b\"]\n[expect]\ncrash = \"consistent\"\nfsync-eoi = \"handled-error\"\n",
			want: []string{`suite.toml:4: expect.fsync-eoi: no anomaly named "fsync-eoi"; did you mean fsync-eio`},
		},
		{
			name: "outcome that does not exist",
			text: "command = [\"mv\", \"a\", \"b\"]\n[[anomaly]]\nname = \"rename-exdev\"\nexpect = \"recoverd\"\n",
			want: []string{`suite.toml:4: anomaly[1].expect: "recoverd" is not an outcome of a anomaly check (want one of unhandled, handled-error, recovered, crashed, hung)`},
		},
		{
			name: "crash outcome for an anomaly",
			text: "command = [\"mv\", \"a\", \"b\"]\n[expect]\nrename-exdev = \"consistent\"\n",
			want: []string{`suite.toml:3: expect.rename-exdev: "consistent" is not an outcome`},
		},
		{
			name: "bad selector, second anomaly",
			text: "command = [\"mv\", \"a\", \"b\"]\n[[anomaly]]\nname = \"rename-exdev\"\nexpect = \"recovered\"\n[[anomaly]]\nname = \"read-eio\"\nselect = [\"syscall=read\", \"colour=red\"]\nexpect = \"recovered\"\n",
			want: []string{`suite.toml:7: anomaly[2].select[2]: selector "colour=red": unknown key "colour"`},
		},
		{
			name: "missing patch file",
			text: "command = [\"mv\", \"a\", \"b\"]\n[[patch]]\nfile = \"nope.patch\"\nexpect = \"recovered\"\n",
			want: []string{`suite.toml:3: patch[1].file: open `, `nope.patch: no such file`},
		},
		{
			name: "not a patch",
			text: "command = [\"mv\", \"a\", \"b\"]\n[[patch]]\nfile = \"notes.patch\"\nexpect = \"recovered\"\n",
			want: []string{`suite.toml:3: patch[1].file: patch `, `no unified diff in it`},
		},
		{
			name: "several mistakes at once",
			text: "timeout = \"soon\"\n[sandbox]\nfs = \"zfs\"\ninit = \"missing\"\n[crash]\nexpect = \"fine\"\n",
			want: []string{
				`suite.toml: command: the program to run is missing`,
				`suite.toml:1: timeout: "soon" is not a duration`,
				`suite.toml:4: sandbox.init: `,
				`suite.toml:3: sandbox.fs: "zfs" is not a file system`,
				`suite.toml:6: crash.expect: "fine" is not an outcome of a crash check (want one of consistent, inconsistent)`,
			},
		},
		{
			name: "no checks",
			text: "command = [\"true\"]\n",
			want: []string{`suite.toml: no checks`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeSuite(t, tt.text, map[string]string{"notes.patch": "just words\n"})
			_, err := Load(p)
			if err == nil {
				t.Fatal("no error")
			}
			msg := strings.ReplaceAll(err.Error(), filepath.Dir(p)+"/", "")
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n%s\ndoes not contain\n%s", msg, w)
				}
			}
		})
	}
}
