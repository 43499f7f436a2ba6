package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The suites checked in under examples/ are what a project keeps in CI:
// they must run clean, with a JUnit file for the dashboard.
func TestExampleSuites(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, name := range []string{"mv", "gzip"} {
		t.Run(name, func(t *testing.T) {
			junit := filepath.Join(t.TempDir(), "junit.xml")
			file := filepath.Join("..", "..", "examples", name, "suite.toml")
			stdout, stderr, code := run(t, "", "suite", "--junit", junit, file)
			if code != 0 {
				t.Fatalf("faultline suite %s: exit %d\n%s\n%s", file, code, stdout, stderr)
			}
			if !strings.Contains(stdout, "0 unexpected") {
				t.Errorf("table does not say 0 unexpected:\n%s", stdout)
			}
			b, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			var suites struct {
				Suites []struct {
					Tests    int `xml:"tests,attr"`
					Failures int `xml:"failures,attr"`
					Errors   int `xml:"errors,attr"`
				} `xml:"testsuite"`
			}
			if err := xml.Unmarshal(b, &suites); err != nil {
				t.Fatalf("junit: %v\n%s", err, b)
			}
			if len(suites.Suites) != 1 || suites.Suites[0].Tests < 3 || suites.Suites[0].Failures != 0 || suites.Suites[0].Errors != 0 {
				t.Errorf("junit: %+v\n%s", suites, b)
			}
		})
	}
}

// A malformed suite names file:line and the key at fault; an anomaly
// name that does not exist gets the close names.
func TestSuiteErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("name = \"x\"\ncommand = [\"true\"]\n\n[expect]\nrename-exdv = \"recovered\"\n"), 0o644)
	_, stderr, code := run(t, "", "suite", bad)
	if code != 2 || !strings.Contains(stderr, bad+":5") || !strings.Contains(stderr, "rename-exdev") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
