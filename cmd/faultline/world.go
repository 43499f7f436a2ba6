//go:build !front

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/faultline/faultline/supervisor"
)

// argumentWorld gives a sandbox command without --init or --setup the
// world its arguments name: `faultline crash -- gzip f` means the f of
// the current directory, as it would without faultline. Each argument
// that is a relative path to something in the current directory is
// copied into a fresh init directory at the same relative path: keep, a
// directory of faultline's own artifacts that reproduction commands name
// (replaced if it exists), or else a temporary one that cleanup removes.
// It returns "" when no argument names a file.
func argumentWorld(cmd []string, keep string) (init string, names []string, cleanup func(), err error) {
	cleanup = func() {}
	var found []string
	for _, a := range cmd[1:] {
		if a == "" || strings.HasPrefix(a, "-") || filepath.IsAbs(a) {
			continue
		}
		clean := filepath.Clean(a)
		if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
			continue
		}
		if _, err := os.Lstat(clean); err == nil {
			found = append(found, clean)
		}
	}
	if len(found) == 0 {
		return "", nil, cleanup, nil
	}
	var dir string
	if keep != "" {
		dir = keep
		if err := os.RemoveAll(dir); err != nil {
			return "", nil, cleanup, fmt.Errorf("replacing the sandbox's init directory: %w", err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, cleanup, fmt.Errorf("making the sandbox's init directory: %w", err)
		}
	} else {
		if dir, err = os.MkdirTemp("", "faultline-init-"); err != nil {
			return "", nil, cleanup, fmt.Errorf("making the sandbox's init directory: %w", err)
		}
		cleanup = func() { os.RemoveAll(dir) }
	}
	for _, f := range found {
		dst := filepath.Join(dir, f)
		if _, err := os.Lstat(dst); err == nil {
			continue // named twice
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			cleanup()
			return "", nil, func() {}, err
		}
		if err := supervisor.CopyEntry(f, dst); err != nil {
			cleanup()
			return "", nil, func() {}, fmt.Errorf("copying %s into the sandbox: %w", f, err)
		}
	}
	return dir, found, cleanup, nil
}

// defaultWorld fills in *init from the arguments when neither --init nor
// --setup was given, and says so on stderr.
func defaultWorld(what string, cmd []string, init *string, setup, keep string) (func(), error) {
	if out := outsideArgs(cmd); len(out) > 0 {
		fmt.Fprintf(os.Stderr, "faultline: %s: warning: %s %s outside the sandbox: the runs use the real %s, and what they change stays changed (give %s under --init and name %s relatively)\n",
			what, strings.Join(out, ", "), plural(len(out), "is", "are"), plural(len(out), "file", "files"), plural(len(out), "it", "them"), plural(len(out), "it", "them"))
	}
	if *init != "" {
		if st, err := os.Stat(*init); err != nil {
			return func() {}, toolError("%s: --init: %w", what, err)
		} else if !st.IsDir() {
			return func() {}, toolError("%s: --init %s: not a directory", what, *init)
		}
	}
	if *init != "" || setup != "" {
		return func() {}, nil
	}
	dir, names, cleanup, err := argumentWorld(cmd, keep)
	if err != nil {
		return cleanup, toolError("%s: %w", what, err)
	}
	if dir == "" {
		fmt.Fprintf(os.Stderr, "faultline: %s: the sandbox starts empty (no --init or --setup, and no argument names a file here)\n", what)
		return cleanup, nil
	}
	*init = dir
	fmt.Fprintf(os.Stderr, "faultline: %s: the sandbox starts with %s from the current directory, copied to %s (--init or --setup say otherwise)\n", what, strings.Join(names, ", "), dir)
	return cleanup, nil
}

// outsideArgs are the arguments naming existing files that the sandbox
// does not cover (absolute, or above the working directory): the
// sandbox is a file system at the working directory, not a chroot, so
// `faultline crash -- gzip /etc/hostname` compresses the host's file.
func outsideArgs(cmd []string) []string {
	var out []string
	for _, a := range cmd[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		clean := filepath.Clean(a)
		if !filepath.IsAbs(clean) && clean != ".." && !strings.HasPrefix(clean, "../") {
			continue
		}
		if _, err := os.Lstat(clean); err == nil {
			out = append(out, a)
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
