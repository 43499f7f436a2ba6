package tracer

import (
	"strings"
	"testing"

	"github.com/faultline/faultline/parser"
)

// TestClockTicks: a clock_t prints as strace prints it, with the seconds
// at 100 ticks a second in a comment unless it is zero.
func TestClockTicks(t *testing.T) {
	for _, tt := range []struct {
		ticks uint64
		want  string
	}{
		{0, "si_utime=0}"},
		{1, "si_utime=1 /* 0.01 s */}"},
		{30, "si_utime=30 /* 0.30 s */}"},
		{12345, "si_utime=12345 /* 123.45 s */}"},
	} {
		l := parser.NewLine(0, parser.NewCall("f", []*parser.Arg{parser.Positional(parser.NewStruct(parser.Field("si_utime", clockTicks(tt.ticks))))}, parser.Ret(parser.Dec(0))))
		if got := l.String(); !strings.Contains(got, tt.want) {
			t.Errorf("%d ticks: %s, want %s", tt.ticks, got, tt.want)
		}
	}
}
