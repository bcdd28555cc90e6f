package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
)

func TestValidateVirtualMachineInstanceMigration(t *testing.T) {
	m := func(vmi string) *virtualization.VirtualMachineInstanceMigration {
		return &virtualization.VirtualMachineInstanceMigration{
			ObjectMeta: metav1.ObjectMeta{Name: "mig", Namespace: "ns"},
			Spec:       virtualization.VirtualMachineInstanceMigrationSpec{VMIName: vmi},
		}
	}
	for _, tc := range []struct {
		vmi, want string
	}{{"vm1", ""}, {"", "spec.vmiName: Required value"}, {"Bad_Name", "spec.vmiName: Invalid value"}} {
		errs := ValidateVirtualMachineInstanceMigration(m(tc.vmi))
		if got := errs.ToAggregate(); (tc.want == "") != (got == nil) || (got != nil && !strings.Contains(got.Error(), tc.want)) {
			t.Errorf("vmiName %q: %v, want %q", tc.vmi, got, tc.want)
		}
	}
	old, changed := m("vm1"), m("vm2")
	old.ResourceVersion, changed.ResourceVersion = "1", "1"
	if errs := ValidateVirtualMachineInstanceMigrationUpdate(changed, old); len(errs) != 1 || errs[0].Field != "spec.vmiName" {
		t.Errorf("changing spec.vmiName: %v, want one error at spec.vmiName", errs)
	}
	if errs := ValidateVirtualMachineInstanceMigrationUpdate(old.DeepCopy(), old); len(errs) != 0 {
		t.Errorf("unchanged: %v", errs)
	}
}

func TestValidateVirtualMachineInstanceMigrationStatusUpdate(t *testing.T) {
	with := func(p virtualization.VirtualMachineInstanceMigrationPhase) *virtualization.VirtualMachineInstanceMigration {
		return &virtualization.VirtualMachineInstanceMigration{
			ObjectMeta: metav1.ObjectMeta{Name: "mig", Namespace: "ns", ResourceVersion: "1"},
			Status:     virtualization.VirtualMachineInstanceMigrationStatus{Phase: p},
		}
	}
	for _, tc := range []struct {
		from, to virtualization.VirtualMachineInstanceMigrationPhase
		bad      bool
	}{
		{"", virtualization.MigrationPending, false},
		{virtualization.MigrationPending, virtualization.MigrationFailed, false},
		{virtualization.MigrationRunning, virtualization.MigrationSucceeded, false},
		{virtualization.MigrationSucceeded, virtualization.MigrationRunning, true},
		{virtualization.MigrationFailed, virtualization.MigrationPending, true},
		{virtualization.MigrationPending, "Exploded", true},
	} {
		errs := ValidateVirtualMachineInstanceMigrationStatusUpdate(with(tc.to), with(tc.from))
		if tc.bad != (len(errs) > 0) {
			t.Errorf("%q -> %q: %v", tc.from, tc.to, errs)
		}
	}
}

func TestValidateMigrationOfVMI(t *testing.T) {
	p := field.NewPath("spec", "vmiName")
	running := func() *virtualization.VirtualMachineInstance {
		return &virtualization.VirtualMachineInstance{
			ObjectMeta: metav1.ObjectMeta{Name: "vm1"},
			Status:     virtualization.VirtualMachineInstanceStatus{Phase: virtualization.Running, NodeName: "node-1"},
		}
	}
	migratable := running()
	migratable.Status.Conditions = []virtualization.VirtualMachineInstanceCondition{{Type: virtualization.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionTrue}}
	notMigratable := running()
	notMigratable.Status.Conditions = []virtualization.VirtualMachineInstanceCondition{{
		Type: virtualization.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionFalse,
		Reason: "DisksNotLiveMigratable", Message: "volume data: PVC data is not ReadWriteMany",
	}}
	scheduled := running()
	scheduled.Status.Phase = virtualization.Scheduled
	deleting := running()
	deleting.DeletionTimestamp = &metav1.Time{}
	for name, tc := range map[string]struct {
		vmi  *virtualization.VirtualMachineInstance
		want string
	}{
		"running":        {running(), ""},
		"migratable":     {migratable, ""},
		"not migratable": {notMigratable, "volume data: PVC data is not ReadWriteMany"},
		"scheduled":      {scheduled, "only a Running VMI"},
		"deleting":       {deleting, "being deleted"},
	} {
		errs := ValidateMigrationOfVMI(tc.vmi, p)
		if tc.want == "" {
			if len(errs) > 0 {
				t.Errorf("%s: %v", name, errs)
			}
			continue
		}
		if len(errs) != 1 || errs[0].Field != "spec.vmiName" || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%s: %v, want one error at spec.vmiName with %q", name, errs, tc.want)
		}
	}
}

// TestSwitchOver: a VMI's node changes only to its migration's target, in
// the write that marks that migration completed.
func TestSwitchOver(t *testing.T) {
	now := metav1.Now()
	old := &virtualization.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vm1", Namespace: "ns", ResourceVersion: "1"},
		Status: virtualization.VirtualMachineInstanceStatus{
			Phase: virtualization.Running, NodeName: "node-1",
			PhaseTransitionTimestamps: []virtualization.VirtualMachineInstancePhaseTransitionTimestamp{{Phase: virtualization.Running, PhaseTransitionTimestamp: now}},
			MigrationState: &virtualization.VirtualMachineInstanceMigrationState{
				MigrationUID: "u1", SourceNode: "node-1", TargetNode: "node-2", TargetPod: "virt-launcher-vm1-b",
			},
		},
	}
	write := func(node string, mutate func(*virtualization.VirtualMachineInstanceMigrationState)) *virtualization.VirtualMachineInstance {
		v := old.DeepCopy()
		v.Status.NodeName = node
		mutate(v.Status.MigrationState)
		return v
	}
	completed := func(s *virtualization.VirtualMachineInstanceMigrationState) {
		s.Completed, s.EndTimestamp, s.DowntimeMilliseconds = true, ptr.To(now), 210
	}
	for name, tc := range map[string]struct {
		vmi *virtualization.VirtualMachineInstance
		ok  bool
	}{
		"to the target, completed":     {write("node-2", completed), true},
		"to the target, not completed": {write("node-2", func(*virtualization.VirtualMachineInstanceMigrationState) {}), false},
		"to another node, completed":   {write("node-3", completed), false},
		"completed and failed":         {write("node-2", func(s *virtualization.VirtualMachineInstanceMigrationState) { completed(s); s.Failed = true }), false},
		"target changed in the write": {write("node-3", func(s *virtualization.VirtualMachineInstanceMigrationState) {
			completed(s)
			s.TargetNode = "node-3"
		}), false},
	} {
		errs := ValidateVirtualMachineInstanceStatusUpdate(tc.vmi, old)
		if tc.ok != (len(errs) == 0) {
			t.Errorf("%s: %v", name, errs)
		}
	}
}
