package virtualmachineinstance

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// The live migrations' metrics on virt-handler's /metrics, with KubeVirt's
// names (its domainstats collector and virt-controller's counters), by
// VMI and node: the source's handler reports the job's progress from
// Domain.migration and counts failures; the target's handler counts
// successes, each once, in the write that records it; both report the
// downtime, which KubeVirt lacks.
var (
	migrationLabels = []string{"namespace", "name", "node"}

	migrationDataProcessed = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name: "kubevirt_vmi_migration_data_processed_bytes", StabilityLevel: metrics.ALPHA,
		Help: "The total guest OS data processed and migrated to the new VM.",
	}, migrationLabels)
	migrationDataRemaining = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name: "kubevirt_vmi_migration_data_remaining_bytes", StabilityLevel: metrics.ALPHA,
		Help: "The remaining guest OS data to be migrated to the new VM.",
	}, migrationLabels)
	migrationDataTotal = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name: "kubevirt_vmi_migration_data_total_bytes", StabilityLevel: metrics.ALPHA,
		Help: "The total guest OS data to be migrated to the new VM.",
	}, migrationLabels)
	migrationMemoryRate = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name: "kubevirt_vmi_migration_memory_transfer_rate_bytes", StabilityLevel: metrics.ALPHA,
		Help: "The rate at which the memory is being transferred, in bytes per second.",
	}, migrationLabels)
	migrationDirtyRate = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name: "kubevirt_vmi_migration_dirty_memory_rate_bytes", StabilityLevel: metrics.ALPHA,
		Help: "The rate of memory being dirtied in the guest OS, in bytes per second.",
	}, migrationLabels)
	migrationStart = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name: "kubevirt_vmi_migration_start_time_seconds", StabilityLevel: metrics.ALPHA,
		Help: "The time at which the migration started, in seconds since the epoch.",
	}, migrationLabels)
	migrationEnd = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name: "kubevirt_vmi_migration_end_time_seconds", StabilityLevel: metrics.ALPHA,
		Help: "The time at which the migration ended, in seconds since the epoch.",
	}, migrationLabels)
	migrationSucceeded = metrics.NewCounterVec(&metrics.CounterOpts{
		Name: "kubevirt_vmi_migration_succeeded", StabilityLevel: metrics.ALPHA,
		Help: "Migrations of the VMI that completed, counted by the target node's handler in the write that completes them.",
	}, migrationLabels)
	migrationFailed = metrics.NewCounterVec(&metrics.CounterOpts{
		Name: "kubevirt_vmi_migration_failed", StabilityLevel: metrics.ALPHA,
		Help: "Migrations of the VMI that failed or were aborted, counted by the source node's handler in the write that fails them.",
	}, migrationLabels)
	migrationDowntime = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Name: "kubevirt_vmi_migration_downtime_seconds", StabilityLevel: metrics.ALPHA,
		Help: "How long the guest was paused at the switch-over of its last completed migration (libvirt's job statistics).",
	}, migrationLabels)

	registerMigrationMetrics sync.Once
)

// registerMigration registers the metrics on virt-handler's /metrics
// (component-base metrics do nothing until registered).
func registerMigration() {
	registerMigrationMetrics.Do(func() {
		legacyregistry.MustRegister(migrationDataProcessed, migrationDataRemaining, migrationDataTotal,
			migrationMemoryRate, migrationDirtyRate, migrationStart, migrationEnd,
			migrationSucceeded, migrationFailed, migrationDowntime)
	})
}

func migrationMetricLabels(vmi *virtv1.VirtualMachineInstance, node string) []string {
	registerMigration()
	return []string{vmi.Namespace, vmi.Name, node}
}

// observeProgress records the source's job statistics.
func observeProgress(vmi *virtv1.VirtualMachineInstance, node string, m *apiv1.Migration) {
	if m == nil {
		return
	}
	l := migrationMetricLabels(vmi, node)
	migrationDataProcessed.WithLabelValues(l...).Set(float64(m.GetDataProcessedBytes()))
	migrationDataRemaining.WithLabelValues(l...).Set(float64(m.GetDataRemainingBytes()))
	migrationDataTotal.WithLabelValues(l...).Set(float64(m.GetDataTotalBytes()))
	migrationMemoryRate.WithLabelValues(l...).Set(float64(m.GetMemoryBytesPerSecond()))
	migrationDirtyRate.WithLabelValues(l...).Set(float64(m.GetDirtyRateBytesPerSecond()))
	if t := m.GetStartTimeUnixNano(); t > 0 {
		migrationStart.WithLabelValues(l...).Set(seconds(t))
	}
	if t := m.GetEndTimeUnixNano(); t > 0 {
		migrationEnd.WithLabelValues(l...).Set(seconds(t))
	}
}

// observeOutcome counts a migration's end (once per migration: the caller
// makes sure).
func observeOutcome(vmi *virtv1.VirtualMachineInstance, node string, m *apiv1.Migration, succeeded bool) {
	l := migrationMetricLabels(vmi, node)
	if succeeded {
		migrationSucceeded.WithLabelValues(l...).Inc()
		observeDowntime(vmi, node, m)
	} else {
		migrationFailed.WithLabelValues(l...).Inc()
	}
	if t := m.GetEndTimeUnixNano(); t > 0 {
		migrationEnd.WithLabelValues(l...).Set(seconds(t))
	}
}

// observeDowntime records a completed migration's downtime.
func observeDowntime(vmi *virtv1.VirtualMachineInstance, node string, m *apiv1.Migration) {
	if m.GetState() != apiv1.MigrationState_MIGRATION_STATE_COMPLETED {
		return
	}
	migrationDowntime.WithLabelValues(migrationMetricLabels(vmi, node)...).Set((time.Duration(m.GetDowntimeMs()) * time.Millisecond).Seconds())
}

// forgetMigrationMetrics drops a VMI's series once it left the node.
func forgetMigrationMetrics(namespace, name, node string) {
	registerMigration()
	l := []string{namespace, name, node}
	for _, g := range []*metrics.GaugeVec{migrationDataProcessed, migrationDataRemaining, migrationDataTotal,
		migrationMemoryRate, migrationDirtyRate, migrationStart, migrationEnd, migrationDowntime} {
		g.DeleteLabelValues(l...)
	}
	for _, c := range []*metrics.CounterVec{migrationSucceeded, migrationFailed} {
		c.DeleteLabelValues(l...)
	}
}

func seconds(unixNano int64) float64 { return float64(unixNano) / 1e9 }
