package anomalies

import (
	"github.com/faultline/faultline/mutators"
)

var _ = family(func() {
	register(&Anomaly{
		Name:    "kill",
		Summary: "the process is killed with SIGKILL right after the selected call",
		Situation: "The OOM killer, a timeout wrapper, systemd stopping a service, kill -9 from a user, a " +
			"container eviction: the process dies between two system calls with no chance to clean up. What " +
			"it left on disk is all there is for the next run.",
		Touches: []string{"any"},
		Expected: "Nothing at the time; the next run must find a consistent state (the old file or the new one, " +
			"never a truncated mix), which the crash-consistency oracle judges on the state the kill leaves.",
		Mutation: &mutators.Mutation{
			Wants: "any call (the first selected one unless nth is given)",
			Match: func(s *mutators.Site) bool { return true },
			Edit: func(s *mutators.Site) error {
				s.Insert("kill: the process is killed here", mutators.KillEvent())
				return nil
			},
			Once: true,
		},
	})
})
