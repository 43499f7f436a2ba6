// Package suite runs scripted mutator suites and audits: the checks a
// project keeps for its application (crash consistency, catalogue
// anomalies with selectors, hand-written trace edits kept as patch files),
// each with the outcome it expects, and the audit that tries every
// applicable anomaly of the catalogue at each distinct call site of one
// recording.
//
// It owns:
//   - the suite file (TOML): its model, loading it with file:line and the
//     key at fault for every mistake (Load, Parse), and writing an
//     audit back as one (Audit.WriteSuite);
//   - applying a patch file to a fresh recording (ApplyPatch);
//   - choosing the distinct call sites of an audit (Sites);
//   - running checks in parallel, each in its own sandbox, and splitting
//     them across machines (Runner, Shard);
//   - the report model and its renderings: table, JSON, JUnit XML.
//
// It must not record, replay or judge anything itself: that is the
// supervisor's, crash's and oracle's work, reached through the Engine
// interface (Faultline is the real one). It does not print progress or
// choose exit statuses (the command line does), and it writes files only
// where its caller names them, atomically (blockrec.WriteFileAtomic).
package suite
