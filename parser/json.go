package parser

import (
	"encoding/json"
	"strings"
)

// MarshalJSON gives a line as one event object: where it is, which process,
// what kind of event, and for calls the typed arguments and result.
func (l *Line) MarshalJSON() ([]byte, error) {
	ev := map[string]any{"file": l.Pos.Filename, "line": l.Pos.Line, "text": l.String()}
	if l.Prefix.Pid.N != 0 {
		ev["pid"] = l.Prefix.Pid.N
	}
	if l.Prefix.Time != "" {
		ev["time"] = l.Prefix.Time
	}
	switch b := l.Body.(type) {
	case nil:
		ev["kind"] = "blank"
	case *Call:
		ev["kind"] = "call"
		ev["name"] = b.Name
		ev["args"] = argsJSON(b.Args)
		if b.Pending.Unfinished() {
			ev["unfinished"] = true
		}
		if b.Result != nil {
			ev["result"] = resultJSON(b.Result)
		}
	case *Resumed:
		ev["kind"] = "resumed"
		ev["name"] = string(b.Name)
		ev["args"] = argsJSON(b.Args)
		if b.Out != nil {
			ev["out"] = exprJSON(b.Out)
		}
		if b.Result != nil {
			ev["result"] = resultJSON(b.Result)
		}
	case *Signal:
		ev["kind"] = "signal"
		ev["signal"] = b.Name
		if b.Stopped {
			ev["stopped"] = true
		}
		if b.Info != nil {
			ev["info"] = valueJSON(b.Info)
		}
	case *Exit:
		ev["kind"] = "exit"
		switch {
		case b.KilledBy != "":
			ev["killed_by"] = b.KilledBy
			ev["core_dumped"] = b.CoreDumped
		case b.SupersededBy != "":
			ev["superseded_by"] = b.SupersededBy
		default:
			ev["status"] = b.Status
		}
	case *Info:
		ev["kind"] = "info"
	case *Comment:
		ev["kind"] = "comment"
		ev["comment"] = strings.TrimPrefix(b.Text, "#")
	}
	return json.Marshal(ev)
}

func argsJSON(args []*Arg) []any {
	out := make([]any, 0, len(args))
	for _, a := range args {
		m := map[string]any{"value": exprJSON(a.Value)}
		if a.Name != "" {
			m["name"] = string(a.Name)
		}
		if a.Out != nil {
			m["out"] = exprJSON(a.Out)
		}
		out = append(out, m)
	}
	return out
}

func resultJSON(r *Result) map[string]any {
	m := map[string]any{}
	if r.Unknown || r.Value == nil {
		m["unknown"] = true
	} else {
		m["value"] = exprJSON(r.Value)
	}
	if r.Outcome.Errno != "" {
		m["errno"] = r.Outcome.Errno
	}
	if t := r.ErrText(); t != "" {
		m["errtext"] = t
	}
	if len(r.Outcome.Notes) > 0 {
		m["notes"] = r.Outcome.Notes
	}
	if r.Injected() {
		m["injected"] = true
	}
	if r.Outcome.Unavailable {
		m["unavailable"] = true
	}
	if r.Outcome.Duration != "" {
		m["duration"] = strings.Trim(r.Outcome.Duration, "<>")
	}
	return m
}

func exprJSON(e *Expr) map[string]any {
	var m map[string]any
	switch {
	case len(e.Tail) == 0:
		m = valueJSON(e.Head)
	case e.Flags() != nil:
		m = map[string]any{"kind": "flags", "flags": e.Flags()}
	default:
		ops := []string{}
		operands := []any{valueJSON(e.Head)}
		for _, t := range e.Tail {
			ops = append(ops, t.Op)
			operands = append(operands, valueJSON(t.X))
		}
		m = map[string]any{"kind": "expr", "operands": operands, "ops": ops}
	}
	if e.Comment != "" {
		m["comment"] = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(e.Comment, "/*"), "*/"))
	}
	return m
}

func valueJSON(v Value) map[string]any {
	switch v := v.(type) {
	case *Int:
		m := map[string]any{"kind": "int", "text": v.Text}
		if n, ok := v.Int64(); ok {
			m["value"] = n
		}
		if v.Decor != nil {
			m["decor"] = v.Decor.Text
		}
		return m
	case *Ident:
		if v.Call != nil {
			return map[string]any{"kind": "call", "name": v.Name, "args": argsJSON(v.Call.Args)}
		}
		m := map[string]any{"kind": "const", "name": v.Name}
		if v.Decor != nil {
			m["decor"] = v.Decor.Text
		}
		return m
	case *Str:
		b, trunc, _ := v.Bytes()
		return map[string]any{"kind": "string", "value": string(b), "truncated": trunc}
	case *Struct:
		return map[string]any{"kind": "struct", "fields": argsJSON(v.Fields)}
	case *Array:
		return map[string]any{"kind": "array", "elems": argsJSON(v.Elems)}
	case *BitSet:
		bits := []any{}
		for _, b := range v.Bits {
			bits = append(bits, exprJSON(b))
		}
		return map[string]any{"kind": "bitset", "not": v.Not, "bits": bits}
	case *Ellipsis:
		return map[string]any{"kind": "more"}
	case *Ref:
		return map[string]any{"kind": "ref", "name": v.Name}
	case *Resuming:
		return map[string]any{"kind": "resuming", "text": v.Text}
	case *Remark:
		return map[string]any{"kind": "comment", "text": v.Text}
	}
	return map[string]any{"kind": "unknown"}
}
