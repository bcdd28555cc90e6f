package domain

import (
	"fmt"
	"strconv"

	"libvirt.org/go/libvirtxml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// setFeatures converts spec.domain.features. ACPI and APIC are on unless
// the spec turns them off: the graceful shutdown presses the ACPI power
// button.
//
// The Hyper-V enlightenments and paravirtual spinlocks are KVM's: under
// software emulation (QEMU TCG, measured with QEMU 7.2 and libvirt 9.0)
// QEMU refuses vpindex (and with it synic, stimer, tlbflush and ipi, which
// need it) and libvirt refuses pvspinlock on. A guest does not need them
// to run, only to run faster on KVM, so they are left out there: the guest
// runs as it would on a host without them.
func setFeatures(d *libvirtxml.Domain, f *virtv1.Features, host Host) {
	d.Features = &libvirtxml.DomainFeatureList{ACPI: &libvirtxml.DomainFeature{}, APIC: &libvirtxml.DomainFeatureAPIC{}}
	if f == nil {
		return
	}
	if !enabled(f.ACPI.Enabled) {
		d.Features.ACPI = nil
	}
	if a := f.APIC; a != nil {
		switch {
		case !enabled(a.Enabled):
			d.Features.APIC = nil
		case a.EndOfInterrupt:
			d.Features.APIC.EOI = "on"
		}
	}
	if s := f.SMM; s != nil {
		d.Features.SMM = &libvirtxml.DomainFeatureSMM{State: onOff(enabled(s.Enabled))}
	}
	if k := f.KVM; k != nil && k.Hidden {
		d.Features.KVM = &libvirtxml.DomainFeatureKVM{Hidden: &libvirtxml.DomainFeatureState{State: "on"}}
	}
	kvm := host.Type == TypeKVM
	if p := f.Pvspinlock; p != nil && (kvm || !enabled(p.Enabled)) {
		d.Features.PVSpinlock = &libvirtxml.DomainFeatureState{State: onOff(enabled(p.Enabled))}
	}
	if h := f.Hyperv; h != nil && kvm {
		d.Features.HyperV = hyperv(h)
	}
	// Passthrough needs KVM (a node capability: such a VMI's pod lands only
	// where it is reported); it replaces the list.
	if p := f.HypervPassthrough; p != nil && enabled(p.Enabled) && kvm {
		d.Features.HyperV = &libvirtxml.DomainFeatureHyperV{Mode: "passthrough"}
	}
}

// hyperv converts the Hyper-V enlightenments; an unlisted one is left to
// the hypervisor (off).
func hyperv(h *virtv1.FeatureHyperv) *libvirtxml.DomainFeatureHyperV {
	state := func(s *virtv1.FeatureState) *libvirtxml.DomainFeatureState {
		if s == nil {
			return nil
		}
		return &libvirtxml.DomainFeatureState{State: onOff(enabled(s.Enabled))}
	}
	x := &libvirtxml.DomainFeatureHyperV{
		Mode:            "custom",
		Relaxed:         state(h.Relaxed),
		VAPIC:           state(h.VAPIC),
		VPIndex:         state(h.VPIndex),
		Runtime:         state(h.Runtime),
		Synic:           state(h.SyNIC),
		Reset:           state(h.HypervReset),
		Frequencies:     state(h.Frequencies),
		ReEnlightenment: state(h.Reenlightenment),
		IPI:             state(h.IPI),
		EVMCS:           state(h.EVMCS),
	}
	if s := h.Spinlocks; s != nil {
		x.Spinlocks = &libvirtxml.DomainFeatureHyperVSpinlocks{DomainFeatureState: libvirtxml.DomainFeatureState{State: onOff(enabled(s.Enabled))}}
		if enabled(s.Enabled) && s.Retries != nil {
			x.Spinlocks.Retries = uint(*s.Retries)
		}
	}
	if t := h.SyNICTimer; t != nil {
		x.STimer = &libvirtxml.DomainFeatureHyperVSTimer{
			DomainFeatureState: libvirtxml.DomainFeatureState{State: onOff(enabled(t.Enabled))},
			Direct:             state(t.Direct),
		}
	}
	if v := h.VendorID; v != nil {
		x.VendorId = &libvirtxml.DomainFeatureHyperVVendorId{DomainFeatureState: libvirtxml.DomainFeatureState{State: onOff(enabled(v.Enabled))}}
		if enabled(v.Enabled) {
			x.VendorId.Value = v.VendorID
		}
	}
	if t := h.TLBFlush; t != nil {
		x.TLBFlush = &libvirtxml.DomainFeatureHyperVTLBFlush{
			DomainFeatureState: libvirtxml.DomainFeatureState{State: onOff(enabled(t.Enabled))},
			Direct:             state(t.Direct),
			Extended:           state(t.Extended),
		}
	}
	return x
}

// setClock converts spec.domain.clock: UTC unless a time zone is given; an
// offset makes the clock "variable", so the guest's own changes survive its
// reboots as KubeVirt documents.
func setClock(d *libvirtxml.Domain, c *virtv1.Clock) error {
	d.Clock = &libvirtxml.DomainClock{Offset: "utc"}
	if c == nil {
		return nil
	}
	switch {
	case c.UTC != nil && c.Timezone != nil:
		return fmt.Errorf("spec.domain.clock: utc and timezone are exclusive")
	case c.Timezone != nil:
		d.Clock = &libvirtxml.DomainClock{Offset: "timezone", TimeZone: string(*c.Timezone)}
	case c.UTC != nil && c.UTC.OffsetSeconds != nil:
		d.Clock = &libvirtxml.DomainClock{Offset: "variable", Basis: "utc", Adjustment: strconv.Itoa(int(*c.UTC.OffsetSeconds))}
	}
	t := c.Timer
	if t == nil {
		return nil
	}
	add := func(name string, present *bool, tick, track string) {
		d.Clock.Timer = append(d.Clock.Timer, libvirtxml.DomainTimer{Name: name, Present: yesNo(enabled(present)), TickPolicy: tick, Track: track})
	}
	// libvirt's order of timers is the order QEMU gets them; keep one.
	if t.RTC != nil {
		add("rtc", t.RTC.Enabled, string(t.RTC.TickPolicy), string(t.RTC.Track))
	}
	if t.PIT != nil {
		add("pit", t.PIT.Enabled, string(t.PIT.TickPolicy), "")
	}
	if t.HPET != nil {
		add("hpet", t.HPET.Enabled, string(t.HPET.TickPolicy), "")
	}
	if t.KVM != nil {
		add("kvmclock", t.KVM.Enabled, "", "")
	}
	if t.Hyperv != nil {
		add("hypervclock", t.Hyperv.Enabled, "", "")
	}
	return nil
}

// enabled reads a defaulted enabled flag: nil means on, as the API's
// defaults make it.
func enabled(b *bool) bool { return b == nil || *b }

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
