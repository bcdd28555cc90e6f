package validation

import (
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// ValidateStartOptions validates the body of a VM's start.
func ValidateStartOptions(o *virtualization.StartOptions) field.ErrorList {
	return metav1validation.ValidateDryRun(field.NewPath("dryRun"), o.DryRun)
}

// ValidateStopOptions validates the body of a VM's stop.
func ValidateStopOptions(o *virtualization.StopOptions) field.ErrorList {
	allErrs := metav1validation.ValidateDryRun(field.NewPath("dryRun"), o.DryRun)
	return append(allErrs, validateGracePeriod(o.GracePeriod, field.NewPath("gracePeriod"))...)
}

// ValidateRestartOptions validates the body of a VM's restart.
func ValidateRestartOptions(o *virtualization.RestartOptions) field.ErrorList {
	allErrs := metav1validation.ValidateDryRun(field.NewPath("dryRun"), o.DryRun)
	return append(allErrs, validateGracePeriod(o.GracePeriodSeconds, field.NewPath("gracePeriodSeconds"))...)
}

// ValidatePauseOptions validates the body of a VMI's pause.
func ValidatePauseOptions(o *virtualization.PauseOptions) field.ErrorList {
	return metav1validation.ValidateDryRun(field.NewPath("dryRun"), o.DryRun)
}

// ValidateUnpauseOptions validates the body of a VMI's unpause.
func ValidateUnpauseOptions(o *virtualization.UnpauseOptions) field.ErrorList {
	return metav1validation.ValidateDryRun(field.NewPath("dryRun"), o.DryRun)
}

// ValidateSoftRebootOptions validates the body of a VMI's soft reboot.
func ValidateSoftRebootOptions(o *virtualization.SoftRebootOptions) field.ErrorList {
	return metav1validation.ValidateDryRun(field.NewPath("dryRun"), o.DryRun)
}

func validateGracePeriod(seconds *int64, fldPath *field.Path) field.ErrorList {
	if seconds != nil && *seconds < 0 {
		return field.ErrorList{field.Invalid(fldPath, *seconds, "must be 0 or more seconds")}
	}
	return nil
}

var stateChangeActions = []virtualization.StateChangeRequestAction{virtualization.StartRequest, virtualization.StopRequest}

// validateStateChangeRequests checks the actions asked of the VM controller.
func validateStateChangeRequests(reqs []virtualization.VirtualMachineStateChangeRequest, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, r := range reqs {
		p := fldPath.Index(i)
		switch r.Action {
		case virtualization.StartRequest:
			if r.UID != nil {
				allErrs = append(allErrs, field.Forbidden(p.Child("uid"), "a Start request names no instance: it creates one"))
			}
		case virtualization.StopRequest:
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("action"), r.Action, stateChangeActions))
		}
	}
	return allErrs
}
