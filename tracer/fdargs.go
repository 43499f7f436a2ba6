package tracer

import "reflect"

// Descriptor numbers are not identity across runs: threads that open
// files concurrently get them in another order each time. A replay that
// maps the recording's numbers to the live run's needs to know which
// arguments and results are descriptors; the syscall table knows.

// FDArgs lists the positions of name's descriptor arguments (directory
// descriptors included; AT_FDCWD is not a number and compares as text).
func FDArgs(name string) []int {
	s, ok := signature(name)
	if !ok {
		return nil
	}
	var out []int
	for i, k := range s.args {
		if sameFunc(k.in, kFD.in) || sameFunc(k.in, kDirFD.in) {
			out = append(out, i)
		}
	}
	return out
}

// ReturnsFD reports whether name's result is a new descriptor.
func ReturnsFD(name string) bool {
	s, ok := signature(name)
	return ok && s.ret != nil && sameFunc(s.ret, retFD)
}

func sameFunc(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.IsValid() && vb.IsValid() && !va.IsNil() && !vb.IsNil() && va.Pointer() == vb.Pointer()
}
