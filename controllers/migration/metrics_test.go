package migration

import (
	"strings"
	"testing"

	"k8s.io/component-base/metrics/testutil"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func TestCollector(t *testing.T) {
	vmi := runningVMI("vm1", "node1")
	f := newFixture(t, Config{}, vmi,
		newMigration("a", "vm1", inPhase(virtv1.MigrationPending)),
		newMigration("b", "vm1", inPhase(virtv1.MigrationRunning)),
		newMigration("c", "vm1", inPhase(virtv1.MigrationPreparingTarget)),
		newMigration("d", "vm1", inPhase(virtv1.MigrationSucceeded)))
	want := `
# HELP kubevirt_vmi_migration_succeeded [ALPHA] Indicates that the VMI migration succeeded.
# TYPE kubevirt_vmi_migration_succeeded gauge
kubevirt_vmi_migration_succeeded{namespace="ns",vmi="vm1",vmim="d"} 1
# HELP kubevirt_vmi_migrations_in_pending_phase [ALPHA] Number of current pending migrations.
# TYPE kubevirt_vmi_migrations_in_pending_phase gauge
kubevirt_vmi_migrations_in_pending_phase 1
# HELP kubevirt_vmi_migrations_in_running_phase [ALPHA] Number of current running migrations (Scheduled to Running).
# TYPE kubevirt_vmi_migrations_in_running_phase gauge
kubevirt_vmi_migrations_in_running_phase 2
`
	if err := testutil.CustomCollectAndCompare(NewCollector(f.ctrl.Lister()), strings.NewReader(want),
		"kubevirt_vmi_migration_succeeded", "kubevirt_vmi_migrations_in_pending_phase", "kubevirt_vmi_migrations_in_running_phase"); err != nil {
		t.Error(err)
	}
}
