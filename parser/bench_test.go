package parser

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

var (
	benchOnce  sync.Once
	benchTrace []byte
)

// realTrace is a large trace made by the installed strace: find over /usr
// (stat, getdents, openat, close) and a python3 start-up, so the mix of
// calls is what faultline users feed it.
func realTrace(b *testing.B) []byte {
	benchOnce.Do(func() {
		if _, err := exec.LookPath("strace"); err != nil {
			return
		}
		out := filepath.Join(os.TempDir(), "faultline-bench.strace")
		cmd := exec.Command("strace", "-f", "-o", out, "sh", "-c",
			"find /usr -maxdepth 4 -ls >/dev/null; python3 -c 'import json, email, http.client' ; ls -la /etc >/dev/null")
		if err := cmd.Run(); err != nil {
			return
		}
		benchTrace, _ = os.ReadFile(out)
	})
	if len(benchTrace) == 0 {
		b.Skip("strace not installed or failed")
	}
	return benchTrace
}

// BenchmarkScan streams a real trace through the parallel Scanner and
// reports lines/s and allocations per line at three lengths: the
// allocations per line must stay flat as the trace grows.
func BenchmarkScan(b *testing.B) {
	base := realTrace(b)
	for _, mult := range []int{1, 4, 16} {
		data := bytes.Repeat(base, mult)
		lines := bytes.Count(data, []byte{'\n'})
		b.Run(strconv.Itoa(lines)+"lines", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s := &Scanner{File: "bench"}
				n := 0
				if err := s.Scan(context.Background(), bytes.NewReader(data), func(l *Line, err error) error {
					if err != nil {
						b.Fatal(err)
					}
					n++
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(lines*b.N)/b.Elapsed().Seconds(), "lines/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkParseLine is one core, one line at a time.
func BenchmarkParseLine(b *testing.B) {
	lines := bytes.Split(bytes.TrimSuffix(realTrace(b), []byte{'\n'}), []byte{'\n'})
	strs := make([]string, len(lines))
	for i, l := range lines {
		strs[i] = string(l)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ParseLine("bench", i, strs[i%len(strs)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
