package parser

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestGolden parses every testdata/*.strace file and compares one JSON
// event per line with the .golden file next to it, so the typed AST of the
// rarer forms is pinned down; the text must also print back byte for byte.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.strace")
	if len(files) == 0 {
		t.Fatal("no testdata/*.strace")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			enc := json.NewEncoder(&got)
			sc := bufio.NewScanner(bytes.NewReader(data))
			n := 0
			for sc.Scan() {
				n++
				l, err := ParseLine(filepath.Base(f), n, sc.Text())
				if err != nil {
					t.Errorf("%v", err)
					continue
				}
				if l.String() != sc.Text() {
					t.Errorf("line %d printed back as\n\t%s", n, l.String())
				}
				if err := enc.Encode(l); err != nil {
					t.Fatal(err)
				}
			}
			golden := strings.TrimSuffix(f, ".strace") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./parser -run Golden -update)", err)
			}
			gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
			for i := range wl {
				if i >= len(gl) || gl[i] != wl[i] {
					t.Errorf("line %d differs from %s\n\tgot  %s\n\twant %s", i+1, golden, at(gl, i), wl[i])
				}
			}
		})
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(nothing)"
}
