package anomalies

var _ = family(func() {
	register(
		&Anomaly{
			Name:    "unlink-ebusy",
			Summary: "unlink fails with EBUSY: the file is in use as a mount point",
			Situation: "A file that is a mount point (bind-mounted config in a container, /etc/resolv.conf in " +
				"Docker) cannot be removed; neither can some files on Windows-backed shares.",
			Touches:  unlinks,
			Expected: "Report the error; if the unlink was part of replacing the file, write it in place or give up without losing it.",
			Mutation: failure("EBUSY", unlinks, "a successful unlink or unlinkat", userCall),
		},
		&Anomaly{
			Name:    "unlink-eperm",
			Summary: "unlink fails with EPERM: the file is immutable or the directory is sticky",
			Situation: "chattr +i / +a files, another user's file in a sticky directory like /tmp, or a file " +
				"system that does not allow it: the unlink is refused even though the directory is writable.",
			Touches:  unlinks,
			Expected: "Report the error; a move must not report success while the source is still there.",
			Mutation: failure("EPERM", unlinks, "a successful unlink or unlinkat", userCall),
		},
	)
})
