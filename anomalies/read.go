package anomalies

import (
	"fmt"

	"github.com/faultline/faultline/mutators"
	"github.com/faultline/faultline/parser"
)

var _ = family(func() {
	readable := userCall
	register(
		&Anomaly{
			Name:    "read-eio",
			Summary: "a read fails with EIO: a bad sector or a lost device",
			Situation: "Media errors, a USB stick pulled out, a network block device or FUSE server gone: the " +
				"kernel cannot produce the data and read returns EIO, possibly in the middle of a file.",
			Touches:  reads,
			Expected: "Report the error and stop using the data; do not treat it as end of file and go on with a truncated input.",
			Mutation: failure("EIO", reads, "a successful read of a file", readable),
		},
		&Anomaly{
			Name:    "read-eintr",
			Summary: "a read fails with EINTR: a signal arrived before any data",
			Situation: "A signal handler installed without SA_RESTART (or a read on a socket with a timeout) makes " +
				"a blocking read return EINTR; SIGCHLD, SIGALRM, SIGWINCH and job control all do it.",
			Touches:  reads,
			Expected: "Retry the read (or check the flag the handler set); EINTR is not an error to report.",
			Mutation: failure("EINTR", reads, "a successful read", readable),
		},
		&Anomaly{
			Name:    "read-einval",
			Summary: "a read fails with EINVAL: the file cannot be read this way",
			Situation: "O_DIRECT with a misaligned buffer or offset, a timerfd or eventfd read with the wrong " +
				"size, an fd not suitable for reading: the same code that works on ext4 fails on another file system.",
			Touches:  reads,
			Expected: "Report the error with the file's name and stop; do not loop on it.",
			Mutation: failure("EINVAL", reads, "a successful read of a file", readable),
		},
		&Anomaly{
			Name:    "read-short",
			Summary: "a read returns half of what it returned in the recording",
			Situation: "read(2) may return fewer bytes than asked for before the end of the file: on pipes, " +
				"sockets and terminals, on network and FUSE file systems, and when a signal arrives. Code that " +
				"takes a short read for end of file truncates its input.",
			Touches:  []string{"read", "pread64"},
			Expected: "Keep reading until read returns 0 (or the expected length has arrived).",
			Mutation: &mutators.Mutation{
				Wants: "a successful read or pread64 of at least 2 bytes",
				Match: func(s *mutators.Site) bool {
					n, ok := s.Call.Result.Int()
					return (s.Call.Name == "read" || s.Call.Name == "pread64") && s.Call.Succeeded() &&
						ok && n >= 2 && readable(s.Call)
				},
				Edit: halveRead,
			},
		},
	)
})

// halveRead returns half the bytes: the count and the data strace printed.
func halveRead(s *mutators.Site) error {
	sc := s.Edit()
	n, _ := sc.Result.Int()
	half := n / 2
	if len(sc.Args) > 1 && sc.Args[1].Value != nil {
		if str, ok := sc.Args[1].Value.Head.(*parser.Str); ok {
			b, trunc, err := str.Bytes()
			if err != nil {
				return fmt.Errorf("the read data cannot be decoded: %w", err)
			}
			// With -s the data may already be cut short; it stays cut if
			// half the count is more than strace showed.
			if int64(len(b)) > half {
				b, trunc = b[:half], false
			}
			sc.Args[1].Value = parser.Quoted(b, styleOf(str.Quoted), trunc)
		}
	}
	s.SetResult(parser.Ret(parser.Dec(half)))
	return nil
}

// styleOf guesses the quoting style a string was printed in (-x, -xx).
func styleOf(q string) parser.QuoteStyle {
	if len(q) >= 4 && q[1] == '\\' && q[2] == 'x' {
		return parser.QuoteHexNonPrintable
	}
	return parser.QuoteDefault
}
