//go:build !front

package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestOutsideArgs: the arguments the sandbox does not cover are the
// existing files above or outside the working directory.
func TestOutsideArgs(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	os.WriteFile(filepath.Join(dir, "up"), nil, 0o644)
	os.WriteFile(filepath.Join(sub, "here"), nil, 0o644)
	t.Chdir(sub)
	got := outsideArgs([]string{"/bin/gzip", "here", "-k", "../up", "../missing", "/etc/hostname", "/no/such/file", "-o/etc/passwd"})
	want := []string{"../up", "/etc/hostname"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outsideArgs = %q, want %q", got, want)
	}
}
