package anomalies

var _ = family(func() {
	register(
		&Anomaly{
			Name:    "close-eio",
			Summary: "close fails with EIO: an earlier deferred write failed",
			Situation: "On NFS, CIFS and FUSE file systems (and with quotas) data is sent at close, so a write " +
				"error is reported by close. Programs that ignore close's result report success for a file " +
				"that was not written.",
			Touches:  []string{"close"},
			Expected: "Check close's result on files that were written and report the error; do not retry the close.",
			Mutation: failure("EIO", []string{"close"}, "a successful close of a file", fileFD),
		},
		&Anomaly{
			Name:    "close-eintr",
			Summary: "close fails with EINTR: a signal interrupted it",
			Situation: "close may be interrupted on network file systems. On Linux the descriptor is released " +
				"anyway, so retrying close can close a descriptor another thread just opened.",
			Touches:  []string{"close"},
			Expected: "Do not retry the close; treat the data as possibly unwritten if it mattered (fsync before close).",
			Mutation: failure("EINTR", []string{"close"}, "a successful close of a file", fileFD),
		},
	)
})
