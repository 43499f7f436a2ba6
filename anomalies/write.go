package anomalies

import (
	"github.com/faultline/faultline/mutators"
)

var _ = family(func() {
	fileWrite := func(c *mutators.Call) bool { return fileFD(c) }
	register(
		&Anomaly{
			Name:    "write-enospc",
			Summary: "a write fails with ENOSPC: the file system is full",
			Situation: "Disks fill up: logs, core dumps, a runaway temp file, a small /tmp tmpfs. The write " +
				"that hits the limit may come after earlier writes of the same file succeeded, leaving a " +
				"partial file behind.",
			Touches: writes,
			Expected: "Report the error, remove or keep aside the partial output, and never replace a good file " +
				"with the truncated one (no rename over the original, no unlink of the source).",
			Mutation: failure("ENOSPC", writes, "a successful write to a file", fileWrite),
		},
		&Anomaly{
			Name:      "write-edquot",
			Summary:   "a write fails with EDQUOT: the user's disk quota is exhausted",
			Situation: "On shared machines and home directories with quotas the space runs out per user, while df still shows free space.",
			Touches:   writes,
			Expected:  "As for write-enospc: report it and do not replace good data with the partial file.",
			Mutation:  failure("EDQUOT", writes, "a successful write to a file", fileWrite),
		},
		&Anomaly{
			Name:    "write-efbig",
			Summary: "a write fails with EFBIG: the file would exceed the maximum file size",
			Situation: "RLIMIT_FSIZE (ulimit -f), FAT32's 4 GiB limit, or a file system's maximum file size stop " +
				"a file from growing; with RLIMIT_FSIZE the process also gets SIGXFSZ unless it ignores it.",
			Touches:  writes,
			Expected: "Report the error and leave the previous version of the output intact.",
			Mutation: failure("EFBIG", writes, "a successful write to a file", fileWrite),
		},
		&Anomaly{
			Name:    "write-short",
			Summary: "a write returns half the count: a short write",
			Situation: "write(2) may write less than asked: on a nearly full disk, when a signal arrives, to pipes " +
				"and sockets, on network file systems. Code that treats any non-negative result as complete " +
				"silently drops the rest.",
			Touches:  writes,
			Expected: "Loop: write the remaining bytes until the whole buffer is written or an error is returned.",
			Mutation: &mutators.Mutation{
				Wants: "a successful write of at least 2 bytes to a file",
				Match: func(s *mutators.Site) bool {
					n, ok := s.Call.Result.Int()
					return has(writes, s.Call.Name) && s.Call.Succeeded() && ok && n >= 2 && fileWrite(s.Call)
				},
				Edit: mutators.SetReturn(func(n int64) int64 { return n / 2 }),
			},
		},
	)
})
