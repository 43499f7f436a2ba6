package crash

import (
	"os"
	"strings"
	"testing"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

func readTrace(t *testing.T, name string) *mutators.Trace {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := mutators.Read(name, f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestAmplifyPlan checks which lines amplification inserts after which
// calls, and that the replay plan attaches each inserted line to the call
// it follows.
func TestAmplifyPlan(t *testing.T) {
	tr := readTrace(t, "save.strace")
	tests := []struct {
		amp Amplify
		// after lists, per call name with an inserted line, what is
		// performed after it.
		after map[string]string
	}{
		{AmplifyOff, map[string]string{}},
		{AmplifyOn, map[string]string{
			"openat":   "fsync(/sb) sync", // a create: commit point, and the O_TRUNC open: sync point
			"close":    "fsync(/sb)",      // close of a written file
			"unlinkat": "fsync(/sb)",
			"renameat": "fsync(/sb)",
		}},
		{AmplifyWide, map[string]string{
			"openat":   "fsync(/sb) sync",
			"write":    "sync", // the 600-byte write only
			"close":    "fsync(/sb)",
			"unlinkat": "fsync(/sb) sync",
			"renameat": "fsync(/sb)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.amp.describe(), func(t *testing.T) {
			amp, err := amplify(tr, tt.amp)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := newReplayPlan(amp)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.pids) != 1 || len(plan.calls[4242]) != 12 {
				t.Fatalf("plan: pids %v, %d calls; want 4242 with the trace's 12 calls", plan.pids, len(plan.calls[4242]))
			}
			got := map[string]string{}
			for c, ins := range plan.after {
				var parts []string
				for _, l := range ins {
					s := l.call.Name
					if len(l.call.Args) == 1 {
						s += "(" + l.call.Args[0].Value.Head.(*parser.Int).Decor.Path() + ")"
					}
					parts = append(parts, s)
				}
				if prev, dup := got[c.Name]; dup {
					t.Errorf("two %s calls have inserted lines (%s and %s)", c.Name, prev, strings.Join(parts, " "))
				}
				got[c.Name] = strings.Join(parts, " ")
			}
			if len(got) != len(tt.after) {
				t.Errorf("inserted after %v, want after %v", got, tt.after)
			}
			for name, want := range tt.after {
				if got[name] != want {
					t.Errorf("after %s: %q, want %q", name, got[name], want)
				}
			}
		})
	}
}

// TestKillPoints: before each metadata call on the sandbox and before the
// first write through a freshly opened or truncated descriptor.
func TestKillPoints(t *testing.T) {
	plan, err := newReplayPlan(readTrace(t, "save.strace"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range killPoints(plan, "/sb") {
		got = append(got, c.Name)
	}
	want := "write close unlinkat renameat" // not the read-only close, not the terminal write
	if strings.Join(got, " ") != want {
		t.Errorf("kill points before %v, want %s", got, want)
	}
}

func TestMetadataOutsideSandbox(t *testing.T) {
	m := newMetaTracker("/sb")
	for _, tt := range []struct {
		path string
		in   bool
	}{{"/sb", true}, {"/sb/x", true}, {"x", true}, {"/sbx", false}, {"/tmp/x", false}} {
		if got := m.inSandbox(tt.path); got != tt.in {
			t.Errorf("inSandbox(%s) = %v", tt.path, got)
		}
	}
}
