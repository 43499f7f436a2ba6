package blockrec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// live holds every object of this process that owns kernel state (mounts,
// loop devices, FUSE servers), so a signal handler or a recovered panic can
// release all of it with CloseAll.
var live = struct {
	sync.Mutex
	m map[io.Closer]struct{}
}{m: map[io.Closer]struct{}{}}

func register(c io.Closer) {
	live.Lock()
	live.m[c] = struct{}{}
	live.Unlock()
}

func unregister(c io.Closer) {
	live.Lock()
	delete(live.m, c)
	live.Unlock()
}

// CloseAll closes every Recorder and Checker of this process that is still
// open, then removes the runtime directory. The command calls it from its
// SIGINT/SIGTERM handler and from a deferred recover; a SIGKILL leaves work
// for CleanupStale instead.
func CloseAll() error {
	live.Lock()
	var cs []io.Closer
	for c := range live.m {
		cs = append(cs, c)
	}
	live.Unlock()
	var errs []error
	for _, c := range cs {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := removeRuntimeDirIfIdle(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// StaleReport lists what CleanupStale removed.
type StaleReport struct {
	Dirs   []string // runtime dirs of dead processes
	Mounts []string // mount points unmounted
	Loops  []string // loop devices detached
}

// CleanupStale removes what dead faultline processes left behind: mounts on
// their loop devices (the sandbox can be anywhere, so it is found by its
// device), mounts below their runtime dirs (FUSE servers, crash-image
// mount points), their loop devices and the dirs themselves. A process
// counts as dead when its pid no longer runs with the start time recorded in
// its owner file. Unmounts are lazy so a dead FUSE server can never make
// cleanup hang.
func CleanupStale() (StaleReport, error) {
	var rep StaleReport
	ents, err := os.ReadDir(RunRoot)
	if errors.Is(err, os.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("blockrec: listing %s: %w", RunRoot, err)
	}
	var prefixes []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !e.IsDir() {
			continue
		}
		dir := filepath.Join(RunRoot, e.Name())
		if processAlive(pid, dir) {
			continue
		}
		prefixes = append(prefixes, dir+"/")
	}
	if len(prefixes) == 0 {
		return rep, nil
	}
	under := func(p string) bool {
		for _, pre := range prefixes {
			if strings.HasPrefix(p, pre) || p+"/" == pre {
				return true
			}
		}
		return false
	}

	// Loop devices first: their backing-file paths still name the dead
	// process only while its FUSE mount exists.
	loops := map[string]int{}
	sysLoops, _ := filepath.Glob("/sys/block/loop*")
	for _, s := range sysLoops {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(s), "loop"))
		if err != nil {
			continue
		}
		if b := loopBackingFile(n); b != "" && under(b) {
			loops[fmt.Sprintf("/dev/loop%d", n)] = n
		}
	}

	var errs []error
	mounts, err := readMountInfo()
	if err != nil {
		return rep, err
	}
	// Children were mounted after parents: undo in reverse.
	var fuseConns []int
	for i := len(mounts) - 1; i >= 0; i-- {
		m := mounts[i]
		_, onLoop := loops[m.source]
		if !onLoop && !under(m.point) {
			continue
		}
		if strings.HasPrefix(m.fstype, "fuse") {
			fuseConns = append(fuseConns, m.minor)
		}
		if err := unix.Unmount(m.point, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			errs = append(errs, fmt.Errorf("blockrec: unmounting stale %s: %w", m.point, err))
			continue
		}
		rep.Mounts = append(rep.Mounts, m.point)
	}
	for _, c := range fuseConns {
		abortFUSE(c)
	}
	for dev := range loops {
		f, err := os.OpenFile(dev, os.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // autoclear already detached it
		}
		err = unix.IoctlSetInt(int(f.Fd()), unix.LOOP_CLR_FD, 0)
		f.Close()
		if err != nil && !errors.Is(err, unix.ENXIO) {
			errs = append(errs, fmt.Errorf("blockrec: detaching stale %s: %w", dev, err))
			continue
		}
		rep.Loops = append(rep.Loops, dev)
	}
	sort.Strings(rep.Loops)
	for _, pre := range prefixes {
		dir := strings.TrimSuffix(pre, "/")
		if err := removeTree(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		rep.Dirs = append(rep.Dirs, dir)
	}
	return rep, errors.Join(errs...)
}

func processAlive(pid int, dir string) bool {
	want, err := os.ReadFile(filepath.Join(dir, "owner"))
	if err != nil {
		// No owner file: either it died while creating the dir, or it is
		// not ours. Only a running process with that pid keeps it.
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return err == nil
	}
	got, err := procStartTime(pid)
	return err == nil && got == strings.TrimSpace(string(want))
}

// abortFUSE aborts a FUSE connection through fusectl, mounting fusectl if
// nobody has. A connection whose server died is already aborted by the
// kernel; this covers a server that is alive but wedged.
func abortFUSE(minor int) {
	const conns = "/sys/fs/fuse/connections"
	p := filepath.Join(conns, strconv.Itoa(minor), "abort")
	if _, err := os.Stat(p); err != nil {
		_ = unix.Mount("fusectl", conns, "fusectl", 0, "")
	}
	_ = os.WriteFile(p, []byte("1"), 0)
}

type mountInfo struct {
	point, fstype, source string
	minor                 int
}

func readMountInfo() ([]mountInfo, error) { return readMountInfoFile("/proc/self/mountinfo") }

func readMountInfoFile(name string) ([]mountInfo, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("blockrec: reading mountinfo: %w", err)
	}
	defer f.Close()
	var ms []mountInfo
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		// id parent maj:min root point opts [optional...] - fstype source super
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+2 >= len(f) || len(f) < 5 {
			continue
		}
		m := mountInfo{point: unescapeMount(f[4]), fstype: f[sep+1], source: unescapeMount(f[sep+2])}
		if _, mi, ok := strings.Cut(f[2], ":"); ok {
			m.minor, _ = strconv.Atoi(mi)
		}
		ms = append(ms, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("blockrec: reading mountinfo: %w", err)
	}
	return ms, nil
}

// unescapeMount undoes the octal escapes (\040 for space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeObjectDir removes one object's directory.
func removeObjectDir(dir string) error { return removeTree(dir) }

// removeTree is os.RemoveAll that refuses to cross into another file
// system: if a mount survived below dir, deleting through it would destroy
// a sandbox or a crash image instead of an empty mount point.
func removeTree(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("blockrec: removing %s: %w", dir, err)
	}
	return removeSameDev(dir, st.Dev)
}

func removeSameDev(p string, dev uint64) error {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		// A FUSE mount whose server is gone, not in the mount table when
		// it was read (its process was still tearing down): detach it and
		// look again. Each detach removes one mount, so this ends.
		if errors.Is(err, unix.ENOTCONN) && unix.Unmount(p, unix.MNT_DETACH) == nil {
			return removeSameDev(p, dev)
		}
		return fmt.Errorf("blockrec: removing %s: %w", p, err)
	}
	if st.Dev != dev {
		return fmt.Errorf("blockrec: not removing %s: a file system is still mounted there", p)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		ents, err := os.ReadDir(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("blockrec: removing %s: %w", p, err)
		}
		for _, e := range ents {
			if err := removeSameDev(filepath.Join(p, e.Name()), dev); err != nil {
				return err
			}
		}
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("blockrec: removing %s: %w", p, err)
	}
	return nil
}
