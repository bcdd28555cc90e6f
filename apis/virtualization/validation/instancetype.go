package validation

import (
	"fmt"
	"slices"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// SupportedArchitecture is the one CPU architecture guests of this platform
// have.
const SupportedArchitecture = "amd64"

var (
	cpuTopologies = []virtualization.PreferredCPUTopology{
		virtualization.PreferSockets, virtualization.PreferCores, virtualization.PreferThreads,
		virtualization.PreferSpread, virtualization.PreferAny,
		virtualization.DeprecatedPreferSockets, virtualization.DeprecatedPreferCores, virtualization.DeprecatedPreferThreads,
		virtualization.DeprecatedPreferSpread, virtualization.DeprecatedPreferAny,
	}
	spreadAcross = []virtualization.SpreadAcross{
		virtualization.SpreadAcrossSocketsCores, virtualization.SpreadAcrossCoresThreads, virtualization.SpreadAcrossSocketsCoresThreads,
	}
)

// ValidateVirtualMachineInstancetype validates a namespaced instancetype.
// Names are DNS subdomains, not labels: KubeVirt's common instancetypes
// are called u1.small.
func ValidateVirtualMachineInstancetype(it *virtualization.VirtualMachineInstancetype) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&it.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, ValidateInstancetypeSpec(&it.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachineInstancetypeUpdate validates a change of a
// namespaced instancetype. Its spec may change: VMs that captured a
// revision keep the old one.
func ValidateVirtualMachineInstancetypeUpdate(it, old *virtualization.VirtualMachineInstancetype) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&it.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateInstancetypeSpec(&it.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachineClusterInstancetype validates a cluster instancetype.
func ValidateVirtualMachineClusterInstancetype(it *virtualization.VirtualMachineClusterInstancetype) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&it.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, ValidateInstancetypeSpec(&it.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachineClusterInstancetypeUpdate validates a change of a
// cluster instancetype.
func ValidateVirtualMachineClusterInstancetypeUpdate(it, old *virtualization.VirtualMachineClusterInstancetype) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&it.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidateInstancetypeSpec(&it.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachinePreference validates a namespaced preference.
func ValidateVirtualMachinePreference(p *virtualization.VirtualMachinePreference) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&p.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, ValidatePreferenceSpec(&p.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachinePreferenceUpdate validates a change of a namespaced
// preference.
func ValidateVirtualMachinePreferenceUpdate(p, old *virtualization.VirtualMachinePreference) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidatePreferenceSpec(&p.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachineClusterPreference validates a cluster preference.
func ValidateVirtualMachineClusterPreference(p *virtualization.VirtualMachineClusterPreference) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&p.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, ValidatePreferenceSpec(&p.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachineClusterPreferenceUpdate validates a change of a
// cluster preference.
func ValidateVirtualMachineClusterPreferenceUpdate(p, old *virtualization.VirtualMachineClusterPreference) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, ValidatePreferenceSpec(&p.Spec, field.NewPath("spec"))...)
}

// ValidateInstancetypeSpec validates the spec of either instancetype kind.
// What KubeVirt's instancetypes can ask for and this platform's guests
// cannot have is refused here, once, rather than silently dropped from
// every VM that references it.
func ValidateInstancetypeSpec(spec *virtualization.VirtualMachineInstancetypeSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	cpuPath := fldPath.Child("cpu")
	switch g := spec.CPU.Guest; {
	case g < 1:
		allErrs = append(allErrs, field.Required(cpuPath.Child("guest"), "the number of vCPUs, at least 1"))
	case g > MaxVCPUs:
		allErrs = append(allErrs, field.Invalid(cpuPath.Child("guest"), g, fmt.Sprintf("must be at most %d", MaxVCPUs)))
	}
	if m := spec.CPU.Model; m != nil && !cpuModelRegexp.MatchString(*m) {
		allErrs = append(allErrs, field.Invalid(cpuPath.Child("model"), *m, "must be a libvirt CPU model name such as host-model, host-passthrough or Skylake-Server"))
	}
	if d := spec.CPU.DedicatedCPUPlacement; d != nil && *d {
		allErrs = append(allErrs, field.Forbidden(cpuPath.Child("dedicatedCPUPlacement"), "not supported: this platform does not pin vCPUs to host CPUs"))
	}
	if i := spec.CPU.IsolateEmulatorThread; i != nil && *i {
		allErrs = append(allErrs, field.Forbidden(cpuPath.Child("isolateEmulatorThread"), "not supported: this platform does not pin vCPUs or the emulator thread to host CPUs"))
	}
	if spec.CPU.MaxSockets != nil {
		allErrs = append(allErrs, field.Forbidden(cpuPath.Child("maxSockets"), "not supported: this platform has no CPU hotplug"))
	}
	// The hardware below is refused on a VMI for the same reasons; an
	// instancetype asking for it could never size an accepted VM.
	if spec.CPU.NUMA != nil {
		allErrs = append(allErrs, unsupported(cpuPath.Child("numa"), "a guest NUMA topology mapped onto the host is", whyNoCPUManager))
	}
	if spec.CPU.Realtime != nil {
		allErrs = append(allErrs, unsupported(cpuPath.Child("realtime"), "real-time vCPUs are", whyNoCPUManager))
	}

	memPath := fldPath.Child("memory")
	switch guest := spec.Memory.Guest; {
	case guest.Sign() <= 0:
		allErrs = append(allErrs, field.Required(memPath.Child("guest"), "the memory of the guest, such as 2Gi"))
	case guest.Cmp(MinGuestMemory) < 0:
		allErrs = append(allErrs, field.Invalid(memPath.Child("guest"), guest.String(), "must be at least "+MinGuestMemory.String()))
	case guest.Cmp(MaxGuestMemory) > 0:
		allErrs = append(allErrs, field.Invalid(memPath.Child("guest"), guest.String(), "must be at most "+MaxGuestMemory.String()))
	}
	if o := spec.Memory.OvercommitPercent; o < 0 || o > 100 {
		allErrs = append(allErrs, field.Invalid(memPath.Child("overcommitPercent"), o, "must be between 0 and 100"))
	}
	if spec.Memory.MaxGuest != nil {
		allErrs = append(allErrs, field.Forbidden(memPath.Child("maxGuest"), "not supported: this platform has no memory hotplug"))
	}
	if spec.Memory.Hugepages != nil {
		allErrs = append(allErrs, unsupported(memPath.Child("hugepages"), "huge pages are", whyNoHugepages))
	}
	switch p := spec.IOThreadsPolicy; {
	case p == nil:
	case *p == virtualization.IOThreadsPolicySupplementalPool:
		allErrs = append(allErrs, unsupported(fldPath.Child("ioThreadsPolicy"), "the supplementalPool I/O threads policy is", whyNoIOThreadsPool+"; use shared or auto"))
	case !slices.Contains(ioThreadsPolicies, *p):
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("ioThreadsPolicy"), *p, ioThreadsPolicies[:2]))
	}
	if spec.IOThreads != nil {
		allErrs = append(allErrs, unsupported(fldPath.Child("ioThreads"), "ioThreads is", "it sizes the supplementalPool policy: "+whyNoIOThreadsPool))
	}
	if len(spec.GPUs) > 0 {
		allErrs = append(allErrs, unsupported(fldPath.Child("gpus"), "GPUs are", whyNoDevicePlugin))
	}
	if len(spec.HostDevices) > 0 {
		allErrs = append(allErrs, unsupported(fldPath.Child("hostDevices"), "host devices are", whyNoDevicePlugin))
	}
	if spec.LaunchSecurity != nil {
		allErrs = append(allErrs, unsupported(fldPath.Child("launchSecurity"), "launch security (SEV, SEV-SNP, TDX) is", whyNoLaunchSecurity))
	}
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	allErrs = append(allErrs, validateDNSSubdomain(spec.SchedulerName, fldPath.Child("schedulerName"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(spec.Annotations, fldPath.Child("annotations"))...)
	return allErrs
}

// ValidatePreferenceSpec validates the spec of either preference kind.
func ValidatePreferenceSpec(spec *virtualization.VirtualMachinePreferenceSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if cpu := spec.CPU; cpu != nil {
		p := fldPath.Child("cpu")
		if t := cpu.PreferredCPUTopology; t != nil && !slices.Contains(cpuTopologies, *t) {
			allErrs = append(allErrs, field.NotSupported(p.Child("preferredCPUTopology"), *t, cpuTopologies[:5]))
		}
		if so := cpu.SpreadOptions; so != nil {
			if so.Across != nil && !slices.Contains(spreadAcross, *so.Across) {
				allErrs = append(allErrs, field.NotSupported(p.Child("spreadOptions", "across"), *so.Across, spreadAcross))
			}
			switch {
			case so.Ratio != nil && *so.Ratio < 1:
				allErrs = append(allErrs, field.Invalid(p.Child("spreadOptions", "ratio"), *so.Ratio, "must be at least 1"))
			case so.Ratio != nil && so.Across != nil && *so.Across == virtualization.SpreadAcrossCoresThreads && *so.Ratio != 2:
				allErrs = append(allErrs, field.Invalid(p.Child("spreadOptions", "ratio"), *so.Ratio, "must be 2 when spreading across CoresThreads (two threads per core)"))
			}
		}
	}
	if d := spec.Devices; d != nil {
		p := fldPath.Child("devices")
		if d.PreferredDiskBus != "" {
			allErrs = append(allErrs, validateBus(d.PreferredDiskBus, diskBuses, p.Child("preferredDiskBus"))...)
		}
		if d.PreferredCdromBus != "" {
			allErrs = append(allErrs, validateBus(d.PreferredCdromBus, cdromBuses, p.Child("preferredCdromBus"))...)
		}
		if d.PreferredLunBus != "" {
			allErrs = append(allErrs, validateBus(d.PreferredLunBus, diskBuses, p.Child("preferredLunBus"))...)
		}
		if d.PreferredInterfaceModel != "" && !slices.Contains(nicModels, d.PreferredInterfaceModel) {
			allErrs = append(allErrs, field.NotSupported(p.Child("preferredInterfaceModel"), d.PreferredInterfaceModel, nicModels))
		}
		allErrs = append(allErrs, validateDevicePreferenceEnums(d, p)...)
	}
	if m := spec.Machine; m != nil && m.PreferredMachineType != "" && !machineTypeRegexp.MatchString(m.PreferredMachineType) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("machine", "preferredMachineType"), m.PreferredMachineType, []string{"q35", "pc-q35-<version>", "pc", "pc-i440fx-<version>"}))
	}
	if s := spec.PreferredSubdomain; s != nil {
		allErrs = append(allErrs, validateDNSLabel(*s, fldPath.Child("preferredSubdomain"))...)
	}
	if g := spec.PreferredTerminationGracePeriodSeconds; g != nil && *g < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("preferredTerminationGracePeriodSeconds"), *g, "must be 0 or more seconds"))
	}
	if r := spec.Requirements; r != nil {
		p := fldPath.Child("requirements")
		if r.CPU != nil && (r.CPU.Guest < 1 || r.CPU.Guest > MaxVCPUs) {
			allErrs = append(allErrs, field.Invalid(p.Child("cpu", "guest"), r.CPU.Guest, fmt.Sprintf("must be between 1 and %d vCPUs", MaxVCPUs)))
		}
		if r.Memory != nil && (r.Memory.Guest.Sign() <= 0 || r.Memory.Guest.Cmp(MaxGuestMemory) > 0) {
			allErrs = append(allErrs, field.Invalid(p.Child("memory", "guest"), r.Memory.Guest.String(), "must be more than 0 and at most "+MaxGuestMemory.String()))
		}
		// A VM can only have the one architecture, so any other
		// requirement could never be met.
		if a := r.Architecture; a != nil && *a != SupportedArchitecture {
			allErrs = append(allErrs, field.NotSupported(p.Child("architecture"), *a, []string{SupportedArchitecture}))
		}
	}
	if a := spec.PreferredArchitecture; a != nil && *a != SupportedArchitecture {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("preferredArchitecture"), *a, []string{SupportedArchitecture}))
	}
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(spec.Annotations, fldPath.Child("annotations"))...)
	return allErrs
}

// validateDevicePreferenceEnums checks the preferred values of KubeVirt's
// device enums against the values a VMI accepts, so that a typo fails when
// the preference is written, not when a VM first uses it. Values a VMI
// accepts but refuses to run (an enabled TPM, multi-queue NICs) are
// accepted here: KubeVirt's common preferences carry them, and a VM using
// such a preference is refused at the template's field.
func validateDevicePreferenceEnums(d *virtualization.DevicePreferences, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v := d.PreferredInputBus; v != "" && !slices.Contains(inputBuses, v) {
		errs = append(errs, field.NotSupported(p.Child("preferredInputBus"), v, inputBuses))
	}
	if v := d.PreferredInputType; v != "" && !slices.Contains(inputTypes, v) {
		errs = append(errs, field.NotSupported(p.Child("preferredInputType"), v, inputTypes))
	}
	if v := d.PreferredSoundModel; v != "" && !slices.Contains(soundModels, v) {
		errs = append(errs, field.NotSupported(p.Child("preferredSoundModel"), v, soundModels))
	}
	if v := d.PreferredVideoType; v != nil && !slices.Contains(videoTypes, *v) {
		errs = append(errs, field.NotSupported(p.Child("preferredVideoType"), *v, videoTypes))
	}
	if v := d.PreferredPanicDeviceModel; v != nil && !slices.Contains(panicModels, *v) {
		errs = append(errs, field.NotSupported(p.Child("preferredPanicDeviceModel"), *v, panicModels))
	}
	if v := d.PreferredDiskCache; v != "" && !slices.Contains(diskCaches, v) {
		errs = append(errs, field.NotSupported(p.Child("preferredDiskCache"), v, diskCaches))
	}
	if v := d.PreferredDiskIO; v != "" && !slices.Contains(diskIOs, v) {
		errs = append(errs, field.NotSupported(p.Child("preferredDiskIO"), v, diskIOs))
	}
	return errs
}
