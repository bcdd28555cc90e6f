package supervisor

import (
	"time"

	"google.golang.org/protobuf/proto"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// watchBuffer is how many events a watcher may lag behind before it is
// dropped; it reconnects and starts again from the current state.
const watchBuffer = 64

// Domain is the domain as it is now (as it ended, once it has).
func (s *Supervisor) Domain() *apiv1.Domain {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshotLocked()
}

// Changed tells the watchers of a change others saw (a guest took its lease,
// the agent reported), with the domain as it is now. After the end it does
// nothing: the final domain no longer changes.
func (s *Supervisor) Changed(ev *apiv1.DomainEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final != nil {
		return
	}
	s.changed = time.Now()
	s.broadcastLocked(ev)
}

// Watch is the domain now, as an EVENT_TYPE_CURRENT, and the channel of its
// later events, which is closed after the final one or when the watcher
// fell more than watchBuffer events behind (Final tells which). Once the
// domain has ended there is no channel. stop ends the watch.
func (s *Supervisor) Watch() (current *apiv1.DomainEvent, events <-chan *apiv1.DomainEvent, stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	current = &apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_CURRENT, Domain: s.snapshotLocked(), TimeUnixNano: time.Now().UnixNano()}
	if s.final != nil {
		return current, nil, func() {}
	}
	ch := make(chan *apiv1.DomainEvent, watchBuffer)
	s.watchers[ch] = struct{}{}
	return current, ch, func() { s.unwatch(ch) }
}

func (s *Supervisor) unwatch(ch chan *apiv1.DomainEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.watchers[ch]; ok {
		delete(s.watchers, ch)
		close(ch)
	}
}

// snapshotLocked is the domain as it is now; s.mu must be held.
func (s *Supervisor) snapshotLocked() *apiv1.Domain {
	if s.final != nil {
		return proto.Clone(s.final).(*apiv1.Domain)
	}
	d := &apiv1.Domain{
		Name:                    s.name,
		SoftwareEmulation:       s.cfg.DomainType == domain.TypeQEMU,
		VmiUid:                  s.cfg.VMI.Uid,
		ShutdownRequested:       s.shutdown,
		StateChangeTimeUnixNano: s.changed.UnixNano(),
		Migration:               s.migrationLocked(),
	}
	for _, i := range s.interfaces {
		d.Interfaces = append(d.Interfaces, proto.Clone(i).(*apiv1.Interface))
	}
	s.hooks.Describe(d)
	st, err := s.conn.Status(s.name)
	switch {
	case hypervisor.IsNotFound(err):
		d.State = apiv1.DomainState_DOMAIN_STATE_ABSENT
		return d
	case err != nil:
		d.Reason = err.Error()
		return d
	}
	d.State, d.Reason = domainState(st.State), st.Reason
	if d.State == apiv1.DomainState_DOMAIN_STATE_SHUTOFF && s.started {
		// The domain ran and stopped, and its stopped event has not been
		// handled yet (handle sets s.final). Said without its stop reason,
		// a shut-off domain reads as one never started: a node daemon
		// would take a source that just migrated away for a launcher
		// without its guest. libvirt's shut-off reasons are the stopped
		// event's details.
		d.StopReason = apiv1.StopReasonOfDetail(st.Reason)
	}
	if x, err := s.conn.Domain(s.name); err == nil {
		d.Uuid = x.UUID
	}
	return d
}

// broadcastLocked sends ev, completed with the current domain, to every
// watcher; s.mu must be held.
func (s *Supervisor) broadcastLocked(ev *apiv1.DomainEvent) {
	if ev.Domain == nil {
		ev.Domain = s.snapshotLocked()
	}
	ev.TimeUnixNano = time.Now().UnixNano()
	for w := range s.watchers {
		select {
		case w <- proto.Clone(ev).(*apiv1.DomainEvent):
		default:
			close(w)
			delete(s.watchers, w)
		}
	}
}
