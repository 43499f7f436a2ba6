package blockrec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrNoFileMap is returned for file systems whose images FileMap cannot
// read (everything but ext4: debugfs is the only tool at hand that maps
// blocks to files without mounting).
var ErrNoFileMap = errors.New("blockrec: mapping blocks to files needs ext4 (debugfs)")

// FileMap tells which file or file-system structure a region of an ext4
// image belongs to, by asking debugfs about an image file. It is how a
// finding names the files behind the writes a crash dropped.
type FileMap struct {
	img       string
	BlockSize int64
	layout    []region // from "stats": bitmaps, inode tables
	journal   []int64  // the journal's blocks in logical order, once asked for
}

type region struct {
	first, last int64
	what        string
}

// NewFileMap reads the superblock and group layout of the ext4 image at img.
func NewFileMap(img string, fs FSType) (*FileMap, error) {
	if fs != Ext4 {
		return nil, ErrNoFileMap
	}
	f, err := os.Open(img)
	if err != nil {
		return nil, fmt.Errorf("blockrec: file map: %w", err)
	}
	defer f.Close()
	var sb [1024]byte
	if _, err := f.ReadAt(sb[:], 1024); err != nil {
		return nil, fmt.Errorf("blockrec: file map: reading the superblock of %s: %w", img, err)
	}
	if binary.LittleEndian.Uint16(sb[0x38:]) != 0xef53 {
		return nil, fmt.Errorf("blockrec: file map: %s holds no ext4 superblock", img)
	}
	m := &FileMap{img: img, BlockSize: 1024 << binary.LittleEndian.Uint32(sb[0x18:])}
	out, err := m.debugfs("stats")
	if err != nil {
		return nil, err
	}
	perGroup := int64(0)
	if v, ok := field(out, "Inode blocks per group:"); ok {
		perGroup = v
	}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "Group ") {
			continue
		}
		for _, part := range strings.Split(line[strings.Index(line, ":")+1:], ",") {
			part = strings.TrimSpace(part)
			i := strings.LastIndex(part, " at ")
			if i < 0 {
				continue
			}
			b, err := strconv.ParseInt(strings.TrimSpace(part[i+4:]), 10, 64)
			if err != nil {
				continue
			}
			r := region{first: b, last: b, what: "(" + part[:i] + ")"}
			if part[:i] == "inode table" && perGroup > 0 {
				r.last = b + perGroup - 1
			}
			m.layout = append(m.layout, r)
		}
	}
	// Between the superblock and the first bitmap: the group descriptors
	// and the blocks reserved for growing them.
	first := int64(-1)
	for _, r := range m.layout {
		if first < 0 || r.first < first {
			first = r.first
		}
	}
	if first > 1 {
		m.layout = append(m.layout, region{first: 1, last: first - 1, what: "(group descriptors)"})
	}
	return m, nil
}

func field(out, name string) (int64, bool) {
	i := strings.Index(out, name)
	if i < 0 {
		return 0, false
	}
	rest := strings.TrimSpace(out[i+len(name):])
	if j := strings.IndexAny(rest, " \n"); j >= 0 {
		rest = rest[:j]
	}
	v, err := strconv.ParseInt(rest, 10, 64)
	return v, err == nil
}

// debugfs runs debugfs read-only on the image with the given requests and
// returns its standard output (each request echoed as "debugfs: REQ").
func (m *FileMap) debugfs(reqs ...string) (string, error) {
	cmds, err := os.CreateTemp("", "faultline-debugfs-*")
	if err != nil {
		return "", fmt.Errorf("blockrec: file map: %w", err)
	}
	defer os.Remove(cmds.Name())
	_, err = cmds.WriteString(strings.Join(reqs, "\n") + "\n")
	if cerr := cmds.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("blockrec: file map: %w", err)
	}
	var out, errb bytes.Buffer
	cmd := exec.Command("debugfs", "-f", cmds.Name(), m.img)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("blockrec: debugfs on %s: %w: %s", m.img, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// responses splits debugfs -f output into the answer to each request.
func responses(out string) []string {
	var res []string
	for _, chunk := range strings.Split(out, "debugfs: ")[1:] {
		if i := strings.IndexByte(chunk, '\n'); i >= 0 {
			chunk = chunk[i+1:]
		} else {
			chunk = ""
		}
		res = append(res, chunk)
	}
	return res
}

// Owners names what each block belongs to: a file or directory by its path
// in the image ("/data", "/dir/"), "(journal)", "(inode table)", "(block
// bitmap)", or "(file system metadata)" when nothing else claims it.
func (m *FileMap) Owners(blocks []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(blocks) == 0 {
		return out, nil
	}
	var todo []int64
	for _, b := range blocks {
		if name := m.layoutOf(b); name != "" {
			out[b] = name
			continue
		}
		todo = append(todo, b)
	}
	if len(todo) == 0 {
		return out, nil
	}
	req := "icheck"
	for _, b := range todo {
		req += " " + strconv.FormatInt(b, 10)
	}
	res, err := m.debugfs(req)
	if err != nil {
		return nil, err
	}
	inodeOf := map[int64]int64{}
	inodes := map[int64]bool{}
	sc := bufio.NewScanner(strings.NewReader(strings.Join(responses(res), "")))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		b, err1 := strconv.ParseInt(f[0], 10, 64)
		ino, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		inodeOf[b] = ino
		inodes[ino] = true
	}
	names := map[int64]string{2: "/", 7: "(resize inode)", 8: "(journal)"}
	var ask []string
	for ino := range inodes {
		if _, ok := names[ino]; !ok {
			ask = append(ask, strconv.FormatInt(ino, 10))
		}
	}
	if len(ask) > 0 {
		sort.Strings(ask)
		res, err := m.debugfs("ncheck -c " + strings.Join(ask, " "))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(strings.NewReader(strings.Join(responses(res), "")))
		for sc.Scan() {
			line := sc.Text()
			tab := strings.IndexByte(line, '\t')
			if tab < 0 {
				continue
			}
			ino, err := strconv.ParseInt(line[:tab], 10, 64)
			if err != nil {
				continue
			}
			p := line[tab+1:]
			if strings.HasPrefix(p, "//") { // debugfs prints directories so
				p = p[1:] + "/"
			}
			names[ino] = p
		}
	}
	for _, b := range todo {
		ino, ok := inodeOf[b]
		switch {
		case !ok:
			out[b] = "(file system metadata)"
		case names[ino] != "":
			out[b] = names[ino]
		default:
			out[b] = fmt.Sprintf("(inode %d, no longer linked)", ino)
		}
	}
	return out, nil
}

func (m *FileMap) layoutOf(b int64) string {
	if b == 0 {
		return "(superblock)"
	}
	for _, r := range m.layout {
		if b >= r.first && b <= r.last {
			return r.what
		}
	}
	return ""
}

// FileBlocks returns the data blocks of each path (absolute in the image)
// that exists; missing paths are left out.
func (m *FileMap) FileBlocks(paths []string) (map[string][]int64, error) {
	out := map[string][]int64{}
	if len(paths) == 0 {
		return out, nil
	}
	var reqs []string
	for _, p := range paths {
		reqs = append(reqs, "blocks "+strconv.Quote(filepath.Clean("/"+p)))
	}
	res, err := m.debugfs(reqs...)
	if err != nil {
		return nil, err
	}
	for i, r := range responses(res) {
		if i >= len(paths) {
			break
		}
		var bs []int64
		for _, f := range strings.Fields(r) {
			b, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				bs = nil // an error message, not a block list
				break
			}
			bs = append(bs, b)
		}
		if len(bs) > 0 {
			out[paths[i]] = bs
		}
	}
	return out, nil
}
