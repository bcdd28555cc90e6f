package validation

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// Bounds of the virtual hardware.
const (
	// MaxVCPUs is what QEMU's q35 machine boots without an IOMMU.
	MaxVCPUs = 255
)

var (
	// MinGuestMemory is the least memory a guest can have at all.
	MinGuestMemory = resource.MustParse("1Mi")
	// MaxGuestMemory is far above any node; it catches unit mistakes (1Pi).
	MaxGuestMemory = resource.MustParse("16Ti")
	// WarnGuestMemory is below what a stock Linux kernel needs to boot.
	WarnGuestMemory = resource.MustParse("72Mi")

	machineTypeRegexp = regexp.MustCompile(`^(q35|pc-q35-[0-9.]+|pc|pc-i440fx-[0-9.]+)$`)
	cpuModelRegexp    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

// ValidateVirtualMachineInstance validates a VMI being created.
func ValidateVirtualMachineInstance(vmi *virtualization.VirtualMachineInstance) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&vmi.ObjectMeta, true, apimachineryvalidation.NameIsDNSLabel, field.NewPath("metadata"))
	allErrs = append(allErrs, validateDebugAnnotations(vmi.Annotations, field.NewPath("metadata", "annotations"))...)
	allErrs = append(allErrs, ValidateVirtualMachineInstanceSpec(&vmi.Spec, field.NewPath("spec"))...)
	return allErrs
}

// ValidateVirtualMachineInstanceUpdate validates a change of a VMI's metadata
// and spec. The spec of a running guest cannot change: the guest would no
// longer be what the object says.
func ValidateVirtualMachineInstanceUpdate(vmi, old *virtualization.VirtualMachineInstance) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&vmi.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateDebugAnnotations(vmi.Annotations, field.NewPath("metadata", "annotations"))...)
	if !apiequality.Semantic.DeepEqual(vmi.Spec, old.Spec) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec"),
			"the spec of a VirtualMachineInstance cannot change once it is created; delete and recreate it, or manage it through a VirtualMachine"))
	}
	return allErrs
}

// ValidateVirtualMachineInstanceSpec validates the spec of a VMI or of a VM's
// template.
func ValidateVirtualMachineInstanceSpec(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	if errs := validateListLengths(spec, fldPath); len(errs) > 0 {
		// Nothing else is checked: each item of a list this long would
		// cost its checks and its line in the answer (20,000 disks took
		// the request past its timeout).
		return errs
	}
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateDomain(spec, fldPath.Child("domain"))...)
	volumes, errs := validateVolumes(spec.Volumes, fldPath.Child("volumes"))
	allErrs = append(allErrs, errs...)
	networks, errs := validateNetworks(spec.Networks, fldPath.Child("networks"))
	allErrs = append(allErrs, errs...)
	devicesPath := fldPath.Child("domain", "devices")
	allErrs = append(allErrs, validateDisks(spec.Domain.Devices.Disks, volumes, devicesPath.Child("disks"))...)
	allErrs = append(allErrs, validateInterfaces(spec.Domain.Devices.Interfaces, networks, devicesPath.Child("interfaces"))...)
	allErrs = append(allErrs, validateAttachments(spec, fldPath)...)
	allErrs = append(allErrs, validateBootOrder(spec, devicesPath)...)
	allErrs = append(allErrs, validateDiskOptions(spec, devicesPath.Child("disks"))...)
	allErrs = append(allErrs, validateInterfaceOptions(spec.Domain.Devices.Interfaces, devicesPath.Child("interfaces"))...)
	allErrs = append(allErrs, validateOtherDevices(&spec.Domain.Devices, devicesPath)...)
	allErrs = append(allErrs, validateSpecEnums(spec, fldPath)...)
	allErrs = append(allErrs, validateUnsupportedSpec(spec, fldPath)...)
	allErrs = append(allErrs, validateNotImplementedSpec(spec, fldPath)...)
	allErrs = append(allErrs, validateProbes(spec, fldPath)...)
	allErrs = append(allErrs, validateServiceAccountVolumes(spec, fldPath.Child("volumes"))...)
	allErrs = append(allErrs, validateAccessCredentials(spec, fldPath.Child("accessCredentials"))...)

	// Defaulted to 30: the pod builder and virt-handler read it as given.
	switch g := spec.TerminationGracePeriodSeconds; {
	case g == nil:
		allErrs = append(allErrs, field.Required(fldPath.Child("terminationGracePeriodSeconds"), "the seconds a guest has to shut down when its VMI is deleted"))
	case *g < 0:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *g, "must be 0 or more seconds"))
	}
	allErrs = append(allErrs, validateDNSLabel(spec.Hostname, fldPath.Child("hostname"))...)
	allErrs = append(allErrs, validateDNSLabel(spec.Subdomain, fldPath.Child("subdomain"))...)
	allErrs = append(allErrs, validateDNSSubdomain(spec.PriorityClassName, fldPath.Child("priorityClassName"))...)
	allErrs = append(allErrs, validateDNSSubdomain(spec.SchedulerName, fldPath.Child("schedulerName"))...)
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	allErrs = append(allErrs, validateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	return allErrs
}

func validateDomain(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	d := &spec.Domain
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateCPU(d.CPU, fldPath.Child("cpu"))...)
	allErrs = append(allErrs, validateMemory(d, fldPath)...)
	allErrs = append(allErrs, validateResources(&d.Resources, fldPath.Child("resources"))...)

	if d.Machine == nil || d.Machine.Type == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("machine", "type"), "a machine type is required, such as q35"))
	} else if !machineTypeRegexp.MatchString(d.Machine.Type) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("machine", "type"), d.Machine.Type, []string{"q35", "pc-q35-<version>", "pc", "pc-i440fx-<version>"}))
	}
	allErrs = append(allErrs, validateFirmware(d.Firmware, fldPath.Child("firmware"))...)
	allErrs = append(allErrs, validateSecureBoot(d, fldPath)...)
	allErrs = append(allErrs, validateCPUFeatures(d.CPU, fldPath.Child("cpu"))...)
	allErrs = append(allErrs, validateFeatures(d.Features, fldPath.Child("features"))...)
	allErrs = append(allErrs, validateClock(d.Clock, fldPath.Child("clock"))...)
	allErrs = append(allErrs, validateChassis(d.Chassis, fldPath.Child("chassis"))...)
	allErrs = append(allErrs, validateWatchdog(d.Devices.Watchdog, fldPath.Child("devices", "watchdog"))...)
	return allErrs
}

func validateCPU(cpu *virtualization.CPU, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if cpu == nil {
		return field.ErrorList{field.Required(fldPath, "a CPU topology is required")}
	}
	for _, f := range []struct {
		name  string
		value uint32
	}{{"cores", cpu.Cores}, {"sockets", cpu.Sockets}, {"threads", cpu.Threads}} {
		if f.value < 1 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child(f.name), f.value, "must be at least 1"))
		}
		if f.value > MaxVCPUs {
			allErrs = append(allErrs, field.Invalid(fldPath.Child(f.name), f.value, fmt.Sprintf("must be at most %d", MaxVCPUs)))
		}
	}
	if len(allErrs) == 0 {
		if vcpus := uint64(cpu.Cores) * uint64(cpu.Sockets) * uint64(cpu.Threads); vcpus > MaxVCPUs {
			allErrs = append(allErrs, field.Invalid(fldPath, vcpus,
				fmt.Sprintf("sockets * cores * threads is %d vCPUs; a guest can have at most %d", vcpus, MaxVCPUs)))
		}
	}
	if cpu.Model != "" && !cpuModelRegexp.MatchString(cpu.Model) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("model"), cpu.Model, "must be a libvirt CPU model name such as host-model, host-passthrough or Skylake-Server"))
	}
	return allErrs
}

func validateMemory(d *virtualization.DomainSpec, fldPath *field.Path) field.ErrorList {
	guestPath := fldPath.Child("memory", "guest")
	if d.Memory == nil || d.Memory.Guest == nil {
		return field.ErrorList{field.Required(guestPath, "the guest needs memory: set spec.domain.memory.guest, spec.domain.resources.requests.memory or spec.domain.resources.limits.memory")}
	}
	guest := d.Memory.Guest
	var allErrs field.ErrorList
	switch {
	case guest.Cmp(MinGuestMemory) < 0:
		allErrs = append(allErrs, field.Invalid(guestPath, guest.String(), "must be at least "+MinGuestMemory.String()))
	case guest.Cmp(MaxGuestMemory) > 0:
		allErrs = append(allErrs, field.Invalid(guestPath, guest.String(), "must be at most "+MaxGuestMemory.String()))
	}
	if limit, ok := d.Resources.Limits[corev1.ResourceMemory]; ok && guest.Cmp(limit) > 0 {
		allErrs = append(allErrs, field.Invalid(guestPath, guest.String(),
			fmt.Sprintf("must not exceed the memory limit (%s): the launcher pod would be killed", limit.String())))
	}
	return allErrs
}

func validateResources(r *virtualization.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for name, q := range r.Requests {
		if q.Sign() < 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("requests").Key(string(name)), q.String(), "must not be negative"))
		}
		if limit, ok := r.Limits[name]; ok && q.Cmp(limit) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("requests").Key(string(name)), q.String(),
				fmt.Sprintf("must be less than or equal to the %s limit (%s)", name, limit.String())))
		}
	}
	for name, q := range r.Limits {
		if q.Sign() < 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("limits").Key(string(name)), q.String(), "must not be negative"))
		}
	}
	return allErrs
}

// maxKernelArgsBytes is the longest kernel command line of any
// architecture's guest kernel (COMMAND_LINE_SIZE).
const maxKernelArgsBytes = 4096

// maxListItems bounds a guest's disks, volumes, NICs and networks, as
// KubeVirt's arrayLenMax does: no machine takes more devices than that.
const maxListItems = 256

func validateListLengths(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	devices := fldPath.Child("domain", "devices")
	for _, l := range []struct {
		path *field.Path
		n    int
	}{
		{devices.Child("disks"), len(spec.Domain.Devices.Disks)},
		{devices.Child("interfaces"), len(spec.Domain.Devices.Interfaces)},
		{fldPath.Child("volumes"), len(spec.Volumes)},
		{fldPath.Child("networks"), len(spec.Networks)},
	} {
		if l.n > maxListItems {
			errs = append(errs, field.TooMany(l.path, l.n, maxListItems))
		}
	}
	return errs
}

// validateSecureBoot refuses what OVMF's Secure Boot cannot run on, at
// create time rather than when the launcher builds the domain: its
// variables are guarded by code in System Management Mode, which only the
// q35 machine has, so SMM switched off or an i440fx machine would leave
// Secure Boot unenforced (KubeVirt refuses the first the same way).
func validateSecureBoot(d *virtualization.DomainSpec, fldPath *field.Path) field.ErrorList {
	fw := d.Firmware
	if fw == nil || fw.Bootloader == nil || fw.Bootloader.EFI == nil || fw.Bootloader.EFI.SecureBoot == nil || !*fw.Bootloader.EFI.SecureBoot {
		return nil
	}
	var allErrs field.ErrorList
	if f := d.Features; f != nil && f.SMM != nil && f.SMM.Enabled != nil && !*f.SMM.Enabled {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("features", "smm", "enabled"), false,
			"EFI Secure Boot requires SMM, which is disabled here: enable smm or set firmware.bootloader.efi.secureBoot: false"))
	}
	if m := d.Machine; m != nil && machineTypeRegexp.MatchString(m.Type) && !strings.HasPrefix(m.Type, "q35") && !strings.HasPrefix(m.Type, "pc-q35") {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("machine", "type"), m.Type,
			"EFI Secure Boot needs SMM, which only the q35 machine has: use q35 or set firmware.bootloader.efi.secureBoot: false"))
	}
	return allErrs
}

func validateFirmware(fw *virtualization.Firmware, fldPath *field.Path) field.ErrorList {
	if fw == nil {
		return nil
	}
	var allErrs field.ErrorList
	if fw.UUID != "" {
		if _, err := uuid.Parse(string(fw.UUID)); err != nil {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("uuid"), fw.UUID, "must be a UUID such as 5d307ca9-b3ef-428c-8861-06e72d69f223"))
		}
	}
	if b := fw.Bootloader; b != nil && b.BIOS != nil && b.EFI != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("bootloader"), "set either bios or efi, not both"))
	}
	if kb := fw.KernelBoot; kb != nil {
		kbPath := fldPath.Child("kernelBoot")
		// Guest kernels cut their command line far below this; without a
		// bound a few MiB of arguments reach etcd and fail there as a 500.
		if len(kb.KernelArgs) > maxKernelArgsBytes {
			allErrs = append(allErrs, field.TooLong(kbPath.Child("kernelArgs"), "", maxKernelArgsBytes))
		}
		if kb.Container == nil {
			allErrs = append(allErrs, field.Required(kbPath.Child("container"), "kernel boot needs the image the kernel and initrd are taken from"))
		} else {
			c := kb.Container
			cPath := kbPath.Child("container")
			if c.Image == "" {
				allErrs = append(allErrs, field.Required(cPath.Child("image"), "the image holding the kernel and initrd"))
			}
			if c.KernelPath == "" && c.InitrdPath == "" {
				allErrs = append(allErrs, field.Required(cPath.Child("kernelPath"), "at least one of kernelPath and initrdPath is required"))
			}
			allErrs = append(allErrs, validateImagePath(c.KernelPath, cPath.Child("kernelPath"))...)
			allErrs = append(allErrs, validateImagePath(c.InitrdPath, cPath.Child("initrdPath"))...)
			allErrs = append(allErrs, validatePullPolicy(c.ImagePullPolicy, cPath.Child("imagePullPolicy"))...)
		}
	}
	return allErrs
}

func validateWatchdog(w *virtualization.Watchdog, fldPath *field.Path) field.ErrorList {
	if w == nil {
		return nil
	}
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateName(w.Name, fldPath.Child("name"))...)
	if w.I6300ESB == nil {
		if w.Diag288 != nil {
			return allErrs // refused in unsupported.go
		}
		return append(allErrs, field.Required(fldPath.Child("i6300esb"), "a watchdog model is required"))
	}
	switch w.I6300ESB.Action {
	case virtualization.WatchdogActionPoweroff, virtualization.WatchdogActionReset, virtualization.WatchdogActionShutdown:
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("i6300esb", "action"), w.I6300ESB.Action,
			[]virtualization.WatchdogAction{virtualization.WatchdogActionPoweroff, virtualization.WatchdogActionReset, virtualization.WatchdogActionShutdown}))
	}
	return allErrs
}

func validateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range tolerations {
		p := fldPath.Index(i)
		if t.Key != "" {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				allErrs = append(allErrs, field.Invalid(p.Child("key"), t.Key, msg))
			}
		}
		switch t.Operator {
		case corev1.TolerationOpExists:
			if t.Value != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("value"), t.Value, "must be empty when operator is Exists"))
			}
		case corev1.TolerationOpEqual, "":
			if t.Key == "" {
				allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Operator, "must be Exists when key is empty"))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("effect"), t.Effect,
				[]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
	}
	return allErrs
}

func validateName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "a name is required")}
	}
	return validateDNSLabel(name, fldPath)
}

func validateDNSLabel(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if value == "" {
		return nil
	}
	for _, msg := range validation.IsDNS1123Label(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validateDNSSubdomain(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if value == "" {
		return nil
	}
	for _, msg := range validation.IsDNS1123Subdomain(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

func validatePullPolicy(p corev1.PullPolicy, fldPath *field.Path) field.ErrorList {
	switch p {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, p, []corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever})}
}
