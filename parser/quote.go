package parser

import (
	"fmt"
	"strings"
)

// QuoteStyle is how strace escapes string contents: by default (printable
// ASCII as is, C escapes, short octal), with -x (the whole string in hex as
// soon as one byte is not printable) or with -xx (every byte in hex).
type QuoteStyle int

const (
	QuoteDefault QuoteStyle = iota
	QuoteHexNonPrintable
	QuoteHexAll
)

// Quote renders b as strace would, with the trailing "..." when the
// string was truncated by -s.
func Quote(b []byte, style QuoteStyle, truncated bool) string {
	var sb strings.Builder
	sb.Grow(len(b) + 2)
	sb.WriteByte('"')
	hex := style == QuoteHexAll
	if style == QuoteHexNonPrintable {
		for _, c := range b {
			if c >= 0x80 || (!isPrint(c) && !isNamedEscape(c)) {
				hex = true
				break
			}
		}
	}
	const digits = "0123456789abcdef"
	for i, c := range b {
		if hex {
			sb.WriteString(`\x`)
			sb.WriteByte(digits[c>>4])
			sb.WriteByte(digits[c&0xf])
			continue
		}
		switch c {
		case '"', '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case '\f':
			sb.WriteString(`\f`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		case '\v':
			sb.WriteString(`\v`)
		default:
			if isPrint(c) {
				sb.WriteByte(c)
				continue
			}
			// strace's shortest octal, widened to three digits when an
			// octal digit follows so the escape cannot swallow it.
			sb.WriteByte('\\')
			if i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '7' {
				sb.WriteByte('0' + c>>6)
				sb.WriteByte('0' + (c>>3)&7)
			} else if c>>3 != 0 {
				if c>>6 != 0 {
					sb.WriteByte('0' + c>>6)
				}
				sb.WriteByte('0' + (c>>3)&7)
			}
			sb.WriteByte('0' + c&7)
		}
	}
	sb.WriteByte('"')
	if truncated {
		sb.WriteString("...")
	}
	return sb.String()
}

func isPrint(c byte) bool       { return c >= 0x20 && c < 0x7f }
func isNamedEscape(c byte) bool { return c == '\f' || c == '\n' || c == '\r' || c == '\t' || c == '\v' }

// Unquote decodes a string as strace quoted it; a trailing "..." is
// accepted and dropped (see Str.Truncated).
func Unquote(q string) ([]byte, error) {
	q = strings.TrimSuffix(q, "...")
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return nil, fmt.Errorf("not a quoted string: %.20q", q)
	}
	q = q[1 : len(q)-1]
	if strings.IndexByte(q, '\\') < 0 {
		return []byte(q), nil
	}
	out := make([]byte, 0, len(q))
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(q) {
			return nil, fmt.Errorf("string ends in a lone backslash")
		}
		switch e := q[i]; e {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'f':
			out = append(out, '\f')
		case 'v':
			out = append(out, '\v')
		case 'a':
			out = append(out, '\a')
		case 'b':
			out = append(out, '\b')
		case 'x':
			if i+2 >= len(q) || !isHex(q[i+1]) || !isHex(q[i+2]) {
				return nil, fmt.Errorf("\\x escape needs two hex digits")
			}
			out = append(out, unhex(q[i+1])<<4|unhex(q[i+2]))
			i += 2
		default:
			if e >= '0' && e <= '7' {
				v := 0
				n := 0
				for n < 3 && i < len(q) && q[i] >= '0' && q[i] <= '7' {
					v = v*8 + int(q[i]-'0')
					i++
					n++
				}
				i--
				if v > 0xff {
					return nil, fmt.Errorf("octal escape \\%o out of range", v)
				}
				out = append(out, byte(v))
				continue
			}
			out = append(out, e) // \" \\ and anything strace might add
		}
	}
	return out, nil
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	default:
		return (c | 0x20) - 'a' + 10
	}
}

// quoteStyleOf guesses the style a quoted string was written in, so an
// edited string keeps the look of its neighbours.
func quoteStyleOf(q string) QuoteStyle {
	if strings.HasPrefix(q, `"\x`) {
		if strings.Count(q, `\x`)*4 >= len(strings.TrimSuffix(q, "..."))-2 {
			return QuoteHexAll
		}
		return QuoteHexNonPrintable
	}
	return QuoteDefault
}
