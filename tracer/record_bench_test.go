package tracer

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkRecordFind records find over a tree (TREE, default
// /usr/share/doc) with every call traced and the trace discarded: the
// recorder's own cost per stop, to profile with -cpuprofile/-memprofile.
// BenchmarkFindUntraced is the same command untraced, the baseline.
func BenchmarkRecordFind(b *testing.B) {
	tree := benchTree(b)
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	for i := 0; i < b.N; i++ {
		c := &Cmd{Path: "find", Args: []string{"find", tree}, Follow: true, Output: io.Discard, Stdout: devnull}
		if err := c.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFindUntraced(b *testing.B) {
	tree := benchTree(b)
	for i := 0; i < b.N; i++ {
		if err := exec.Command("find", tree).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchTree(b *testing.B) string {
	tree := os.Getenv("TREE")
	if tree == "" {
		tree = "/usr/share/doc"
	}
	if _, err := os.Stat(tree); err != nil {
		b.Skip(err)
	}
	return tree
}
