//go:build !front

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const smallTrace = `100   openat(AT_FDCWD</w>, "out.tmp", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3</w/out.tmp>
100   fsync(3</w/out.tmp>)                = 0
100   rename("out.tmp", "out")          = 0
`

func TestMutateCmd(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.strace")
	if err := os.WriteFile(in, []byte(smallTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.strace")
	if err := os.WriteFile(bad, []byte("100   rename(\"a\", \"b\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.strace")
	tests := []struct {
		name string
		cmd  mutateCmd
		code int    // -1: success
		want string // in the error, or in the output on success
	}{
		{"applies", mutateCmd{Anomaly: "rename-exdev", Args: mutateArgs{Trace: in}, Output: out}, -1, "= -1 EXDEV (Invalid cross-device link) (INJECTED)"},
		{"composes with amplification", mutateCmd{Anomaly: "fsync-eio", Amplify: []string{"commit"}, Args: mutateArgs{Trace: in}, Output: out}, -1, "fsync(-1</w>)"},
		{"unknown anomaly", mutateCmd{Anomaly: "rename-exdv", Args: mutateArgs{Trace: in}}, exitTool, "did you mean rename-exdev"},
		{"selector matches nothing", mutateCmd{Anomaly: "rename-exdev", Select: []string{"path=*.nope"}, Args: mutateArgs{Trace: in}}, exitTool, `selector "path=*.nope" matches no call`},
		{"bad selector", mutateCmd{Anomaly: "rename-exdev", Select: []string{"nth=0"}, Args: mutateArgs{Trace: in}}, exitTool, `nth="0"`},
		{"malformed trace", mutateCmd{Anomaly: "rename-exdev", Args: mutateArgs{Trace: bad}}, exitTool, "bad.strace:1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(out)
			err := tt.cmd.Run()
			if tt.code < 0 {
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(b), tt.want) {
					t.Errorf("output lacks %q:\n%s", tt.want, b)
				}
				return
			}
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != tt.code {
				t.Fatalf("got %v, want exit %d", err, tt.code)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
		})
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".out.strace.tmp*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}
