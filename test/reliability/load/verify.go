package load

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// Record is everything a storm did.
type Record struct {
	// Began is when the clients started; Ended when the last answer came.
	Began, Ended time.Time
	Clients      int
	// Requests are ordered by End.
	Requests []Request
	// HostCPU is the machine's CPU time during the storm, oldest first
	// (none if it was not sampled).
	HostCPU []HostCPU
}

// Found is what the server holds of one object after the storm.
type Found struct {
	Exists bool
	Write  int
	UID    types.UID
}

// Final reads what the server holds of the storm's objects: one List, a
// quorum read (no resourceVersion), so it sees every write acknowledged
// before it.
func Final(ctx context.Context, c virtclient.Interface, namespace string) (map[string]Found, error) {
	list, err := c.VirtualizationV1().VirtualMachines(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the storm's VMs: %w", err)
	}
	out := make(map[string]Found, len(list.Items))
	for _, vm := range list.Items {
		w, err := strconv.Atoi(vm.Annotations[WriteAnnotation])
		if err != nil {
			return nil, fmt.Errorf("VM %s: annotation %s=%q: %w", vm.Name, WriteAnnotation, vm.Annotations[WriteAnnotation], err)
		}
		out[vm.Name] = Found{Exists: true, Write: w, UID: vm.UID}
	}
	return out, nil
}

// Loss is an object whose state after the storm contradicts its last
// acknowledged write.
type Loss struct {
	Object string
	// Ack is the last acknowledged write of the object.
	Ack   Request
	Found Found
	// Allowed says what the object may hold.
	Allowed string
}

func (l Loss) String() string {
	found := "gone"
	if l.Found.Exists {
		found = fmt.Sprintf("write %d (uid %s)", l.Found.Write, l.Found.UID)
	}
	return fmt.Sprintf("%s: %s %d acknowledged at %s, found %s, allowed %s",
		l.Object, l.Ack.Verb, l.Ack.Write, l.Ack.End.Format("15:04:05.000"), found, l.Allowed)
}

// Verdict is the storm's acknowledged writes checked against the server.
type Verdict struct {
	// Objects is how many objects the storm wrote to.
	Objects int
	// Acknowledged is how many writes the server acknowledged.
	Acknowledged int
	// Checked is how many objects had an acknowledged write to check.
	Checked int
	Lost    []Loss
}

// Verify checks every object's last acknowledged write against what the
// server holds (Final). Each object has one writer whose requests follow
// one another, so its state is its last acknowledged write's, or that of a
// later write whose outcome is unknown (Ambiguous): a create or update
// acknowledged leaves the object with that write's number (and a created
// object with its UID), a delete acknowledged leaves it gone. A write
// refused with a 4xx was not applied. An object with no acknowledged write
// has nothing to lose and is not checked.
func Verify(rec *Record, final map[string]Found) Verdict {
	byObject := map[string][]Request{}
	var v Verdict
	for _, r := range rec.Requests {
		byObject[r.Object] = append(byObject[r.Object], r)
		if r.OK() {
			v.Acknowledged++
		}
	}
	v.Objects = len(byObject)
	for _, name := range slices.Sorted(maps.Keys(byObject)) {
		reqs := byObject[name]
		slices.SortFunc(reqs, func(a, b Request) int { return a.Start.Compare(b.Start) })
		last := -1
		var uid types.UID
		for i, r := range reqs {
			if r.OK() {
				last = i
				if r.Verb == Create {
					uid = r.UID
				}
			}
		}
		if last < 0 {
			continue
		}
		v.Checked++
		allowed := allowedStates(reqs[last], reqs[last+1:])
		got := final[name]
		if !allowed.holds(got, uid) {
			v.Lost = append(v.Lost, Loss{Object: name, Ack: reqs[last], Found: got, Allowed: allowed.String()})
		}
	}
	return v
}

// states are what an object may hold after the storm.
type states struct {
	gone   bool
	writes []int
}

func allowedStates(ack Request, later []Request) states {
	var s states
	if ack.Verb == Delete {
		s.gone = true
	} else {
		s.writes = append(s.writes, ack.Write)
	}
	for _, r := range later {
		if !r.Ambiguous() {
			continue
		}
		switch r.Verb {
		case Delete:
			s.gone = true
		case Create, Update:
			s.writes = append(s.writes, r.Write)
		}
	}
	return s
}

func (s states) holds(f Found, uid types.UID) bool {
	if !f.Exists {
		return s.gone
	}
	if uid != "" && f.UID != uid {
		return false
	}
	return slices.Contains(s.writes, f.Write)
}

func (s states) String() string {
	var parts []string
	for _, w := range s.writes {
		parts = append(parts, fmt.Sprintf("write %d", w))
	}
	if s.gone {
		parts = append(parts, "gone")
	}
	return fmt.Sprint(parts)
}
