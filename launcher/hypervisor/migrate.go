package hypervisor

import (
	"errors"
	"fmt"

	"libvirt.org/go/libvirt"
)

// MigrateOptions are one live migration's parameters.
type MigrateOptions struct {
	// DestURI is the target libvirt as the source's libvirt reaches it
	// (DaemonURI of the socket the node forwards).
	DestURI string
	// MigrateURI is QEMU's stream, "unix://<path>".
	MigrateURI string
	// DisksURI is the block copy's NBD server, "unix://<path>"; only with
	// Disks.
	DisksURI string
	// Disks are the target names (vda, ...) of the disks copied to the
	// target (VIR_MIGRATE_NON_SHARED_INC); none: no block copy.
	Disks []string
	// BandwidthMiB is MiB/s; 0 is unlimited.
	BandwidthMiB uint64
	// MaxDowntimeMs is the longest switch-over pause; 0 is libvirt's.
	MaxDowntimeMs uint64
	AutoConverge  bool
	// PostCopy allows switching to post-copy (StartPostCopy).
	PostCopy bool
	// Paused copies the memory with the guest paused (libvirt's migration
	// without VIR_MIGRATE_LIVE; the block copy still runs live before it):
	// the guest resumes at the target, its downtime is the whole memory
	// copy. AutoConverge and PostCopy do not apply then.
	Paused bool
}

// tcgTracksAllWrites is the first QEMU (9.0.0, libvirt's version number)
// whose TCG marks every store of the guest dirty during a live migration.
// Before it, the dirty bitmap's fast path (cpu_physical_memory_sync_dirty_bitmap,
// taken for every RAM block whose size is a multiple of 256 KiB: all of
// them, libvirt rounds memory to MiB) cleared the bits without flushing
// the vCPUs' TLBs, so a page written through a TLB entry made before a
// sync stays clean until the guest's next TLB flush: its last writes never
// reach the target (QEMU commit "physmem: Fix migration dirty bitmap
// coherency with TCG memory access", 2024, fixing aa8dc044772 of 2017).
// Debian 12's QEMU 7.2 has the bug; KVM (its own dirty log) does not.
const tcgTracksAllWrites = 9_000_000

// LiveMigrationLosesWrites reports whether a live migration of a domain of
// domainType may lose the guest's last writes to its memory (TCG under a
// QEMU before 9.0, tcgTracksAllWrites): then only a paused memory copy
// (MigrateOptions.Paused) moves the guest intact.
func (c *Conn) LiveMigrationLosesWrites(domainType string) (bool, error) {
	if domainType != "qemu" {
		return false, nil
	}
	v, err := c.conn.GetVersion()
	if err != nil {
		return false, fmt.Errorf("hypervisor version: %w", err)
	}
	return v < tcgTracksAllWrites, nil
}

// Migrate runs a peer-to-peer live migration of the domain to opts.DestURI
// and returns when it ended: nil once the guest runs on the target (the
// domain here has stopped, reason migrated), an error when it failed or was
// aborted (the guest runs here).
func (c *Conn) Migrate(name string, opts MigrateOptions) error {
	return c.do(name, "migrate", func(d *libvirt.Domain) error {
		if opts.MaxDowntimeMs > 0 {
			if err := d.MigrateSetMaxDowntime(opts.MaxDowntimeMs, 0); err != nil {
				return fmt.Errorf("set max downtime: %w", err)
			}
		}
		flags := libvirt.MIGRATE_PEER2PEER | libvirt.MIGRATE_PERSIST_DEST
		if !opts.Paused {
			flags |= libvirt.MIGRATE_LIVE
		}
		params := &libvirt.DomainMigrateParameters{URISet: true, URI: opts.MigrateURI}
		if len(opts.Disks) > 0 {
			flags |= libvirt.MIGRATE_NON_SHARED_INC
			params.MigrateDisksSet, params.MigrateDisks = true, opts.Disks
			params.DisksURISet, params.DisksURI = true, opts.DisksURI
		}
		if opts.BandwidthMiB > 0 {
			params.BandwidthSet, params.Bandwidth = true, opts.BandwidthMiB
		}
		if opts.AutoConverge && !opts.Paused {
			flags |= libvirt.MIGRATE_AUTO_CONVERGE
		}
		if opts.PostCopy && !opts.Paused {
			flags |= libvirt.MIGRATE_POSTCOPY
		}
		return d.MigrateToURI3(opts.DestURI, params, flags)
	})
}

// JobStats are libvirt's statistics of a domain's job (virDomainGetJobStats).
type JobStats struct {
	// Active: a job runs (libvirt's BOUNDED or UNBOUNDED).
	Active bool
	// Completed, Failed, Cancelled: how a completed job's statistics say
	// it ended.
	Completed, Failed, Cancelled bool
	ElapsedMs                    uint64
	DataTotal                    uint64
	DataProcessed                uint64
	DataRemaining                uint64
	MemoryBps                    uint64
	// DirtyRate is pages per second, as libvirt reports it; with
	// PageSize, bytes.
	DirtyRate  uint64
	PageSize   uint64
	DowntimeMs uint64
	// DowntimeSet: DowntimeMs is libvirt's measurement.
	DowntimeSet bool
	// PostCopy: the memory still missing is pulled by the target (the
	// guest runs there already).
	PostCopy     bool
	ErrorMessage string
}

// JobStats reports the running job of the domain; completed, the
// statistics libvirt kept of the last completed one (the domain may have
// stopped since, as a migration source has).
func (c *Conn) JobStats(name string, completed bool) (JobStats, error) {
	var s JobStats
	err := c.do(name, "get job stats of", func(d *libvirt.Domain) error {
		var flags libvirt.DomainGetJobStatsFlags
		if completed {
			flags = libvirt.DOMAIN_JOB_STATS_COMPLETED
		}
		j, err := d.GetJobStats(flags)
		if err != nil {
			return err
		}
		s = JobStats{
			Active:        j.Type == libvirt.DOMAIN_JOB_BOUNDED || j.Type == libvirt.DOMAIN_JOB_UNBOUNDED,
			Completed:     j.Type == libvirt.DOMAIN_JOB_COMPLETED,
			Failed:        j.Type == libvirt.DOMAIN_JOB_FAILED,
			Cancelled:     j.Type == libvirt.DOMAIN_JOB_CANCELLED,
			ElapsedMs:     j.TimeElapsed,
			DataTotal:     j.DataTotal,
			DataProcessed: j.DataProcessed,
			DataRemaining: j.DataRemaining,
			MemoryBps:     j.MemBps,
			DirtyRate:     j.MemDirtyRate,
			PageSize:      j.MemPageSize,
			DowntimeMs:    j.Downtime,
			DowntimeSet:   j.DowntimeSet,
			PostCopy:      j.MemPostcopyReqsSet && j.MemPostcopyReqs > 0,
			ErrorMessage:  j.ErrorMessage,
		}
		return nil
	})
	return s, err
}

// AbortJob aborts the domain's running job (a migration: the guest keeps
// running here). No job running is no error.
func (c *Conn) AbortJob(name string) error {
	return c.do(name, "abort job of", func(d *libvirt.Domain) error {
		err := d.AbortJob()
		var lerr libvirt.Error
		if errors.As(err, &lerr) && lerr.Code == libvirt.ERR_OPERATION_INVALID {
			return nil
		}
		return err
	})
}

// StartPostCopy switches the running migration to post-copy: the guest
// resumes on the target at once and pulls the memory still missing.
func (c *Conn) StartPostCopy(name string) error {
	return c.do(name, "start post-copy of", func(d *libvirt.Domain) error {
		return d.MigrateStartPostCopy(0)
	})
}

// URI is the URI the connection was opened with.
func (c *Conn) URI() string { return c.uri }
