package migration

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-base/metrics"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtlisters "kubevirt.dev/virt/generated/listers/virtualization/v1"
)

// KubeVirt's names of virt-controller's migration metrics; read from the
// migrations' cache at each scrape, so they are exact whatever the restarts.
var (
	phaseDescs = map[string]*metrics.Desc{
		"unset":      metrics.NewDesc("kubevirt_vmi_migrations_in_unset_phase", "Number of current unset migrations: not yet seen by virt-controller.", nil, nil, metrics.ALPHA, ""),
		"pending":    metrics.NewDesc("kubevirt_vmi_migrations_in_pending_phase", "Number of current pending migrations.", nil, nil, metrics.ALPHA, ""),
		"scheduling": metrics.NewDesc("kubevirt_vmi_migrations_in_scheduling_phase", "Number of current scheduling migrations.", nil, nil, metrics.ALPHA, ""),
		"running":    metrics.NewDesc("kubevirt_vmi_migrations_in_running_phase", "Number of current running migrations (Scheduled to Running).", nil, nil, metrics.ALPHA, ""),
	}
	succeededDesc = metrics.NewDesc("kubevirt_vmi_migration_succeeded", "Indicates that the VMI migration succeeded.",
		[]string{"vmi", "vmim", "namespace"}, nil, metrics.ALPHA, "")
	failedDesc = metrics.NewDesc("kubevirt_vmi_migration_failed", "Indicates that the VMI migration failed.",
		[]string{"vmi", "vmim", "namespace"}, nil, metrics.ALPHA, "")
)

// Collector exports the migrations' phases. It is registered once per
// process; each leadership term points it at its own cache (a standby
// exports nothing).
type Collector struct {
	metrics.BaseStableCollector
	lister atomic.Pointer[virtlisters.VirtualMachineInstanceMigrationLister]
}

// NewCollector reads the migrations from lister (nil: none yet).
func NewCollector(lister virtlisters.VirtualMachineInstanceMigrationLister) *Collector {
	c := &Collector{}
	c.SetLister(lister)
	return c
}

// SetLister points the collector at a cache; nil stops it.
func (c *Collector) SetLister(lister virtlisters.VirtualMachineInstanceMigrationLister) {
	if lister == nil {
		c.lister.Store(nil)
		return
	}
	c.lister.Store(&lister)
}

// Lister is the cache the controller's collector reads.
func (c *Controller) Lister() virtlisters.VirtualMachineInstanceMigrationLister { return c.vmimLister }

// DescribeWithStability lists the metrics.
func (c *Collector) DescribeWithStability(ch chan<- *metrics.Desc) {
	for _, d := range phaseDescs {
		ch <- d
	}
	ch <- succeededDesc
	ch <- failedDesc
}

// CollectWithStability counts the migrations by phase.
func (c *Collector) CollectWithStability(ch chan<- metrics.Metric) {
	lister := c.lister.Load()
	if lister == nil {
		return
	}
	all, err := (*lister).List(labels.Everything())
	if err != nil {
		return
	}
	counts := map[string]float64{}
	for _, m := range all {
		switch m.Status.Phase {
		case virtv1.MigrationPhaseUnset:
			counts["unset"]++
		case virtv1.MigrationPending:
			counts["pending"]++
		case virtv1.MigrationScheduling:
			counts["scheduling"]++
		case virtv1.MigrationSucceeded:
			ch <- metrics.NewLazyConstMetric(succeededDesc, metrics.GaugeValue, 1, m.Spec.VMIName, m.Name, m.Namespace)
		case virtv1.MigrationFailed:
			ch <- metrics.NewLazyConstMetric(failedDesc, metrics.GaugeValue, 1, m.Spec.VMIName, m.Name, m.Namespace)
		default:
			counts["running"]++
		}
	}
	for k, d := range phaseDescs {
		ch <- metrics.NewLazyConstMetric(d, metrics.GaugeValue, counts[k])
	}
}
