package blockrec

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLogRoundTrip(t *testing.T) {
	l := synthLog(1<<20, []w{{1, 1, 1}, {9, 3, 2}}, []w{{100, 8, 3}})
	l.Base[5000] = 42 // a non-zero base block must survive
	l.Entries = append(l.Entries, Entry{Kind: Flush, Pos: 999, Datasync: true})
	path := filepath.Join(t.TempDir(), "run.blocklog")
	if err := SaveLog(path, l); err != nil {
		t.Fatal(err)
	}
	got, err := LoadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, l) {
		t.Errorf("round trip changed the log")
	}
	var b bytes.Buffer
	if err := WriteLog(&b, l); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	raw[len(raw)/2] ^= 1
	if _, err := ReadLog(bytes.NewReader(raw)); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("damaged log: %v", err)
	}
	if _, err := ReadLog(strings.NewReader("not a log at all")); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("non-log: %v", err)
	}
	if _, err := ReadLog(bytes.NewReader(raw[:100])); err == nil {
		t.Error("truncated log read without error")
	}
}

func TestWriteLogText(t *testing.T) {
	l := synthLog(1<<20, []w{{2048, 8, 1}}, []w{{1, 1, 2}})
	var b bytes.Buffer
	if err := WriteLogText(&b, l); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 2+len(l.Entries) {
		t.Fatalf("want a header, a column line and one line per entry:\n%s", b.String())
	}
	for _, want := range []string{"1.0 MiB (s 2048)", "4.0 KiB", "flush", "2 writes"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
