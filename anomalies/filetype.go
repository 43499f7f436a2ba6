package anomalies

import (
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

// fileTypes are the other things a path can turn out to be, with the
// device number a device reports (that of /dev/null and of /dev/loop0).
var fileTypes = []struct {
	name, mode, what, rdevMajor, rdevMinor string
}{
	{"chr", "S_IFCHR", "a character device (a tty, /dev/null, /dev/zero)", "0x1", "0x3"},
	{"blk", "S_IFBLK", "a block device (a disk or loop device)", "0x7", "0"},
	{"fifo", "S_IFIFO", "a named pipe (FIFO), whose reads block until a writer comes", "", ""},
	{"sock", "S_IFSOCK", "a UNIX domain socket, which cannot be opened at all", "", ""},
	{"lnk", "S_IFLNK", "a symbolic link (as lstat reports one), possibly pointing anywhere", "", ""},
	{"dir", "S_IFDIR", "a directory", "", ""},
}

var _ = family(func() {
	for _, ft := range fileTypes {
		ft := ft
		register(&Anomaly{
			Name:    "filetype-" + ft.name,
			Summary: "a stat of a regular file reports " + ft.mode + ": the file is " + ft.what,
			Situation: "Programs are handed paths by users, scripts and other programs, and a path that was a " +
				"regular file when the author tested may be " + ft.what + " in the field: gzip pointed at a " +
				"device, a backup tool walking /dev, an editor saving over a FIFO. Reading such a file may " +
				"block forever, never end, or fail; replacing it may destroy something that was not a file.",
			Touches: stats,
			Expected: "Check the file type after stat/fstat and refuse, skip or treat specially what is not a " +
				"regular file (gzip: \"not a regular file -- ignored\"), instead of reading or replacing it.",
			Mutation: &mutators.Mutation{
				Wants: "a successful stat, lstat, fstat, newfstatat or statx of a regular file",
				Match: func(s *mutators.Site) bool {
					c := s.Call
					if !has(stats, c.Name) || !c.Succeeded() || !userCall(c) {
						return false
					}
					st := mutators.StatStruct(c.Args)
					return st != nil && mutators.FileType(mutators.ModeField(st).Value) == "S_IFREG"
				},
				Edit: func(s *mutators.Site) error {
					st := mutators.StatStruct(s.Edit().Args)
					mutators.SetFileType(mutators.ModeField(st), ft.mode)
					if ft.rdevMajor != "" {
						// strace prints st_rdev in place of st_size for devices,
						// with -v and without.
						rdev := parser.Field("st_rdev", parser.CallExpr("makedev",
							parser.X(&parser.Int{Text: ft.rdevMajor}), parser.X(&parser.Int{Text: ft.rdevMinor})))
						for i, f := range st.Fields {
							if f.Name == "st_size" {
								st.Fields[i] = rdev
							}
						}
					}
					return nil
				},
			},
		})
	}
})
