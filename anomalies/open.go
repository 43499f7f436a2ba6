package anomalies

import (
	"github.com/faultline/faultline/mutators"
)

var _ = family(func() {
	forWriting := func(c *mutators.Call) bool {
		if c.Name == "creat" {
			return true
		}
		fl := mutators.OpenFlags(c)
		return userCall(c) && (fl.HasFlag("O_WRONLY") || fl.HasFlag("O_RDWR") || fl.HasFlag("O_CREAT") || fl.HasFlag("O_TRUNC"))
	}
	register(
		&Anomaly{
			Name:    "open-eacces",
			Summary: "an open fails with EACCES: permission denied",
			Situation: "Files and directories owned by another user, a umask that left a file unreadable, a " +
				"program run as a different user than in testing, an LSM policy: the open is refused.",
			Touches:  opens,
			Expected: "Report the error naming the file and stop or skip that file; do not go on as if it were empty.",
			Mutation: failure("EACCES", opens, "a successful open of a file the program works with", userCall),
		},
		&Anomaly{
			Name:    "open-emfile",
			Summary: "an open fails with EMFILE: the process has no descriptors left",
			Situation: "A descriptor leak, a low RLIMIT_NOFILE (1024 by default) or many connections exhaust the " +
				"process's descriptor table; every open, socket and accept fails until some are closed.",
			Touches:  opens,
			Expected: "Report the error (\"Too many open files\"), close what can be closed, and not lose data already in flight.",
			Mutation: failure("EMFILE", opens, "a successful open of a file the program works with", userCall),
		},
		&Anomaly{
			Name:    "open-erofs",
			Summary: "an open for writing fails with EROFS: the file system is read-only",
			Situation: "A file system remounted read-only after an error, a read-only container layer or bind " +
				"mount, install media: opens for writing fail while reads still work.",
			Touches:  opens,
			Expected: "Report that the output cannot be written; leave the input untouched.",
			Mutation: failure("EROFS", opens, "a successful open for writing or creating", forWriting),
		},
		&Anomaly{
			Name:    "open-eloop",
			Summary: "an open fails with ELOOP: too many symbolic links, or O_NOFOLLOW met a link",
			Situation: "A symlink loop, a chain of more than 40 links, or (with O_NOFOLLOW) a path whose last " +
				"component was replaced by a symlink, as in a symlink attack on a shared directory.",
			Touches:  opens,
			Expected: "Report the error and do not retry without O_NOFOLLOW: the link may be an attack.",
			Mutation: failure("ELOOP", opens, "a successful open of a file the program works with", userCall),
		},
	)
})
