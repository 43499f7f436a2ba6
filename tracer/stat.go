package tracer

import (
	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// The stat family: strace shows st_mode and st_size (st_rdev for
// devices) and "..." by default, every field with -v.

var fileTypes = enum{
	unix.S_IFREG: "S_IFREG", unix.S_IFDIR: "S_IFDIR", unix.S_IFLNK: "S_IFLNK", unix.S_IFCHR: "S_IFCHR",
	unix.S_IFBLK: "S_IFBLK", unix.S_IFIFO: "S_IFIFO", unix.S_IFSOCK: "S_IFSOCK",
}

// modeExpr is S_IFREG|S_ISUID|0755, or the permissions alone for a mode
// with no type bits.
func modeExpr(m uint32) *parser.Expr {
	var names []string
	if t := uint64(m & unix.S_IFMT); t != 0 {
		if n, ok := fileTypes[t]; ok {
			names = append(names, n)
		} else {
			names = append(names, octText(t))
		}
	}
	for _, b := range []flag{{unix.S_ISUID, "S_ISUID"}, {unix.S_ISGID, "S_ISGID"}, {unix.S_ISVTX, "S_ISVTX"}} {
		if uint64(m)&b.v != 0 {
			names = append(names, b.name)
		}
	}
	names = append(names, octText(uint64(m&0777)))
	return parser.Flags(names...)
}

// makedev(0x8, 0x1), as glibc splits a dev_t.
func makedev(dev uint64) *parser.Expr {
	return parser.CallExpr("makedev", parser.Hex(uint64(unix.Major(dev))), parser.Hex(uint64(unix.Minor(dev))))
}

func isDev(m uint32) bool { return m&unix.S_IFMT == unix.S_IFCHR || m&unix.S_IFMT == unix.S_IFBLK }

func timeField(name string, sec, nsec int64) []*parser.Arg {
	return []*parser.Arg{
		parser.Field(name, parser.Dec(sec).WithComment(isoComment(sec, nsec))),
		parser.Field(name+"_nsec", parser.Udec(uint64(nsec))),
	}
}

func (d *dec) stat(addr uint64) *parser.Expr {
	var st unix.Stat_t
	if readStruct(d.pid, addr, &st) != nil {
		return parser.Hex(addr)
	}
	if !d.t.c.Verbose {
		f := []*parser.Arg{parser.Field("st_mode", modeExpr(st.Mode))}
		if isDev(st.Mode) {
			f = append(f, parser.Field("st_rdev", makedev(st.Rdev)))
		} else {
			f = append(f, parser.Field("st_size", parser.Dec(st.Size)))
		}
		return parser.NewStruct(append(f, parser.More())...)
	}
	f := []*parser.Arg{
		parser.Field("st_dev", makedev(st.Dev)),
		parser.Field("st_ino", parser.Udec(st.Ino)),
		parser.Field("st_mode", modeExpr(st.Mode)),
		parser.Field("st_nlink", parser.Udec(st.Nlink)),
		parser.Field("st_uid", parser.Udec(uint64(st.Uid))),
		parser.Field("st_gid", parser.Udec(uint64(st.Gid))),
		parser.Field("st_blksize", parser.Dec(st.Blksize)),
		parser.Field("st_blocks", parser.Dec(st.Blocks)),
	}
	if isDev(st.Mode) {
		f = append(f, parser.Field("st_rdev", makedev(st.Rdev)))
	} else {
		f = append(f, parser.Field("st_size", parser.Dec(st.Size)))
	}
	f = append(f, timeField("st_atime", st.Atim.Sec, st.Atim.Nsec)...)
	f = append(f, timeField("st_mtime", st.Mtim.Sec, st.Mtim.Nsec)...)
	f = append(f, timeField("st_ctime", st.Ctim.Sec, st.Ctim.Nsec)...)
	return parser.NewStruct(f...)
}

var kStatOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
	if d.failed() {
		return pos(ptr(d.arg(i)))
	}
	return pos(d.stat(d.arg(i)))
}}

var statxAttrs = flagSet{{0x4, "STATX_ATTR_COMPRESSED"}, {0x10, "STATX_ATTR_IMMUTABLE"}, {0x20, "STATX_ATTR_APPEND"},
	{0x40, "STATX_ATTR_NODUMP"}, {0x800, "STATX_ATTR_ENCRYPTED"}, {0x1000, "STATX_ATTR_AUTOMOUNT"},
	{0x2000, "STATX_ATTR_MOUNT_ROOT"}, {0x100000, "STATX_ATTR_VERITY"}, {0x200000, "STATX_ATTR_DAX"}}

func statxTime(name string, t unix.StatxTimestamp) *parser.Arg {
	return parser.Field(name, tsStruct(timespec{t.Sec, int64(t.Nsec)}).WithComment(isoComment(t.Sec, int64(t.Nsec))))
}

func (d *dec) statx(addr uint64) *parser.Expr {
	var st unix.Statx_t
	if readStruct(d.pid, addr, &st) != nil {
		return parser.Hex(addr)
	}
	mask := parser.Field("stx_mask", statxMask.expr(uint64(st.Mask), ""))
	attrs := parser.Field("stx_attributes", statxAttrs.expr(st.Attributes, ""))
	mode := parser.Field("stx_mode", modeExpr(uint32(st.Mode)))
	if !d.t.c.Verbose {
		return parser.NewStruct(mask, attrs, mode, parser.Field("stx_size", parser.Udec(st.Size)), parser.More())
	}
	return parser.NewStruct(mask,
		parser.Field("stx_blksize", parser.Udec(uint64(st.Blksize))),
		attrs,
		parser.Field("stx_nlink", parser.Udec(uint64(st.Nlink))),
		parser.Field("stx_uid", parser.Udec(uint64(st.Uid))),
		parser.Field("stx_gid", parser.Udec(uint64(st.Gid))),
		mode,
		parser.Field("stx_ino", parser.Udec(st.Ino)),
		parser.Field("stx_size", parser.Udec(st.Size)),
		parser.Field("stx_blocks", parser.Udec(st.Blocks)),
		parser.Field("stx_attributes_mask", statxAttrs.expr(st.Attributes_mask, "")),
		statxTime("stx_atime", st.Atime),
		statxTime("stx_btime", st.Btime),
		statxTime("stx_ctime", st.Ctime),
		statxTime("stx_mtime", st.Mtime),
		parser.Field("stx_rdev_major", parser.Udec(uint64(st.Rdev_major))),
		parser.Field("stx_rdev_minor", parser.Udec(uint64(st.Rdev_minor))),
		parser.Field("stx_dev_major", parser.Udec(uint64(st.Dev_major))),
		parser.Field("stx_dev_minor", parser.Udec(uint64(st.Dev_minor))),
		parser.Field("stx_mnt_id", parser.Hex(st.Mnt_id)),
	)
}

var kStatxOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
	if d.failed() {
		return pos(ptr(d.arg(i)))
	}
	return pos(d.statx(d.arg(i)))
}}

var kStatxMask = flagKind32(statxMask, "")

var fsMagics = enum{0xef53: "EXT2_SUPER_MAGIC", 0x01021994: "TMPFS_MAGIC", 0x9123683e: "BTRFS_SUPER_MAGIC",
	0x58465342: "XFS_SUPER_MAGIC", 0x794c7630: "OVERLAYFS_SUPER_MAGIC", 0x9fa0: "PROC_SUPER_MAGIC",
	0x62656572: "SYSFS_MAGIC", 0x65735546: "FUSE_SUPER_MAGIC", 0x1cd1: "DEVPTS_SUPER_MAGIC",
	0x27e0eb: "CGROUP_SUPER_MAGIC", 0x63677270: "CGROUP2_SUPER_MAGIC", 0x858458f6: "RAMFS_MAGIC",
	0x6969: "NFS_SUPER_MAGIC", 0x4d44: "MSDOS_SUPER_MAGIC", 0xf2f52010: "F2FS_SUPER_MAGIC",
	0x73717368: "SQUASHFS_MAGIC", 0x9660: "ISOFS_SUPER_MAGIC", 0x2fc12fc1: "ZFS_SUPER_MAGIC",
	0x64626720: "DEBUGFS_MAGIC", 0x42494e4d: "BINFMTFS_MAGIC", 0x73636673: "SECURITYFS_MAGIC",
	0xcafe4a11: "BPF_FS_MAGIC", 0x6e736673: "NSFS_MAGIC", 0x19800202: "MQUEUE_MAGIC", 0x74726163: "TRACEFS_MAGIC",
	0x958458f6: "HUGETLBFS_MAGIC"}

var stFlags = flagSet{{1, "ST_RDONLY"}, {2, "ST_NOSUID"}, {4, "ST_NODEV"}, {8, "ST_NOEXEC"}, {0x10, "ST_SYNCHRONOUS"},
	{0x20, "ST_VALID"}, {0x40, "ST_MANDLOCK"}, {0x80, "ST_WRITE"}, {0x100, "ST_APPEND"}, {0x200, "ST_IMMUTABLE"},
	{0x400, "ST_NOATIME"}, {0x800, "ST_NODIRATIME"}, {0x1000, "ST_RELATIME"}, {0x2000, "ST_NOSYMFOLLOW"}}

func (d *dec) statfs(addr uint64) *parser.Expr {
	var st unix.Statfs_t
	if readStruct(d.pid, addr, &st) != nil {
		return parser.Hex(addr)
	}
	return parser.NewStruct(
		parser.Field("f_type", fsMagics.expr(uint64(st.Type), "")),
		parser.Field("f_bsize", parser.Dec(st.Bsize)),
		parser.Field("f_blocks", parser.Udec(st.Blocks)),
		parser.Field("f_bfree", parser.Udec(st.Bfree)),
		parser.Field("f_bavail", parser.Udec(st.Bavail)),
		parser.Field("f_files", parser.Udec(st.Files)),
		parser.Field("f_ffree", parser.Udec(st.Ffree)),
		parser.Field("f_fsid", parser.NewStruct(parser.Field("val", parser.NewArray(parser.Hex(uint64(uint32(st.Fsid.Val[0]))), parser.Hex(uint64(uint32(st.Fsid.Val[1]))))))),
		parser.Field("f_namelen", parser.Dec(st.Namelen)),
		parser.Field("f_frsize", parser.Dec(st.Frsize)),
		parser.Field("f_flags", stFlags.expr(uint64(st.Flags), "")),
	)
}

var kStatfsOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
	if d.failed() {
		return pos(ptr(d.arg(i)))
	}
	return pos(d.statfs(d.arg(i)))
}}

// kSymMode is a mode with its file type (mknod).
var kSymMode = kind{in: func(d *dec, i int) *parser.Arg { return pos(modeExpr(uint32(d.arg(i)))) }}

// kDev is mknod's device, printed only for devices.
var kDev = kind{in: func(d *dec, i int) *parser.Arg {
	if !isDev(uint32(d.arg(i - 1))) {
		return nil
	}
	return pos(makedev(d.arg(i)))
}}
