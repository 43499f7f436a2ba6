package blockrec

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
)

func TestWalk(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "lost+found"), 0o700))
	must(os.WriteFile(filepath.Join(dir, "lost+found", "x"), []byte("skip me"), 0o644))
	must(os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755))
	data := []byte("hello, aab")
	must(os.WriteFile(filepath.Join(dir, "a", "b", "f"), data, 0o640))
	must(os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644))
	must(os.Symlink("a/b/f", filepath.Join(dir, "link")))

	s, err := Walk(dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range s.Nodes {
		paths = append(paths, n.Path+":"+n.Type.String())
	}
	want := []string{"a:dir", "a/b:dir", "a/b/f:file", "empty:file", "link:symlink"}
	if len(paths) != len(want) {
		t.Fatalf("nodes %v, want %v", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Fatalf("nodes %v, want %v", paths, want)
		}
	}
	f := s.Lookup("a/b/f")
	if f.Size != int64(len(data)) || f.SHA256 != sha256.Sum256(data) || f.Mode.Perm() != 0o640 {
		t.Errorf("file node: %+v", f)
	}
	if f.Hist['a'] != 2 || f.Hist['l'] != 2 || f.Hist['z'] != 0 {
		t.Errorf("histogram: a=%d l=%d", f.Hist['a'], f.Hist['l'])
	}
	if h := s.Histogram(); h['a'] != 2 {
		t.Errorf("total histogram a=%d", h['a'])
	}
	if l := s.Lookup("link"); l.Target != "a/b/f" {
		t.Errorf("symlink target %q", l.Target)
	}
	if s.Lookup("nope") != nil {
		t.Error("Lookup of a missing path")
	}
	if _, err := Walk(filepath.Join(dir, "missing")); err == nil {
		t.Error("Walk of a missing dir succeeded")
	}
}

func TestHistogram(t *testing.T) {
	b := make([]byte, 1003)
	for i := range b {
		b[i] = byte(i * 7)
	}
	var h, want [256]uint64
	histogram(&h, b)
	for _, x := range b {
		want[x]++
	}
	if h != want {
		t.Error("histogram mismatch")
	}
}
