package parser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

const sample = "1234  openat(AT_FDCWD, \"/etc/passwd\", O_RDONLY|O_CLOEXEC) = 3\n" +
	"1234  read(3, \"root:x:0:0:root:/root:/bin/bash\\n\"..., 4096) = 1234\n" +
	"1234  close(3)                          = 0\n"

func TestScannerOrderErrorsAndEOL(t *testing.T) {
	var in strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&in, "%d  close(%d) = 0\n", 100+i%7, i)
		if i%1000 == 999 {
			in.WriteString("close(3 = 0\n") // malformed
		}
	}
	in.WriteString("exit_group(0) = ?") // no final newline
	var out bytes.Buffer
	var errLines []int
	n := 0
	s := &Scanner{File: "in.strace", BatchLines: 64}
	err := s.Scan(context.Background(), strings.NewReader(in.String()), func(l *Line, err error) error {
		n++
		var se *SyntaxError
		if errors.As(err, &se) {
			errLines = append(errLines, se.Pos.Line)
			out.WriteString(se.Text + "\n")
			return nil
		}
		if err != nil {
			return err
		}
		if l.Pos.Line != n {
			return fmt.Errorf("line %d delivered as line %d", n, l.Pos.Line)
		}
		return Fprint(&out, l)
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1001, 2002, 3003}; fmt.Sprint(errLines) != fmt.Sprint(want) {
		t.Errorf("malformed lines reported at %v, want %v", errLines, want)
	}
	if out.String() != in.String() {
		t.Errorf("the file did not come back byte for byte (%d vs %d bytes)", out.Len(), in.Len())
	}
}

func TestScannerStopsOnCallbackError(t *testing.T) {
	stop := errors.New("enough")
	n := 0
	s := &Scanner{}
	err := s.Scan(context.Background(), strings.NewReader(strings.Repeat(sample, 10000)), func(*Line, error) error {
		n++
		if n == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 10 {
		t.Fatalf("got %v after %d lines, want the callback's error after 10", err, n)
	}
}

// lineSource produces n lines of a real-looking trace without holding them.
type lineSource struct {
	n, i int
	buf  []byte
}

func (s *lineSource) Read(p []byte) (int, error) {
	for len(s.buf) < len(p) && s.i < s.n {
		s.buf = append(s.buf, sample...)
		s.i++
	}
	if len(s.buf) == 0 {
		return 0, io.EOF
	}
	k := copy(p, s.buf)
	s.buf = s.buf[k:]
	return k, nil
}

// The heap while scanning must not grow with the trace: compare the peak
// for a trace ten times longer.
func TestScannerMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	peak := func(groups int) uint64 {
		runtime.GC()
		var max uint64
		var ms runtime.MemStats
		n := 0
		s := &Scanner{}
		err := s.Scan(context.Background(), &lineSource{n: groups}, func(*Line, error) error {
			n++
			if n%5000 == 0 {
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > max {
					max = ms.HeapInuse
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return max
	}
	small, large := peak(20000), peak(200000) // 60k and 600k lines
	t.Logf("peak heap in use: %d KiB for 60k lines, %d KiB for 600k lines", small>>10, large>>10)
	if float64(large) > 2*float64(small)+8<<20 {
		t.Errorf("heap grew with the trace: %d KiB -> %d KiB", small>>10, large>>10)
	}
}
