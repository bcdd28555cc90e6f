package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"google.golang.org/protobuf/proto"
	"k8s.io/klog/v2"
	"libvirt.org/go/libvirtxml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/disk"
	"kubevirt.dev/virt/launcher/hypervisor"
)

// Live migration (docs/migration.md).
//
// As a source, the supervisor runs libvirt's peer-to-peer job in a goroutine
// (it blocks until the end) and watches it from another: every
// MonitorInterval it reads the job's statistics into Domain.migration and
// aborts the job when it takes longer than its completion timeout or goes
// ProgressTimeout without the remaining data shrinking (or switches it to
// post-copy instead, when allowed). A completed migration stops the domain
// here with reason migrated: that is the domain's end, STOP_REASON_MIGRATED.
//
// As a target, it prepares what the domain needs in this pod (the volumes'
// files; the caller serves the leases) without defining anything: libvirt's
// incoming migration creates the domain, whose STARTED "migrated" event the
// supervisor adopts as its own start and whose RESUMED "migrated" completes
// the migration. A domain that stops before that was a failed migration, not
// the guest's end: the target waits on, and never boots a guest of its own.

// ErrNotFound: no migration of that UID is known.
var ErrNotFound = errors.New("not found")

// MigrationRoles, as Domain.migration.role says them.
const (
	RoleSource = "source"
	RoleTarget = "target"
)

// KubeVirt's MigrationMode values. ModePaused: the memory moves with the
// guest paused (MigrateOptions.Paused), so its downtime is the whole copy.
const (
	ModePreCopy  = "PreCopy"
	ModePostCopy = "PostCopy"
	ModePaused   = "Paused"
)

// MigrateRequest is a source's migration.
type MigrateRequest struct {
	UID string
	// DestURI, MigrateURI and DisksURI: hypervisor.MigrateOptions'.
	DestURI, MigrateURI, DisksURI string
	BandwidthBytesPerSecond       uint64
	// CompletionTimeoutPerGiB times the guest's memory and copied disks in
	// GiB bounds the whole migration; 0: no bound.
	CompletionTimeoutPerGiB time.Duration
	// ProgressTimeout bounds how long the remaining data may not shrink;
	// 0: no bound.
	ProgressTimeout   time.Duration
	AllowAutoConverge bool
	AllowPostCopy     bool
	MaxDowntime       time.Duration
}

// migrationEventInterval is how often progress is streamed at most.
const migrationEventInterval = time.Second

// migrationJob is the state of the source's running job beside
// s.migration.
type migrationJob struct {
	cancelled   bool
	abortReason string
	done        chan struct{}
}

// PrepareTarget readies this launcher to receive vmi's guest: beforePrepare
// (the DHCP servers) runs, the volumes' files are made as a Sync would make
// them, and Domain.migration says PREPARED. The incoming domain is then
// libvirt's to create. Idempotent.
func (s *Supervisor) PrepareTarget(ctx context.Context, vmi *virtv1.VirtualMachineInstance, uid string, beforePrepare func() error) (*apiv1.Domain, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.cfg.MigrationTarget:
		return nil, preconditionf("this launcher is not a migration target (--migration-target)")
	case s.final != nil:
		return nil, preconditionf("domain %s already ran and stopped (%s)", s.name, s.final.StopReason)
	case s.started:
		// The guest arrived: nothing left to prepare.
		return s.snapshotLocked(), nil
	}
	if beforePrepare != nil {
		if err := beforePrepare(); err != nil {
			return nil, err
		}
	}
	if _, err := disk.Prepare(vmi, s.cfg.Disks); err != nil {
		return nil, preconditionf("prepare volumes: %v", err)
	}
	s.incoming = vmi
	s.arrived = time.Time{}
	if m := s.migration; m == nil || m.MigrationUid != uid || m.State != apiv1.MigrationState_MIGRATION_STATE_PREPARED {
		s.migration = &apiv1.Migration{MigrationUid: uid, Role: RoleTarget, State: apiv1.MigrationState_MIGRATION_STATE_PREPARED}
		klog.FromContext(ctx).Info("Prepared as migration target", "domain", s.name, "migration", uid)
		s.changed = time.Now()
		s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_MIGRATION, Detail: "prepared"})
	}
	return s.snapshotLocked(), nil
}

// Migrate starts migrating the running domain and returns once libvirt's
// job was handed its parameters; the job runs on. The same UID again is a
// no-op; another UID while one runs is ErrPrecondition.
func (s *Supervisor) Migrate(ctx context.Context, req MigrateRequest) error {
	logger := klog.FromContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.cfg.MigrationTarget && s.migration != nil && s.migration.Role == RoleTarget && s.migration.State != apiv1.MigrationState_MIGRATION_STATE_COMPLETED:
		return preconditionf("domain %s is a migration target that has not received its guest", s.name)
	case !s.started || s.final != nil:
		return preconditionf("domain %s is not running", s.name)
	case s.shutdown:
		return preconditionf("domain %s is shutting down", s.name)
	}
	if m := s.migration; m != nil && m.Role == RoleSource && m.State == apiv1.MigrationState_MIGRATION_STATE_RUNNING {
		if m.MigrationUid == req.UID {
			return nil
		}
		return preconditionf("migration %s of domain %s is running", m.MigrationUid, s.name)
	}
	st, err := s.conn.Status(s.name)
	if err != nil {
		return err
	}
	if st.State != "running" && st.State != "paused" && st.State != "blocked" {
		return preconditionf("domain %s is %s, not running", s.name, st.State)
	}
	x, err := s.conn.Domain(s.name)
	if err != nil {
		return err
	}
	disks, diskBytes := s.localWritableDisks(x)
	opts := hypervisor.MigrateOptions{
		DestURI: req.DestURI, MigrateURI: req.MigrateURI,
		BandwidthMiB:  mibPerSecond(req.BandwidthBytesPerSecond),
		MaxDowntimeMs: uint64(req.MaxDowntime / time.Millisecond),
		AutoConverge:  req.AllowAutoConverge,
		PostCopy:      req.AllowPostCopy,
	}
	if len(disks) > 0 {
		opts.Disks, opts.DisksURI = disks, req.DisksURI
	}
	// Under TCG before QEMU 9.0 a live memory copy loses the guest's last
	// writes (its kernel's timers and console state came out corrupt at the
	// target): the memory then moves with the guest paused.
	if opts.Paused, err = s.conn.LiveMigrationLosesWrites(s.cfg.DomainType); err != nil {
		return err
	}
	var completion time.Duration
	if req.CompletionTimeoutPerGiB > 0 {
		gib := float64(memoryBytes(x)+diskBytes) / (1 << 30)
		completion = time.Duration(float64(req.CompletionTimeoutPerGiB) * gib)
	}
	now := time.Now()
	mode := ModePreCopy
	if opts.Paused {
		mode = ModePaused
	}
	s.migration = &apiv1.Migration{
		MigrationUid: req.UID, Role: RoleSource, State: apiv1.MigrationState_MIGRATION_STATE_RUNNING,
		Mode: mode, StartTimeUnixNano: now.UnixNano(),
	}
	job := &migrationJob{done: make(chan struct{})}
	s.job = job
	s.changed = now
	s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_MIGRATION, Detail: "running"})
	logger.Info("Migrating domain", "domain", s.name, "migration", req.UID, "dest", req.DestURI, "migrateURI", req.MigrateURI,
		"disks", disks, "pausedMemoryCopy", opts.Paused, "completionTimeout", completion, "progressTimeout", req.ProgressTimeout)
	bg := context.WithoutCancel(ctx)
	go s.runMigration(bg, job, req.UID, opts)
	go s.monitorMigration(bg, job, req, completion)
	return nil
}

// runMigration runs libvirt's job to its end and records the outcome.
func (s *Supervisor) runMigration(ctx context.Context, job *migrationJob, uid string, opts hypervisor.MigrateOptions) {
	logger := klog.FromContext(ctx)
	err := s.conn.Migrate(s.name, opts)
	defer close(job.done)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.migration
	if m == nil || m.MigrationUid != uid || m.Role != RoleSource {
		return
	}
	if err == nil {
		s.completeSourceLocked()
		if s.completedStatsLocked(m) && s.final != nil {
			// The domain's end was recorded before libvirt's job
			// returned: record it again with the statistics.
			s.final.Migration = proto.Clone(m).(*apiv1.Migration)
			if err := writeFinal(s.cfg.FinalStateFile, s.final); err != nil {
				logger.Error(err, "Recording the final state failed", "domain", s.name)
			}
		}
		logger.Info("Migration completed", "domain", s.name, "migration", uid, "downtimeMs", m.DowntimeMs, "bytes", m.DataProcessedBytes)
		return
	}
	if m.State == apiv1.MigrationState_MIGRATION_STATE_COMPLETED {
		// The guest runs on the target (the domain here stopped
		// migrated) and only the job's last step complained.
		logger.Error(err, "Migration completed with an error", "domain", s.name, "migration", uid)
		return
	}
	m.EndTimeUnixNano = time.Now().UnixNano()
	switch {
	case job.cancelled:
		m.State, m.FailureReason = apiv1.MigrationState_MIGRATION_STATE_CANCELLED, "cancelled by CancelMigration"
	case job.abortReason != "":
		m.State, m.FailureReason = apiv1.MigrationState_MIGRATION_STATE_FAILED, job.abortReason
	default:
		m.State, m.FailureReason = apiv1.MigrationState_MIGRATION_STATE_FAILED, err.Error()
	}
	logger.Info("Migration ended, the guest runs here", "domain", s.name, "migration", uid, "state", m.State, "reason", m.FailureReason)
	s.changed = time.Now()
	s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_MIGRATION, Detail: strings.ToLower(strings.TrimPrefix(m.State.String(), "MIGRATION_STATE_"))})
}

// completeSourceLocked marks the source's migration COMPLETED; s.mu must
// be held. Once only.
func (s *Supervisor) completeSourceLocked() {
	m := s.migration
	if m == nil || m.State == apiv1.MigrationState_MIGRATION_STATE_COMPLETED {
		return
	}
	m.State = apiv1.MigrationState_MIGRATION_STATE_COMPLETED
	m.EndTimeUnixNano = time.Now().UnixNano()
	m.DataRemainingBytes = 0
	s.changed = time.Now()
	if s.final == nil {
		s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_MIGRATION, Detail: "completed"})
	}
}

// completedStatsLocked copies the completed job's statistics (libvirt keeps
// them once the job has ended, until they are read) into m and reports
// whether there were any; s.mu must be held.
func (s *Supervisor) completedStatsLocked(m *apiv1.Migration) bool {
	st, err := s.conn.JobStats(s.name, true)
	if err != nil || !st.Completed {
		return false
	}
	s.applyStats(m, st)
	m.DataRemainingBytes = 0
	if st.DowntimeSet {
		m.DowntimeMs = int64(st.DowntimeMs)
	}
	return true
}

func (s *Supervisor) applyStats(m *apiv1.Migration, st hypervisor.JobStats) {
	m.DataTotalBytes, m.DataProcessedBytes, m.DataRemainingBytes = st.DataTotal, st.DataProcessed, st.DataRemaining
	m.MemoryBytesPerSecond = st.MemoryBps
	m.DirtyRateBytesPerSecond = st.DirtyRate * st.PageSize
	if st.PostCopy {
		m.Mode = ModePostCopy
	}
}

// monitorMigration reads the job's statistics until it ends, streams its
// progress and enforces the timeouts.
func (s *Supervisor) monitorMigration(ctx context.Context, job *migrationJob, req MigrateRequest, completion time.Duration) {
	logger := klog.FromContext(ctx)
	tick := time.NewTicker(s.cfg.MonitorInterval)
	defer tick.Stop()
	start := time.Now()
	var (
		lowest      uint64
		progressed  = start
		lastEvent   time.Time
		postCopying bool
		aborted     bool
	)
	for {
		select {
		case <-job.done:
			return
		case <-tick.C:
		}
		st, err := s.conn.JobStats(s.name, false)
		if err != nil || !st.Active {
			continue
		}
		now := time.Now()
		if lowest == 0 || st.DataRemaining < lowest {
			lowest, progressed = st.DataRemaining, now
		}
		var why string
		switch {
		case completion > 0 && now.Sub(start) > completion:
			why = fmt.Sprintf("migration did not complete within %v (completion timeout per GiB %v)", completion.Round(10*time.Millisecond), req.CompletionTimeoutPerGiB)
		case req.ProgressTimeout > 0 && now.Sub(progressed) > req.ProgressTimeout:
			why = fmt.Sprintf("migration made no progress for %v (progress timeout): %d bytes remaining", req.ProgressTimeout, st.DataRemaining)
		}
		s.mu.Lock()
		m := s.migration
		if m == nil || m.MigrationUid != req.UID || m.State != apiv1.MigrationState_MIGRATION_STATE_RUNNING {
			s.mu.Unlock()
			return
		}
		s.applyStats(m, st)
		postCopying = postCopying || m.Mode == ModePostCopy
		// In post-copy the guest runs on the target already: an abort
		// would lose it, so the timeouts no longer apply.
		var switchToPostCopy, abort bool
		if why != "" && !postCopying && !aborted && !job.cancelled {
			if req.AllowPostCopy {
				switchToPostCopy = true
				m.Mode, postCopying = ModePostCopy, true
			} else {
				abort, aborted = true, true
				job.abortReason = why
			}
		}
		if now.Sub(lastEvent) >= migrationEventInterval || switchToPostCopy {
			lastEvent = now
			s.changed = now
			s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_MIGRATION, Detail: "progress"})
		}
		s.mu.Unlock()
		switch {
		case switchToPostCopy:
			logger.Info("Switching the migration to post-copy", "domain", s.name, "migration", req.UID, "reason", why)
			if err := s.conn.StartPostCopy(s.name); err != nil {
				logger.Error(err, "Switching to post-copy failed", "domain", s.name)
			}
		case abort:
			logger.Info("Aborting the migration", "domain", s.name, "migration", req.UID, "reason", why)
			if err := s.conn.AbortJob(s.name); err != nil {
				logger.Error(err, "Aborting the migration failed", "domain", s.name)
			}
		}
	}
}

// CancelMigration aborts the running migration of uid. A migration that has
// ended already is left as it ended.
func (s *Supervisor) CancelMigration(ctx context.Context, uid string) error {
	s.mu.Lock()
	m, job := s.migration, s.job
	switch {
	case m == nil || m.MigrationUid != uid:
		s.mu.Unlock()
		return marked{fmt.Errorf("no migration %s of domain %s", uid, s.name), ErrNotFound}
	case m.Role != RoleSource:
		s.mu.Unlock()
		return preconditionf("domain %s is the target of migration %s; cancel it at its source", s.name, uid)
	case m.State != apiv1.MigrationState_MIGRATION_STATE_RUNNING || job == nil:
		s.mu.Unlock()
		return nil
	}
	job.cancelled = true
	s.mu.Unlock()
	klog.FromContext(ctx).Info("Cancelling the migration", "domain", s.name, "migration", uid)
	return s.conn.AbortJob(s.name)
}

// handleMigrationEventLocked lets the migration take its part of a
// lifecycle event; it reports whether the event is the migration's only
// (not the domain's end). s.mu must be held.
func (s *Supervisor) handleMigrationEventLocked(ctx context.Context, e hypervisor.Event) (consumed bool) {
	m := s.migration
	if m == nil {
		return false
	}
	logger := klog.FromContext(ctx)
	switch m.Role {
	case RoleSource:
		if e.Type == "stopped" && e.Detail == "migrated" {
			s.completeSourceLocked()
		}
		return false
	case RoleTarget:
		switch {
		case e.Type == "started" && e.Detail == "migrated" && m.State == apiv1.MigrationState_MIGRATION_STATE_PREPARED:
			m.State = apiv1.MigrationState_MIGRATION_STATE_RUNNING
			m.Mode = ModePreCopy
			m.StartTimeUnixNano = time.Now().UnixNano()
			logger.Info("Incoming migration started", "domain", s.name, "migration", m.MigrationUid)
		case e.Type == "resumed" && e.Detail == "postcopy" && m.State == apiv1.MigrationState_MIGRATION_STATE_RUNNING:
			m.Mode = ModePostCopy
		case e.Type == "resumed" && e.Detail == "migrated" && m.State == apiv1.MigrationState_MIGRATION_STATE_RUNNING && s.arrived.IsZero():
			s.adoptLocked(ctx)
		case e.Type == "stopped" && m.State == apiv1.MigrationState_MIGRATION_STATE_RUNNING && !s.arrived.IsZero():
			// The guest resumed here and ended before libvirt's
			// statistics came: the migration completed all the same,
			// and this is the guest's end.
			s.completeIncomingLocked(ctx)
			return false
		case e.Type == "stopped" && m.State == apiv1.MigrationState_MIGRATION_STATE_RUNNING:
			// The incoming guest never resumed here: the migration failed
			// and the guest runs on at the source. This is no end of
			// the guest's, and no guest of this launcher's started.
			m.State = apiv1.MigrationState_MIGRATION_STATE_FAILED
			m.FailureReason = "the incoming domain stopped (" + e.Detail + ") before the switch-over"
			m.EndTimeUnixNano = time.Now().UnixNano()
			s.started = false
			logger.Info("Incoming migration failed", "domain", s.name, "migration", m.MigrationUid, "detail", e.Detail)
			s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_MIGRATION, Detail: "failed"})
			return true
		}
	}
	return false
}

// adoptLocked makes the arrived guest this launcher's: the NICs are read as
// a Sync reads them and the guest agent, if the guest's was connected, is
// asked from here on; the migration becomes COMPLETED once libvirt has the
// incoming job's statistics (completeIncoming). s.mu must be held.
func (s *Supervisor) adoptLocked(ctx context.Context) {
	logger := klog.FromContext(ctx)
	m := s.migration
	s.arrived = time.Now()
	if s.incoming != nil {
		if err := s.readInterfaces(s.incoming); err != nil {
			logger.Error(err, "Reading the arrived domain's interfaces failed", "domain", s.name)
		}
	}
	if x, err := s.conn.Domain(s.name); err == nil && agentConnected(x) {
		s.hooks.AgentConnected(ctx, true)
	}
	logger.Info("Incoming migration resumed the guest here", "domain", s.name, "migration", m.MigrationUid)
	go s.completeIncoming(ctx, m.MigrationUid)
}

// incomingStatsWait bounds how long a target waits for libvirt's
// statistics of the incoming job before it says COMPLETED without them.
// libvirt records them (the downtime among them) as its Finish step ends,
// a few hundred milliseconds after the guest resumed; the handler's
// switch-over waits for COMPLETED, so it carries the downtime.
const incomingStatsWait = 3 * time.Second

// completeIncoming marks the target's migration COMPLETED, with libvirt's
// statistics of the incoming job once it has them (at most
// incomingStatsWait after the guest resumed here).
func (s *Supervisor) completeIncoming(ctx context.Context, uid string) {
	logger := klog.FromContext(ctx)
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, incomingStatsWait, true, func(context.Context) (bool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		m := s.migration
		if m == nil || m.MigrationUid != uid || m.State != apiv1.MigrationState_MIGRATION_STATE_RUNNING {
			return true, nil
		}
		return s.completedStatsLocked(m), nil
	})
	if err != nil {
		logger.Info("libvirt kept no statistics of the incoming migration", "domain", s.name, "migration", uid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.migration; m != nil && m.MigrationUid == uid && m.State == apiv1.MigrationState_MIGRATION_STATE_RUNNING {
		s.completeIncomingLocked(ctx)
	}
}

// completeIncomingLocked marks the target's migration COMPLETED as of the
// guest's resumption here. s.mu must be held.
func (s *Supervisor) completeIncomingLocked(ctx context.Context) {
	m := s.migration
	m.State = apiv1.MigrationState_MIGRATION_STATE_COMPLETED
	m.EndTimeUnixNano = s.arrived.UnixNano()
	s.changed = time.Now()
	klog.FromContext(ctx).Info("Incoming migration completed: the guest runs here", "domain", s.name, "migration", m.MigrationUid, "downtimeMs", m.DowntimeMs)
	s.broadcastLocked(&apiv1.DomainEvent{Type: apiv1.EventType_EVENT_TYPE_MIGRATION, Detail: "completed"})
}

// agentConnected reports whether the domain's guest agent channel is
// connected, as libvirt's live XML says.
func agentConnected(x *libvirtxml.Domain) bool {
	if x.Devices == nil {
		return false
	}
	for _, c := range x.Devices.Channels {
		if c.Target != nil && c.Target.VirtIO != nil && c.Target.VirtIO.Name == "org.qemu.guest_agent.0" {
			return c.Target.VirtIO.State == "connected"
		}
	}
	return false
}

// localWritableDisks are the targets of the domain's disks that live in
// this pod and the guest writes (container disks' overlays and empty disks,
// files below the disks directory): they are copied to the target. Claims
// (shared or not migratable), read-only disks and CD-ROMs are not. It
// returns their total size too.
func (s *Supervisor) localWritableDisks(x *libvirtxml.Domain) ([]string, uint64) {
	if x.Devices == nil || s.cfg.Disks.Disks == "" {
		return nil, 0
	}
	root := filepath.Clean(s.cfg.Disks.Disks) + string(filepath.Separator)
	var (
		out   []string
		bytes uint64
	)
	for _, d := range x.Devices.Disks {
		if d.Device != "" && d.Device != "disk" || d.ReadOnly != nil || d.Target == nil ||
			d.Source == nil || d.Source.File == nil || !strings.HasPrefix(filepath.Clean(d.Source.File.File), root) {
			continue
		}
		out = append(out, d.Target.Dev)
		// A sparse empty disk counts whole, an overlay as far as it grew:
		// what the block copy may have to move.
		if st, err := os.Stat(d.Source.File.File); err == nil {
			bytes += uint64(st.Size())
		}
	}
	return out, bytes
}

// memoryBytes is the guest's memory as the domain defines it.
func memoryBytes(x *libvirtxml.Domain) uint64 {
	if x.Memory == nil {
		return 0
	}
	unit := map[string]uint64{"": 1 << 10, "KiB": 1 << 10, "k": 1 << 10, "MiB": 1 << 20, "M": 1 << 20, "GiB": 1 << 30, "G": 1 << 30, "b": 1, "bytes": 1}[x.Memory.Unit]
	if unit == 0 {
		unit = 1 << 10
	}
	return uint64(x.Memory.Value) * unit
}

// mibPerSecond is libvirt's bandwidth unit (MiB/s) for bytes per second,
// rounded up: a limit never becomes "unlimited" (0).
func mibPerSecond(bps uint64) uint64 {
	if bps == 0 {
		return 0
	}
	return (bps + 1<<20 - 1) >> 20
}

// migrationLocked is a copy of the last migration for a picture; s.mu
// must be held.
func (s *Supervisor) migrationLocked() *apiv1.Migration {
	if s.migration == nil {
		return nil
	}
	return proto.Clone(s.migration).(*apiv1.Migration)
}
