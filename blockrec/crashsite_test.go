package blockrec

import (
	"bytes"
	"hash/maphash"
	"testing"
)

// synthLog builds a log over a zero image from epochs of writes. Each write
// is given as (sector, nsectors, fill byte); a fill of 0 writes zeros, which
// equals the base.
type w struct {
	sector, n int64
	fill      byte
}

func synthLog(size int64, epochs ...[]w) *Log {
	l := &Log{FS: Ext4, ImageSize: size, Base: make([]byte, size), StartPos: 100}
	pos := int64(100)
	for i, ep := range epochs {
		for _, x := range ep {
			pos++
			l.Entries = append(l.Entries, Entry{Kind: Write, Pos: pos, Off: x.sector * SectorSize, Data: bytes.Repeat([]byte{x.fill}, int(x.n*SectorSize))})
		}
		if i < len(epochs)-1 {
			pos++
			l.Entries = append(l.Entries, Entry{Kind: Flush, Pos: pos})
		}
	}
	return l
}

func binom(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
	}
	return r
}

func formula(k int, sizes ...int) int {
	t := 0
	for _, n := range sizes {
		for i := 0; i <= min(k, n); i++ {
			t += binom(n, i)
		}
	}
	return t
}

func TestSitesFormula(t *testing.T) {
	// Distinct sectors, distinct non-zero data: the only duplicates are an
	// epoch with every write dropped, which equals the previous epoch's end.
	l := synthLog(1<<20,
		[]w{{1, 1, 1}, {2, 2, 2}, {8, 1, 3}},
		nil, // back-to-back flushes: no writes, no epoch
		[]w{{20, 1, 4}},
		[]w{{30, 1, 5}, {31, 1, 6}, {32, 4, 7}, {40, 1, 8}, {41, 1, 9}},
		[]w{{50, 1, 10}, {51, 1, 11}},
	)
	if got := len(Epochs(l)); got != 4 {
		t.Fatalf("epochs = %d, want 4", got)
	}
	for _, tc := range []struct {
		opt  SiteOptions
		want int
	}{
		{SiteOptions{}, formula(2, 3, 1, 5, 2) - 2},                     // [1] and [2] epochs can drop everything
		{SiteOptions{K: 1}, formula(1, 3, 1, 5, 2) - 1},                 // only the one-write epoch
		{SiteOptions{K: -1}, formula(0, 3, 1, 5, 2)},                    // epoch ends only
		{SiteOptions{K: 3}, formula(3, 3, 1, 5, 2) - 2},                 // the first epoch now reaches the base: new, not a duplicate
		{SiteOptions{K: 2, Cap: 5}, 5 + 1 + 5 + 3},                      // cap per epoch, after dedup
		{SiteOptions{Granularity: Sectors}, formula(2, 4, 1, 8, 2) - 2}, // 2-sector and 4-sector writes split
	} {
		sites := Sites(l, tc.opt)
		if len(sites) != tc.want {
			t.Errorf("%+v: %d sites, want %d", tc.opt, len(sites), tc.want)
		}
		checkSitesBruteForce(t, l, tc.opt, sites)
	}
	// Within an epoch, fewer drops come first.
	sites := Sites(l, SiteOptions{})
	for i := 1; i < len(sites); i++ {
		if sites[i].Epoch == sites[i-1].Epoch && len(sites[i].Dropped) < len(sites[i-1].Dropped) {
			t.Errorf("site %d drops %d after site %d dropped %d", i, len(sites[i].Dropped), i-1, len(sites[i-1].Dropped))
		}
	}
	// Positions: the all-applied state of epoch 0 follows its last write;
	// dropping everything in the one-write epoch follows the flush before it.
	if s := sites[0]; s.Pos != 103 || s.Last != 2 {
		t.Errorf("first site follows pos %d entry %d, want 103 entry 2", s.Pos, s.Last)
	}
}

func TestSitesDedupWithinEpoch(t *testing.T) {
	// The second write puts back what the first wrote; the third writes
	// zeros over zeros. Several subsets give the same image.
	l := synthLog(1<<20,
		[]w{{1, 1, 7}, {1, 1, 7}, {5, 1, 0}, {6, 1, 9}},
	)
	sites := Sites(l, SiteOptions{K: 4})
	// Distinct images: sector 1 in {0,7} x sector 6 in {0,9} = 4.
	if len(sites) != 4 {
		t.Errorf("%d sites, want 4", len(sites))
	}
	checkSitesBruteForce(t, l, SiteOptions{K: 4}, sites)
}

// checkSitesBruteForce materialises every candidate image of Algorithm 1
// the slow way, checks that Sites kept exactly one site per distinct image
// (when no cap cut it short), and that each site's copy-on-write view reads
// back the very image its description says.
func checkSitesBruteForce(t *testing.T, l *Log, opt SiteOptions, sites []Site) {
	t.Helper()
	seed := maphash.MakeSeed()
	ix := newLogIndex(l)
	k, capN := opt.norm()
	distinct := map[uint64]bool{}
	capped := false
	prefix := append([]byte(nil), l.Base...)
	img := make([]byte, len(prefix))
	for _, ep := range Epochs(l) {
		units, _ := ix.epochUnits(ep, opt.Granularity)
		perEpoch := map[uint64]bool{}
		forCombinations(len(units), min(k, len(units)), func(c []int) bool {
			copy(img, prefix)
			applyExcept(img, l, ep, units, c)
			h := maphash.Bytes(seed, img)
			if !distinct[h] {
				perEpoch[h] = true
			}
			distinct[h] = true
			return true
		})
		if capN >= 0 && len(perEpoch) > capN {
			capped = true
		}
		applyExcept(prefix, l, ep, units, nil)
	}
	if !capped && len(distinct) != len(sites) {
		t.Errorf("%+v: brute force finds %d distinct images, Sites returned %d", opt, len(distinct), len(sites))
	}
	hashes := map[uint64]int{}
	for _, s := range sites {
		v := ix.newView(s, ix.epochImage(Epoch{Index: s.Epoch, Start: s.Start, End: s.End}))
		got := v.readImage()
		want := siteImage(l, s)
		if !bytes.Equal(got, want) {
			t.Errorf("%v: view differs from the materialised image", s)
		}
		h := maphash.Bytes(seed, want)
		if prev, dup := hashes[h]; dup {
			t.Errorf("sites %d and %d have the same image", prev, s.ID)
		}
		hashes[h] = s.ID
	}
}

func applyExcept(img []byte, l *Log, ep Epoch, units []Unit, drop []int) {
	for i, u := range units {
		skip := false
		for _, d := range drop {
			skip = skip || d == i
		}
		if !skip {
			e := l.Entries[u.Entry]
			copy(img[u.Off:u.Off+int64(u.Len)], e.Data[u.Off-e.Off:])
		}
	}
}

// siteImage builds a site's image from its description alone.
func siteImage(l *Log, s Site) []byte {
	img := append([]byte(nil), l.Base...)
	for i := 0; i < s.End; i++ {
		e := l.Entries[i]
		if e.Kind != Write {
			continue
		}
		for off := e.Off; off < e.Off+int64(len(e.Data)); off += SectorSize {
			dropped := false
			if i >= s.Start {
				for _, u := range s.Dropped {
					dropped = dropped || (u.Entry == i && off >= u.Off && off < u.Off+int64(u.Len))
				}
			}
			if !dropped {
				copy(img[off:off+SectorSize], e.Data[off-e.Off:])
			}
		}
	}
	return img
}

func TestForCombinations(t *testing.T) {
	var got [][]int
	forCombinations(4, 2, func(c []int) bool { got = append(got, append([]int(nil), c...)); return true })
	if len(got) != 1+4+6 {
		t.Fatalf("got %d combinations: %v", len(got), got)
	}
	if len(got[0]) != 0 || got[1][0] != 0 || got[5][0] != 0 || got[5][1] != 1 || got[10][0] != 2 || got[10][1] != 3 {
		t.Errorf("order: %v", got)
	}
}
