package crash

import (
	"context"
	"fmt"
	"sort"

	"github.com/faultline/faultline/blockrec"
	"github.com/faultline/faultline/oracle"
)

// siteCheck is the outcome of checking a log's crash sites.
type siteCheck struct {
	findings []oracle.Finding      // inconsistent sites, by site id, not yet explained
	sites    map[int]blockrec.Site // those sites
	checked  int
}

// checkSites generates the log's crash sites, mounts and walks each, and
// judges it against the expected snapshots.
func (c *Check) checkSites(ctx context.Context, stage string, l *blockrec.Log, es *oracle.ExpectedSet) (*siteCheck, error) {
	k := c.k()
	sites := blockrec.Sites(l, blockrec.SiteOptions{K: k})
	c.progress(stage, 0, len(sites))
	bad := map[int]blockrec.Site{}
	if len(sites) == 0 {
		return &siteCheck{sites: bad}, nil
	}
	ch := &blockrec.Checker{Log: l, Workers: c.Workers}
	if err := ch.Start(); err != nil {
		return nil, fmt.Errorf("starting the crash-image checker: %w", err)
	}
	defer ch.Close()
	var findings []oracle.Finding
	done := 0
	tol := c.tolerance()
	err := ch.Check(ctx, sites, func(r blockrec.Result) error {
		done++
		c.progress(stage, done, len(sites))
		if r.Err != nil {
			// A crash image the kernel cannot mount has lost everything.
			f := oracle.Finding{Kind: oracle.PowerLoss, Site: r.Site.ID, MountError: r.Err.Error(), Unamplified: oracle.NotChecked}
			setSite(&f, l, r.Site)
			findings = append(findings, f)
			bad[r.Site.ID] = r.Site
			return nil
		}
		v := oracle.Check(r.Snapshot, es.All(), tol)
		if v.Consistent {
			return nil
		}
		f := oracle.NewFinding(oracle.PowerLoss, r.Site.ID, r.Snapshot, v)
		setSite(&f, l, r.Site)
		findings = append(findings, f)
		bad[r.Site.ID] = r.Site
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checking crash sites after %d of %d: %w", done, len(sites), err)
	}
	if err := ch.Close(); err != nil {
		return nil, fmt.Errorf("closing the crash-image checker: %w", err)
	}
	sort.Slice(findings, func(i, j int) bool { return findings[i].Site < findings[j].Site })
	return &siteCheck{findings: findings, sites: bad, checked: done}, nil
}

// setSite copies where a site sits into its finding.
func setSite(f *oracle.Finding, l *blockrec.Log, s blockrec.Site) {
	f.Line, f.Epoch = s.Pos, s.Epoch
	for _, u := range s.Dropped {
		f.DroppedWrites = append(f.DroppedWrites, oracle.DroppedWrite{
			Entry: u.Entry, Offset: u.Off, Length: u.Len, Line: l.Entries[u.Entry].Pos,
		})
	}
}

// markUnamplified says, for each amplified finding, whether the run
// without amplification had an inconsistent site damaging the same files.
func markUnamplified(amp, plain []oracle.Finding) {
	seen := map[string]bool{}
	for _, f := range plain {
		seen[fmt.Sprint(f.AffectedFiles())] = true
	}
	for i := range amp {
		if seen[fmt.Sprint(amp[i].AffectedFiles())] {
			amp[i].Unamplified = oracle.AlsoUnamplified
		} else {
			amp[i].Unamplified = oracle.OnlyAmplified
		}
	}
}
