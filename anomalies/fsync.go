package anomalies

import (
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

var fsyncs = []string{"fsync", "fdatasync"}

var _ = family(func() {
	register(
		&Anomaly{
			Name:    "fsync-eio",
			Summary: "fsync fails with EIO: the data could not be written back",
			Situation: "A disk error, a full thin-provisioned volume or a lost network block device makes " +
				"write-back fail, and the kernel reports it once, at the next fsync. On Linux the dirty pages " +
				"are then marked clean (the \"fsyncgate\" of PostgreSQL, 2018): retrying fsync returns 0 although " +
				"the data never reached the disk.",
			Touches: []string{"fsync"},
			Expected: "Treat the data as lost: report the error, do not rename the file over the original or " +
				"delete the source, and do not retry fsync as if a second success meant anything.",
			Mutation: failure("EIO", []string{"fsync"}, "a successful fsync", nil),
		},
		&Anomaly{
			Name:      "fdatasync-eio",
			Summary:   "fdatasync fails with EIO: the data could not be written back",
			Situation: "As fsync-eio, for programs that use fdatasync (databases, logs) to skip the metadata flush.",
			Touches:   []string{"fdatasync"},
			Expected:  "As for fsync-eio: the data written since the last successful sync is lost; report it and stop.",
			Mutation:  failure("EIO", []string{"fdatasync"}, "a successful fdatasync", nil),
		},
		&Anomaly{
			Name:    "fsync-lies",
			Summary: "fsync and fdatasync return 0 without syncing anything",
			Situation: "Disks with a volatile write cache that ignore flushes, virtual disks with cache=unsafe, " +
				"eatmydata, and some network and FUSE file systems acknowledge a sync that did not happen. A " +
				"program cannot see this; what matters is whether its on-disk state is still recoverable after " +
				"a crash, which the crash-consistency oracle judges.",
			Touches: fsyncs,
			Expected: "Nothing visible: the replay should not diverge. The finding, if any, comes from the " +
				"crash states: data the program believed durable is gone.",
			Mutation: &mutators.Mutation{
				Wants: "a successful fsync or fdatasync",
				Match: mutators.All(mutators.Named(fsyncs...), mutators.Succeeded),
				Edit: func(s *mutators.Site) error {
					// The value stays; the note tells the supervisor not to
					// perform the call (see package mutators).
					r := parser.Ret(s.Edit().Result.Value)
					r.Outcome.Notes = []string{mutators.NotPerformed}
					s.SetResult(r)
					return nil
				},
			},
		},
	)
})
