package suite

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is a suite run or an audit: what ran and what each check got.
type Report struct {
	Suite   string    `json:"suite"`
	File    string    `json:"file,omitempty"`
	Command []string  `json:"command"`
	Shard   string    `json:"shard,omitempty"`
	Trace   string    `json:"trace,omitempty"` // an audit's saved recording
	Results []*Result `json:"results"`
	Elapsed Duration  `json:"elapsed_seconds"`
}

// Unexpected counts the checks that got something else than expected.
func (r *Report) Unexpected() int {
	n := 0
	for _, res := range r.Results {
		if !res.OK && res.Got != Error {
			n++
		}
	}
	return n
}

// Errors counts the checks that could not be done.
func (r *Report) Errors() int {
	n := 0
	for _, res := range r.Results {
		if res.Got == Error {
			n++
		}
	}
	return n
}

// Findings are the results worth a person's attention in an audit, most
// serious first; ties keep the run's order.
func (r *Report) Findings() []*Result {
	var out []*Result
	for sev := SevCrash; sev < SevNone; sev++ {
		for _, res := range r.Results {
			if res.Severity == sev {
				out = append(out, res)
			}
		}
	}
	return out
}

// WriteTable prints one row per check: check, expected, got, time and the
// command that reproduces it, then a summary line.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tEXPECTED\tGOT\tTIME\tREPRODUCE WITH")
	for _, res := range r.Results {
		got := string(res.Got)
		if !res.OK && res.Got != Error {
			got += " (unexpected)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", res.Check, orDash(string(res.Expect)), got,
			shortDuration(time.Duration(res.Elapsed)), res.Reproduce)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := r.writeDetails(w, r.Results, func(res *Result) bool { return !res.OK || res.Got == Error }); err != nil {
		return err
	}
	return r.writeSummary(w)
}

// WriteFindings prints an audit: the findings most serious first, each
// with where it applies and its reproduction command, then every check
// that ran.
func (r *Report) WriteFindings(w io.Writer) error {
	fs := r.Findings()
	if len(fs) == 0 {
		fmt.Fprintf(w, "No findings in %d checks.\n\n", len(r.Results))
	} else {
		fmt.Fprintf(w, "Findings, most serious first:\n\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SEVERITY\tCHECK\tGOT\tAT\tREPRODUCE WITH")
		for _, res := range fs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", res.Severity, res.Check, res.Got, siteText(res.Site), res.Reproduce)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := r.writeDetails(w, fs, func(*Result) bool { return true }); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "All checks:\n\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tGOT\tAT\tTIME")
	for _, res := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", res.Check, res.Got, siteText(res.Site), shortDuration(time.Duration(res.Elapsed)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return r.writeSummary(w)
}

func siteText(s *SiteInfo) string {
	if s == nil {
		return "-"
	}
	t := fmt.Sprintf("line %d: %s", s.Line, s.Call)
	if s.Stands > 1 {
		t += fmt.Sprintf(" (%s of %d)", s.Which, s.Stands)
	}
	return t
}

func (r *Report) writeDetails(w io.Writer, rs []*Result, want func(*Result) bool) error {
	first := true
	for _, res := range rs {
		if !want(res) || (res.Detail == "" && len(res.Findings) == 0 && res.Artifacts == "") {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		fmt.Fprintf(w, "%s:\n", res.Check)
		if res.Detail != "" {
			fmt.Fprintf(w, "  %s\n", indent(res.Detail, "  "))
		}
		for _, f := range res.Findings {
			fmt.Fprintf(w, "  - %s\n", indent(f, "    "))
		}
		if res.Artifacts != "" {
			fmt.Fprintf(w, "  report: %s\n", res.Artifacts)
		}
	}
	return nil
}

func (r *Report) writeSummary(w io.Writer) error {
	ok := len(r.Results) - r.Unexpected() - r.Errors()
	s := fmt.Sprintf("\n%d checks: %d as expected, %d unexpected, %d could not run", len(r.Results), ok, r.Unexpected(), r.Errors())
	if r.Shard != "" {
		s += " (shard " + r.Shard + ")"
	}
	_, err := fmt.Fprintf(w, "%s, in %s.\n", s, shortDuration(time.Duration(r.Elapsed)))
	return err
}

func indent(s, pre string) string { return strings.ReplaceAll(s, "\n", "\n"+pre) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func shortDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// WriteJSON prints the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// JUnit XML as Jenkins, GitLab and GitHub's test reporters read it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit prints the report as JUnit XML: one test case per check, a
// failure for an unexpected outcome, an error for a check that could not
// run.
func (r *Report) WriteJUnit(w io.Writer) error {
	js := junitSuite{Name: r.Suite, Tests: len(r.Results), Failures: r.Unexpected(), Errors: r.Errors(),
		Time: formatSeconds(time.Duration(r.Elapsed))}
	for _, res := range r.Results {
		jc := junitCase{Name: res.Check, Classname: "faultline." + string(res.Kind),
			Time: formatSeconds(time.Duration(res.Elapsed)), SystemOut: "reproduce with: " + res.Reproduce}
		body := res.Detail
		if len(res.Findings) > 0 {
			body += "\n" + strings.Join(res.Findings, "\n")
		}
		switch {
		case res.Got == Error:
			jc.Error = &junitProblem{Message: "could not run: " + firstLine(res.Detail), Type: "error", Text: body}
		case !res.OK:
			jc.Failure = &junitProblem{Message: fmt.Sprintf("expected %s, got %s", res.Expect, res.Got), Type: string(res.Got), Text: body}
		}
		js.Cases = append(js.Cases, jc)
	}
	doc := junitSuites{Name: "faultline", Tests: js.Tests, Failures: js.Failures, Errors: js.Errors, Time: js.Time, Suites: []junitSuite{js}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
