package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
)

// validVMI is a defaulted VMI with one of each kind of device.
func validVMI() *virtualization.VirtualMachineInstance {
	return &virtualization.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "tiny", Namespace: "default"},
		Spec: virtualization.VirtualMachineInstanceSpec{
			Domain: virtualization.DomainSpec{
				CPU:     &virtualization.CPU{Cores: 1, Sockets: 1, Threads: 1},
				Memory:  &virtualization.Memory{Guest: ptr.To(resource.MustParse("128Mi"))},
				Machine: &virtualization.Machine{Type: "q35"},
				Firmware: &virtualization.Firmware{KernelBoot: &virtualization.KernelBoot{
					KernelArgs: "console=ttyS0",
					Container:  &virtualization.KernelBootContainer{Image: "localhost/guest:dev", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd.gz"},
				}},
				Devices: virtualization.Devices{
					Disks: []virtualization.Disk{
						{Name: "root", DiskDevice: virtualization.DiskDevice{Disk: &virtualization.DiskTarget{Bus: "virtio"}}, BootOrder: ptr.To(uint32(1))},
						{Name: "cloudinit", DiskDevice: virtualization.DiskDevice{Disk: &virtualization.DiskTarget{Bus: "virtio"}}},
					},
					Interfaces: []virtualization.Interface{{Name: "default", Model: "virtio",
						InterfaceBindingMethod: virtualization.InterfaceBindingMethod{Masquerade: &virtualization.InterfaceMasquerade{}}}},
				},
			},
			Volumes: []virtualization.Volume{
				{Name: "root", VolumeSource: virtualization.VolumeSource{ContainerDisk: &virtualization.ContainerDiskSource{Image: "localhost/disk:dev"}}},
				{Name: "cloudinit", VolumeSource: virtualization.VolumeSource{CloudInitNoCloud: &virtualization.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
			},
			Networks:                      []virtualization.Network{{Name: "default", NetworkSource: virtualization.NetworkSource{Pod: &virtualization.PodNetwork{VMNetworkCIDR: "198.19.255.0/24"}}}},
			TerminationGracePeriodSeconds: ptr.To(int64(30)),
		},
	}
}

func TestValidateVirtualMachineInstance(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*virtualization.VirtualMachineInstance)
		// wantPaths are the field paths of the expected errors; empty means valid.
		wantPaths []string
	}{
		{name: "valid", mutate: func(*virtualization.VirtualMachineInstance) {}},
		{name: "bridge binding", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].Masquerade = nil
			v.Spec.Domain.Devices.Interfaces[0].Bridge = &virtualization.InterfaceBridge{}
		}},
		{name: "the smallest VM network", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Networks[0].Pod.VMNetworkCIDR = "198.19.255.4/30"
		}},
		{name: "name not a DNS label", mutate: func(v *virtualization.VirtualMachineInstance) { v.Name = "Tiny_VM" },
			wantPaths: []string{"metadata.name"}},
		{name: "zero cores", mutate: func(v *virtualization.VirtualMachineInstance) { v.Spec.Domain.CPU.Cores = 0 },
			wantPaths: []string{"spec.domain.cpu.cores"}},
		{name: "too many vCPUs", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.CPU.Cores, v.Spec.Domain.CPU.Sockets = 16, 32
		}, wantPaths: []string{"spec.domain.cpu"}},
		{name: "bad CPU model", mutate: func(v *virtualization.VirtualMachineInstance) { v.Spec.Domain.CPU.Model = "host model" },
			wantPaths: []string{"spec.domain.cpu.model"}},
		{name: "no memory", mutate: func(v *virtualization.VirtualMachineInstance) { v.Spec.Domain.Memory = nil },
			wantPaths: []string{"spec.domain.memory.guest"}},
		{name: "tiny memory", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Memory.Guest = ptr.To(resource.MustParse("512Ki"))
		}, wantPaths: []string{"spec.domain.memory.guest"}},
		{name: "memory above limit", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
		}, wantPaths: []string{"spec.domain.memory.guest"}},
		{name: "request above limit", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
			v.Spec.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, wantPaths: []string{"spec.domain.resources.requests[cpu]"}},
		{name: "unknown machine type", mutate: func(v *virtualization.VirtualMachineInstance) { v.Spec.Domain.Machine.Type = "virt" },
			wantPaths: []string{"spec.domain.machine.type"}},
		{name: "bad firmware uuid", mutate: func(v *virtualization.VirtualMachineInstance) { v.Spec.Domain.Firmware.UUID = "nope" },
			wantPaths: []string{"spec.domain.firmware.uuid"}},
		{name: "bios and efi", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Firmware.Bootloader = &virtualization.Bootloader{BIOS: &virtualization.BIOS{}, EFI: &virtualization.EFI{}}
		}, wantPaths: []string{"spec.domain.firmware.bootloader"}},
		{name: "kernel boot relative path", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Firmware.KernelBoot.Container.KernelPath = "boot/vmlinuz"
		}, wantPaths: []string{"spec.domain.firmware.kernelBoot.container.kernelPath"}},
		{name: "kernel args longer than any kernel takes", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Firmware.KernelBoot.KernelArgs = strings.Repeat("a", 4097)
		}, wantPaths: []string{"spec.domain.firmware.kernelBoot.kernelArgs"}},
		{name: "disk without volume", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks = append(v.Spec.Domain.Devices.Disks, virtualization.Disk{Name: "data",
				DiskDevice: virtualization.DiskDevice{Disk: &virtualization.DiskTarget{Bus: "virtio"}}})
		}, wantPaths: []string{"spec.domain.devices.disks[2].name"}},
		{name: "duplicate disk", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks[1].Name = "root"
		}, wantPaths: []string{"spec.domain.devices.disks[1].name", "spec.volumes[1].name"}},
		{name: "duplicate volume", mutate: func(v *virtualization.VirtualMachineInstance) { v.Spec.Volumes[1].Name = "root" },
			wantPaths: []string{"spec.volumes[1].name", "spec.domain.devices.disks[1].name"}},
		{name: "volume with two sources", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes[0].EmptyDisk = &virtualization.EmptyDiskSource{Capacity: resource.MustParse("1Gi")}
		}, wantPaths: []string{"spec.volumes[0]"}},
		{name: "bad disk bus", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks[0].Disk.Bus = "ide"
		}, wantPaths: []string{"spec.domain.devices.disks[0].disk.bus"}},
		// KubeVirt takes it; libvirt's CD-ROM medium is read-only anyway
		// (a warning says so).
		{name: "writable cdrom accepted", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks[1].Disk = nil
			v.Spec.Domain.Devices.Disks[1].CDRom = &virtualization.CDRomTarget{Bus: "sata", ReadOnly: ptr.To(false)}
		}},
		// KubeVirt's users write underscores and capitals (vmi-shared_disk):
		// libvirt's aliases and file names take them.
		{name: "volume and disk name with an underscore and capitals", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes[1].Name, v.Spec.Domain.Devices.Disks[1].Name = "Shared_disk", "Shared_disk"
		}},
		// libvirt's alias ua-<name> takes no dot, and a path no slash.
		{name: "volume and disk name with a dot", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes[1].Name, v.Spec.Domain.Devices.Disks[1].Name = "data.img", "data.img"
		}, wantPaths: []string{"spec.volumes[1].name", "spec.domain.devices.disks[1].name"}},
		{name: "volume and disk name with a slash", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes[1].Name, v.Spec.Domain.Devices.Disks[1].Name = "../x", "../x"
		}, wantPaths: []string{"spec.volumes[1].name", "spec.domain.devices.disks[1].name"}},
		{name: "volume name too long", mutate: func(v *virtualization.VirtualMachineInstance) {
			long := strings.Repeat("a", 64)
			v.Spec.Volumes[1].Name, v.Spec.Domain.Devices.Disks[1].Name = long, long
		}, wantPaths: []string{"spec.volumes[1].name", "spec.domain.devices.disks[1].name"}},
		// A claim name no claim can have is a warning, as Kubernetes takes
		// it in a pod; one no URL can carry is refused.
		{name: "claim name with an underscore accepted", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes[1].VolumeSource = virtualization.VolumeSource{PersistentVolumeClaim: &virtualization.PersistentVolumeClaimVolumeSource{
				ClaimName: "windows_pvc"}}
		}},
		{name: "claim name with a slash", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes[1].VolumeSource = virtualization.VolumeSource{PersistentVolumeClaim: &virtualization.PersistentVolumeClaimVolumeSource{
				ClaimName: "a/b"}}
		}, wantPaths: []string{"spec.volumes[1].persistentVolumeClaim.claimName"}},
		{name: "duplicate boot order", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks[1].BootOrder = ptr.To(uint32(1))
		}, wantPaths: []string{"spec.domain.devices.disks[1].bootOrder"}},
		{name: "interface without network", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].Name = "lan"
		}, wantPaths: []string{"spec.domain.devices.interfaces[0].name", "spec.networks[0].name"}},
		{name: "interface with two bindings", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].Bridge = &virtualization.InterfaceBridge{}
		}, wantPaths: []string{"spec.domain.devices.interfaces[0]"}},
		{name: "ports with the bridge binding", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].Masquerade = nil
			v.Spec.Domain.Devices.Interfaces[0].Bridge = &virtualization.InterfaceBridge{}
			v.Spec.Domain.Devices.Interfaces[0].Ports = []virtualization.Port{{Port: 80, Protocol: "TCP"}}
		}, wantPaths: []string{"spec.domain.devices.interfaces[0].ports"}},
		{name: "a port forwarded twice", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].Ports = []virtualization.Port{{Port: 80, Protocol: "TCP"}, {Name: "web", Port: 80, Protocol: "TCP"}}
		}, wantPaths: []string{"spec.domain.devices.interfaces[0].ports[1]"}},
		{name: "bad MAC", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].MacAddress = "01:00:5e:00:00:01"
		}, wantPaths: []string{"spec.domain.devices.interfaces[0].macAddress"}},
		{name: "bad port", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].Ports = []virtualization.Port{{Port: 70000, Protocol: "TCP"}}
		}, wantPaths: []string{"spec.domain.devices.interfaces[0].ports[0].port"}},
		{name: "bad VM network CIDR", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Networks[0].Pod.VMNetworkCIDR = "198.19.255.0/31"
		}, wantPaths: []string{"spec.networks[0].pod.vmNetworkCIDR"}},
		{name: "negative grace period", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.TerminationGracePeriodSeconds = ptr.To(int64(-1))
		}, wantPaths: []string{"spec.terminationGracePeriodSeconds"}},
		{name: "bad hostname", mutate: func(v *virtualization.VirtualMachineInstance) { v.Spec.Hostname = "my_host" },
			wantPaths: []string{"spec.hostname"}},
		{name: "bad base64 user data", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes[1].CloudInitNoCloud = &virtualization.CloudInitNoCloudSource{UserDataBase64: "!!!"}
		}, wantPaths: []string{"spec.volumes[1].cloudInitNoCloud.userDataBase64"}},
		{name: "user data twice", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes[1].CloudInitNoCloud.UserDataBase64 = "I2Nsb3VkLWNvbmZpZwo="
		}, wantPaths: []string{"spec.volumes[1].cloudInitNoCloud"}},
		{name: "bad toleration", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Maybe"}}
		}, wantPaths: []string{"spec.tolerations[0].operator"}},
		{name: "probes by HTTP and TCP, a named port of an interface", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].Ports = []virtualization.Port{{Name: "web", Port: 8080, Protocol: "TCP"}}
			v.Spec.ReadinessProbe = &virtualization.Probe{Handler: virtualization.Handler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("web")}}, SuccessThreshold: 3}
			v.Spec.LivenessProbe = &virtualization.Probe{Handler: virtualization.Handler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(22)}}}
		}},
		{name: "bad probes", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.ReadinessProbe = &virtualization.Probe{Handler: virtualization.Handler{
				HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("nope"), Host: "198.18.0.9"}}, PeriodSeconds: -1}
			v.Spec.LivenessProbe = &virtualization.Probe{Handler: virtualization.Handler{
				TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(0)}}, SuccessThreshold: 2}
		}, wantPaths: []string{"spec.readinessProbe.httpGet.port", "spec.readinessProbe.httpGet.host", "spec.readinessProbe.periodSeconds",
			"spec.livenessProbe.tcpSocket.port", "spec.livenessProbe.successThreshold"}},
		{name: "probes through the guest agent", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.ReadinessProbe = &virtualization.Probe{Handler: virtualization.Handler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/ok"}}}}
			v.Spec.LivenessProbe = &virtualization.Probe{Handler: virtualization.Handler{GuestAgentPing: &virtualization.GuestAgentPing{}}}
		}},
		{name: "probes without a check, with two, an exec without a command", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.ReadinessProbe = &virtualization.Probe{}
			v.Spec.LivenessProbe = &virtualization.Probe{Handler: virtualization.Handler{
				Exec: &corev1.ExecAction{}, GuestAgentPing: &virtualization.GuestAgentPing{}}}
		}, wantPaths: []string{"spec.readinessProbe", "spec.livenessProbe.exec.command", "spec.livenessProbe"}},
		{name: "bad watchdog action", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Watchdog = &virtualization.Watchdog{Name: "w",
				WatchdogDevice: virtualization.WatchdogDevice{I6300ESB: &virtualization.I6300ESBWatchdog{Action: "explode"}}}
		}, wantPaths: []string{"spec.domain.devices.watchdog.i6300esb.action"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := validVMI()
			tc.mutate(vmi)
			errs := ValidateVirtualMachineInstance(vmi)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
				if e.Detail == "" && e.Type != "FieldValueDuplicate" && e.Type != "FieldValueNotFound" && e.Type != "FieldValueNotSupported" {
					t.Errorf("%s: error without an explanation: %v", e.Field, e)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.wantPaths, ",") {
				t.Errorf("error paths = %v, want %v; errors: %v", got, tc.wantPaths, errs.ToAggregate())
			}
		})
	}
}

func TestValidateVirtualMachineInstanceUpdate(t *testing.T) {
	old := validVMI()
	old.ResourceVersion = "1"

	labels := old.DeepCopy()
	labels.Labels = map[string]string{"team": "a"}
	if errs := ValidateVirtualMachineInstanceUpdate(labels, old); len(errs) != 0 {
		t.Errorf("changing labels was refused: %v", errs)
	}

	spec := old.DeepCopy()
	spec.Spec.Domain.CPU.Cores = 2
	errs := ValidateVirtualMachineInstanceUpdate(spec, old)
	if len(errs) != 1 || errs[0].Field != "spec" {
		t.Errorf("changing the spec: got %v, want one error on spec", errs)
	}
}

func TestValidateVirtualMachineInstanceStatusUpdate(t *testing.T) {
	// P is a VMI in phase p on node, its history the phases passed through
	// to get there (SetPhase records them).
	P := func(p virtualization.VirtualMachineInstancePhase, node string) *virtualization.VirtualMachineInstance {
		v := validVMI()
		v.ResourceVersion = "1"
		v.Status.SetPhase(p, "", metav1.Unix(100, 0))
		v.Status.NodeName = node
		return v
	}
	// next is old moved to phase p on node, recorded as SetPhase does.
	next := func(old *virtualization.VirtualMachineInstance, p virtualization.VirtualMachineInstancePhase, node string) *virtualization.VirtualMachineInstance {
		v := old.DeepCopy()
		v.Status.SetPhase(p, "", metav1.Unix(200, 0))
		v.Status.NodeName = node
		return v
	}
	unrecorded := func(old *virtualization.VirtualMachineInstance, p virtualization.VirtualMachineInstancePhase) *virtualization.VirtualMachineInstance {
		v := old.DeepCopy()
		v.Status.Phase = p
		return v
	}
	rewritten := func(old *virtualization.VirtualMachineInstance, p virtualization.VirtualMachineInstancePhase) *virtualization.VirtualMachineInstance {
		v := next(old, p, old.Status.NodeName)
		v.Status.PhaseTransitionTimestamps[0].PhaseTransitionTimestamp = metav1.Unix(50, 0)
		return v
	}
	recordedTwice := func(old *virtualization.VirtualMachineInstance, p virtualization.VirtualMachineInstancePhase) *virtualization.VirtualMachineInstance {
		v := next(old, p, old.Status.NodeName)
		v.Status.PhaseTransitionTimestamps = append(v.Status.PhaseTransitionTimestamps, v.Status.PhaseTransitionTimestamps[1])
		return v
	}
	running, scheduling := P(virtualization.Running, "node-1"), P(virtualization.Scheduling, "")
	tests := []struct {
		name      string
		old, new  *virtualization.VirtualMachineInstance
		wantPaths []string
	}{
		{"pending to scheduling", P(virtualization.Pending, ""), next(P(virtualization.Pending, ""), virtualization.Scheduling, ""), nil},
		{"scheduling to scheduled with node", P(virtualization.Scheduling, ""), next(P(virtualization.Scheduling, ""), virtualization.Scheduled, "node-1"), nil},
		{"scheduled without node", P(virtualization.Scheduling, ""), next(P(virtualization.Scheduling, ""), virtualization.Scheduled, ""), []string{"status.nodeName"}},
		{"running to succeeded", P(virtualization.Running, "node-1"), next(P(virtualization.Running, "node-1"), virtualization.Succeeded, "node-1"), nil},
		{"succeeded to running", P(virtualization.Succeeded, "node-1"), next(P(virtualization.Succeeded, "node-1"), virtualization.Running, "node-1"), []string{"status.phase"}},
		{"failed to pending", P(virtualization.Failed, ""), next(P(virtualization.Failed, ""), virtualization.Pending, ""), []string{"status.phase"}},
		{"running back to scheduling", P(virtualization.Running, "node-1"), next(P(virtualization.Running, "node-1"), virtualization.Scheduling, "node-1"), []string{"status.phase"}},
		{"unknown phase", P(virtualization.Running, "node-1"), next(P(virtualization.Running, "node-1"), "Exploded", "node-1"), []string{"status.phase"}},
		{"node changes", running, next(running, virtualization.Running, "node-2"), []string{"status.nodeName"}},
		{"phase change not recorded", scheduling, unrecorded(scheduling, virtualization.Failed), []string{"status.phaseTransitionTimestamps[1]"}},
		{"phase change recorded twice", scheduling, recordedTwice(scheduling, virtualization.Failed), []string{"status.phaseTransitionTimestamps[1]"}},
		{"history rewritten", scheduling, rewritten(scheduling, virtualization.Failed), []string{"status.phaseTransitionTimestamps[0]"}},
		{"history dropped", running, func() *virtualization.VirtualMachineInstance {
			v := running.DeepCopy()
			v.Status.PhaseTransitionTimestamps = nil
			return v
		}(), []string{"status.phaseTransitionTimestamps[0]"}},
		{"transition without a change of phase", running, func() *virtualization.VirtualMachineInstance {
			v := running.DeepCopy()
			v.Status.PhaseTransitionTimestamps = append(v.Status.PhaseTransitionTimestamps, v.Status.PhaseTransitionTimestamps[0])
			return v
		}(), []string{"status.phaseTransitionTimestamps[1]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateVirtualMachineInstanceStatusUpdate(tc.new, tc.old)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.wantPaths, ",") {
				t.Errorf("error paths = %v, want %v; errors: %v", got, tc.wantPaths, errs.ToAggregate())
			}
		})
	}
}

func TestVirtualMachineInstanceWarnings(t *testing.T) {
	vmi := validVMI()
	if w := VirtualMachineInstanceWarnings(&vmi.Spec, ""); len(w) != 0 {
		t.Errorf("a sound VMI got warnings: %v", w)
	}
	vmi.Spec.TerminationGracePeriodSeconds = ptr.To(int64(0))
	vmi.Spec.Domain.Memory.Guest = ptr.To(resource.MustParse("32Mi"))
	if w := VirtualMachineInstanceWarnings(&vmi.Spec, ""); len(w) != 2 {
		t.Errorf("want 2 warnings (grace 0, little memory), got %v", w)
	}

	vmi = validVMI()
	vmi.Spec.Domain.Devices.Disks[1].Disk = nil
	vmi.Spec.Domain.Devices.Disks[1].CDRom = &virtualization.CDRomTarget{Bus: "sata", ReadOnly: ptr.To(false)}
	vmi.Spec.Volumes[0].VolumeSource = virtualization.VolumeSource{PersistentVolumeClaim: &virtualization.PersistentVolumeClaimVolumeSource{
		ClaimName: "windows_pvc"}}
	w := VirtualMachineInstanceWarnings(&vmi.Spec, "")
	if len(w) != 2 || !strings.Contains(w[0], "disks[1].cdrom.readonly: a CD-ROM's medium is read-only") ||
		!strings.Contains(w[1], `volumes[0].persistentVolumeClaim.claimName: no PersistentVolumeClaim can be named "windows_pvc"`) {
		t.Errorf("want warnings for the writable CD-ROM and the claim name, got %q", w)
	}
}
