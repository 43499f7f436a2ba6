package crash

import (
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/mutators"
)

// TestBackgroundFlushes: a flush at a call that asks for no durability is
// reported, once per line; flushes at fsync-family calls, before the first
// line and from the last call on (the recording's final sync and unmount)
// are not; with a file opened O_SYNC, writes may flush.
func TestBackgroundFlushes(t *testing.T) {
	plain := `100 openat(AT_FDCWD, "f", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3
100 write(3, "data", 4) = 4
100 fsync(3) = 0
100 rename("f", "g") = 0
100 close(3) = 0
100 exit_group(0) = ?
100 +++ exited with 0 +++
`
	osync := strings.Replace(plain, "O_TRUNC", "O_TRUNC|O_SYNC", 1)
	flush := func(pos int64) blockrec.Entry { return blockrec.Entry{Kind: blockrec.Flush, Pos: pos} }
	write := func(pos int64) blockrec.Entry {
		return blockrec.Entry{Kind: blockrec.Write, Pos: pos, Data: []byte("x")}
	}
	tests := []struct {
		name    string
		trace   string
		entries []blockrec.Entry
		want    []int64
	}{
		{"asked for", plain, []blockrec.Entry{write(2), flush(3), write(3)}, nil},
		{"not asked for", plain, []blockrec.Entry{flush(1), write(4), flush(4), flush(4), flush(3)}, []int64{1, 4}},
		{"the recording's own", plain, []blockrec.Entry{flush(0), flush(6), flush(7)}, nil},
		{"a write to an O_SYNC file", osync, []blockrec.Entry{flush(2)}, nil},
		{"O_SYNC does not excuse a rename", osync, []blockrec.Entry{flush(4)}, []int64{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := mutators.Read("t.strace", strings.NewReader(tt.trace))
			if err != nil {
				t.Fatal(err)
			}
			got := backgroundFlushes(&blockrec.Log{Entries: tt.entries}, tr)
			if !slices.Equal(got, tt.want) {
				t.Errorf("lines %v, want %v", got, tt.want)
			}
			if len(got) > 0 {
				if n := backgroundNote(got, tr); !strings.Contains(n, "another process's sync()") || !strings.Contains(n, "line 4: ") && !strings.Contains(n, "line 1: ") {
					t.Errorf("note does not name the lines: %s", n)
				}
			}
		})
	}
}
