package tracer

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/parser"
)

// The conformance test runs real programs under strace -f and under the
// recorder, parses both traces, joins the halves of split calls, and
// compares them thread by thread for the calls faultline decodes. Only
// what cannot repeat between two runs is normalised: pids, addresses,
// times, inode numbers, random bytes, ephemeral ports, temporary names.

// decoded are the calls the issue lists: they must match strace exactly.
var decoded = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`open openat openat2 creat close read write pread64 pwrite64 readv writev
		preadv pwritev lseek stat lstat fstat newfstatat statx access faccessat faccessat2 rename renameat
		renameat2 link linkat symlink symlinkat unlink unlinkat mkdir mkdirat rmdir chmod fchmod fchmodat chown
		fchown lchown fchownat utimensat truncate ftruncate fallocate fsync fdatasync sync syncfs
		sync_file_range getdents64 readlink readlinkat dup dup2 dup3 fcntl ioctl flock copy_file_range sendfile
		setxattr lsetxattr fsetxattr getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr removexattr
		lremovexattr fremovexattr getcwd chdir fchdir umask mknod mknodat statfs fstatfs pipe pipe2 socket
		connect accept accept4 bind listen sendto sendmsg recvfrom recvmsg poll ppoll select pselect6 mmap
		munmap mprotect brk clone clone3 fork vfork execve wait4 exit exit_group kill tgkill rt_sigaction
		rt_sigprocmask rt_sigreturn rt_sigsuspend rt_sigpending getrandom clock_gettime gettimeofday time
		nanosleep clock_nanosleep`) {
		decoded[n] = true
	}
}

type program struct {
	name  string
	setup func(t *testing.T, dir string)
	argv  []string
	env   []string
	opts  func(c *Cmd)
	extra []string // strace options matching opts
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0644); err != nil {
		t.Fatal(err)
	}
	// A fixed mtime: gzip and tar copy it into their output.
	when := time.Unix(1700000000, 0)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

func numbers(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", (i*7919)%n)
	}
	return b.String()
}

func programs(t *testing.T, bin string) []program {
	inputs := func(t *testing.T, dir string) {
		writeFile(t, filepath.Join(dir, "in.txt"), strings.Repeat("faultline conformance input\n", 500))
		writeFile(t, filepath.Join(dir, "data"), numbers(2000))
	}
	py := "/usr/bin/python3"
	return []program{
		{name: "cp", setup: inputs, argv: []string{"cp", "in.txt", "out.txt"}},
		{name: "mv", setup: func(t *testing.T, dir string) { inputs(t, dir); writeFile(t, filepath.Join(dir, "out.txt"), "x\n") }, argv: []string{"mv", "out.txt", "moved.txt"}},
		{name: "ls -l", setup: inputs, argv: []string{"ls", "-l"}},
		{name: "gzip", setup: inputs, argv: []string{"gzip", "-k", "in.txt"}},
		{name: "sort -o", setup: inputs, argv: []string{"sort", "data", "-o", "data"}},
		{name: "tar", setup: inputs, argv: []string{"tar", "cf", "x.tar", "in.txt", "data"}},
		{name: "sed -i", setup: inputs, argv: []string{"sed", "-i", "s/1/2/", "data"}},
		{name: "python3", setup: inputs, argv: []string{py, "-S", "-c",
			"import os\nf = open('a.tmp', 'w')\nf.write('hello')\nf.flush()\nos.fsync(f.fileno())\nf.close()\nos.rename('a.tmp', 'a')\n"}},
		{name: "threads (C)", argv: []string{filepath.Join(bin, "threads")}},
		{name: "calls (C)", argv: []string{filepath.Join(bin, "calls")}},
		{name: "calls (C) -v -y", argv: []string{filepath.Join(bin, "calls")},
			opts: func(c *Cmd) { c.Verbose = true; c.DecodeFDs = true }, extra: []string{"-v", "-y"}},
	}
}

func TestConformance(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace not installed")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	bin := t.TempDir()
	for _, c := range []string{"threads", "calls"} {
		out, err := exec.Command("gcc", "-O1", "-pthread", "-w", "-o", filepath.Join(bin, c), filepath.Join("testdata", c+".c")).CombinedOutput()
		if err != nil {
			t.Fatalf("gcc %s: %v\n%s", c, err, out)
		}
	}
	var report []string
	for _, p := range programs(t, bin) {
		t.Run(p.name, func(t *testing.T) {
			if _, err := exec.LookPath(p.argv[0]); err != nil {
				t.Skipf("%s not installed", p.argv[0])
			}
			work := filepath.Join(t.TempDir(), "work")
			env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", "HOME=/root", "PWD=" + work, "PYTHONHASHSEED=0", "TZ=UTC"}
			fresh := func() {
				os.RemoveAll(work)
				if err := os.Mkdir(work, 0755); err != nil {
					t.Fatal(err)
				}
				if p.setup != nil {
					p.setup(t, work)
				}
			}
			traces := t.TempDir()
			ref := filepath.Join(traces, "strace.txt")
			got := filepath.Join(traces, "faultline.txt")

			fresh()
			args := append([]string{"-f", "-o", ref}, p.extra...)
			cmd := exec.Command("strace", append(append(args, "--"), p.argv...)...)
			cmd.Dir, cmd.Env = work, env
			devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer devnull.Close()
			// Both runs see /dev/null on stdin and stdout.
			cmd.Stdin, cmd.Stdout = devnull, devnull
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Logf("strace %v: %v\n%s", p.argv, err, stderr.String())
			}

			fresh()
			f, err := os.Create(got)
			if err != nil {
				t.Fatal(err)
			}
			rc := &Cmd{Path: p.argv[0], Args: p.argv, Env: env, Dir: work, Follow: true, Output: f}
			if p.opts != nil {
				p.opts(rc)
			}
			rc.Stdin, rc.Stdout = devnull, devnull
			if err := rc.Run(context.Background()); err != nil {
				t.Fatalf("record %v: %v", p.argv, err)
			}
			f.Close()
			match, total, diffs := compareTraces(t, ref, got)
			rate := 100 * float64(match) / float64(max(total, 1))
			line := fmt.Sprintf("%-16s %5d/%5d listed-call lines match (%.1f%%)", p.name, match, total, rate)
			report = append(report, line)
			t.Log(line)
			for i, d := range diffs {
				if i >= 15 {
					t.Logf("... %d more", len(diffs)-i)
					break
				}
				t.Log(d)
			}
			if match != total {
				t.Errorf("%s: %d of %d lines differ from strace (traces in %s)", p.name, total-match, total, traces)
				keep := filepath.Join(os.TempDir(), "faultline-conformance-"+strings.NewReplacer(" ", "_", "(", "", ")", "").Replace(p.name))
				os.MkdirAll(keep, 0755)
				copyFile(ref, filepath.Join(keep, "strace.txt"))
				copyFile(got, filepath.Join(keep, "faultline.txt"))
			}
		})
	}
	t.Log("conformance summary:\n" + strings.Join(report, "\n"))
}

func copyFile(from, to string) {
	b, err := os.ReadFile(from)
	if err == nil {
		os.WriteFile(to, b, 0644)
	}
}

// event is one normalised entry of a thread's history.
type event struct {
	name string // syscall name, or "+++"/"---"
	text string
}

// loadTrace parses a trace, joins split calls and returns each thread's
// events, the threads ordered by creation (root, then its children in
// the order its clone/fork calls returned them, depth first).
func loadTrace(t *testing.T, path string) [][]event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byPid := map[int][]*parser.Syscall{}
	other := map[int][]event{}
	order := map[int][]int{} // pid -> its events' positions, to interleave other lines
	var j parser.Joiner
	var pids []int
	seen := map[int]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	type item struct {
		call *parser.Syscall
		ev   *event
	}
	items := map[int][]item{}
	for sc.Scan() {
		n++
		l, err := parser.ParseLine(path, n, sc.Text())
		if err != nil {
			t.Fatalf("%s does not parse: %v", path, err)
		}
		pid := l.Prefix.Pid.N
		if _, ok := l.Body.(*parser.Comment); ok || l.Body == nil {
			continue
		}
		if !seen[pid] {
			seen[pid] = true
			pids = append(pids, pid)
		}
		switch b := l.Body.(type) {
		case *parser.Exit:
			j.Forget(pid)
			items[pid] = append(items[pid], item{ev: &event{name: "+++", text: parser.Format(b)}})
			continue
		case *parser.Signal:
			items[pid] = append(items[pid], item{ev: &event{name: "---", text: parser.Format(b)}})
			continue
		}
		s, err := j.Add(l)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if s != nil {
			items[pid] = append(items[pid], item{call: s})
			byPid[pid] = append(byPid[pid], s)
		}
	}
	for _, s := range j.Unfinished() {
		items[s.Pid] = append(items[s.Pid], item{call: s})
	}
	_ = other
	_ = order
	// Creation order.
	var ordered []int
	done := map[int]bool{}
	var walk func(pid int)
	walk = func(pid int) {
		if done[pid] {
			return
		}
		done[pid] = true
		ordered = append(ordered, pid)
		for _, it := range items[pid] {
			if it.call == nil || it.call.Result == nil || it.call.Result.Value == nil {
				continue
			}
			switch it.call.Name {
			case "clone", "clone3", "fork", "vfork":
				if child, err := strconv.Atoi(parser.Format(it.call.Result.Value)); err == nil && seen[child] {
					walk(child)
				}
			}
		}
	}
	if len(pids) > 0 {
		walk(pids[0])
	}
	for _, p := range pids {
		walk(p)
	}
	pidIndex := map[string]string{}
	for i, p := range ordered {
		pidIndex[strconv.Itoa(p)] = fmt.Sprintf("PID%d", i)
	}
	var out [][]event
	for _, pid := range ordered {
		var evs []event
		for _, it := range items[pid] {
			if it.ev != nil {
				evs = append(evs, event{it.ev.name, normalise(it.ev.text, pidIndex)})
				continue
			}
			c := &parser.Call{Name: it.call.Name, Args: it.call.Args, Result: it.call.Result}
			if c.Result == nil {
				c.Pending = " <unfinished ...>"
			}
			evs = append(evs, event{it.call.Name, normalise(parser.Format(c), pidIndex)})
		}
		out = append(out, evs)
	}
	return out
}

var (
	reAddr = regexp.MustCompile(`0x[0-9a-f]{5,}`) // non-PIE heaps (python3) start as low as 0xe2c000
	reTime = regexp.MustCompile(`(tv_sec|tv_nsec|tv_usec|st_[amc]time(_nsec)?|stx_[abcm]time|si_utime|si_stime|uptime)=\d+`)
	// A child's CPU time differs between the two runs, and with it
	// whether strace's seconds comment is there at all.
	reTicks    = regexp.MustCompile(`(si_utime|si_stime)=T /\* \d+\.\d+ s \*/`)
	reISO      = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d{4}`)
	reIno      = regexp.MustCompile(`(st_ino|stx_ino|d_ino|d_off|stx_mnt_id|st_dev|stx_dev_major|stx_dev_minor)=[^,}]+`)
	reRandom   = regexp.MustCompile(`^getrandom\("[^"]*"(\.\.\.)?`)
	rePort     = regexp.MustCompile(`htons\(\d{4,5}\)`)
	reFree     = regexp.MustCompile(`(f_bfree|f_bavail|f_ffree|freeram|bufferram|sharedram)=\d+`)
	reSedTmp   = regexp.MustCompile(`sed[A-Za-z0-9]{6}`)
	reNum      = regexp.MustCompile(`\b\d+\b`)
	reTimeRet  = regexp.MustCompile(`^(time\(.*\)\s*= )\d+`)
	reBlocks   = regexp.MustCompile(`(st_blocks|stx_blocks)=\d+`)
	reDecorIno = regexp.MustCompile(`:\[\d+\]>`)
	rePad      = regexp.MustCompile(`\) +=( |$)`)
)

// normalise blanks out what two runs cannot share.
func normalise(s string, pids map[string]string) string {
	s = reAddr.ReplaceAllString(s, "ADDR")
	// The column before " = " moves with the width of addresses.
	s = rePad.ReplaceAllString(s, ") = ")
	s = reISO.ReplaceAllString(s, "DATE")
	s = reTime.ReplaceAllString(s, "${1}=T")
	s = reTicks.ReplaceAllString(s, "${1}=T")
	s = reIno.ReplaceAllString(s, "${1}=I")
	s = reRandom.ReplaceAllString(s, `getrandom("RANDOM"`)
	s = rePort.ReplaceAllString(s, "htons(PORT)")
	s = reFree.ReplaceAllString(s, "${1}=N")
	s = reSedTmp.ReplaceAllString(s, "sedTMP")
	s = reTimeRet.ReplaceAllString(s, "${1}T")
	s = reBlocks.ReplaceAllString(s, "${1}=B")
	s = reDecorIno.ReplaceAllString(s, ":[INO]>")
	// A number that equals one of the run's pids is that pid, except in
	// the result of a call that returns no pid: getdents64 returning 4224
	// bytes in a run where 4224 was a thread's id is still 4224.
	head, result := s, ""
	name, _, ok := strings.Cut(s, "(")
	if rest, resumed := strings.CutPrefix(s, "<... "); resumed {
		name, _, ok = strings.Cut(rest, " resumed>")
	}
	if ok && !pidResults[name] {
		if i := strings.LastIndex(s, ") = "); i >= 0 {
			head, result = s[:i], s[i:]
		}
	}
	head = reNum.ReplaceAllStringFunc(head, func(n string) string {
		if p, ok := pids[n]; ok && len(n) >= 3 {
			return p
		}
		return n
	})
	return head + result
}

// pidResults are the calls whose result is a process or thread id.
var pidResults = map[string]bool{
	"clone": true, "clone3": true, "fork": true, "vfork": true, "wait4": true, "waitpid": true,
	"getpid": true, "gettid": true, "getppid": true, "getpgid": true, "getpgrp": true, "getsid": true,
	"setsid": true, "set_tid_address": true,
}

// compareTraces counts the listed calls (and signal and exit lines) of the
// reference that the recorder printed identically, thread by thread,
// aligned by name so that calls outside the list (futex, whose count
// depends on contention) cannot shift the comparison.
func compareTraces(t *testing.T, refPath, gotPath string) (match, total int, diffs []string) {
	ref := loadTrace(t, refPath)
	got := loadTrace(t, gotPath)
	if len(ref) != len(got) {
		diffs = append(diffs, fmt.Sprintf("threads: strace %d, faultline %d", len(ref), len(got)))
	}
	for i := range ref {
		var g []event
		if i < len(got) {
			g = got[i]
		}
		r := keep(ref[i])
		g = keep(g)
		total += len(r)
		pairs := align(r, g)
		// A line both traces have, at another place relative to the
		// other thread's signals or exits (a SIGCHLD before or after a
		// wait4), is the scheduler's doing, not a decoding difference.
		onlyRef, onlyGot := map[string]int{}, map[string]int{}
		for _, pr := range pairs {
			switch {
			case pr[0] >= 0 && pr[1] < 0:
				onlyRef[r[pr[0]].text]++
			case pr[0] < 0 && pr[1] >= 0:
				onlyGot[g[pr[1]].text]++
			}
		}
		moved := map[string]int{} // lines in both, out of order: min of the two counts
		for text, n := range onlyRef {
			moved[text] = min(n, onlyGot[text])
		}
		movedGot := maps.Clone(moved)
		for _, pr := range pairs {
			if pr[0] >= 0 && pr[1] < 0 && moved[r[pr[0]].text] > 0 {
				moved[r[pr[0]].text]--
				match++
				continue
			}
			if pr[0] < 0 && pr[1] >= 0 && movedGot[g[pr[1]].text] > 0 {
				movedGot[g[pr[1]].text]--
				continue
			}
			switch {
			case pr[0] >= 0 && pr[1] >= 0 && r[pr[0]].text == g[pr[1]].text:
				match++
			case pr[0] >= 0 && pr[1] >= 0:
				diffs = append(diffs, fmt.Sprintf("thread %d:\n  strace:    %s\n  faultline: %s", i, r[pr[0]].text, g[pr[1]].text))
			case pr[0] >= 0 && r[pr[0]].name == "getrandom":
				// The number of getrandom calls is itself random: gnulib's
				// tempname (sed -i, sort) draws again when the value falls
				// in the biased range, about one run in twenty. Not a line
				// to match.
				total--
			case pr[0] >= 0:
				diffs = append(diffs, fmt.Sprintf("thread %d: only strace:    %s", i, r[pr[0]].text))
			case g[pr[1]].name == "getrandom":
			default:
				diffs = append(diffs, fmt.Sprintf("thread %d: only faultline: %s", i, g[pr[1]].text))
			}
		}
	}
	return match, total, diffs
}

func keep(evs []event) []event {
	var out []event
	for _, e := range evs {
		if decoded[e.name] || e.name == "+++" || e.name == "---" {
			out = append(out, e)
		}
	}
	return out
}

// align pairs two event lists by name (longest common subsequence).
func align(a, b []event) [][2]int {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i].name == b[j].name {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out [][2]int
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i].name == b[j].name:
			out = append(out, [2]int{i, j})
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, [2]int{i, -1})
			i++
		default:
			out = append(out, [2]int{-1, j})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, [2]int{i, -1})
	}
	for ; j < m; j++ {
		out = append(out, [2]int{-1, j})
	}
	sort.SliceStable(out, func(x, y int) bool { return false })
	return out
}
