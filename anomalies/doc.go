// Package anomalies is faultline's catalogue of named environmental
// anomalies: what each means in the real world, which calls it touches,
// the mutation that writes it into a trace, what a program is expected to
// do about it, and optional checks on the replayed trace.
//
// # Layering
//
// DESIGN.md lists "mutators may import parser, anomalies" and "anomalies
// may import parser". We resolve it the other way round: package mutators
// holds the generic machinery (Trace, Selector, Mutation, Apply, marking,
// insertion, sync/commit-point amplification) and imports only parser;
// this package builds each entry's mutation from mutators' primitives, so
// it imports mutators and parser. Nothing here is needed by mutators, so
// the arrows stay one way: cmd → anomalies → mutators → parser.
//
// # Defaults
//
// An entry changes only calls where the anomaly makes sense: a successful
// call of the right kind (a failed rename has nothing to fail), on a file
// the program works with rather than the dynamic loader's libraries, an
// interpreter's modules and the system's own files (/lib, /usr/lib, /etc,
// /usr/share, /bin, /usr/bin, /proc, /sys, /dev, *.so, .../lib/python...,
// site-packages, pyenv); see calls.go. The filter cannot be lifted by a
// selector: an anomaly on a system file needs a hand edit. Without a selector every such call is changed
// (except kill, which happens once); the selectors of package mutators
// narrow that down, and nth picks one.
//
// Errno names and texts are written exactly as strace prints them with
// glibc's strerror ("-1 ENOSPC (No space left on device)").
package anomalies
