package launcherpod

import (
	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apis/virtualization/validation"
)

// libvirtDebugEnv turns on libvirt's debug log in the launcher when the VMI
// asks for it (virtv1.LibvirtLogFiltersAnnotation): libvirt reads its
// filters and outputs from the environment, the launcher's embedded driver
// and its private libvirtd alike (hypervisor.StartDaemon passes them on).
// Output priority 1 lets every message a filter selects through; messages
// no filter selects keep libvirt's default (warnings and errors). A value
// the API would refuse (a VMI from before the check) turns on nothing.
func libvirtDebugEnv(vmi *virtv1.VirtualMachineInstance) []corev1.EnvVar {
	filters, ok := vmi.Annotations[virtv1.LibvirtLogFiltersAnnotation]
	if !ok || validation.ValidateLibvirtLogFilters(filters) != nil {
		return nil
	}
	return []corev1.EnvVar{
		{Name: "LIBVIRT_LOG_FILTERS", Value: filters},
		{Name: "LIBVIRT_LOG_OUTPUTS", Value: "1:stderr"},
	}
}
