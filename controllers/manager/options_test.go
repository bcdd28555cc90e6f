package manager

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

func TestFilesystemOverheadFlag(t *testing.T) {
	for overhead, valid := range map[string]bool{
		"0.055": true, "0": true, "0.99": true,
		"1": false, "-0.1": false, "5%": false, "": false,
	} {
		if got := validOverhead(overhead); got != valid {
			t.Errorf("validOverhead(%q) = %v, want %v", overhead, got, valid)
		}
	}
	// Validate applies the logging flags, which it may do once per process:
	// only a refusal, which comes first, is checked through it.
	o := NewOptions()
	o.LauncherImage = "virt-launcher"
	o.FilesystemOverhead = "1"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--filesystem-overhead") {
		t.Errorf("--filesystem-overhead=1: err = %v, want it refused", err)
	}
	if d := NewOptions().FilesystemOverhead; d != "0.055" {
		t.Errorf("default --filesystem-overhead %q, want KubeVirt's 0.055", d)
	}
}

// TestLeaseDefaults: the defaults are a configuration client-go's leader
// election accepts, and a leader killed outright is replaced within the
// reliability suite's failover target (15 s, docs/reliability.md) even in
// the worst case: the lease duration after the last renewal, plus the
// standby seeing that renewal up to one jittered retry period late and
// trying again up to one later.
func TestLeaseDefaults(t *testing.T) {
	o := NewOptions()
	_, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          &resourcelock.LeaseLock{LockConfig: resourcelock.ResourceLockConfig{Identity: "a"}},
		LeaseDuration: o.LeaseDuration,
		RenewDeadline: o.LeaseRenewDeadline,
		RetryPeriod:   o.LeaseRetryPeriod,
		Callbacks:     leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
	})
	if err != nil {
		t.Fatalf("client-go refuses the default lease: %v", err)
	}
	const target = 15 * time.Second
	worst := o.LeaseDuration + 2*time.Duration(float64(o.LeaseRetryPeriod)*(1+leaderelection.JitterFactor))
	if worst >= target {
		t.Errorf("worst-case hand-over after a kill %s, want under the %s target", worst, target)
	}
}

// TestFenceDefaults: fencing is opt-in, off by default, and a negative
// time is refused rather than read as "at once".
func TestFenceDefaults(t *testing.T) {
	o := NewOptions()
	if o.FenceAfter != 0 {
		t.Errorf("default --fence-unresponsive-nodes-after %s, want 0 (off)", o.FenceAfter)
	}
	o.LauncherImage = "virt-launcher"
	o.FenceAfter = -time.Second
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--fence-unresponsive-nodes-after") {
		t.Errorf("--fence-unresponsive-nodes-after=-1s: err = %v, want it refused", err)
	}
}

// TestMigrationFlags: the defaults are the contract's (KubeVirt's code
// defaults), and the flags parse into the migration configuration.
func TestMigrationFlags(t *testing.T) {
	o := NewOptions()
	m := o.Migration
	if m.ParallelPerCluster != 5 || m.ParallelOutboundPerNode != 2 || m.CompletionTimeoutPerGiB != 150 || m.ProgressTimeout != 150 ||
		m.SameNode != "IfOnlyNode" || m.UnschedulableTimeout != 5*time.Minute || m.PendingTimeout != 15*time.Minute ||
		m.EvacuationBackoff != 20*time.Second || m.AllowAutoConverge || m.AllowPostCopy || o.MigrationBandwidth != "0" {
		t.Errorf("migration defaults %+v, bandwidth %s; want KubeVirt's", m, o.MigrationBandwidth)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--migration-same-node=Never", "--migration-parallel-per-cluster=7", "--migration-target-unschedulable-timeout=20s"}); err != nil {
		t.Fatal(err)
	}
	if o.Migration.SameNode != "Never" || o.Migration.ParallelPerCluster != 7 || o.Migration.UnschedulableTimeout != 20*time.Second {
		t.Errorf("parsed %+v", o.Migration)
	}
	o.LauncherImage = "virt-launcher"
	o.Migration.SameNode = "Sometimes"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--migration-same-node") {
		t.Errorf("--migration-same-node=Sometimes: err = %v, want it refused", err)
	}
	o.Migration.SameNode = "Always"
	o.MigrationBandwidth = "fast"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--migration-bandwidth") {
		t.Errorf("--migration-bandwidth=fast: err = %v, want it refused", err)
	}
}
