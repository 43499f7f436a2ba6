package oracle

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// findings builds the findings of a gzip-like run from real snapshots: the
// compressed file empty after the original's unlink was committed.
func gzipFindings(t *testing.T) []Finding {
	data := strings.Repeat("line of data\n", 300)
	gz := strings.Repeat("\x1f\x8b\x08compressed\xff\x00", 30)
	var es ExpectedSet
	es.Add(0, "start", snap(t, map[string]string{"data": data}))
	es.Add(112, "after close", snap(t, map[string]string{"data": data, "data.gz": gz}))
	es.Add(114, "after unlinkat", snap(t, map[string]string{"data.gz": gz}))
	crash := snap(t, map[string]string{"data.gz": ""})
	v := Check(crash, es.All(), DefaultTolerance)
	if v.Consistent {
		t.Fatal("the gzip crash state was judged consistent")
	}
	var out []Finding
	for i, dropped := range [][]DroppedWrite{
		nil,
		{{Entry: 9, Offset: 110592, Length: 4096, Line: 116, Files: []string{"(journal)"}}},
		{{Entry: 10, Offset: 126976, Length: 4096, Line: 116, Files: []string{"(journal)"}}},
	} {
		f := NewFinding(PowerLoss, 8+i, crash, v)
		f.Line, f.LineText, f.Epoch = 116, `7944  fsync(-1</sandbox>) = 0`, 3
		f.DroppedWrites = dropped
		f.Pending = []PendingData{{Path: "data.gz", Line: 0, Bytes: int64(len(gz))}}
		out = append(out, f)
	}
	// A different cause: a kill before a write.
	k := NewFinding(Kill, 0, crash, v)
	k.Line, k.LineText = 100, `7944  write(4</sandbox/data.gz>, "\37\213"..., 390) = 390`
	return append(out, k)
}

func TestGroupFindings(t *testing.T) {
	fs := gzipFindings(t)
	gs := GroupFindings(fs)
	if len(gs) != 2 {
		t.Fatalf("%d groups, want 2 (power loss after 116, kill before 100): %+v", len(gs), gs)
	}
	if gs[0].Kind != PowerLoss || len(gs[0].Sites) != 3 || gs[0].Finding.Site != 8 {
		t.Errorf("power-loss group: kind %s sites %v representative %d; want 3 sites, site 8 (no dropped write)", gs[0].Kind, gs[0].Sites, gs[0].Finding.Site)
	}
	if got := strings.Join(gs[0].Files, ","); got != "data.gz" {
		t.Errorf("affected files %q, want data.gz", got)
	}
	if gs[1].Kind != Kill || len(gs[1].Sites) != 1 {
		t.Errorf("kill group: %+v", gs[1])
	}
}

func TestReportGolden(t *testing.T) {
	fs := gzipFindings(t)
	rep := &Report{
		Command: []string{"gzip", "data"}, FS: "ext4", K: 2, Amplification: "sync points + commit points",
		Tolerance: DefaultTolerance, ExpectedSnapshots: 3, CrashSites: 35, KillPoints: 2,
		LogWrites: 23, LogFlushes: 23, LogBytes: 151552, ElapsedSeconds: 0.8312, ProgramExit: "exited with 0",
		Stages: map[string]float64{"profile": 0.07},
	}
	gs := GroupFindings(fs)
	gs[0].Finding.Artifacts = &Artifacts{Dir: "/out/finding-1", Image: "/out/finding-1/crash.img", Trace: "/out/finding-1/trace.txt", Mount: "mount ..."}
	rep.SetGroups(gs, len(fs))
	if rep.Verdict != Inconsistent || rep.InconsistentSites != 4 {
		t.Fatalf("verdict %s with %d inconsistent sites", rep.Verdict, rep.InconsistentSites)
	}
	var text, js bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"verdict", "expected_snapshots", "crash_sites", "inconsistent_sites", "elapsed_seconds", "findings"} {
		if _, ok := back[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	f0 := back["findings"].([]any)[0].(map[string]any)
	for _, k := range []string{"line", "dropped_writes", "files", "distance"} {
		if _, ok := f0[k]; !ok {
			t.Errorf("JSON finding lacks %q", k)
		}
	}
	golden(t, "report.txt", text.Bytes())
	golden(t, "report.json", js.Bytes())

	var ok Report
	ok.SetGroups(nil, 0)
	text.Reset()
	ok.WriteText(&text)
	if ok.Verdict != Consistent || !strings.Contains(text.String(), "verdict: consistent") {
		t.Errorf("empty report: %s\n%s", ok.Verdict, text.String())
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}
