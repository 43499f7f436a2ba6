package blockrec

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// imageChunk is how much of an image is assembled in memory at a time when
// it is written out.
const imageChunk = 1 << 20

// WriteSiteImage writes the crash image of site s (exactly the bytes the
// Checker mounted for it, before journal recovery) to path, atomically.
// All-zero chunks are left as holes, so a mostly empty image costs little
// disk. It is how a finding's image becomes an artifact a person can mount.
func WriteSiteImage(l *Log, s Site, path string) error {
	ix := newLogIndex(l)
	v := ix.newView(s, ix.epochImage(Epoch{Index: s.Epoch, Start: s.Start, End: s.End}))
	return writeImage(path, l.ImageSize, v.readAt)
}

// WriteImageAfter writes the image as it stood after the first n entries of
// the log (n = len(l.Entries) gives the final image), atomically and sparse.
func WriteImageAfter(l *Log, n int, path string) error {
	if n < 0 || n > len(l.Entries) {
		return fmt.Errorf("blockrec: image after %d entries: the log has %d", n, len(l.Entries))
	}
	ix := newLogIndex(l)
	return writeImage(path, l.ImageSize, func(p []byte, off int64) {
		for len(p) > 0 {
			s := off / SectorSize
			in := off - s*SectorSize
			c := copy(p, ix.contentAt(s, n)[in:])
			p, off = p[c:], off+int64(c)
		}
	})
}

func writeImage(path string, size int64, readAt func(p []byte, off int64)) error {
	zero := make([]byte, imageChunk)
	buf := make([]byte, imageChunk)
	return WriteFileAtomic(path, func(w io.Writer) error {
		f, ok := w.(*os.File)
		if !ok {
			return fmt.Errorf("blockrec: image writer is %T, not a file", w)
		}
		if err := f.Truncate(size); err != nil {
			return err
		}
		for off := int64(0); off < size; off += imageChunk {
			n := min(int64(imageChunk), size-off)
			readAt(buf[:n], off)
			if bytes.Equal(buf[:n], zero[:n]) {
				continue
			}
			if _, err := f.WriteAt(buf[:n], off); err != nil {
				return err
			}
		}
		return nil
	})
}
