// Package blockrec is faultline's recording RAM disk and crash-image
// machinery.
//
// It owns:
//   - the in-memory disk image, served as one file by an in-process FUSE
//     server, attached to a loop device, formatted (ext4, xfs, btrfs) and
//     mounted at the sandbox path (Recorder);
//   - the block log: every WRITE and FSYNC that reaches that file, in arrival
//     order, tagged with an opaque trace position set by the caller (Log,
//     Entry), its binary serialisation and its text rendering;
//   - crash-site generation after C³ Algorithm 1: epochs split at flushes,
//     bounded subsets of in-flight writes dropped, duplicates removed by
//     content hash (Epochs, Sites);
//   - copy-on-write serving of crash images and checking them in parallel
//     (Checker): base + chosen writes + a scratch overlay, never a whole copy;
//   - the snapshot walk used for expected and crash snapshots (Walk);
//   - runtime directories and cleanup of what a killed run left behind
//     (RuntimeDir, CleanupStale, CloseAll).
//
// It must not import any other faultline package, interpret trace positions
// (they are int64 values owned by the caller), judge snapshots (that is the
// oracle's job), or touch anything on the host outside its own runtime
// directory (/run/faultline/<pid>), its own loop devices and the mount point
// the caller hands it.
//
// Everything here needs root, /dev/fuse and /dev/loop-control.
package blockrec
