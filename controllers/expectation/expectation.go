package expectation

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
)

// DefaultTTL is how long an unobserved expectation blocks its key. A watch
// event can be lost (a relist after a dropped watch does not replay deletes),
// so expectations expire rather than block a key forever.
const DefaultTTL = 5 * time.Minute

// Expectations tracks pending creations (by count) and deletions (by UID)
// per key. The zero value is not usable; call New.
type Expectations struct {
	ttl   time.Duration
	clock clock.PassiveClock

	mu      sync.Mutex
	records map[string]*record
}

type record struct {
	creations int
	deletions sets.Set[string]
	// since is when the oldest pending expectation of the record was set.
	since time.Time
}

// New returns empty expectations whose entries expire after ttl.
func New(ttl time.Duration, c clock.PassiveClock) *Expectations {
	return &Expectations{ttl: ttl, clock: c, records: map[string]*record{}}
}

func (e *Expectations) get(key string) *record {
	r, ok := e.records[key]
	if !ok || e.satisfied(r) {
		r = &record{deletions: sets.New[string](), since: e.clock.Now()}
		e.records[key] = r
	}
	return r
}

// ExpectCreations records that n more objects are about to be created for key.
// Call it before the create, so that a watch event arriving before the call
// returns is not lost.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).creations += n
}

// CreationObserved records that one expected object appeared in the cache,
// or that its create failed and it will never appear.
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.records[key]; ok && r.creations > 0 {
		r.creations--
	}
}

// ExpectDeletions records that the objects with these UIDs are about to be
// deleted for key.
func (e *Expectations) ExpectDeletions(key string, uids ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(key).deletions.Insert(uids...)
}

// DeletionObserved records that the object with uid was seen deleted (or
// marked for deletion), or that its delete failed.
func (e *Expectations) DeletionObserved(key, uid string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.records[key]; ok {
		r.deletions.Delete(uid)
	}
}

// Satisfied reports whether key has nothing pending, or its pending
// expectations are older than the TTL and are no longer trusted.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.records[key]
	return !ok || e.satisfied(r)
}

// Remaining is how long key stays unsatisfied if nothing is observed: the
// delay after which a controller should look at key again.
func (e *Expectations) Remaining(key string) time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.records[key]
	if !ok || e.satisfied(r) {
		return 0
	}
	return e.ttl - e.clock.Since(r.since)
}

func (e *Expectations) satisfied(r *record) bool {
	return (r.creations <= 0 && r.deletions.Len() == 0) || e.clock.Since(r.since) >= e.ttl
}

// Forget drops everything recorded for key, for keys whose object is gone.
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.records, key)
}
