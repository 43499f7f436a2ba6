// Package oracle judges outcomes: whether a state a crash can leave on disk
// is one a user could recover from (the generic crash-consistency oracle of
// C³), and, later, how a replayed program diverged from its trace.
//
// The crash check compares byte histograms: a crash snapshot (CS) is
// consistent with an expected snapshot (ES) when the ES can be reached from
// it by deleting files, renaming files, moving runs of bytes and creating
// empty files — nothing may appear out of thin air — so every byte value
// must occur in the CS at least as often as in the ES. The distance
// d = Σ_b max(0, ES[b] − CS[b]) counts the bytes that would have to appear
// from nowhere; a CS is inconsistent when d exceeds the tolerance for every
// ES. (Section 3.3 of the C³ text prints the inequality the other way
// round; its editing operations, its explanation and the authors' code all
// say CS ⊇ ES, which is what is implemented here.)
//
// It also owns the report model of a crash check: a Finding explains one
// inconsistent crash state (the line it follows, the writes it dropped,
// its files beside the nearest expected snapshot), GroupFindings merges
// findings with the same cause, and Report renders the whole check as text
// or JSON.
//
// The oracle reads snapshots (blockrec.Snapshot) and traces (parser); it
// does not mount, trace or replay anything itself.
package oracle
