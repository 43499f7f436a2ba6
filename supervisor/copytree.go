package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// copyTree copies the contents of src into the existing directory dst,
// preserving what a program may look at: file type, mode (with setuid
// bits), owner, timestamps, xattrs, symlink targets, device numbers, and
// hard links within the tree. dst itself takes src's attributes.
func copyTree(src, dst string) error {
	links := map[[2]uint64]string{}
	if err := copyDirContents(src, dst, links); err != nil {
		return err
	}
	return copyAttrs(src, dst, false)
}

func copyDirContents(src, dst string, links map[[2]uint64]string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if err := copyEntry(s, d, links); err != nil {
			return err
		}
	}
	return nil
}

func copyEntry(s, d string, links map[[2]uint64]string) error {
	var st unix.Stat_t
	if err := unix.Lstat(s, &st); err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	typ := st.Mode & unix.S_IFMT
	if typ != unix.S_IFDIR && st.Nlink > 1 {
		key := [2]uint64{st.Dev, st.Ino}
		if first, ok := links[key]; ok {
			if err := os.Link(first, d); err != nil {
				return fmt.Errorf("%s: %w", d, err)
			}
			return nil
		}
		links[key] = d
	}
	switch typ {
	case unix.S_IFDIR:
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		if err := copyDirContents(s, d, links); err != nil {
			return err
		}
	case unix.S_IFREG:
		if err := copyFileData(s, d); err != nil {
			return err
		}
	case unix.S_IFLNK:
		target, err := os.Readlink(s)
		if err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		if err := os.Symlink(target, d); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
		return copyAttrs(s, d, true)
	default: // fifo, socket, devices
		if err := unix.Mknod(d, st.Mode, int(st.Rdev)); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	return copyAttrs(s, d, false)
}

func copyFileData(s, d string) error {
	in, err := os.Open(s)
	if err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	defer in.Close()
	out, err := os.OpenFile(d, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("%s: %w", d, err)
	}
	if _, err := out.ReadFrom(in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s: %w", s, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("%s: %w", d, err)
	}
	return nil
}

// copyAttrs carries owner, xattrs, mode and timestamps from s to d, in
// that order: chown clears setuid bits, and every change moves ctime
// but timestamps come last so atime and mtime stay.
func copyAttrs(s, d string, symlink bool) error {
	var st unix.Stat_t
	if err := unix.Lstat(s, &st); err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	if err := unix.Lchown(d, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("%s: chown: %w", d, err)
	}
	if err := copyXattrs(s, d); err != nil {
		return err
	}
	if !symlink {
		if err := unix.Chmod(d, st.Mode&07777); err != nil {
			return fmt.Errorf("%s: chmod: %w", d, err)
		}
	}
	ts := []unix.Timespec{st.Atim, st.Mtim}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, d, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("%s: set times: %w", d, err)
	}
	return nil
}

func copyXattrs(s, d string) error {
	sz, err := unix.Llistxattr(s, nil)
	if err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			return nil
		}
		return fmt.Errorf("%s: list xattrs: %w", s, err)
	}
	if sz == 0 {
		return nil
	}
	buf := make([]byte, sz)
	sz, err = unix.Llistxattr(s, buf)
	if err != nil {
		return fmt.Errorf("%s: list xattrs: %w", s, err)
	}
	for _, name := range splitNul(buf[:sz]) {
		vsz, err := unix.Lgetxattr(s, name, nil)
		if err != nil {
			return fmt.Errorf("%s: xattr %s: %w", s, name, err)
		}
		val := make([]byte, vsz)
		if vsz, err = unix.Lgetxattr(s, name, val); err != nil {
			return fmt.Errorf("%s: xattr %s: %w", s, name, err)
		}
		if err := unix.Lsetxattr(d, name, val[:vsz], 0); err != nil {
			return fmt.Errorf("%s: set xattr %s: %w", d, name, err)
		}
	}
	return nil
}

func splitNul(b []byte) []string {
	var out []string
	start := 0
	for i, c := range b {
		if c == 0 {
			if i > start {
				out = append(out, string(b[start:i]))
			}
			start = i + 1
		}
	}
	return out
}

// CopyEntry copies one file, directory tree or symlink src to the path
// dst (which must not exist), preserving what copyTree preserves.
func CopyEntry(src, dst string) error {
	return copyEntry(src, dst, map[[2]uint64]string{})
}
