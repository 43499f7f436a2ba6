package anomalies

import (
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

var _ = family(func() {
	register(
		&Anomaly{
			Name:    "inode-changed",
			Summary: "two stats of one path disagree on st_ino: the file was replaced in between",
			Situation: "Between a check and a use another process renamed a new file over the path, or an " +
				"attacker swapped it (TOCTOU). CrashSimulator found shutil not re-checking the inode between " +
				"examining the source and copying it.",
			Touches: stats,
			Expected: "Notice the change (compare st_dev/st_ino of the path with those of the opened descriptor) " +
				"and stop or start over instead of acting on the wrong file.",
			Mutation: &mutators.Mutation{
				Wants: "a successful stat of a regular file (path or descriptor) that an earlier stat in the trace already reported with the same inode",
				Match: func(s *mutators.Site) bool {
					st := statOf(s.Call)
					return st != nil && regular(st) && earlierIno(s) >= 0
				},
				Edit: func(s *mutators.Site) error {
					ino := earlierIno(s)
					return mutators.SetFieldInt(mutators.StatStruct(s.Edit().Args), inoName(s.Call), ino+1)
				},
			},
		},
		&Anomaly{
			Name:    "nlink-many",
			Summary: "a stat reports st_nlink=2: the regular file has another hard link",
			Situation: "Backups made with cp -l or rsync --link-dest, package managers and mail stores hard-link " +
				"files. Replacing such a file by writing a new one and renaming it over breaks the link; writing " +
				"in place changes every name. Tools like logrotate and editors decide by st_nlink.",
			Touches:  stats,
			Expected: "Decide deliberately: preserve the link (write in place) or warn that it will be broken; a program that checks st_nlink diverges.",
			Mutation: &mutators.Mutation{
				Wants: "a successful stat with st_nlink=1 of a regular file (st_nlink needs strace -v)",
				Match: func(s *mutators.Site) bool {
					st := statOf(s.Call)
					n, ok := fieldOf(st, "st_nlink", "stx_nlink")
					return st != nil && ok && n == 1 && regular(st)
				},
				Edit: func(s *mutators.Site) error {
					st := mutators.StatStruct(s.Edit().Args)
					if st.Field("st_nlink") != nil {
						return mutators.SetFieldInt(st, "st_nlink", 2)
					}
					return mutators.SetFieldInt(st, "stx_nlink", 2)
				},
			},
		},
		&Anomaly{
			Name:    "file-grows",
			Summary: "the file grows between a stat and the read: the stat reports half the size read later",
			Situation: "Log files, downloads in progress and files another process appends to grow while being " +
				"read. A program that sizes its buffer or its copy by st_size and trusts it truncates the file " +
				"or overruns the buffer. The stat is edited to report half the size, so the reads that follow " +
				"(unchanged) return more than it said.",
			Touches:  stats,
			Expected: "Read until end of file rather than st_size bytes, or notice the size changed and handle it.",
			Mutation: &mutators.Mutation{
				Wants: "a successful stat of a regular file of at least 2 bytes that the program then reads (needs strace -y or an fstat)",
				Match: func(s *mutators.Site) bool {
					st := statOf(s.Call)
					n, ok := fieldOf(st, "st_size", "stx_size")
					return st != nil && ok && n >= 2 && regular(st) && readAfter(s)
				},
				Edit: func(s *mutators.Site) error {
					st := mutators.StatStruct(s.Edit().Args)
					name := "st_size"
					if st.Field(name) == nil {
						name = "stx_size"
					}
					n, _ := mutators.FieldInt(st, name)
					return mutators.SetFieldInt(st, name, n/2)
				},
			},
		},
	)
})

// statOf is the structure of a successful stat-family call on a user file.
func statOf(c *mutators.Call) *parser.Struct {
	if !has(stats, c.Name) || !c.Succeeded() || !userCall(c) {
		return nil
	}
	return mutators.StatStruct(c.Args)
}

func fieldOf(st *parser.Struct, names ...string) (int64, bool) {
	if st == nil {
		return 0, false
	}
	for _, n := range names {
		if v, ok := mutators.FieldInt(st, n); ok {
			return v, true
		}
	}
	return 0, false
}

func regular(st *parser.Struct) bool {
	return mutators.FileType(mutators.ModeField(st).Value) == "S_IFREG"
}

func inoName(c *mutators.Call) string {
	if c.Name == "statx" {
		return "stx_ino"
	}
	return "st_ino"
}

// earlierIno is the inode an earlier stat of the same file reported, if
// it equals this stat's, else -1. Files are matched by resolved path or -y
// descriptor path.
func earlierIno(s *mutators.Site) int64 {
	st := statOf(s.Call)
	ino, ok := fieldOf(st, "st_ino", "stx_ino")
	targets := s.Call.Paths()
	if !ok || len(targets) == 0 {
		return -1
	}
	found := int64(-1)
	s.Prev(func(c *mutators.Call) bool {
		pst := statOf(c)
		if pst == nil {
			return true
		}
		pino, ok := fieldOf(pst, "st_ino", "stx_ino")
		if !ok {
			return true // without -v the inode is not shown: look further back
		}
		for _, p := range c.Paths() {
			if has(targets, p) {
				if pino == ino {
					found = ino
				}
				return false
			}
		}
		return true
	})
	return found
}

// readAfter reports whether the program reads the stat'ed file later: a
// read whose -y path is one the stat named, or, for an fstat without -y,
// a read of the same descriptor in the same process before it is closed.
func readAfter(s *mutators.Site) bool {
	targets := s.Call.Paths()
	fd, _, isFD := s.Call.FD()
	isFD = isFD && (s.Call.Name == "fstat" || s.Call.Name == "newfstatat" || s.Call.Name == "statx")
	found := false
	s.Next(func(c *mutators.Call) bool {
		if c.Pid == s.Call.Pid && c.Name == "close" {
			if cfd, _, ok := c.FD(); ok && isFD && cfd == fd {
				return false
			}
		}
		if (c.Name == "read" || c.Name == "pread64" || c.Name == "readv") && c.Succeeded() {
			for _, p := range c.FDPaths() {
				if has(targets, p) {
					found = true
					return false
				}
			}
			if rfd, dp, ok := c.FD(); ok && isFD && dp == "" && c.Pid == s.Call.Pid && rfd == fd {
				found = true
				return false
			}
		}
		return true
	})
	return found
}
