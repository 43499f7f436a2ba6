package oracle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/blockrec"
)

// snap builds a real directory with the given files and walks it.
func snap(t *testing.T, files map[string]string) *blockrec.Snapshot {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := blockrec.Walk(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCheck(t *testing.T) {
	data := strings.Repeat("line of sorted data\n", 200) // 4000 bytes
	gz := strings.Repeat("\x1f\x8b\x08compressed\xff\x00", 40)
	sorted := strings.Repeat("line of sorted data\n", 200)
	var sortES, gzipES ExpectedSet
	sortES.Add(0, "start", snap(t, map[string]string{"data": data}))
	sortES.Add(9, "end", snap(t, map[string]string{"data": sorted}))
	gzipES.Add(0, "start", snap(t, map[string]string{"data": data}))
	gzipES.Add(5, "after write", snap(t, map[string]string{"data": data, "data.gz": gz}))
	gzipES.Add(6, "end", snap(t, map[string]string{"data.gz": gz}))
	if gzipES.Add(7, "duplicate of end", snap(t, map[string]string{"data.gz": gz})) {
		t.Error("a duplicate expected snapshot was kept")
	}
	if gzipES.Add(8, "empty", snap(t, map[string]string{})) {
		t.Error("an empty expected snapshot was kept")
	}

	tests := []struct {
		name       string
		es         *ExpectedSet
		crash      map[string]string
		consistent bool
		distance   uint64
		file       string // the first file the explanation names
	}{
		{"original intact", &gzipES, map[string]string{"data": data}, true, 0, ""},
		{"renamed", &gzipES, map[string]string{"moved": data}, true, 0, ""},
		{"extra empty file", &gzipES, map[string]string{"data": data, "data.gz": ""}, true, 0, ""},
		{"tail lost within tolerance", &sortES, map[string]string{"data": data[:len(data)-20]}, true, 20, ""},
		// sort data -o data on a small input: the truncation reached the
		// disk, the new content did not.
		{"truncated to nothing", &sortES, map[string]string{"data": ""}, false, 4000, "data"},
		// gzip: the original is gone and the compressed file is empty.
		{"gzip data loss", &gzipES, map[string]string{"data.gz": ""}, false, uint64(len(gz)), "data.gz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Check(snap(t, tt.crash), tt.es.All(), DefaultTolerance)
			if v.Consistent != tt.consistent || v.Distance != tt.distance {
				t.Fatalf("consistent=%v d=%d, want %v d=%d (nearest %q)", v.Consistent, v.Distance, tt.consistent, tt.distance, v.Nearest.Label)
			}
			if tt.file != "" && (len(v.Files) == 0 || v.Files[0].Path != tt.file) {
				t.Errorf("explanation %v, want it to name %s first", v.Files, tt.file)
			}
		})
	}
}

func TestCheckNoExpected(t *testing.T) {
	if v := Check(snap(t, map[string]string{"x": "y"}), nil, 0); !v.Consistent {
		t.Error("with no expected snapshot every state is consistent")
	}
}
