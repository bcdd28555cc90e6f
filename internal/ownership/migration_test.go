package ownership

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// migrating is a VMI on node a whose migration to node b the controller
// has started.
func migrating() *virtv1.VirtualMachineInstanceStatus {
	s := running("a")
	s.MigrationState = &virtv1.VirtualMachineInstanceMigrationState{
		MigrationUID: "m1", SourceNode: "a", SourcePod: "pod", TargetNode: "b", TargetPod: "pod-b",
		MigrationConfiguration: &virtv1.VMIMConfigurationOptions{},
	}
	s.ActivePods = map[types.UID]string{"pod": "a", "pod-b": "b"}
	return s
}

// TestCheckMigration walks a migration's writes through the table: each
// end and the controller write their own fields of migrationState, and the
// target moves nodeName only to itself, only when completing.
func TestCheckMigration(t *testing.T) {
	change := func(s *virtv1.VirtualMachineInstanceStatus, f func(*virtv1.VirtualMachineInstanceStatus)) *virtv1.VirtualMachineInstanceStatus {
		c := s.DeepCopy()
		f(c)
		return c
	}
	now := metav1.Now()
	targetReady := change(migrating(), func(s *virtv1.VirtualMachineInstanceStatus) {
		s.MigrationState.TargetNodeAddress = "198.18.0.12"
		s.MigrationState.TargetDirectMigrationNodePorts = map[string]int32{"40001": 0, "40002": 49152}
	})
	started := change(targetReady, func(s *virtv1.VirtualMachineInstanceStatus) {
		s.MigrationState.StartTimestamp, s.MigrationState.Mode = &now, virtv1.MigrationPreCopy
	})
	completed := func(node string) *virtv1.VirtualMachineInstanceStatus {
		return change(started, func(s *virtv1.VirtualMachineInstanceStatus) {
			m := s.MigrationState
			m.Completed, m.EndTimestamp, m.TargetNodeDomainDetected, m.TargetNodeDomainReadyTimestamp, m.DowntimeMilliseconds = true, &now, true, &now, 180
			s.NodeName = node
		})
	}
	tests := []struct {
		name     string
		w        Writer
		node     string
		old, new *virtv1.VirtualMachineInstanceStatus
		want     []string
	}{
		{"controller starts a migration", MigrationController, "", running("a"), migrating(), nil},
		{"controller starts another migration", MigrationController, "", completed("b"),
			change(completed("b"), func(s *virtv1.VirtualMachineInstanceStatus) {
				s.MigrationState = &virtv1.VirtualMachineInstanceMigrationState{MigrationUID: "m2", SourceNode: "b", TargetNode: "a"}
			}), nil},
		{"controller completes the migration", MigrationController, "", started,
			change(started, func(s *virtv1.VirtualMachineInstanceStatus) { s.MigrationState.Completed = true }),
			[]string{"status.migrationState.completed"}},
		{"controller requests an abort", MigrationController, "", started,
			change(started, func(s *virtv1.VirtualMachineInstanceStatus) { s.MigrationState.AbortRequested = true }), nil},
		{"controller says not migratable", MigrationController, "", running("a"),
			change(running("a"), func(s *virtv1.VirtualMachineInstanceStatus) {
				s.SetCondition(virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionFalse,
					Reason: virtv1.ReasonDisksNotMigratable}, now)
			}), nil},
		{"controller before the hand-off", MigrationController, "", scheduling(),
			change(scheduling(), func(s *virtv1.VirtualMachineInstanceStatus) {
				s.MigrationState = &virtv1.VirtualMachineInstanceMigrationState{MigrationUID: "m1"}
			}), []string{"status.migrationState.migrationUid"}},
		{"target says ready", MigrationTarget, "b", migrating(), targetReady, nil},
		{"target of another node", MigrationTarget, "c", migrating(), targetReady,
			[]string{"status.migrationState.targetDirectMigrationNodePorts", "status.migrationState.targetNodeAddress"}},
		{"target as the VMI's handler", Handler, "b", migrating(), targetReady,
			[]string{"status.migrationState.targetDirectMigrationNodePorts", "status.migrationState.targetNodeAddress"}},
		{"source starts", Handler, "a", targetReady, started, nil},
		{"target starts", MigrationTarget, "b", targetReady, started,
			[]string{"status.migrationState.mode", "status.migrationState.startTimestamp"}},
		{"target completes and switches over", MigrationTarget, "b", started, completed("b"), nil},
		{"target switches over without completing", MigrationTarget, "b", started,
			change(started, func(s *virtv1.VirtualMachineInstanceStatus) { s.NodeName = "b" }), []string{"status.nodeName"}},
		{"target moves the VMI elsewhere", MigrationTarget, "b", started, completed("c"), []string{"status.nodeName"}},
		{"source completes", Handler, "a", started, completed("a"),
			[]string{"status.migrationState.completed", "status.migrationState.downtimeMilliseconds",
				"status.migrationState.targetNodeDomainDetected", "status.migrationState.targetNodeDomainReadyTimestamp"}},
		{"target after the end", MigrationTarget, "b", completed("b"),
			change(completed("b"), func(s *virtv1.VirtualMachineInstanceStatus) { s.MigrationState.DowntimeMilliseconds = 1 }),
			[]string{"status.migrationState.downtimeMilliseconds"}},
		{"new node's handler after the switch-over", Handler, "b", completed("b"),
			change(completed("b"), func(s *virtv1.VirtualMachineInstanceStatus) {
				s.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "default"}}
			}), nil},
		{"source fails the migration", Handler, "a", started,
			change(started, func(s *virtv1.VirtualMachineInstanceStatus) {
				s.MigrationState.Failed, s.MigrationState.FailureReason, s.MigrationState.EndTimestamp = true, "job failed", &now
			}), nil},
		{"same node: the target completes", MigrationTarget, "a",
			change(started, func(s *virtv1.VirtualMachineInstanceStatus) { s.MigrationState.TargetNode = "a" }),
			change(completed("a"), func(s *virtv1.VirtualMachineInstanceStatus) { s.MigrationState.TargetNode = "a" }), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range Check(tc.w, tc.node, tc.old, tc.new) {
				got = append(got, v.Field)
			}
			slices.Sort(tc.want)
			if !slices.Equal(got, tc.want) {
				t.Errorf("refused %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckMigrationStatus(t *testing.T) {
	if v := CheckMigrationStatus(MigrationController); v != nil {
		t.Errorf("migration controller: %v", v)
	}
	if v := CheckMigrationStatus(Handler); len(v) != 1 {
		t.Errorf("handler: %v, want refused", v)
	}
}
