package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
)

func paths(errs field.ErrorList) string {
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	return strings.Join(got, ",")
}

func TestValidateLifecycleOptions(t *testing.T) {
	tests := []struct {
		name      string
		errs      field.ErrorList
		wantPaths string
	}{
		{"start empty", ValidateStartOptions(&virtualization.StartOptions{}), ""},
		{"start dry run", ValidateStartOptions(&virtualization.StartOptions{DryRun: []string{metav1.DryRunAll}}), ""},
		{"start unknown dry run", ValidateStartOptions(&virtualization.StartOptions{DryRun: []string{"Some"}}), "dryRun"},
		{"stop grace 0", ValidateStopOptions(&virtualization.StopOptions{GracePeriod: ptr.To(int64(0))}), ""},
		{"stop negative grace", ValidateStopOptions(&virtualization.StopOptions{GracePeriod: ptr.To(int64(-1))}), "gracePeriod"},
		{"restart negative grace", ValidateRestartOptions(&virtualization.RestartOptions{GracePeriodSeconds: ptr.To(int64(-5))}), "gracePeriodSeconds"},
		{"restart unknown dry run", ValidateRestartOptions(&virtualization.RestartOptions{DryRun: []string{"x"}}), "dryRun"},
		{"pause unknown dry run", ValidatePauseOptions(&virtualization.PauseOptions{DryRun: []string{"x"}}), "dryRun"},
		{"unpause dry run", ValidateUnpauseOptions(&virtualization.UnpauseOptions{DryRun: []string{metav1.DryRunAll}}), ""},
		{"soft reboot dry run", ValidateSoftRebootOptions(&virtualization.SoftRebootOptions{DryRun: []string{metav1.DryRunAll}}), ""},
		{"soft reboot unknown dry run", ValidateSoftRebootOptions(&virtualization.SoftRebootOptions{DryRun: []string{"x"}}), "dryRun"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := paths(tc.errs); got != tc.wantPaths {
				t.Errorf("error paths = %q, want %q; errors: %v", got, tc.wantPaths, tc.errs.ToAggregate())
			}
		})
	}
}

func TestValidateVirtualMachineStatusUpdateStateChangeRequests(t *testing.T) {
	uid := types.UID("vmi-uid")
	tests := []struct {
		name      string
		reqs      []virtualization.VirtualMachineStateChangeRequest
		wantPaths string
	}{
		{"restart", []virtualization.VirtualMachineStateChangeRequest{{Action: virtualization.StopRequest, UID: &uid}, {Action: virtualization.StartRequest}}, ""},
		{"stop without uid", []virtualization.VirtualMachineStateChangeRequest{{Action: virtualization.StopRequest}}, ""},
		{"unknown action", []virtualization.VirtualMachineStateChangeRequest{{Action: "Reboot"}}, "status.stateChangeRequests[0].action"},
		{"start with uid", []virtualization.VirtualMachineStateChangeRequest{{Action: virtualization.StopRequest}, {Action: virtualization.StartRequest, UID: &uid}}, "status.stateChangeRequests[1].uid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := validVM()
			old.ResourceVersion = "1"
			vm := old.DeepCopy()
			vm.Status.StateChangeRequests = tc.reqs
			if got := paths(ValidateVirtualMachineStatusUpdate(vm, old)); got != tc.wantPaths {
				t.Errorf("error paths = %q, want %q", got, tc.wantPaths)
			}
		})
	}
}
