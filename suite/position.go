package suite

import (
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// positions maps a key path as errors name it ("sandbox.init",
// "anomaly[2].expect", "expect.rename-exdev") to the line that sets it.
// The decoder reports lines only for what it cannot decode; mistakes found
// afterwards (an unknown anomaly, an outcome that does not exist) are
// located here, from go-toml's own parser.
type positions map[string]int

func indexPositions(data []byte) positions {
	pos := positions{}
	var p unstable.Parser
	p.Reset(data)
	table := ""
	arrays := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			name, line := keyOf(&p, e.Key())
			if e.Kind == unstable.ArrayTable {
				arrays[name]++
				name = fmt.Sprintf("%s[%d]", name, arrays[name])
			}
			table = name
			pos[name] = line
		case unstable.KeyValue:
			name, line := keyOf(&p, e.Key())
			if table != "" {
				name = table + "." + name
			}
			pos[name] = line
		}
	}
	// A syntax error stops the walk; the decoder has reported it already.
	return pos
}

// keyOf joins a dotted key and gives the line of its first part.
func keyOf(p *unstable.Parser, it unstable.Iterator) (string, int) {
	var parts []string
	line := 0
	for it.Next() {
		n := it.Node()
		if line == 0 {
			line = p.Shape(n.Raw).Start.Line
		}
		parts = append(parts, string(n.Data))
	}
	return strings.Join(parts, "."), line
}

// line is where key is set, or where the nearest enclosing key is: an
// element of an array is reported at the array's line.
func (ps positions) line(key string) int {
	for key != "" {
		if l, ok := ps[key]; ok {
			return l
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}
