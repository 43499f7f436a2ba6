package tracer

import "testing"

func TestFDArgs(t *testing.T) {
	for name, want := range map[string][]int{"write": {0}, "openat": {0}, "copy_file_range": {0, 2}, "dup2": {0, 1}, "close": {0}, "rename": nil} {
		got := FDArgs(name)
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", name, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: %v, want %v", name, got, want)
			}
		}
	}
	for name, want := range map[string]bool{"openat": true, "dup": true, "accept4": true, "write": false, "close": false} {
		if ReturnsFD(name) != want {
			t.Errorf("ReturnsFD(%s) = %v", name, !want)
		}
	}
}
