package guests

import (
	"slices"
	"sort"
)

// Fate is what became of a set of guests across a fault.
type Fate struct {
	// Running are the guests that had a QEMU process at the fault: those
	// the fault could lose.
	Running []string
	// Lost are the guests a QEMU process of which, there at the fault, is
	// gone after it.
	Lost []string
	// Doubled are the guests without exactly one QEMU process after it.
	Doubled []string
}

// Judge compares the QEMU processes of each guest at the fault (atFault)
// with those after it (after), by guest name; every guest of after is
// judged.
func Judge(atFault, after map[string][]int) Fate {
	var f Fate
	names := make([]string, 0, len(after))
	for name := range after {
		names = append(names, name)
	}
	for name := range atFault {
		if _, ok := after[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		was, is := atFault[name], after[name]
		if len(was) > 0 {
			f.Running = append(f.Running, name)
			for _, pid := range was {
				if !slices.Contains(is, pid) {
					f.Lost = append(f.Lost, name)
					break
				}
			}
		}
		if len(is) != 1 {
			f.Doubled = append(f.Doubled, name)
		}
	}
	return f
}
