package v1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func TestVirtualMachineInstanceDefaults(t *testing.T) {
	podNetwork := []virtv1.Network{{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{VMNetworkCIDR: virtv1.DefaultVMNetworkCIDR}}}}
	masquerade := []virtv1.Interface{{Name: "default", Model: "virtio", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}}}}

	tests := []struct {
		name  string
		spec  virtv1.VirtualMachineInstanceSpec
		check func(t *testing.T, got virtv1.VirtualMachineInstanceSpec)
	}{{
		name: "machine type q35",
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Machine, &virtv1.Machine{Type: "q35"})
		},
	}, {
		name: "explicit machine type kept",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{Machine: &virtv1.Machine{Type: "pc-q35-7.2"}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Machine.Type, "pc-q35-7.2")
		},
	}, {
		name: "one core, one socket, one thread",
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.CPU, &virtv1.CPU{Cores: 1, Sockets: 1, Threads: 1})
		},
	}, {
		name: "given cores kept, missing topology filled",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{CPU: &virtv1.CPU{Cores: 4, Model: "host-model"}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.CPU, &virtv1.CPU{Cores: 4, Sockets: 1, Threads: 1, Model: "host-model"})
		},
	}, {
		name: "guest memory from the memory request",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{Resources: virtv1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Memory.Guest.String(), "128Mi")
		},
	}, {
		name: "explicit guest memory kept",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{
			Memory:    &virtv1.Memory{Guest: ptr.To(resource.MustParse("1Gi"))},
			Resources: virtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Memory.Guest.String(), "1Gi")
		},
	}, {
		// As Kubernetes and KubeVirt do: Harvester's templates size the
		// guest with the memory limit alone.
		name: "memory and CPU requests and guest memory from the limits",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{Resources: virtv1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi"), corev1.ResourceCPU: resource.MustParse("2")}}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Resources.Requests.Memory().String(), "2Gi")
			equal(t, got.Domain.Resources.Requests.Cpu().String(), "2")
			equal(t, got.Domain.Memory.Guest.String(), "2Gi")
			equal(t, got.Domain.Resources.Limits.Memory().String(), "2Gi")
		},
	}, {
		name: "given requests kept below the limits",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{Resources: virtv1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourceCPU: resource.MustParse("500m")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi"), corev1.ResourceCPU: resource.MustParse("2")}}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Resources.Requests.Memory().String(), "1Gi")
			equal(t, got.Domain.Resources.Requests.Cpu().String(), "500m")
			equal(t, got.Domain.Memory.Guest.String(), "1Gi")
		},
	}, {
		name: "guest memory given, request from the limit",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{
			Memory:    &virtv1.Memory{Guest: ptr.To(resource.MustParse("1Gi"))},
			Resources: virtv1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Memory.Guest.String(), "1Gi")
			equal(t, got.Domain.Resources.Requests.Memory().String(), "2Gi")
		},
	}, {
		name: "no memory request, no guest memory invented",
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Memory, (*virtv1.Memory)(nil))
		},
	}, {
		name: "termination grace period 30s",
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.TerminationGracePeriodSeconds, ptr.To(int64(30)))
		},
	}, {
		name: "grace period 0 kept",
		spec: virtv1.VirtualMachineInstanceSpec{TerminationGracePeriodSeconds: ptr.To(int64(0))},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.TerminationGracePeriodSeconds, ptr.To(int64(0)))
		},
	}, {
		name: "serial console on",
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Devices.AutoattachSerialConsole, ptr.To(true))
		},
	}, {
		name: "serial console off kept",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{Devices: virtv1.Devices{AutoattachSerialConsole: ptr.To(false)}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Devices.AutoattachSerialConsole, ptr.To(false))
		},
	}, {
		name: "graphics device on",
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Devices.AutoattachGraphicsDevice, ptr.To(true))
		},
	}, {
		name: "graphics device off kept",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{Devices: virtv1.Devices{AutoattachGraphicsDevice: ptr.To(false)}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Devices.AutoattachGraphicsDevice, ptr.To(false))
		},
	}, {
		name: "pod network with masquerade when none given",
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Networks, podNetwork)
			equal(t, got.Domain.Devices.Interfaces, masquerade)
		},
	}, {
		name: "no pod network when autoattachPodInterface is false",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{Devices: virtv1.Devices{AutoattachPodInterface: ptr.To(false)}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, len(got.Networks)+len(got.Domain.Devices.Interfaces), 0)
		},
	}, {
		name: "given bridge interface kept, model defaulted",
		spec: virtv1.VirtualMachineInstanceSpec{
			Networks: []virtv1.Network{{Name: "lan", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{VMNetworkCIDR: "198.19.128.0/24"}}}},
			Domain: virtv1.DomainSpec{Devices: virtv1.Devices{Interfaces: []virtv1.Interface{{
				Name: "lan", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}}}}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Networks[0].Pod.VMNetworkCIDR, "198.19.128.0/24")
			equal(t, got.Domain.Devices.Interfaces, []virtv1.Interface{{Name: "lan", Model: "virtio",
				InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}}})
		},
	}, {
		name: "disk without device is a virtio disk; cdrom is sata, read-only and closed",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{Devices: virtv1.Devices{Disks: []virtv1.Disk{
			{Name: "root"},
			{Name: "iso", DiskDevice: virtv1.DiskDevice{CDRom: &virtv1.CDRomTarget{}}},
		}}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Devices.Disks[0].DiskDevice, virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: "virtio"}})
			equal(t, got.Domain.Devices.Disks[1].DiskDevice, virtv1.DiskDevice{CDRom: &virtv1.CDRomTarget{Bus: "sata", ReadOnly: ptr.To(true), Tray: virtv1.TrayStateClosed}})
		},
	}, {
		// KubeVirt's defaulting: a manifest may list a volume and leave its
		// disk out (cloud-init volumes usually are).
		name: "a volume without a disk gets a virtio disk; one with a disk or file system keeps it",
		spec: virtv1.VirtualMachineInstanceSpec{
			Domain: virtv1.DomainSpec{Devices: virtv1.Devices{
				Disks:       []virtv1.Disk{{Name: "iso", DiskDevice: virtv1.DiskDevice{CDRom: &virtv1.CDRomTarget{}}}},
				Filesystems: []virtv1.Filesystem{{Name: "shared", Virtiofs: &virtv1.FilesystemVirtiofs{}}},
			}},
			Volumes: []virtv1.Volume{
				{Name: "iso", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "iso"}}},
				{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "root"}}},
				{Name: "cloudinit", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{UserData: "#cloud-config"}}},
				{Name: "shared", VolumeSource: virtv1.VolumeSource{PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}},
			},
		},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			virtio := virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusVirtio}}
			equal(t, got.Domain.Devices.Disks, []virtv1.Disk{
				{Name: "iso", DiskDevice: virtv1.DiskDevice{CDRom: &virtv1.CDRomTarget{Bus: "sata", ReadOnly: ptr.To(true), Tray: virtv1.TrayStateClosed}}},
				{Name: "root", DiskDevice: virtio},
				{Name: "cloudinit", DiskDevice: virtio},
			})
		},
	}, {
		name: "autoattachInputDevice adds a USB tablet; an input without bus or type is one",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{Devices: virtv1.Devices{AutoattachInputDevice: ptr.To(true)}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Devices.Inputs, []virtv1.Input{{Name: "default-0", Bus: virtv1.InputBusUSB, Type: virtv1.InputTypeTablet}})
		},
	}, {
		name: "listed features and timers are on; hyperv spinlocks retry 4096 times; sound is ich9",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{
			Features: &virtv1.Features{
				SMM:        &virtv1.FeatureState{},
				Pvspinlock: &virtv1.FeatureState{Enabled: ptr.To(false)},
				Hyperv:     &virtv1.FeatureHyperv{Relaxed: &virtv1.FeatureState{}, Spinlocks: &virtv1.FeatureSpinlocks{}},
			},
			Clock:   &virtv1.Clock{Timer: &virtv1.Timer{HPET: &virtv1.HPETTimer{}, RTC: &virtv1.RTCTimer{TickPolicy: "catchup"}}},
			Devices: virtv1.Devices{Sound: &virtv1.SoundDevice{Name: "audio"}},
		}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			f := got.Domain.Features
			equal(t, f.ACPI.Enabled, ptr.To(true))
			equal(t, f.SMM.Enabled, ptr.To(true))
			equal(t, f.Pvspinlock.Enabled, ptr.To(false))
			equal(t, f.Hyperv.Relaxed.Enabled, ptr.To(true))
			equal(t, f.Hyperv.Spinlocks.Retries, ptr.To(uint32(4096)))
			equal(t, got.Domain.Clock.Timer.HPET.Enabled, ptr.To(true))
			equal(t, got.Domain.Clock.Timer.RTC.Enabled, ptr.To(true))
			equal(t, got.Domain.Devices.Sound.Model, "ich9")
		},
	}, {
		name: "watchdog resets by default; masquerade ports are TCP",
		spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{Devices: virtv1.Devices{
			Watchdog:   &virtv1.Watchdog{Name: "w", WatchdogDevice: virtv1.WatchdogDevice{I6300ESB: &virtv1.I6300ESBWatchdog{}}},
			Interfaces: []virtv1.Interface{{Name: "default", Ports: []virtv1.Port{{Port: 22}}}},
		}}},
		check: func(t *testing.T, got virtv1.VirtualMachineInstanceSpec) {
			equal(t, got.Domain.Devices.Watchdog.I6300ESB.Action, virtv1.WatchdogActionReset)
			equal(t, got.Domain.Devices.Interfaces[0].Ports[0].Protocol, "TCP")
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := &virtv1.VirtualMachineInstance{Spec: tc.spec}
			virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
			tc.check(t, vmi.Spec)

			// Defaulting twice changes nothing: defaults are applied on every
			// decode, including reads from storage.
			again := vmi.DeepCopy()
			virtv1.SetObjectDefaults_VirtualMachineInstance(again)
			equal(t, again, vmi)
		})
	}
}

func TestVirtualMachineDefaults(t *testing.T) {
	tests := []struct {
		name string
		spec virtv1.VirtualMachineSpec
		want *virtv1.VirtualMachineRunStrategy
	}{
		{name: "neither running nor runStrategy: Halted", want: ptr.To(virtv1.RunStrategyHalted)},
		{name: "running given: no runStrategy invented", spec: virtv1.VirtualMachineSpec{Running: ptr.To(true)}},
		{name: "runStrategy kept", spec: virtv1.VirtualMachineSpec{RunStrategy: ptr.To(virtv1.RunStrategyManual)}, want: ptr.To(virtv1.RunStrategyManual)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vm := &virtv1.VirtualMachine{Spec: tc.spec}
			vm.Spec.Template = &virtv1.VirtualMachineInstanceTemplateSpec{}
			virtv1.SetObjectDefaults_VirtualMachine(vm)
			equal(t, vm.Spec.RunStrategy, tc.want)
			// The template is an instance spec and is defaulted like one.
			equal(t, vm.Spec.Template.Spec.Domain.Machine, &virtv1.Machine{Type: "q35"})
		})
	}
}

func equal[T any](t *testing.T, got, want T) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected value (-want +got):\n%s", diff)
	}
}
