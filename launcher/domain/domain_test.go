package domain

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"libvirt.org/go/libvirtxml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

var update = flag.Bool("update", false, "rewrite testdata/*.xml from the converter's output")

// newVMI is the smallest VMI a user may post, defaulted as the API server
// stores it.
func newVMI(mutate func(*virtv1.VirtualMachineInstance)) *virtv1.VirtualMachineInstance {
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "testvm", UID: "6a1f3c52-8a8e-4a54-9d8b-0c1d2e3f4a5b"},
		Spec: virtv1.VirtualMachineInstanceSpec{
			Domain: virtv1.DomainSpec{
				Resources: virtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}},
			},
		},
	}
	if mutate != nil {
		mutate(vmi)
	}
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	return vmi
}

func testHost() Host {
	return Host{
		Type: TypeQEMU,
		Disks: map[string]Disk{
			"containerdisk": {Path: "/var/run/virt-disks/containerdisk/disk.img", Format: FormatQCOW2},
			"emptydisk":     {Path: "/var/run/virt-disks/emptydisk/disk.img", Format: FormatRaw},
			"cloudinit":     {Path: "/var/run/virt-disks/cloudinit/nocloud.iso", Format: FormatRaw},
			"pvc":           {Path: "/var/run/virt-pvcs/pvc/disk.img", Format: FormatRaw},
			"iso":           {Path: "/var/run/virt-disks/iso/disk.img", Format: FormatRaw},
			"blockpvc":      {Path: "/dev/virt-pvcs/blockpvc", Format: FormatRaw, Block: true},
		},
		Kernel:       "/var/run/virt-kernel-boot/kernel",
		Initrd:       "/var/run/virt-kernel-boot/initrd",
		SerialSocket: "/var/run/virt/serial0.sock",
		SerialLog:    "/var/run/virt/serial0.log",
		VNCSocket:    "/var/run/virt/vnc.sock",
		EFI:          DebianOVMF,
		Interfaces: map[string]Interface{
			virtv1.DefaultPodNetworkName: {Tap: "tap0", MAC: "52:54:00:5e:1a:07", MTU: 1500},
			"pod":                        {Tap: "tap0", MTU: 1450},
		},
	}
}

func volume(name string, src virtv1.VolumeSource) virtv1.Volume {
	return virtv1.Volume{Name: name, VolumeSource: src}
}

func TestConvertGolden(t *testing.T) {
	cases := []struct {
		name   string
		host   func(*Host)
		mutate func(*virtv1.VirtualMachineInstance)
	}{
		{name: "minimal"},
		{name: "kvm", host: func(h *Host) { h.Type = TypeKVM }},
		{name: "test-driver", host: func(h *Host) { h.Type = TypeTest }},
		{name: "cpu-topology", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.CPU = &virtv1.CPU{Sockets: 2, Cores: 2, Threads: 1, Model: "Haswell-noTSX"}
		}},
		{name: "cpu-host-model", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.CPU = &virtv1.CPU{Model: "host-model"}
		}},
		{name: "memory-guest", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Memory = &virtv1.Memory{Guest: ptr.To(resource.MustParse("1Gi"))}
		}},
		{name: "machine-pc", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Machine = &virtv1.Machine{Type: "pc-i440fx-7.2"}
		}},
		{name: "bios-serial", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Firmware = &virtv1.Firmware{
				UUID: "11111111-2222-3333-4444-555555555555", Serial: "SN-42",
				Bootloader: &virtv1.Bootloader{BIOS: &virtv1.BIOS{UseSerial: ptr.To(true)}},
			}
		}},
		{name: "efi", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Firmware = &virtv1.Firmware{Bootloader: &virtv1.Bootloader{EFI: &virtv1.EFI{}}}
		}},
		{name: "efi-secureboot", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Firmware = &virtv1.Firmware{Bootloader: &virtv1.Bootloader{EFI: &virtv1.EFI{SecureBoot: ptr.To(true)}}}
		}},
		{name: "kernel-boot", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Firmware = &virtv1.Firmware{KernelBoot: &virtv1.KernelBoot{
				KernelArgs: "console=ttyS0 panic=-1 no_timer_check virt.hostname=testvm",
				Container:  &virtv1.KernelBootContainer{Image: "guest:latest", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd.gz"},
			}}
		}},
		{name: "disks", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks = []virtv1.Disk{
				{Name: "containerdisk", BootOrder: ptr.To[uint32](1)},
				{Name: "emptydisk", DiskDevice: virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusSATA}}, Serial: "EMPTY1"},
				{Name: "cloudinit", DiskDevice: virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusVirtio, ReadOnly: true}}},
				{Name: "pvc", DiskDevice: virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusSCSI}}},
				{Name: "iso", DiskDevice: virtv1.DiskDevice{CDRom: &virtv1.CDRomTarget{}}, BootOrder: ptr.To[uint32](2)},
			}
			v.Spec.Volumes = []virtv1.Volume{
				volume("containerdisk", virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "disk:latest"}}),
				volume("emptydisk", virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("1Gi")}}),
				volume("cloudinit", virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}),
				volume("pvc", virtv1.VolumeSource{PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{}}),
				volume("iso", virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "iso:latest"}}),
			}
		}},
		{name: "block-disk", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks = []virtv1.Disk{{Name: "blockpvc"}}
			v.Spec.Volumes = []virtv1.Volume{
				volume("blockpvc", virtv1.VolumeSource{PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{ClaimName: "block"}}),
			}
		}},
		{name: "interfaces", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Networks = []virtv1.Network{{Name: "pod", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{VMNetworkCIDR: "198.18.128.0/24"}}}}
			v.Spec.Domain.Devices.Interfaces = []virtv1.Interface{{
				Name: "pod", Model: "e1000e", MacAddress: "de:ad:00:00:be:af", BootOrder: ptr.To[uint32](3),
				InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}},
			}}
		}},
		{name: "bridge", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Networks = []virtv1.Network{{Name: "pod", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}}
			v.Spec.Domain.Devices.Interfaces = []virtv1.Interface{{Name: "pod", MacAddress: "02:00:00:00:00:01",
				InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}}}
		}},
		{name: "no-serial-no-network", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.AutoattachSerialConsole = ptr.To(false)
			v.Spec.Domain.Devices.AutoattachPodInterface = ptr.To(false)
		}},
		{name: "no-graphics", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.AutoattachGraphicsDevice = ptr.To(false)
		}},
		{name: "rng-watchdog", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Rng = &virtv1.Rng{}
			v.Spec.Domain.Devices.Watchdog = &virtv1.Watchdog{Name: "wd", WatchdogDevice: virtv1.WatchdogDevice{
				I6300ESB: &virtv1.I6300ESBWatchdog{Action: virtv1.WatchdogActionPoweroff}}}
		}},
		{name: "features-tcg", mutate: kubevirtFeatures},
		{name: "features-kvm", host: func(h *Host) { h.Type = TypeKVM }, mutate: kubevirtFeatures},
		{name: "hyperv-passthrough-kvm", host: func(h *Host) { h.Type = TypeKVM }, mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Features = &virtv1.Features{HypervPassthrough: &virtv1.HyperVPassthrough{Enabled: ptr.To(true)}}
		}},
		{name: "features-off", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Features = &virtv1.Features{
				ACPI: virtv1.FeatureState{Enabled: ptr.To(false)}, APIC: &virtv1.FeatureAPIC{Enabled: ptr.To(false)},
				SMM: &virtv1.FeatureState{Enabled: ptr.To(false)}, Pvspinlock: &virtv1.FeatureState{Enabled: ptr.To(false)},
			}
		}},
		{name: "clock-timezone", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Clock = &virtv1.Clock{
				ClockOffset: virtv1.ClockOffset{Timezone: ptr.To(virtv1.ClockOffsetTimezone("Europe/Berlin"))},
				Timer: &virtv1.Timer{
					HPET: &virtv1.HPETTimer{Enabled: ptr.To(false)}, PIT: &virtv1.PITTimer{TickPolicy: "delay"},
					RTC: &virtv1.RTCTimer{TickPolicy: "catchup", Track: "guest"}, KVM: &virtv1.KVMTimer{}, Hyperv: &virtv1.HypervTimer{},
				},
			}
		}},
		{name: "clock-utc-offset", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Clock = &virtv1.Clock{ClockOffset: virtv1.ClockOffset{UTC: &virtv1.ClockOffsetUTC{OffsetSeconds: ptr.To(int32(-3600))}}}
		}},
		{name: "cpu-host-passthrough-tcg", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.CPU = &virtv1.CPU{Model: "host-passthrough", Features: []virtv1.CPUFeature{{Name: "pcid", Policy: "disable"}}}
		}},
		{name: "cpu-host-passthrough-kvm", host: func(h *Host) { h.Type = TypeKVM }, mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.CPU = &virtv1.CPU{Model: "host-passthrough"}
		}},
		{name: "cpu-features", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.CPU = &virtv1.CPU{Features: []virtv1.CPUFeature{{Name: "x2apic"}, {Name: "pcid", Policy: "optional"}}}
		}},
		{name: "chassis", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Firmware = &virtv1.Firmware{Serial: "SN-42"}
			v.Spec.Domain.Chassis = &virtv1.Chassis{Manufacturer: "ACME", Version: "1.0", Serial: "CH-1", Asset: "A-7", Sku: "SKU-9"}
		}},
		{name: "peripherals", mutate: func(v *virtv1.VirtualMachineInstance) {
			dev := &v.Spec.Domain.Devices
			dev.Inputs = []virtv1.Input{{Name: "tablet", Bus: "usb", Type: "tablet"}, {Name: "keyboard", Bus: "virtio", Type: "keyboard"}}
			dev.Sound = &virtv1.SoundDevice{Name: "audio", Model: "ac97"}
			dev.PanicDevices = []virtv1.PanicDevice{{}, {Model: ptr.To(virtv1.PanicDevicePvpanic)}}
			dev.AutoattachMemBalloon = ptr.To(true)
			dev.Video = &virtv1.VideoDevice{Type: "virtio"}
			dev.LogSerialConsole = ptr.To(false)
		}},
		{name: "virtio-transitional", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.UseVirtioTransitional = ptr.To(true)
			v.Spec.Domain.Devices.Rng = &virtv1.Rng{}
			v.Spec.Domain.Devices.Disks = []virtv1.Disk{{Name: "containerdisk"}}
			v.Spec.Volumes = []virtv1.Volume{volume("containerdisk", virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "disk:latest"}})}
		}},
		{name: "disk-options", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.CPU = &virtv1.CPU{Cores: 2}
			v.Spec.Domain.IOThreadsPolicy = ptr.To(virtv1.IOThreadsPolicyAuto)
			v.Spec.Domain.Devices.BlockMultiQueue = ptr.To(true)
			v.Spec.Domain.Devices.Disks = []virtv1.Disk{
				{Name: "containerdisk", Cache: "writethrough", IO: "threads", ErrorPolicy: ptr.To(virtv1.DiskErrorReport)},
				{Name: "emptydisk", IO: "native", DedicatedIOThread: ptr.To(true),
					BlockSize: &virtv1.BlockSize{Custom: &virtv1.CustomBlockSize{Logical: 512, Physical: 4096, DiscardGranularity: ptr.To(uint32(4096))}}},
				{Name: "pvc", Shareable: ptr.To(true)},
				{Name: "cloudinit"},
				{Name: "iso", DiskDevice: virtv1.DiskDevice{CDRom: &virtv1.CDRomTarget{Tray: virtv1.TrayStateOpen}}},
			}
			v.Spec.Volumes = []virtv1.Volume{
				volume("containerdisk", virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "disk:latest"}}),
				volume("emptydisk", virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("1Gi")}}),
				volume("pvc", virtv1.VolumeSource{PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{ClaimName: "shared"}}),
				volume("cloudinit", virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}),
				volume("iso", virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "iso:latest"}}),
			}
		}},
		{name: "iothreads-shared", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.IOThreadsPolicy = ptr.To(virtv1.IOThreadsPolicyShared)
			v.Spec.Domain.Devices.Disks = []virtv1.Disk{{Name: "containerdisk", DedicatedIOThread: ptr.To(true)}, {Name: "emptydisk"}, {Name: "pvc"}}
			v.Spec.Volumes = []virtv1.Volume{
				volume("containerdisk", virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "disk:latest"}}),
				volume("emptydisk", virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("1Gi")}}),
				volume("pvc", virtv1.VolumeSource{PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}),
			}
		}},
		{name: "tpm", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.TPM = &virtv1.TPMDevice{}
		}},
		{name: "interface-options", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Networks = []virtv1.Network{{Name: "pod", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}}
			v.Spec.Domain.Devices.Interfaces = []virtv1.Interface{{
				Name: "pod", MacAddress: "02:00:00:00:00:02", ACPIIndex: 3, State: virtv1.InterfaceStateLinkDown,
				InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}},
			}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			host := testHost()
			if tc.host != nil {
				tc.host(&host)
			}
			d, err := Convert(newVMI(tc.mutate), host)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			got, err := d.Marshal()
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			got += "\n"
			golden := filepath.Join("testdata", tc.name+".xml")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden file (run with -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("domain differs from %s (-want +got; run with -update if intended):\n%s", golden, diff)
			}
			// The golden XML must read back into the same domain.
			var back libvirtxml.Domain
			if err := back.Unmarshal(string(want)); err != nil {
				t.Fatalf("golden file does not parse: %v", err)
			}
		})
	}
}

// kubevirtFeatures lists every platform feature, as a Windows template does.
func kubevirtFeatures(v *virtv1.VirtualMachineInstance) {
	on := func() *virtv1.FeatureState { return &virtv1.FeatureState{} }
	v.Spec.Domain.Features = &virtv1.Features{
		APIC: &virtv1.FeatureAPIC{EndOfInterrupt: true}, SMM: on(), Pvspinlock: on(), KVM: &virtv1.FeatureKVM{Hidden: true},
		Hyperv: &virtv1.FeatureHyperv{
			Relaxed: on(), VAPIC: on(), Spinlocks: &virtv1.FeatureSpinlocks{Retries: ptr.To(uint32(8191))}, VPIndex: on(), Runtime: on(),
			SyNIC: on(), SyNICTimer: &virtv1.SyNICTimer{Direct: on()}, HypervReset: on(), VendorID: &virtv1.FeatureVendorID{VendorID: "KubeVirt"},
			Frequencies: on(), Reenlightenment: on(), TLBFlush: &virtv1.TLBFlush{Direct: on(), Extended: on()}, IPI: on(), EVMCS: &virtv1.FeatureState{Enabled: ptr.To(false)},
		},
	}
}

func TestConvertErrors(t *testing.T) {
	cases := []struct {
		name    string
		host    func(*Host)
		mutate  func(*virtv1.VirtualMachineInstance)
		wantErr string
	}{
		{name: "no memory", mutate: func(v *virtv1.VirtualMachineInstance) { v.Spec.Domain.Resources.Requests = nil },
			wantErr: "memory.guest is not set"},
		{name: "no tap prepared", host: func(h *Host) { h.Interfaces = nil }, wantErr: `interface "default": no tap prepared`},
		{name: "no MAC", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Networks = []virtv1.Network{{Name: "pod", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}}
			v.Spec.Domain.Devices.Interfaces = []virtv1.Interface{{Name: "pod",
				InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}}}
		}, wantErr: `interface "pod": no MAC address`},
		{name: "disk without file", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks = []virtv1.Disk{{Name: "other"}}
			v.Spec.Volumes = []virtv1.Volume{volume("other", virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{}})}
		}, wantErr: "no file prepared"},
		{name: "kernel boot without kernel", host: func(h *Host) { h.Kernel = "" }, mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Firmware = &virtv1.Firmware{KernelBoot: &virtv1.KernelBoot{}}
		}, wantErr: "no kernel file"},
		{name: "secure boot on pc", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Machine = &virtv1.Machine{Type: "pc"}
			v.Spec.Domain.Firmware = &virtv1.Firmware{Bootloader: &virtv1.Bootloader{EFI: &virtv1.EFI{SecureBoot: ptr.To(true)}}}
		}, wantErr: "needs a q35 machine"},
		{name: "graphics without socket", host: func(h *Host) { h.VNCSocket = "" }, wantErr: "no VNC socket path"},
		{name: "unknown type", host: func(h *Host) { h.Type = "xen" }, wantErr: "unknown domain type"},
		{name: "native I/O with a host cache", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Disks = []virtv1.Disk{{Name: "pvc", IO: "native", Cache: "writeback"}}
			v.Spec.Volumes = []virtv1.Volume{volume("pvc", virtv1.VolumeSource{PersistentVolumeClaim: &virtv1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}})}
		}, wantErr: "io native needs cache none"},
		{name: "unknown input", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Inputs = []virtv1.Input{{Name: "m", Type: "mouse", Bus: "usb"}}
		}, wantErr: `input "m": unknown type "mouse"`},
		{name: "unknown video", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Video = &virtv1.VideoDevice{Type: "qxl"}
		}, wantErr: `video: unknown type "qxl"`},
		{name: "interface absent", mutate: func(v *virtv1.VirtualMachineInstance) {
			v.Spec.Networks = []virtv1.Network{{Name: "pod", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}}
			v.Spec.Domain.Devices.Interfaces = []virtv1.Interface{{Name: "pod", State: virtv1.InterfaceStateAbsent, MacAddress: "02:00:00:00:00:03",
				InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}}}}
		}, wantErr: `state "absent" is not supported`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			host := testHost()
			if tc.host != nil {
				tc.host(&host)
			}
			_, err := Convert(newVMI(tc.mutate), host)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Convert error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// Convert takes a defaulted VMI and does not default it again: what the
// defaulters would have set is an error, not a second copy of the defaults.
func TestConvertUndefaulted(t *testing.T) {
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "testvm", UID: "6a1f3c52-8a8e-4a54-9d8b-0c1d2e3f4a5b"},
		Spec: virtv1.VirtualMachineInstanceSpec{Domain: virtv1.DomainSpec{
			Memory: &virtv1.Memory{Guest: ptr.To(resource.MustParse("128Mi"))},
		}},
	}
	if _, err := Convert(vmi, testHost()); err == nil || !strings.Contains(err.Error(), "spec.domain.cpu") {
		t.Errorf("Convert of an undefaulted VMI: error %v, want one about spec.domain.cpu", err)
	}
}

func TestName(t *testing.T) {
	a := Name("ns", "vm", "6a1f3c52-8a8e-4a54-9d8b-0c1d2e3f4a5b")
	if a != "ns_vm_6a1f3c52" {
		t.Errorf("Name = %q", a)
	}
	if b := Name("ns", "vm", "7b1f3c52-8a8e-4a54-9d8b-0c1d2e3f4a5b"); b == a {
		t.Errorf("two VMIs of the same name but different UIDs share the domain name %q", a)
	}
}

func TestDriveLetters(t *testing.T) {
	for i, want := range map[int]string{0: "a", 25: "z", 26: "aa", 27: "ab", 51: "az", 52: "ba", 701: "zz", 702: "aaa"} {
		if got := driveLetters(i); got != want {
			t.Errorf("driveLetters(%d) = %q, want %q", i, got, want)
		}
	}
}

// A TPM turned off is no TPM; the API refuses a persistent one, so the
// converter never sees it.
func TestTPMDisabledIsNoTPM(t *testing.T) {
	d, err := Convert(newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.TPM = &virtv1.TPMDevice{Enabled: ptr.To(false)}
	}), testHost())
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if len(d.Devices.TPMs) != 0 {
		t.Errorf("TPMs = %+v, want none", d.Devices.TPMs)
	}
}

// A CD-ROM with readonly: false, which KubeVirt's users write, is the same
// read-only CD-ROM: libvirt gives a CD-ROM's medium no write access anyway.
func TestWritableCDROMIsReadOnly(t *testing.T) {
	d, err := Convert(newVMI(func(v *virtv1.VirtualMachineInstance) {
		v.Spec.Domain.Devices.Disks = []virtv1.Disk{{Name: "iso_1", DiskDevice: virtv1.DiskDevice{
			CDRom: &virtv1.CDRomTarget{Bus: virtv1.DiskBusSATA, ReadOnly: ptr.To(false)}}}}
		v.Spec.Volumes = []virtv1.Volume{volume("iso_1", virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "i"}})}
	}), func() Host {
		h := testHost()
		h.Disks["iso_1"] = Disk{Path: "/var/run/virt-disks/iso_1/disk.img", Format: FormatRaw}
		return h
	}())
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if len(d.Devices.Disks) != 1 {
		t.Fatalf("disks = %+v, want the CD-ROM", d.Devices.Disks)
	}
	cd := d.Devices.Disks[0]
	if cd.Device != "cdrom" || cd.ReadOnly == nil || cd.Target.Bus != "sata" || cd.Alias.Name != "ua-iso_1" {
		t.Errorf("CD-ROM = device %q, read-only %v, bus %q, alias %q; want a read-only SATA cdrom ua-iso_1",
			cd.Device, cd.ReadOnly != nil, cd.Target.Bus, cd.Alias.Name)
	}
}
