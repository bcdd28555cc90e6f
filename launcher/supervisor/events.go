package supervisor

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// Run follows the domain's lifecycle events on events (the connection's)
// until ctx ends or the domain has ended (Done is closed then).
func (s *Supervisor) Run(ctx context.Context, events <-chan hypervisor.Event) {
	logger := klog.FromContext(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-events:
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
func (s *Supervisor) handle(ctx context.Context, e hypervisor.Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = time.Now()
	ev := &apiv1.DomainEvent{Type: eventType(e.Type), Detail: e.Detail}
	if s.handleMigrationEventLocked(ctx, e) {
		return false
	}
	switch e.Type {
	case "started":
		s.started = true
	case hypervisor.AgentEvent:
		if s.final != nil {
			break
		}
		s.hooks.AgentConnected(ctx, e.Detail == hypervisor.AgentConnected)
	case "stopped":
		if !s.started || s.final != nil {
			break
		}
		// QEMU is gone and the agent with it, whether or not libvirt
		// said so first.
		s.hooks.AgentConnected(ctx, false)
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
