package tracer

import (
	"fmt"
	"net/netip"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// Sockets: address structures, families, types and lengths.

var families = enum{0: "AF_UNSPEC", 1: "AF_UNIX", 2: "AF_INET", 3: "AF_AX25", 4: "AF_IPX", 5: "AF_APPLETALK",
	9: "AF_X25", 10: "AF_INET6", 16: "AF_NETLINK", 17: "AF_PACKET", 38: "AF_ALG", 40: "AF_VSOCK", 44: "AF_XDP"}

var kFamily = enumKind(families, "")

var sockTypes = enum{1: "SOCK_STREAM", 2: "SOCK_DGRAM", 3: "SOCK_RAW", 4: "SOCK_RDM", 5: "SOCK_SEQPACKET", 6: "SOCK_DCCP", 10: "SOCK_PACKET"}

var kSockType = kind{in: func(d *dec, i int) *parser.Arg {
	v := uint64(uint32(d.arg(i)))
	var names []string
	if n, ok := sockTypes[v&0xf]; ok {
		names = append(names, n)
	} else {
		names = append(names, fmt.Sprintf("%#x", v&0xf))
	}
	names = append(names, flagSet{{0x80000, "SOCK_CLOEXEC"}, {0x800, "SOCK_NONBLOCK"}}.names(v&^0xf)...)
	return pos(parser.Flags(names...))
}}

var ipProtos = enum{0: "IPPROTO_IP", 1: "IPPROTO_ICMP", 2: "IPPROTO_IGMP", 4: "IPPROTO_IPIP", 6: "IPPROTO_TCP",
	17: "IPPROTO_UDP", 41: "IPPROTO_IPV6", 47: "IPPROTO_GRE", 58: "IPPROTO_ICMPV6", 132: "IPPROTO_SCTP",
	136: "IPPROTO_UDPLITE", 255: "IPPROTO_RAW", 262: "IPPROTO_MPTCP"}

var netlinkProtos = enum{0: "NETLINK_ROUTE", 2: "NETLINK_USERSOCK", 4: "NETLINK_SOCK_DIAG", 9: "NETLINK_AUDIT",
	15: "NETLINK_KOBJECT_UEVENT", 16: "NETLINK_GENERIC"}

var kSockProto = kind{in: func(d *dec, i int) *parser.Arg {
	v := uint64(uint32(d.arg(i)))
	switch d.arg(0) {
	case unix.AF_INET, unix.AF_INET6:
		return pos(ipProtos.expr(v, ""))
	case unix.AF_NETLINK:
		return pos(netlinkProtos.expr(v, ""))
	}
	return pos(parser.Udec(v))
}}

func htons(v uint16) uint16 { return v>>8 | v<<8 }

// sockaddr prints n bytes at addr as strace does for the family found.
func (d *dec) sockaddr(addr uint64, n int) *parser.Expr {
	if addr == 0 {
		return parser.Null()
	}
	if n <= 0 {
		return parser.Hex(addr)
	}
	if n > 128 {
		n = 128
	}
	b := make([]byte, n)
	if readFull(d.pid, addr, b) != nil {
		return parser.Hex(addr)
	}
	if n < 2 {
		return parser.Hex(addr)
	}
	fam := uint64(b[0]) | uint64(b[1])<<8
	f := []*parser.Arg{parser.Field("sa_family", families.expr(fam, ""))}
	switch {
	case fam == unix.AF_UNIX:
		path := b[2:]
		if len(path) > 0 && path[0] == 0 && len(path) > 1 {
			f = append(f, parser.Field("sun_path", parser.X(&parser.Str{Quoted: "@" + parser.Quote(path[1:], parser.QuoteDefault, false)})))
			break
		}
		for i, c := range path {
			if c == 0 {
				path = path[:i]
				break
			}
		}
		if len(b) > 2 {
			f = append(f, parser.Field("sun_path", parser.Quoted(path, parser.QuoteDefault, false)))
		}
	case fam == unix.AF_INET && n >= 8:
		port := uint16(b[2])<<8 | uint16(b[3])
		ip := netip.AddrFrom4([4]byte(b[4:8]))
		f = append(f, parser.Field("sin_port", parser.CallExpr("htons", parser.Udec(uint64(port)))),
			parser.Field("sin_addr", parser.CallExpr("inet_addr", parser.Quoted([]byte(ip.String()), parser.QuoteDefault, false))))
	case fam == unix.AF_INET6 && n >= 24:
		port := uint16(b[2])<<8 | uint16(b[3])
		flow := uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
		ip := netip.AddrFrom16([16]byte(b[8:24]))
		f = append(f, parser.Field("sin6_port", parser.CallExpr("htons", parser.Udec(uint64(port)))),
			parser.Field("sin6_flowinfo", parser.CallExpr("htonl", parser.Udec(flow))),
			parser.Positional(parser.CallExpr("inet_pton", parser.Sym("AF_INET6"), parser.Quoted([]byte(ip.String()), parser.QuoteDefault, false), parser.X(&parser.Ref{Name: "sin6_addr"}))))
		if n >= 28 {
			f = append(f, parser.Field("sin6_scope_id", parser.Udec(uint64(le32(b[24:])))))
		}
	case fam == unix.AF_NETLINK && n >= 12:
		f = append(f, parser.Field("nl_pid", parser.Dec(int64(int32(le32(b[4:]))))),
			parser.Field("nl_groups", parser.X(&parser.Int{Text: fmt.Sprintf("%08x", le32(b[8:]))})))
	default:
		f = append(f, parser.Field("sa_data", parser.Quoted(b[2:], parser.QuoteDefault, false)))
	}
	return parser.NewStruct(f...)
}

var (
	// kSockaddrIn is an address the program passes, sized by the next
	// argument.
	kSockaddrIn = kind{in: func(d *dec, i int) *parser.Arg { return pos(d.sockaddr(d.arg(i), int(uint32(d.arg(i+1))))) }}
	// kSockaddrOut is an address the kernel fills, its length in *next.
	kSockaddrOut = kind{out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
		addr := d.arg(i)
		if addr == 0 || d.failed() || d.arg(i+1) == 0 {
			return pos(ptr(addr))
		}
		var b [4]byte
		if readFull(d.pid, d.arg(i+1), b[:]) != nil {
			return pos(parser.Hex(addr))
		}
		n := int(le32(b[:]))
		if in := int(d.saved[i+1]); in < n {
			n = in
		}
		return pos(d.sockaddr(addr, n))
	}}
	// kSocklen is an in/out length: [16], or [128 => 16] when it changed.
	kSocklen = kind{
		save: func(d *dec, i int) {
			if d.arg(i) != 0 {
				var b [4]byte
				if readFull(d.pid, d.arg(i), b[:]) == nil {
					d.saved[i] = uint64(le32(b[:]))
				}
			}
		},
		out: func(d *dec, i int, _ *parser.Arg) *parser.Arg {
			addr := d.arg(i)
			if addr == 0 {
				return pos(parser.Null())
			}
			var b [4]byte
			if d.failed() || readFull(d.pid, addr, b[:]) != nil {
				return pos(parser.NewArray(parser.Udec(d.saved[i])))
			}
			out := uint64(le32(b[:]))
			if out == d.saved[i] {
				return pos(parser.NewArray(parser.Udec(out)))
			}
			return pos(parser.X(&parser.Array{Elems: []*parser.Arg{parser.InOut(parser.Udec(d.saved[i]), parser.Udec(out))}}))
		},
	}
	kShutHow = enumKind(enum{0: "SHUT_RD", 1: "SHUT_WR", 2: "SHUT_RDWR"}, "")
)
