package oracle

import (
	"sort"
	"strconv"
	"strings"
)

// Group is the findings that share a cause: the same kind of crash after
// the same trace line leaving the same files damaged. Crash sites of one
// epoch that drop different journal blocks usually land in one group; the
// user needs to read one of them.
type Group struct {
	Key   string   `json:"key"`
	Kind  string   `json:"kind"`
	Line  int64    `json:"line"`
	Files []string `json:"affected_files"`
	// Sites are the site (or kill point) ids of all members.
	Sites []int `json:"sites"`
	// Finding is the representative: the member with the fewest dropped
	// writes (the simplest story), then the largest distance.
	Finding Finding `json:"finding"`
}

// GroupFindings groups findings by cause, in trace order.
func GroupFindings(fs []Finding) []Group {
	byKey := map[string]*Group{}
	var order []string
	for _, f := range fs {
		files := f.AffectedFiles()
		key := f.Kind + "@" + itoa(f.Line) + ":" + strings.Join(files, ",")
		if f.MountError != "" {
			key = f.Kind + "@" + itoa(f.Line) + ":unmountable"
		}
		g := byKey[key]
		if g == nil {
			g = &Group{Key: key, Kind: f.Kind, Line: f.Line, Files: files, Finding: f}
			byKey[key] = g
			order = append(order, key)
		} else if better(f, g.Finding) {
			g.Finding = f
		}
		g.Sites = append(g.Sites, f.Site)
	}
	out := make([]Group, 0, len(order))
	for _, k := range order {
		g := byKey[k]
		sort.Ints(g.Sites)
		out = append(out, *g)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind == PowerLoss
		}
		return out[i].Line < out[j].Line
	})
	return out
}

func better(a, b Finding) bool {
	if len(a.DroppedWrites) != len(b.DroppedWrites) {
		return len(a.DroppedWrites) < len(b.DroppedWrites)
	}
	if a.Distance != b.Distance {
		return a.Distance > b.Distance
	}
	return a.Site < b.Site
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
