package server

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// watchBuffer is how many events a watcher may lag behind before it is
// dropped; it reconnects and starts again from the current state.
const watchBuffer = 64

// Run follows the domain's lifecycle events until ctx ends or the domain has
// ended (Done is closed then).
func (s *Server) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-s.conn.Events():
			if e.Domain != s.name {
				continue
			}
			logger.Info("Domain event", "domain", e.Domain, "event", e.Type, "detail", e.Detail)
			if s.handle(ctx, e) {
				return
			}
		}
	}
}

// handle records one event and reports whether the domain has ended.
func (s *Server) handle(ctx context.Context, e hypervisor.Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = time.Now()
	ev := &apiv1.DomainEvent{Type: eventType(e.Type), Detail: e.Detail}
	switch e.Type {
	case "started":
		s.started = true
	case hypervisor.AgentEvent:
		if s.final != nil {
			break
		}
		s.agentChangedLocked(ctx, e.Detail == hypervisor.AgentConnected)
	case "stopped":
		if !s.started || s.final != nil {
			break
		}
		// QEMU is gone and the agent with it, whether or not libvirt
		// said so first.
		s.agentChangedLocked(ctx, false)
		final := s.snapshotLocked()
		final.State = apiv1.DomainState_DOMAIN_STATE_SHUTOFF
		final.Reason = e.Detail
		final.StopReason = apiv1.StopReasonOfDetail(e.Detail)
		s.final = final
		ev.Domain = proto.Clone(final).(*apiv1.Domain)
		if err := writeFinal(s.cfg.FinalStateFile, final); err != nil {
			klog.FromContext(ctx).Error(err, "Recording the final state failed", "domain", s.name)
		}
		s.broadcastLocked(ev)
		for w := range s.watchers {
			close(w)
			delete(s.watchers, w)
		}
		close(s.done)
		return true
	}
	s.broadcastLocked(ev)
	return false
}

func eventType(t string) apiv1.EventType {
	switch t {
	case "defined":
		return apiv1.EventType_EVENT_TYPE_DEFINED
	case "undefined":
		return apiv1.EventType_EVENT_TYPE_UNDEFINED
	case "started":
		return apiv1.EventType_EVENT_TYPE_STARTED
	case "suspended":
		return apiv1.EventType_EVENT_TYPE_SUSPENDED
	case "resumed":
		return apiv1.EventType_EVENT_TYPE_RESUMED
	case "stopped":
		return apiv1.EventType_EVENT_TYPE_STOPPED
	case "shutdown":
		return apiv1.EventType_EVENT_TYPE_SHUTDOWN
	case "pmsuspended":
		return apiv1.EventType_EVENT_TYPE_PMSUSPENDED
	case "crashed":
		return apiv1.EventType_EVENT_TYPE_CRASHED
	case hypervisor.AgentEvent:
		return apiv1.EventType_EVENT_TYPE_AGENT
	}
	return apiv1.EventType_EVENT_TYPE_UNSPECIFIED
}

func domainState(state string) apiv1.DomainState {
	switch state {
	case "running":
		return apiv1.DomainState_DOMAIN_STATE_RUNNING
	case "blocked":
		return apiv1.DomainState_DOMAIN_STATE_BLOCKED
	case "paused":
		return apiv1.DomainState_DOMAIN_STATE_PAUSED
	case "shutdown":
		return apiv1.DomainState_DOMAIN_STATE_SHUTTING_DOWN
	case "shutoff":
		return apiv1.DomainState_DOMAIN_STATE_SHUTOFF
	case "crashed":
		return apiv1.DomainState_DOMAIN_STATE_CRASHED
	case "pmsuspended":
		return apiv1.DomainState_DOMAIN_STATE_PMSUSPENDED
	}
	return apiv1.DomainState_DOMAIN_STATE_UNSPECIFIED
}

// snapshotLocked is the domain as it is now; s.mu must be held.
func (s *Server) snapshotLocked() *apiv1.Domain {
	if s.final != nil {
		return proto.Clone(s.final).(*apiv1.Domain)
	}
	d := &apiv1.Domain{
		Name:                    s.name,
		SoftwareEmulation:       s.cfg.Info.GetDomainType() == domain.TypeQEMU,
		VmiUid:                  s.cfg.VMI.Uid,
		ShutdownRequested:       s.shutdown,
		StateChangeTimeUnixNano: s.changed.UnixNano(),
	}
	s.agentSnapshotLocked(d)
	for _, i := range s.interfaces {
		i := proto.Clone(i).(*apiv1.Interface)
		if srv := s.dhcp[i.GetName()]; srv != nil {
			if addr, ok := srv.Acked(); ok {
				i.DhcpAddress = addr.String()
			}
		}
		d.Interfaces = append(d.Interfaces, i)
	}
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
	if x, err := s.conn.Domain(s.name); err == nil {
		d.Uuid = x.UUID
	}
	return d
}

// broadcastLocked sends ev, completed with the current domain, to every
// watcher; s.mu must be held.
func (s *Server) broadcastLocked(ev *apiv1.DomainEvent) {
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

// WatchDomain streams the current domain and then its events.
func (s *Server) WatchDomain(_ *apiv1.WatchDomainRequest, stream apiv1.Launcher_WatchDomainServer) error {
	s.mu.Lock()
	current := &apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_CURRENT, Domain: s.snapshotLocked(), TimeUnixNano: time.Now().UnixNano()}
	var ch chan *apiv1.DomainEvent
	if s.final == nil {
		ch = make(chan *apiv1.DomainEvent, watchBuffer)
		s.watchers[ch] = struct{}{}
	}
	s.mu.Unlock()
	if ch != nil {
		defer s.unwatch(ch)
	}
	if err := stream.Send(current); err != nil {
		return err
	}
	if ch == nil {
		return nil
	}
	for {
		select {
		case <-stream.Context().Done():
			return stream.Context().Err()
		case ev, ok := <-ch:
			if !ok {
				if s.Final() != nil {
					return nil
				}
				return status.Error(codes.ResourceExhausted, "watcher fell behind; watch again")
			}
			if err := stream.Send(ev); err != nil {
				return err
			}
		}
	}
}

func (s *Server) unwatch(ch chan *apiv1.DomainEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.watchers[ch]; ok {
		delete(s.watchers, ch)
		close(ch)
	}
}

func typesUID(uid string) types.UID { return types.UID(uid) }
