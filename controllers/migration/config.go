package migration

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/launcherpod"
)

// SameNodePolicy says whether a migration's target pod may go to its source
// node.
type SameNodePolicy string

const (
	// SameNodeNever keeps the target pod off the source node; with no
	// other node to take it, the migration fails at once.
	SameNodeNever SameNodePolicy = "Never"
	// SameNodeIfOnlyNode keeps the target pod off the source node unless
	// no other schedulable node exists (a single-node cluster).
	SameNodeIfOnlyNode SameNodePolicy = "IfOnlyNode"
	// SameNodeAlways lets the scheduler choose any node, the source's too.
	SameNodeAlways SameNodePolicy = "Always"
)

// Valid reports whether p is one of the policies.
func (p SameNodePolicy) Valid() bool {
	return p == SameNodeNever || p == SameNodeIfOnlyNode || p == SameNodeAlways
}

// Defaults are KubeVirt's code defaults (pkg/virt-config).
const (
	DefaultParallelPerCluster      = 5
	DefaultParallelOutboundPerNode = 2
	DefaultCompletionTimeoutPerGiB = 150
	DefaultProgressTimeout         = 150
	DefaultUnschedulableTimeout    = 5 * time.Minute
	DefaultPendingTimeout          = 15 * time.Minute
	DefaultEvacuationBackoff       = 20 * time.Second
	DefaultSameNode                = SameNodeIfOnlyNode
	// maxEvacuationBackoff caps the doubling: a VMI a drain wants off its
	// node is tried at least this often.
	maxEvacuationBackoff = 5 * time.Minute
)

// Config is the migration controller's configuration: virt-controller's
// --migration-* flags.
type Config struct {
	// Pod renders the target launcher pods, as the VMI controller's.
	Pod launcherpod.Config
	// ParallelPerCluster is the most migrations past Pending at a time.
	ParallelPerCluster int
	// ParallelOutboundPerNode is the most migrations past Pending leaving
	// one node at a time.
	ParallelOutboundPerNode int
	// Bandwidth per migration in bytes per second; zero: unlimited.
	Bandwidth resource.Quantity
	// CompletionTimeoutPerGiB and ProgressTimeout (seconds) bound the job;
	// the source launcher enforces them.
	CompletionTimeoutPerGiB int64
	ProgressTimeout         int64
	AllowAutoConverge       bool
	AllowPostCopy           bool
	// SameNode is the same-node policy.
	SameNode SameNodePolicy
	// UnschedulableTimeout fails a migration whose target pod the
	// scheduler could not place for this long.
	UnschedulableTimeout time.Duration
	// PendingTimeout fails a migration whose target pod is not ready this
	// long after its creation, for any other reason.
	PendingTimeout time.Duration
	// EvacuationBackoff is the first delay of an evacuation migration
	// after a failed one of the same VMI; it doubles per failure.
	EvacuationBackoff time.Duration
}

// DefaultConfig is KubeVirt's defaults around pod.
func DefaultConfig(pod launcherpod.Config) Config {
	return Config{
		Pod:                     pod,
		ParallelPerCluster:      DefaultParallelPerCluster,
		ParallelOutboundPerNode: DefaultParallelOutboundPerNode,
		CompletionTimeoutPerGiB: DefaultCompletionTimeoutPerGiB,
		ProgressTimeout:         DefaultProgressTimeout,
		SameNode:                DefaultSameNode,
		UnschedulableTimeout:    DefaultUnschedulableTimeout,
		PendingTimeout:          DefaultPendingTimeout,
		EvacuationBackoff:       DefaultEvacuationBackoff,
	}
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	switch {
	case c.ParallelPerCluster < 1 || c.ParallelOutboundPerNode < 1:
		return fmt.Errorf("--migration-parallel-per-cluster and --migration-parallel-outbound-per-node must be at least 1")
	case c.Bandwidth.Sign() < 0:
		return fmt.Errorf("--migration-bandwidth must not be negative")
	case c.CompletionTimeoutPerGiB < 1 || c.ProgressTimeout < 1:
		return fmt.Errorf("--migration-completion-timeout-per-gib and --migration-progress-timeout must be positive")
	case !c.SameNode.Valid():
		return fmt.Errorf("--migration-same-node must be Never, IfOnlyNode or Always")
	case c.UnschedulableTimeout <= 0 || c.PendingTimeout <= 0:
		return fmt.Errorf("--migration-target-unschedulable-timeout and --migration-target-pending-timeout must be positive")
	case c.EvacuationBackoff <= 0:
		return fmt.Errorf("--migration-evacuation-backoff must be positive")
	}
	return nil
}

// MigrationConfiguration is what the controller writes into the VMI's
// migrationState.migrationConfiguration: the source handler passes it to
// the launcher's Migrate.
func (c Config) MigrationConfiguration() *virtv1.VMIMConfigurationOptions {
	return &virtv1.VMIMConfigurationOptions{
		ParallelMigrationsPerCluster:      ptr.To(uint32(c.ParallelPerCluster)),
		ParallelOutboundMigrationsPerNode: ptr.To(uint32(c.ParallelOutboundPerNode)),
		BandwidthPerMigration:             ptr.To(c.Bandwidth.DeepCopy()),
		CompletionTimeoutPerGiB:           ptr.To(c.CompletionTimeoutPerGiB),
		ProgressTimeout:                   ptr.To(c.ProgressTimeout),
		AllowAutoConverge:                 ptr.To(c.AllowAutoConverge),
		AllowPostCopy:                     ptr.To(c.AllowPostCopy),
	}
}
