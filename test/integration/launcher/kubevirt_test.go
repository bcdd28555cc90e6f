package launcher_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// TestKubeVirtHardwareStartsPausedAndBoots boots, under software emulation,
// a guest with the KubeVirt hardware a Windows or desktop template asks for
// (features with Hyper-V enlightenments, a clock in a time zone with its
// timers, host-passthrough with a CPU feature, SMBIOS chassis, inputs, sound,
// a bochs card, panic device, balloon, disk options and I/O threads), started
// paused by startStrategy Paused: libvirt and QEMU accept the conversion,
// the guest waits paused, and runs to its marker once unpaused.
func TestKubeVirtHardwareStartsPausedAndBoots(t *testing.T) {
	vmi := guestVMI("kubevirt-hw", 30)
	s := &vmi.Spec
	s.StartStrategy = ptr.To(virtv1.StartStrategyPaused)
	on := func() *virtv1.FeatureState { return &virtv1.FeatureState{Enabled: ptr.To(true)} }
	s.Domain.CPU = &virtv1.CPU{Sockets: 1, Cores: 2, Threads: 1, Model: virtv1.CPUModelHostPassthrough,
		Features: []virtv1.CPUFeature{{Name: "pcid", Policy: "optional"}}}
	s.Domain.Features = &virtv1.Features{
		ACPI: *on(), APIC: &virtv1.FeatureAPIC{Enabled: ptr.To(true), EndOfInterrupt: true}, SMM: on(),
		KVM: &virtv1.FeatureKVM{Hidden: true}, Pvspinlock: on(),
		Hyperv: &virtv1.FeatureHyperv{Relaxed: on(), VAPIC: on(), VPIndex: on(), SyNIC: on(), IPI: on(),
			Spinlocks: &virtv1.FeatureSpinlocks{Enabled: ptr.To(true), Retries: ptr.To(uint32(8191))}},
	}
	s.Domain.Clock = &virtv1.Clock{
		ClockOffset: virtv1.ClockOffset{Timezone: ptr.To(virtv1.ClockOffsetTimezone("Europe/Berlin"))},
		Timer: &virtv1.Timer{HPET: &virtv1.HPETTimer{Enabled: ptr.To(false)}, PIT: &virtv1.PITTimer{TickPolicy: "delay", Enabled: ptr.To(true)},
			RTC: &virtv1.RTCTimer{TickPolicy: "catchup", Enabled: ptr.To(true)}, Hyperv: &virtv1.HypervTimer{Enabled: ptr.To(true)}},
	}
	s.Domain.Chassis = &virtv1.Chassis{Manufacturer: "ACME", Serial: "CH-1"}
	s.Domain.IOThreadsPolicy = ptr.To(virtv1.IOThreadsPolicyShared)
	dev := &s.Domain.Devices
	dev.Inputs = []virtv1.Input{{Name: "tablet", Bus: virtv1.InputBusUSB, Type: virtv1.InputTypeTablet}}
	dev.Sound = &virtv1.SoundDevice{Name: "audio", Model: virtv1.SoundModelICH9}
	dev.Video = &virtv1.VideoDevice{Type: "bochs"}
	dev.PanicDevices = []virtv1.PanicDevice{{Model: ptr.To(virtv1.PanicDevicePvpanic)}}
	dev.AutoattachMemBalloon = ptr.To(true)
	dev.BlockMultiQueue = ptr.To(true)
	// The scratch disk lives on the test's temporary file system, which
	// may lack O_DIRECT: a host cache mode that needs none.
	dev.Disks[0].Cache = virtv1.CacheWriteThrough
	dev.Disks[0].ErrorPolicy = ptr.To(virtv1.DiskErrorReport)
	dev.Disks[0].DedicatedIOThread = ptr.To(true)
	dev.Disks[0].BlockSize = &virtv1.BlockSize{Custom: &virtv1.CustomBlockSize{Logical: 512, Physical: 4096}}

	l := startLauncher(t, vmi)
	ctx, cancel := context.WithTimeout(t.Context(), bootTimeout)
	defer cancel()
	d, err := l.sync(ctx)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if d.State != apiv1.DomainState_DOMAIN_STATE_PAUSED {
		t.Fatalf("after Sync the domain is %v (%s), want PAUSED", d.State, d.Reason)
	}
	// Paused from its first instruction: a second Sync leaves it so, and
	// the kernel has printed nothing on the serial console.
	if d, err := l.sync(ctx); err != nil || d.State != apiv1.DomainState_DOMAIN_STATE_PAUSED {
		t.Fatalf("second Sync: %v, %v; want the domain still PAUSED", d.GetState(), err)
	}
	if out := l.serial(); strings.Contains(out, "Linux version") {
		t.Fatalf("the guest ran while paused: %q", out)
	}
	if _, err := l.client.Unpause(ctx, &apiv1.UnpauseRequest{}); err != nil {
		t.Fatalf("Unpause: %v", err)
	}
	l.waitSerial("VIRT-GUEST-READY "+vmi.Name, bootTimeout)
	if _, err := l.client.Kill(ctx, &apiv1.KillRequest{}); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if code := l.waitExit(exitTimeout); code != apiv1.ExitDestroyed {
		t.Errorf("exit status %d, want %d (destroyed)", code, apiv1.ExitDestroyed)
	}
}
