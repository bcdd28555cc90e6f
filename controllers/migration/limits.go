package migration

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// candidate is what the limits look at in a migration.
type candidate struct {
	// key is the migration's namespace/name.
	key string
	// evacuation: created for a drain; goes before the users'.
	evacuation bool
	// created orders migrations of the same priority, oldest first.
	created time.Time
	// sourceNode is the node the VMI leaves.
	sourceNode string
}

// limits are the most migrations past Pending at once, in the cluster and
// leaving one node.
type limits struct {
	perCluster, outboundPerNode int
}

// admit returns the keys of the pending migrations that may start now, given
// the ones already started (past Pending, not ended). Evacuations go first,
// then the oldest: a drain is not held up by users' migrations, and no
// migration waits behind younger ones of its own priority. A migration whose
// source node is at its limit does not block others from other nodes.
func admit(pending, started []candidate, l limits) map[string]bool {
	total := len(started)
	perNode := map[string]int{}
	for _, s := range started {
		perNode[s.sourceNode]++
	}
	queue := slices.Clone(pending)
	slices.SortFunc(queue, byPriority)
	admitted := map[string]bool{}
	for _, c := range queue {
		if total >= l.perCluster {
			break
		}
		if perNode[c.sourceNode] >= l.outboundPerNode {
			continue
		}
		admitted[c.key] = true
		total++
		perNode[c.sourceNode]++
	}
	return admitted
}

// byPriority orders evacuations before the users' migrations, then oldest
// first, then by key for a stable order.
func byPriority(a, b candidate) int {
	if a.evacuation != b.evacuation {
		if a.evacuation {
			return -1
		}
		return 1
	}
	if c := a.created.Compare(b.created); c != 0 {
		return c
	}
	return cmp.Compare(a.key, b.key)
}

// evacuationBackoff is how long after now an evacuation migration of a VMI
// must still wait, given when the VMI's earlier evacuation migrations failed
// (since its last success): base after the first failure, doubling per
// failure up to maxEvacuationBackoff, counted from the latest failure.
// KubeVirt backs off the same way (20 s doubling); a drain that keeps
// failing a VMI's migrations retries without hammering the nodes.
func evacuationBackoff(failures []time.Time, base time.Duration, now time.Time) time.Duration {
	if len(failures) == 0 {
		return 0
	}
	delay := base
	for range len(failures) - 1 {
		delay *= 2
		if delay >= maxEvacuationBackoff {
			delay = maxEvacuationBackoff
			break
		}
	}
	last := slices.MaxFunc(failures, func(a, b time.Time) int { return a.Compare(b) })
	if wait := last.Add(delay).Sub(now); wait > 0 {
		return wait
	}
	return 0
}

// reservations are the migrations this controller admitted whose move past
// Pending its informer has not delivered yet; the limits count them as
// started. Decided on a cache that still showed an admitted migration
// Pending, a migration of higher priority (one that had not been Pending
// yet when the other was admitted) was admitted beside it: six ran at once
// under a limit of five. Kubernetes' own controllers keep such expectations
// of their writes for the same reason. mu also makes each decision and its
// reservation one step for the workers.
type reservations struct {
	mu   sync.Mutex
	keys map[string]bool
}

func newReservations() *reservations { return &reservations{keys: map[string]bool{}} }
