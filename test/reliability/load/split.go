package load

import (
	"fmt"
	"time"
)

// Split sorts a storm's failed requests by whether a fault's window
// explains them: the window runs from the fault to the moment the clients'
// path could know what the fault took away (for a killed replica: its
// endpoint gone from the aggregator's view). Only failures from the fault
// on can be the fault's: a request that failed before it failed for
// another reason, and neither it nor what follows from it may be
// attributed to the window, nor hidden in it.
type Split struct {
	// Before: failed before the fault (ended before it).
	Before int
	// Window: failed from the fault on, having started before the window
	// closed.
	Window int
	// FollowOn: a 404 of an update or delete, after the window, of a VM
	// whose create failed in the window: the window's failure seen again.
	FollowOn int
	// Unexplained: failed after the window, for no reason the window
	// gives.
	Unexplained int
	// OKInWindow and FailedInWindow count the requests that ended between
	// the fault and the window's close.
	OKInWindow, FailedInWindow int
	// Examples are the first few failures counted Before or Unexplained.
	Examples []Request
}

// SplitFailures splits the failed requests of rec around a fault at fault
// whose window closes at closed.
func SplitFailures(rec *Record, fault, closed time.Time) Split {
	var s Split
	// Requests are sorted by their end, and each object's requests come
	// one after the other from one client: its create is seen first.
	createFailedInWindow := map[string]bool{}
	for _, r := range rec.Requests {
		afterFault := !r.End.Before(fault)
		if afterFault && r.End.Before(closed) {
			if r.OK() {
				s.OKInWindow++
			} else {
				s.FailedInWindow++
			}
		}
		if r.OK() {
			continue
		}
		switch {
		case !afterFault:
			s.Before++
			s.example(r)
		case r.Start.Before(closed):
			s.Window++
			if r.Verb == Create {
				createFailedInWindow[r.Object] = true
			}
		case r.Code == 404 && r.Verb != Create && createFailedInWindow[r.Object]:
			s.FollowOn++
		default:
			s.Unexplained++
			s.example(r)
		}
	}
	return s
}

func (s *Split) example(r Request) {
	if len(s.Examples) < 3 {
		s.Examples = append(s.Examples, r)
	}
}

// Explained reports whether the window explains every failure of the
// storm: none before the fault, none unexplained after it.
func (s Split) Explained() bool { return s.Before == 0 && s.Unexplained == 0 }

// ExamplesString lists the failures the window does not explain, for a
// report line: "" when there are none.
func (s Split) ExamplesString() string {
	if len(s.Examples) == 0 {
		return ""
	}
	out := "; the first of those"
	for _, r := range s.Examples {
		out += fmt.Sprintf(": %s %s at %s, %s", r.Verb, r.Object, r.Start.Format("15:04:05.000"), r.Err)
	}
	return out
}
