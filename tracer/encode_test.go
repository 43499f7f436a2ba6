package tracer

import (
	"strings"
	"testing"

	"github.com/faultline/faultline/parser"
	"golang.org/x/sys/unix"
)

// parseValue reads one value as it would stand in a trace line.
func parseValue(t *testing.T, text string) *parser.Expr {
	t.Helper()
	l, err := parser.ParseLine("value", 1, "f("+text+") = 0")
	if err != nil {
		t.Fatalf("%s does not parse: %v", text, err)
	}
	return l.Body.(*parser.Call).Args[0].Value
}

// Every value the decoders print reads back as the number it came from.
func TestEncodeInvertsDecode(t *testing.T) {
	for _, m := range []uint32{0100644, 020620, 060660, 010600, 0140777, 0120777, 040755, 0104755, 0102755, 041777, 0644, 0} {
		text := parser.Format(modeExpr(m))
		got, err := modeOf(parseValue(t, text))
		if err != nil || got != m {
			t.Errorf("modeOf(%s) = %o, %v; want %o", text, got, err, m)
		}
	}
	for _, d := range []uint64{0, unix.Mkdev(8, 1), unix.Mkdev(0xfe, 0), unix.Mkdev(259, 1<<20)} {
		text := parser.Format(makedev(d))
		got, err := devOf(parseValue(t, text))
		if err != nil || got != d {
			t.Errorf("devOf(%s) = %#x, %v; want %#x", text, got, err, d)
		}
	}
	for _, v := range []uint64{0, 0x7ff, 0x1fff, 0x2001, 0x8000_0000} {
		text := parser.Format(statxMask.expr(v, ""))
		got, err := flagsOf(parseValue(t, text), statxMask)
		if err != nil || got != v {
			t.Errorf("flagsOf(%s) = %#x, %v; want %#x", text, got, err, v)
		}
	}
	for _, e := range []unix.Errno{unix.EIO, unix.ENOENT, unix.EAGAIN, unix.EOPNOTSUPP, unix.EDEADLK, 512, 516, 4000} {
		r := errnoResult(e)
		l, err := parser.ParseLine("value", 1, "f() "+strings.TrimPrefix(parser.Format(parser.NewCall("f", nil, r)), "f() "))
		if err != nil {
			t.Fatalf("%v: %v", e, err)
		}
		got, ok, err := wantRet(l.Body.(*parser.Call).Result)
		if err != nil || !ok || got != -int64(e) {
			t.Errorf("wantRet(%s) = %d, %v, %v; want %d", parser.Format(l.Body.(*parser.Call).Result), got, ok, err, -int64(e))
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	for _, tc := range []struct {
		text string
		fn   func(e *parser.Expr) error
		want string
	}{
		{"S_IFREG|S_IFDIR|0644", func(e *parser.Expr) error { _, err := modeOf(e); return err }, "more than one file type"},
		{"S_IFNOPE|0644", func(e *parser.Expr) error { _, err := modeOf(e); return err }, "unknown mode bit S_IFNOPE"},
		{"makedev(0x8)", func(e *parser.Expr) error { _, err := devOf(e); return err }, "two numbers"},
		{"-5", func(e *parser.Expr) error { _, err := uintOf(e); return err }, "negative"},
		{"\"abc\"", func(e *parser.Expr) error { _, err := intOf(e); return err }, "not a number"},
		{"STATX_NOPE", func(e *parser.Expr) error { _, err := flagsOf(e, statxMask); return err }, "unknown flag STATX_NOPE"},
		{"DT_NOPE", func(e *parser.Expr) error { _, err := enumOf(e, dirTypes); return err }, "unknown name DT_NOPE"},
	} {
		err := tc.fn(parseValue(t, tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.text, err, tc.want)
		}
	}
}
