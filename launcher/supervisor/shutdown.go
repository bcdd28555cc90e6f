package supervisor

import (
	"context"
	"time"

	"k8s.io/klog/v2"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// RequestShutdown starts a graceful shutdown: the ACPI power button now and
// every RepressInterval, and a destroy once grace has passed. A later request
// may shorten the grace period, never extend it. Without a running domain it
// does nothing.
func (s *Supervisor) RequestShutdown(ctx context.Context, grace time.Duration) error {
	logger := klog.FromContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.final != nil {
		return nil
	}
	deadline := time.Now().Add(grace)
	if s.shutdown && !deadline.Before(s.deadline) {
		return nil
	}
	first := !s.shutdown
	s.shutdown, s.deadline = true, deadline
	s.changed = time.Now()
	logger.Info("Shutting down domain", "domain", s.name, "gracePeriod", grace)
	if grace <= 0 {
		return s.destroyLocked(ctx, "grace period is zero")
	}
	if err := s.conn.Shutdown(s.name); err != nil {
		// A paused guest cannot react; the destroy at the deadline ends it.
		logger.Error(err, "ACPI shutdown failed, waiting for the grace period", "domain", s.name)
	}
	s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_SHUTDOWN, Detail: "requested"})
	if first {
		go s.enforce(ctx)
	}
	return nil
}

// enforce presses the power button again now and then and destroys the
// domain at the deadline, until the domain has ended.
func (s *Supervisor) enforce(ctx context.Context) {
	repress := time.NewTicker(s.cfg.RepressInterval)
	defer repress.Stop()
	for {
		s.mu.Lock()
		wait := time.Until(s.deadline)
		s.mu.Unlock()
		select {
		case <-s.done:
			return
		case <-repress.C:
			if err := s.conn.Shutdown(s.name); err != nil {
				klog.FromContext(ctx).V(2).Info("ACPI shutdown repeat failed", "domain", s.name, "err", err)
			}
		case <-time.After(wait):
			s.mu.Lock()
			if time.Now().Before(s.deadline) {
				// The deadline moved while waiting: wait for the new one.
				s.mu.Unlock()
				continue
			}
			err := s.destroyLocked(ctx, "grace period expired")
			s.mu.Unlock()
			if err != nil {
				klog.FromContext(ctx).Error(err, "Destroy after grace period failed", "domain", s.name)
			}
			return
		}
	}
}

// destroyLocked destroys the domain once; s.mu must be held.
func (s *Supervisor) destroyLocked(ctx context.Context, why string) error {
	if s.final != nil || s.destroyed {
		return nil
	}
	klog.FromContext(ctx).Info("Destroying domain", "domain", s.name, "reason", why)
	s.destroyed = true
	if err := s.conn.Destroy(s.name); err != nil {
		s.destroyed = false
		return err
	}
	return nil
}

// Kill destroys the domain at once; before the start it does nothing.
func (s *Supervisor) Kill(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return nil
	}
	return s.destroyLocked(ctx, "kill requested")
}

// Pause stops the vCPUs.
func (s *Supervisor) Pause() error { return s.whileRunning(s.conn.Pause) }

// Unpause resumes the vCPUs.
func (s *Supervisor) Unpause() error { return s.whileRunning(s.conn.Unpause) }

func (s *Supervisor) whileRunning(op func(string) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.final != nil {
		return preconditionf("domain %s is not running", s.name)
	}
	return op(s.name)
}

// SoftReboot asks the guest to reboot itself (ACPI power button; libvirt
// resets the domain once the guest powered off). KubeVirt asks a connected
// guest agent first; this launcher does not (yet).
func (s *Supervisor) SoftReboot(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.final != nil {
		return preconditionf("domain %s is not running", s.name)
	}
	if s.shutdown {
		// The reboot would turn the shutdown's power-off into a reset.
		return preconditionf("domain %s is shutting down", s.name)
	}
	st, err := s.conn.Status(s.name)
	if err != nil {
		return err
	}
	if st.State != "running" && st.State != "blocked" {
		// A paused guest cannot react to the power button.
		return preconditionf("domain %s is not running (%s, %s)", s.name, st.State, st.Reason)
	}
	klog.FromContext(ctx).Info("Rebooting domain", "domain", s.name, "method", "acpi")
	return s.conn.Reboot(s.name)
}
