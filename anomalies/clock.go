package anomalies

import (
	"fmt"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

var clocks = []string{"clock_gettime", "gettimeofday", "time"}

// clockShift builds a mutation moving the seconds a clock call returned.
// Only clock reads that reach the kernel are in a trace: glibc answers
// clock_gettime, gettimeofday and time from the vDSO, so most programs'
// reads appear only when the vDSO is off or the clock is unusual.
func clockShift(delta int64) *mutators.Mutation {
	return &mutators.Mutation{
		Wants: "a successful clock_gettime, gettimeofday or time",
		Match: func(s *mutators.Site) bool {
			return has(clocks, s.Call.Name) && s.Call.Succeeded() && timeval(s.Call.Args) != nil
		},
		Edit: func(s *mutators.Site) error {
			sc := s.Edit()
			if sc.Name == "time" {
				n, ok := sc.Result.Int()
				if !ok {
					return fmt.Errorf("time's result is not a number")
				}
				if len(sc.Args) > 0 && sc.Args[0].Value != nil {
					if _, isArr := sc.Args[0].Value.Head.(*parser.Array); isArr {
						sc.Args[0].Value = parser.NewArray(parser.Dec(n + delta))
					}
				}
				s.SetResult(parser.Ret(parser.Dec(n + delta)))
				return nil
			}
			st := timeval(sc.Args)
			sec, ok := mutators.FieldInt(st, "tv_sec")
			if !ok {
				return fmt.Errorf("tv_sec is not a number")
			}
			return mutators.SetFieldInt(st, "tv_sec", sec+delta)
		},
	}
}

// timeval is the {tv_sec=..., ...} a clock call filled in; for time() a
// non-nil placeholder, since its result is the reading.
func timeval(args []*parser.Arg) *parser.Struct {
	for _, a := range args {
		if a.Value == nil {
			continue
		}
		if st, ok := a.Value.Head.(*parser.Struct); ok && st.Field("tv_sec") != nil {
			return st
		}
	}
	if len(args) == 1 { // time(NULL) or time([N])
		return &parser.Struct{}
	}
	return nil
}

var _ = family(func() {
	register(
		&Anomaly{
			Name:    "clock-back",
			Summary: "a clock reading jumps one hour back",
			Situation: "NTP or an administrator steps the wall clock back, a VM restores a snapshot, a machine " +
				"without an RTC battery boots in the past. Durations computed from CLOCK_REALTIME go negative, " +
				"timestamps sort wrong, caches look fresh forever, and make rebuilds or skips the wrong files.",
			Touches:  clocks,
			Expected: "Use CLOCK_MONOTONIC for durations and timeouts, and tolerate wall-clock steps (no negative durations, no hangs).",
			Mutation: clockShift(-3600),
		},
		&Anomaly{
			Name:    "clock-forward",
			Summary: "a clock reading jumps one day forward",
			Situation: "Resuming from suspend, a VM migrated or paused, a leap in NTP: the clock moves far ahead " +
				"between two readings. Timeouts fire at once, certificates and tokens look expired, rate limits reset.",
			Touches:  clocks,
			Expected: "Treat a large jump as such (re-check rather than expire everything); keep durations on CLOCK_MONOTONIC.",
			Mutation: clockShift(86400),
		},
	)
})
