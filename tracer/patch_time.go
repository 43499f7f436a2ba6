package tracer

import (
	"fmt"

	"github.com/faultline/faultline/parser"
)

// Clock readings never repeat, so they are patched only with
// PatchOptions.Times or when the line is marked INJECTED. Only the
// calls that reach the kernel are seen: glibc answers these from the
// vDSO unless it is off.

// clockGettime patches clock_gettime's timespec.
func (p *patcher) clockGettime() error {
	if !p.clocks() {
		return nil
	}
	if err := p.resultOnly(); err != nil {
		return err
	}
	return p.timeStruct(1, "tv_nsec")
}

// gettimeofday patches the timeval (the timezone is not decoded).
func (p *patcher) gettimeofday() error {
	if !p.clocks() {
		return nil
	}
	if err := p.resultOnly(); err != nil {
		return err
	}
	return p.timeStruct(0, "tv_usec")
}

func (p *patcher) timeStruct(i int, fracName string) error {
	v := p.wantArg(i)
	if structOf(v) == nil {
		return nil // NULL or an address
	}
	addr := p.arg(i)
	if addr == 0 {
		return fmt.Errorf("the line shows a time where the program passed NULL")
	}
	sec, frac, err := timespecOf(v, fracName)
	if err != nil {
		return err
	}
	var ts timespec
	if err := readStruct(p.s.Tid, addr, &ts); err != nil {
		return fmt.Errorf("read the time: %w", err)
	}
	if ts.Sec == sec && ts.Nsec == frac {
		return nil
	}
	show := tsStruct
	if fracName == "tv_usec" {
		show = tvStruct
	}
	next := timespec{sec, frac}
	if err := writeStruct(p.s.Tid, addr, &next); err != nil {
		return fmt.Errorf("write the time: %w", err)
	}
	p.note("%s -> %s", parser.Format(show(ts)), parser.Format(show(next)))
	return nil
}

// time patches time(2): its result and the word it stores.
func (p *patcher) time(want int64) error {
	if !p.clocks() {
		return nil
	}
	if arr := arrayOf(p.wantArg(0)); arr != nil && len(arr.Elems) == 1 && p.arg(0) != 0 {
		v, err := intOf(arr.Elems[0].Value)
		if err != nil {
			return fmt.Errorf("tloc: %w", err)
		}
		old, err := readWord(p.s.Tid, p.arg(0))
		if err != nil {
			return fmt.Errorf("read tloc: %w", err)
		}
		if int64(old) != v {
			w := v
			if err := writeStruct(p.s.Tid, p.arg(0), &w); err != nil {
				return fmt.Errorf("write tloc: %w", err)
			}
			p.note("tloc [%d] -> [%d]", int64(old), v)
		}
	}
	if want == p.ret {
		return nil
	}
	p.note("result %s -> %s", retText(p.ret), retText(want))
	return p.setResult(want)
}
