package parser

import (
	"testing"
)

// Edits change only the node they touch: the rest of the line keeps its
// bytes, and the edited part is printed in strace's style.
func TestPrintEdits(t *testing.T) {
	tests := []struct {
		name string
		line string
		edit func(t *testing.T, l *Line)
		want string
	}{
		{
			name: "result replaced keeps the padding",
			line: `4741  rename("a.tmp", "a")              = 0`,
			edit: func(t *testing.T, l *Line) {
				l.Body.(*Call).Result = Fail("EXDEV", "Invalid cross-device link")
			},
			want: `4741  rename("a.tmp", "a")              = -1 EXDEV (Invalid cross-device link)`,
		},
		{
			name: "struct member replaced",
			line: `newfstatat(3, "", {st_mode=S_IFREG|0644, st_size=25340, ...}, AT_EMPTY_PATH) = 0`,
			edit: func(t *testing.T, l *Line) {
				st := l.Body.(*Call).Args[2].Value.Head.(*Struct)
				st.Field("st_mode").Value = Mode("S_IFCHR", 0o644)
			},
			want: `newfstatat(3, "", {st_mode=S_IFCHR|0644, st_size=25340, ...}, AT_EMPTY_PATH) = 0`,
		},
		{
			name: "note added in place with Touch",
			line: `fsync(3)                                = 0 <0.000100>`,
			edit: func(t *testing.T, l *Line) {
				r := l.Body.(*Call).Result
				r.Value = Dec(-1)
				r.Outcome.Errno = "EIO"
				r.Outcome.Notes = []string{"(Input/output error)", "(INJECTED)"}
				r.Touch()
			},
			want: `fsync(3)                                = -1 EIO (Input/output error) (INJECTED) <0.000100>`,
		},
		{
			name: "read data and count in a resumed half",
			line: `[pid  1235] <... read resumed>"abc", 4096) = 3`,
			edit: func(t *testing.T, l *Line) {
				r := l.Body.(*Resumed)
				r.Args[0].Value = Quoted([]byte("ab"), QuoteDefault, false)
				r.Result = Ret(Dec(2))
			},
			want: `[pid  1235] <... read resumed>"ab", 4096) = 2`,
		},
		{
			name: "argument appended: the list is reprinted",
			line: `openat(AT_FDCWD, "f", O_RDONLY)         = 3`,
			edit: func(t *testing.T, l *Line) {
				c := l.Body.(*Call)
				c.Args[2].Value = Flags("O_WRONLY", "O_CREAT", "O_TRUNC")
				c.Args = append(c.Args, Positional(Oct(0o644)))
			},
			want: `openat(AT_FDCWD, "f", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3`,
		},
		{
			name: "built line aligns the result at column 40",
			edit: func(t *testing.T, l *Line) {
				*l = *NewLine(0, NewCall("sync", nil, Ret(Dec(0))))
			},
			want: `sync()                                  = 0`,
		},
		{
			name: "built kill line with a pid",
			edit: func(t *testing.T, l *Line) {
				*l = *NewLine(1234, &Exit{KilledBy: "SIGKILL"})
			},
			want: `1234  +++ killed by SIGKILL +++`,
		},
		{
			name: "quoting in strace's style",
			edit: func(t *testing.T, l *Line) {
				*l = *NewLine(0, NewCall("write", []*Arg{Positional(FD(1, "/dev/pts/0")),
					Positional(Quoted([]byte("a\"b\\\n\x00\x01"+"7\xff"), QuoteDefault, true)), Positional(Dec(9))}, Ret(Dec(9))))
			},
			want: `write(1</dev/pts/0>, "a\"b\\\n\0\0017\377"..., 9) = 9`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &Line{}
			if tt.line != "" {
				var err error
				if l, err = ParseLine("t", 1, tt.line); err != nil {
					t.Fatal(err)
				}
			}
			tt.edit(t, l)
			if got := l.String(); got != tt.want {
				t.Errorf("got\n\t%s\nwant\n\t%s", got, tt.want)
			}
			if _, err := ParseLine("t", 1, tt.want); err != nil {
				t.Errorf("the edited line does not parse: %v", err)
			}
		})
	}
}

func TestQuoteRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, style := range []QuoteStyle{QuoteDefault, QuoteHexNonPrintable, QuoteHexAll} {
		q := Quote(all, style, false)
		b, err := Unquote(q)
		if err != nil || string(b) != string(all) {
			t.Errorf("style %d: Unquote(Quote(x)) != x: %v", style, err)
		}
	}
}
