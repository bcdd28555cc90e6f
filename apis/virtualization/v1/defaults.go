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

// SetDefaults_Disk makes a disk without a device a virtio disk.
func SetDefaults_Disk(disk *Disk) {
	if disk.Disk == nil && disk.CDRom == nil {
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
