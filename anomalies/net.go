package anomalies

import (
	"github.com/faultline/faultline/mutators"
)

// connectFailure fails a connect that succeeded or was in progress (a
// non-blocking connect reports its outcome later; the edit makes it fail at
// once, which a correct program must handle too).
func connectFailure(errno string) *mutators.Mutation {
	m := failure(errno, []string{"connect"}, "a successful or in-progress connect", nil)
	m.Match = func(s *mutators.Site) bool {
		c := s.Call
		return c.Name == "connect" && c.Result != nil && (c.Succeeded() || c.Result.Outcome.Errno == "EINPROGRESS")
	}
	return m
}

var _ = family(func() {
	register(
		&Anomaly{
			Name:    "connect-econnreset",
			Summary: "connect fails with ECONNRESET: the peer reset the connection",
			Situation: "A server that crashed or restarted, a load balancer or firewall that resets half-open " +
				"connections, a peer that accepted and closed at once.",
			Touches:  []string{"connect"},
			Expected: "Report the error or retry with a back-off; do not spin or treat the connection as established.",
			Mutation: connectFailure("ECONNRESET"),
		},
		&Anomaly{
			Name:    "connect-etimedout",
			Summary: "connect fails with ETIMEDOUT: no answer from the peer",
			Situation: "A host that is down or a firewall that drops packets: the kernel gives up after its " +
				"SYN retries (about two minutes by default).",
			Touches:  []string{"connect"},
			Expected: "Report the error naming the address, or try the next address; do not hang.",
			Mutation: connectFailure("ETIMEDOUT"),
		},
		&Anomaly{
			Name:    "accept-nonblock",
			Summary: "accept fails with EAGAIN: the listening socket behaves as non-blocking",
			Situation: "On BSD and macOS accepted sockets inherit O_NONBLOCK from the listener and on Linux they " +
				"do not; a connection that is reset before accept also leaves a woken accept with nothing. " +
				"Python 3.2's socket timeouts broke on that difference (CrashSimulator). Here the accept " +
				"returns EAGAIN as a non-blocking socket would.",
			Touches:  []string{"accept", "accept4"},
			Expected: "Handle EAGAIN from accept (go back to poll) and set O_NONBLOCK explicitly on accepted sockets as needed.",
			Mutation: failure("EAGAIN", []string{"accept", "accept4"}, "a successful accept or accept4", nil),
		},
	)
})
