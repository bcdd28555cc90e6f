package fakelauncher

import (
	"context"
	"encoding/json"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// SetMigrationTarget makes the launcher one started with
// --migration-target: it accepts PrepareMigrationTarget, and Sync is
// refused (its guest comes from the source).
func (s *Server) SetMigrationTarget(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.target = on
	s.info.Features = []string{"migration-source"}
	if on {
		s.info.Features = append(s.info.Features, "migration-target")
	}
}

// PrepareMigrationTarget readies a target launcher, like the launcher:
// FailedPrecondition unless SetMigrationTarget; the migration PREPARED.
func (s *Server) PrepareMigrationTarget(_ context.Context, req *apiv1.PrepareMigrationTargetRequest) (*apiv1.PrepareMigrationTargetResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.Prepares = append(s.calls.Prepares, proto.Clone(req).(*apiv1.PrepareMigrationTargetRequest))
	vmi := &virtv1.VirtualMachineInstance{}
	if err := json.Unmarshal(req.GetVmiJson(), vmi); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "parse VMI: %v", err)
	}
	switch {
	case !s.target:
		return nil, status.Error(codes.FailedPrecondition, "not a migration target (--migration-target)")
	case string(vmi.UID) != s.ref.Uid:
		return nil, status.Errorf(codes.InvalidArgument, "VMI uid %s is not this launcher's %s", vmi.UID, s.ref.Uid)
	}
	if s.domain.GetMigration().GetMigrationUid() != req.GetMigrationUid() {
		s.domain.Migration = &apiv1.Migration{MigrationUid: req.GetMigrationUid(), Role: "target", State: apiv1.MigrationState_MIGRATION_STATE_PREPARED}
		s.broadcastLocked(apiv1.EventType_EVENT_TYPE_MIGRATION, "prepared")
	}
	return &apiv1.PrepareMigrationTargetResponse{}, nil
}

// Migrate starts the source's migration job: RUNNING, PreCopy.
func (s *Server) Migrate(_ context.Context, req *apiv1.MigrateRequest) (*apiv1.MigrateResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.Migrates = append(s.calls.Migrates, proto.Clone(req).(*apiv1.MigrateRequest))
	if err := s.runningLocked(); err != nil {
		return nil, err
	}
	m := s.domain.GetMigration()
	switch {
	case m.GetMigrationUid() == req.GetMigrationUid():
		return &apiv1.MigrateResponse{}, nil
	case m.GetState() == apiv1.MigrationState_MIGRATION_STATE_RUNNING:
		return nil, status.Errorf(codes.FailedPrecondition, "migration %s runs", m.GetMigrationUid())
	}
	s.domain.Migration = &apiv1.Migration{MigrationUid: req.GetMigrationUid(), Role: "source", State: apiv1.MigrationState_MIGRATION_STATE_RUNNING,
		Mode: "PreCopy", StartTimeUnixNano: time.Now().UnixNano()}
	s.broadcastLocked(apiv1.EventType_EVENT_TYPE_MIGRATION, "running")
	return &apiv1.MigrateResponse{}, nil
}

// CancelMigration aborts the running job of that UID: CANCELLED.
func (s *Server) CancelMigration(_ context.Context, req *apiv1.CancelMigrationRequest) (*apiv1.CancelMigrationResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.Cancels = append(s.calls.Cancels, proto.Clone(req).(*apiv1.CancelMigrationRequest))
	m := s.domain.GetMigration()
	if m.GetMigrationUid() != req.GetMigrationUid() {
		return nil, status.Errorf(codes.NotFound, "no migration %s", req.GetMigrationUid())
	}
	if m.GetState() == apiv1.MigrationState_MIGRATION_STATE_RUNNING {
		m.State, m.EndTimeUnixNano, m.FailureReason = apiv1.MigrationState_MIGRATION_STATE_CANCELLED, time.Now().UnixNano(), "cancelled by CancelMigration"
		s.broadcastLocked(apiv1.EventType_EVENT_TYPE_MIGRATION, "cancelled")
	}
	return &apiv1.CancelMigrationResponse{}, nil
}

// MigrationProgress reports libvirt's job statistics of the running
// migration.
func (s *Server) MigrationProgress(processed, remaining, total, rate, dirty uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.domain.GetMigration()
	if m == nil {
		return
	}
	m.DataProcessedBytes, m.DataRemainingBytes, m.DataTotalBytes = processed, remaining, total
	m.MemoryBytesPerSecond, m.DirtyRateBytesPerSecond = rate, dirty
	s.broadcastLocked(apiv1.EventType_EVENT_TYPE_MIGRATION, "progress")
}

// MigrationFailed ends the running migration FAILED with reason; the
// guest keeps running here.
func (s *Server) MigrationFailed(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.domain.GetMigration(); m != nil {
		m.State, m.EndTimeUnixNano, m.FailureReason = apiv1.MigrationState_MIGRATION_STATE_FAILED, time.Now().UnixNano(), reason
		s.broadcastLocked(apiv1.EventType_EVENT_TYPE_MIGRATION, "failed")
	}
}

// MigratedAway ends a source's migration COMPLETED: the domain STOPPED
// "migrated" (STOP_REASON_MIGRATED), the final state written, the watches
// ended, as the launcher does before it exits with ExitMigrated.
func (s *Server) MigratedAway(downtimeMS int64) {
	s.mu.Lock()
	if m := s.domain.GetMigration(); m != nil {
		m.State, m.EndTimeUnixNano, m.DowntimeMs = apiv1.MigrationState_MIGRATION_STATE_COMPLETED, time.Now().UnixNano(), downtimeMS
	}
	s.mu.Unlock()
	s.End("migrated")
}

// Incoming plays a target's guest arriving (STARTED "migrated", paused,
// RUNNING) and, with arrived, the switch-over done: RESUMED "migrated",
// the migration COMPLETED with downtimeMS.
func (s *Server) Incoming(arrived bool, downtimeMS int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.domain.GetMigration()
	if m == nil {
		m = &apiv1.Migration{Role: "target"}
		s.domain.Migration = m
	}
	if s.domain.State == apiv1.DomainState_DOMAIN_STATE_ABSENT {
		s.domain.State, s.domain.Reason = apiv1.DomainState_DOMAIN_STATE_PAUSED, "migration"
		m.State, m.StartTimeUnixNano = apiv1.MigrationState_MIGRATION_STATE_RUNNING, time.Now().UnixNano()
		s.broadcastLocked(apiv1.EventType_EVENT_TYPE_STARTED, "migrated")
	}
	if arrived {
		s.domain.State, s.domain.Reason = apiv1.DomainState_DOMAIN_STATE_RUNNING, "migrated"
		m.State, m.EndTimeUnixNano, m.DowntimeMs = apiv1.MigrationState_MIGRATION_STATE_COMPLETED, time.Now().UnixNano(), downtimeMS
		s.broadcastLocked(apiv1.EventType_EVENT_TYPE_RESUMED, "migrated")
	}
}
