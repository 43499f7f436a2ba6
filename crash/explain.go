package crash

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/oracle"
)

// explainer turns findings into stories: the line each crash follows, the
// files behind each dropped write, and where the data a damaged file lacks
// reached the disk later.
type explainer struct {
	log   *blockrec.Log
	trace *mutators.Trace
	work  string
	sites map[int]blockrec.Site
	fm    *blockrec.FileMap
}

// explain fills in the findings' explanations. Trace lines are always
// filled; an error means blocks could not be mapped to files (the rest of
// each finding stands).
func (e *explainer) explain(fs []oracle.Finding) error {
	for i := range fs {
		fs[i].LineText = e.describeLine(fs[i].Line)
	}
	if len(fs) == 0 {
		return nil
	}
	if e.log.FS != blockrec.Ext4 {
		return blockrec.ErrNoFileMap
	}
	img := filepath.Join(e.work, "final.img")
	if err := blockrec.WriteImageAfter(e.log, len(e.log.Entries), img); err != nil {
		return fmt.Errorf("writing the final image: %w", err)
	}
	defer os.Remove(img)
	fm, err := blockrec.NewFileMap(img, e.log.FS)
	if err != nil {
		return err
	}
	e.fm = fm
	var errs []error
	for i := range fs {
		if err := e.dropped(&fs[i]); err != nil {
			errs = append(errs, err)
		}
		if err := e.pending(&fs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// describeLine is the text of trace line pos, or what stands there.
func (e *explainer) describeLine(pos int64) string {
	if pos <= 0 {
		return "(before the program's first call)"
	}
	return lineText(e.trace, pos)
}

// dropped names the files behind each dropped write.
func (e *explainer) dropped(f *oracle.Finding) error {
	if len(f.DroppedWrites) == 0 {
		return nil
	}
	bs := e.fm.BlockSize
	var blocks []int64
	for _, d := range f.DroppedWrites {
		for b := d.Offset / bs; b <= (d.Offset+int64(d.Length)-1)/bs; b++ {
			blocks = append(blocks, b)
		}
	}
	owners, err := e.fm.Owners(blocks)
	if err != nil {
		return err
	}
	if err := e.journalOwners(f, blocks, owners); err != nil {
		return err
	}
	for i := range f.DroppedWrites {
		d := &f.DroppedWrites[i]
		seen := map[string]bool{}
		for b := d.Offset / bs; b <= (d.Offset+int64(d.Length)-1)/bs; b++ {
			if o := owners[b]; o != "" && !seen[o] {
				seen[o] = true
				d.Files = append(d.Files, o)
			}
		}
		sort.Strings(d.Files)
	}
	return nil
}

// pending finds, for each file the crash state lacks bytes of, the first
// write after the crash point that carries its data.
func (e *explainer) pending(f *oracle.Finding) error {
	site, ok := e.sites[f.Site]
	if !ok || f.Kind != oracle.PowerLoss {
		return nil
	}
	var paths []string
	size := map[string]int64{}      // what the program meant the file to hold
	crashSize := map[string]int64{} // what the crash state holds
	for _, d := range f.Files {
		if d.Missing > 0 && d.ExpectedSize > 0 {
			paths = append(paths, d.Path)
			size[d.Path], crashSize[d.Path] = d.ExpectedSize, d.CrashSize
		}
	}
	if len(paths) == 0 {
		return nil
	}
	blocks, err := e.fm.FileBlocks(paths)
	if err != nil {
		return err
	}
	bs := e.fm.BlockSize
	dropped := map[int]bool{}
	for _, u := range site.Dropped {
		dropped[u.Entry] = true
	}
	end := int64(len(e.trace.Lines))
	for _, p := range paths {
		want := map[int64]bool{}
		for _, b := range blocks[p] {
			want[b] = true
		}
		if len(want) == 0 {
			continue // gone from the final image, or no data blocks
		}
		hits := func(en blockrec.Entry) bool {
			if en.Kind != blockrec.Write {
				return false
			}
			for b := en.Off / bs; b <= (en.Off+int64(len(en.Data))-1)/bs; b++ {
				if want[b] {
					return true
				}
			}
			return false
		}
		// The last write of the file's blocks put its final data there.
		// Applied before the crash, the data was on disk and something
		// else (the metadata that makes it readable) was missing.
		last := -1
		for i, en := range e.log.Entries {
			if hits(en) {
				last = i
			}
		}
		if last >= 0 && last < site.End && !dropped[last] {
			n := size[p]
			if crashSize[p] > 0 {
				n = crashSize[p] // the file's new size made it, its data did not
			}
			f.Pending = append(f.Pending, oracle.PendingData{Path: p, Line: e.log.Entries[last].Pos, Bytes: n, OnDisk: true})
			continue
		}
		for i, en := range e.log.Entries {
			if (i < site.End && !dropped[i]) || !hits(en) {
				continue
			}
			line := en.Pos
			if line >= end {
				line = 0 // the final sync and unmount
			}
			f.Pending = append(f.Pending, oracle.PendingData{Path: p, Line: line, Bytes: size[p]})
			break
		}
	}
	return nil
}

// journalOwners replaces "(journal)" by what the journal block held when
// it was written: a descriptor, a commit record, or the copy of a block
// the replay would have put in place ("(journal: inode table)").
func (e *explainer) journalOwners(f *oracle.Finding, blocks []int64, owners map[int64]string) error {
	last := 0
	for _, d := range f.DroppedWrites {
		last = max(last, d.Entry+1)
	}
	jb, err := e.fm.JournalBlocks(e.log, last)
	if err != nil {
		return err
	}
	var targets []int64
	for _, b := range blocks {
		if owners[b] == "(journal)" && jb[b].Kind == "copy" && jb[b].Target >= 0 {
			targets = append(targets, jb[b].Target)
		}
	}
	named, err := e.fm.Owners(targets)
	if err != nil {
		return err
	}
	for _, b := range blocks {
		if owners[b] != "(journal)" {
			continue
		}
		switch j, ok := jb[b]; {
		case !ok:
		case j.Kind == "copy" && j.Target >= 0:
			owners[b] = "(journal: " + strings.Trim(named[j.Target], "()") + ")"
		case j.Kind != "copy":
			owners[b] = "(journal " + j.Kind + ")"
		}
	}
	return nil
}
