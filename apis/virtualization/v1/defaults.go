package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Default values, exported so that the platform's components and docs use the
// same numbers as the API.
const (
	DefaultMachineType                   = "q35"
	DefaultTerminationGracePeriodSeconds = int64(30)
	DefaultPodNetworkName                = "default"
	DefaultVMNetworkCIDR                 = "198.19.255.0/24"
	DefaultInterfaceModel                = "virtio"
	// DefaultSpinlockRetries is Hyper-V's spinlock retry count when
	// features.hyperv.spinlocks is listed without one.
	DefaultSpinlockRetries = uint32(4096)
	// SoundModelICH9 and SoundModelAC97 are the sound cards; ich9 is the
	// default.
	SoundModelICH9 = "ich9"
	SoundModelAC97 = "ac97"
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_VirtualMachineInstanceSpec fills in what a guest needs to boot
// that the user did not say. It also runs on VM templates, so an instance
// created from a template is complete before it is posted.
func SetDefaults_VirtualMachineInstanceSpec(spec *VirtualMachineInstanceSpec) {
	d := &spec.Domain
	if d.Machine == nil {
		d.Machine = &Machine{}
	}
	if d.Machine.Type == "" {
		d.Machine.Type = DefaultMachineType
	}
	if d.CPU == nil {
		d.CPU = &CPU{}
	}
	// Zero means "not given" for the topology; a guest has at least one of each.
	if d.CPU.Cores == 0 {
		d.CPU.Cores = 1
	}
	if d.CPU.Sockets == 0 {
		d.CPU.Sockets = 1
	}
	if d.CPU.Threads == 0 {
		d.CPU.Threads = 1
	}
	setDefaultRequestsFromLimits(&d.Resources)
	if req, ok := d.Resources.Requests[corev1.ResourceMemory]; ok && (d.Memory == nil || d.Memory.Guest == nil) {
		if d.Memory == nil {
			d.Memory = &Memory{}
		}
		d.Memory.Guest = ptr.To(req.DeepCopy())
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr.To(DefaultTerminationGracePeriodSeconds)
	}
	if d.Devices.AutoattachSerialConsole == nil {
		d.Devices.AutoattachSerialConsole = ptr.To(true)
	}
	if d.Devices.AutoattachGraphicsDevice == nil {
		d.Devices.AutoattachGraphicsDevice = ptr.To(true)
	}
	setDefaultPodNetwork(spec)
	setDefaultVolumeDisks(spec)
	setDefaultInputDevice(spec)
}

// setDefaultRequestsFromLimits takes a CPU or memory limit without a
// request as the request too, as Kubernetes does for a container and
// KubeVirt's defaulting for a VMI: a manifest that sizes its guest with
// resources.limits.memory alone (Harvester's templates do) gets that much
// guest memory, which the memory request then gives it.
func setDefaultRequestsFromLimits(r *ResourceRequirements) {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		limit, ok := r.Limits[name]
		if !ok || limit.IsZero() {
			continue
		}
		if request, ok := r.Requests[name]; ok && !request.IsZero() {
			continue
		}
		if r.Requests == nil {
			r.Requests = corev1.ResourceList{}
		}
		r.Requests[name] = limit.DeepCopy()
	}
}

// setDefaultVolumeDisks gives every volume that no disk (nor file system)
// attaches a disk of its name, as KubeVirt's defaulting does: a manifest
// may list a cloud-init volume and leave its disk out. SetDefaults_Disk
// then makes it a virtio disk.
func setDefaultVolumeDisks(spec *VirtualMachineInstanceSpec) {
	attached := map[string]bool{}
	for _, d := range spec.Domain.Devices.Disks {
		attached[d.Name] = true
	}
	for _, fs := range spec.Domain.Devices.Filesystems {
		attached[fs.Name] = true
	}
	for _, v := range spec.Volumes {
		if !attached[v.Name] {
			spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, Disk{Name: v.Name})
			attached[v.Name] = true
		}
	}
}

// setDefaultInputDevice adds KubeVirt's default input device, a USB tablet
// named default-0, to a guest that asks for one with autoattachInputDevice
// and lists none.
func setDefaultInputDevice(spec *VirtualMachineInstanceSpec) {
	devices := &spec.Domain.Devices
	if devices.AutoattachInputDevice == nil || !*devices.AutoattachInputDevice || len(devices.Inputs) > 0 {
		return
	}
	devices.Inputs = []Input{{Name: "default-0"}}
}

// setDefaultPodNetwork gives a guest without any network the pod network
// through a masquerade interface, as KubeVirt does, unless the user opted out
// with autoattachPodInterface: false.
func setDefaultPodNetwork(spec *VirtualMachineInstanceSpec) {
	devices := &spec.Domain.Devices
	if devices.AutoattachPodInterface != nil && !*devices.AutoattachPodInterface {
		return
	}
	if len(devices.Interfaces) > 0 || len(spec.Networks) > 0 {
		return
	}
	spec.Networks = []Network{{Name: DefaultPodNetworkName, NetworkSource: NetworkSource{Pod: &PodNetwork{}}}}
	devices.Interfaces = []Interface{{
		Name:                   DefaultPodNetworkName,
		InterfaceBindingMethod: InterfaceBindingMethod{Masquerade: &InterfaceMasquerade{}},
	}}
}

// SetDefaults_Disk makes a disk without a device a virtio disk, and closes
// a CD-ROM's tray.
func SetDefaults_Disk(disk *Disk) {
	if disk.Disk == nil && disk.CDRom == nil && disk.LUN == nil {
		disk.Disk = &DiskTarget{}
	}
	if disk.Disk != nil && disk.Disk.Bus == "" {
		disk.Disk.Bus = DiskBusVirtio
	}
	if disk.CDRom != nil {
		if disk.CDRom.Bus == "" {
			disk.CDRom.Bus = DiskBusSATA
		}
		if disk.CDRom.ReadOnly == nil {
			disk.CDRom.ReadOnly = ptr.To(true)
		}
		if disk.CDRom.Tray == "" {
			disk.CDRom.Tray = TrayStateClosed
		}
	}
}

// SetDefaults_Input makes an input without bus or type a USB tablet.
func SetDefaults_Input(in *Input) {
	if in.Bus == "" {
		in.Bus = InputBusUSB
	}
	if in.Type == "" {
		in.Type = InputTypeTablet
	}
}

// SetDefaults_SoundDevice makes a sound card without a model an ich9 one.
func SetDefaults_SoundDevice(s *SoundDevice) {
	if s.Model == "" {
		s.Model = SoundModelICH9
	}
}

// A feature or timer that is listed is on unless it says enabled: false
// (KubeVirt's defaults): "smm: {}" turns SMM on.

// SetDefaults_FeatureState turns a listed feature on.
func SetDefaults_FeatureState(f *FeatureState) { defaultTrue(&f.Enabled) }

// SetDefaults_FeatureAPIC turns a listed APIC on.
func SetDefaults_FeatureAPIC(f *FeatureAPIC) { defaultTrue(&f.Enabled) }

// SetDefaults_FeatureVendorID turns a listed vendor ID on.
func SetDefaults_FeatureVendorID(f *FeatureVendorID) { defaultTrue(&f.Enabled) }

// SetDefaults_SyNICTimer turns listed synthetic timers on.
func SetDefaults_SyNICTimer(f *SyNICTimer) { defaultTrue(&f.Enabled) }

// SetDefaults_TLBFlush turns a listed TLB flush on.
func SetDefaults_TLBFlush(f *TLBFlush) { defaultTrue(&f.Enabled) }

// SetDefaults_FeatureSpinlocks turns listed spinlocks on with 4096 retries.
func SetDefaults_FeatureSpinlocks(f *FeatureSpinlocks) {
	defaultTrue(&f.Enabled)
	if *f.Enabled && f.Retries == nil {
		f.Retries = ptr.To(DefaultSpinlockRetries)
	}
}

// SetDefaults_HPETTimer keeps a listed HPET.
func SetDefaults_HPETTimer(t *HPETTimer) { defaultTrue(&t.Enabled) }

// SetDefaults_PITTimer keeps a listed PIT.
func SetDefaults_PITTimer(t *PITTimer) { defaultTrue(&t.Enabled) }

// SetDefaults_RTCTimer keeps a listed RTC.
func SetDefaults_RTCTimer(t *RTCTimer) { defaultTrue(&t.Enabled) }

// SetDefaults_KVMTimer keeps a listed kvmclock.
func SetDefaults_KVMTimer(t *KVMTimer) { defaultTrue(&t.Enabled) }

// SetDefaults_HypervTimer keeps a listed Hyper-V clock.
func SetDefaults_HypervTimer(t *HypervTimer) { defaultTrue(&t.Enabled) }

func defaultTrue(b **bool) {
	if *b == nil {
		*b = ptr.To(true)
	}
}

// SetDefaults_Interface makes a NIC without a model a virtio NIC.
func SetDefaults_Interface(iface *Interface) {
	if iface.Model == "" {
		iface.Model = DefaultInterfaceModel
	}
	for i := range iface.Ports {
		if iface.Ports[i].Protocol == "" {
			iface.Ports[i].Protocol = "TCP"
		}
	}
}

// SetDefaults_PodNetwork gives the guest's NAT network its default range.
func SetDefaults_PodNetwork(n *PodNetwork) {
	if n.VMNetworkCIDR == "" {
		n.VMNetworkCIDR = DefaultVMNetworkCIDR
	}
}

// SetDefaults_I6300ESBWatchdog resets the guest when the watchdog fires.
func SetDefaults_I6300ESBWatchdog(w *I6300ESBWatchdog) {
	if w.Action == "" {
		w.Action = WatchdogActionReset
	}
}

// SetDefaults_VirtualMachineSpec halts a VM that says neither running nor
// runStrategy, so creating one never starts a guest by surprise.
func SetDefaults_VirtualMachineSpec(spec *VirtualMachineSpec) {
	if spec.Running == nil && spec.RunStrategy == nil {
		spec.RunStrategy = ptr.To(RunStrategyHalted)
	}
}
