package validation

import (
	"fmt"
	"slices"
	"time"
	// The tz database, built in: virt-apiserver's image has no
	// /usr/share/zoneinfo, and clock.timezone is checked against it.
	_ "time/tzdata"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// Validation of the KubeVirt hardware fields the launcher converts: CPU
// features, platform features, clock, chassis, inputs, sound, video, panic
// devices, disk and NIC options. Values follow KubeVirt's and libvirt's.

// ArchitectureAMD64 is the only guest architecture: the nodes'.
const ArchitectureAMD64 = "amd64"

// MaxACPIIndex is the largest ACPI index of a NIC (KubeVirt's and QEMU's
// bound, 16*1024-1).
const MaxACPIIndex = 16*1024 - 1

var (
	cpuFeaturePolicies = []string{"force", "require", "optional", "disable", "forbid"}
	inputBuses         = []virtualization.InputBus{virtualization.InputBusUSB, virtualization.InputBusVirtio}
	inputTypes         = []virtualization.InputType{virtualization.InputTypeTablet, virtualization.InputTypeKeyboard}
	soundModels        = []string{"ich9", "ac97"}
	videoTypes         = []string{"vga", "bochs", "cirrus", "virtio", "ramfb"}
	panicModels        = []virtualization.PanicDeviceModel{virtualization.PanicDeviceIsa, virtualization.PanicDeviceHyperv, virtualization.PanicDevicePvpanic}
	diskCaches         = []virtualization.DriverCache{virtualization.CacheNone, virtualization.CacheWriteThrough, virtualization.CacheWriteBack}
	diskIOs            = []virtualization.DriverIO{virtualization.IONative, virtualization.IOThreads, virtualization.IODefault}
	diskErrorPolicies  = []virtualization.DiskErrorPolicy{virtualization.DiskErrorStop, virtualization.DiskErrorIgnore, virtualization.DiskErrorReport, virtualization.DiskErrorEnospace}
	trayStates         = []virtualization.TrayState{virtualization.TrayStateOpen, virtualization.TrayStateClosed}
	interfaceStates    = []virtualization.InterfaceState{virtualization.InterfaceStateLinkUp, virtualization.InterfaceStateLinkDown, virtualization.InterfaceStateAbsent}
	evictionStrategies = []virtualization.EvictionStrategy{virtualization.EvictionStrategyNone, virtualization.EvictionStrategyLiveMigrate,
		virtualization.EvictionStrategyLiveMigrateIfPossible, virtualization.EvictionStrategyExternal}
	ioThreadsPolicies = []virtualization.IOThreadsPolicy{virtualization.IOThreadsPolicyShared, virtualization.IOThreadsPolicyAuto, virtualization.IOThreadsPolicySupplementalPool}
	hpetTickPolicies  = []virtualization.HPETTickPolicy{"delay", "catchup", "merge", "discard"}
	pitTickPolicies   = []virtualization.PITTickPolicy{"delay", "catchup", "discard"}
	rtcTickPolicies   = []virtualization.RTCTickPolicy{"delay", "catchup"}
	rtcTracks         = []virtualization.RTCTimerTrack{"guest", "wall"}
)

// validateSpecEnums checks the values of the VMI spec's KubeVirt enums.
func validateSpecEnums(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s := spec.EvictionStrategy; s != nil && !slices.Contains(evictionStrategies, *s) {
		errs = append(errs, field.NotSupported(fldPath.Child("evictionStrategy"), *s, evictionStrategies))
	}
	if s := spec.StartStrategy; s != nil && *s != virtualization.StartStrategyPaused {
		errs = append(errs, field.NotSupported(fldPath.Child("startStrategy"), *s, []virtualization.StartStrategy{virtualization.StartStrategyPaused}))
	}
	d := &spec.Domain
	dp := fldPath.Child("domain")
	if p := d.IOThreadsPolicy; p != nil && !slices.Contains(ioThreadsPolicies, *p) {
		errs = append(errs, field.NotSupported(dp.Child("ioThreadsPolicy"), *p, ioThreadsPolicies))
	}
	if p := d.RebootPolicy; p != nil && *p != virtualization.RebootPolicyReboot && *p != virtualization.RebootPolicyTerminate {
		errs = append(errs, field.NotSupported(dp.Child("rebootPolicy"), *p, []virtualization.RebootPolicy{virtualization.RebootPolicyReboot, virtualization.RebootPolicyTerminate}))
	}
	if m := d.Memory; m != nil && m.ReservedOverhead != nil && m.ReservedOverhead.MemLock != nil {
		if l := *m.ReservedOverhead.MemLock; l != virtualization.MemLockRequired && l != virtualization.MemLockNotRequired {
			errs = append(errs, field.NotSupported(dp.Child("memory", "reservedOverhead", "memLock"), l,
				[]virtualization.MemLockRequirement{virtualization.MemLockRequired, virtualization.MemLockNotRequired}))
		}
	}
	return errs
}

func validateCPUFeatures(cpu *virtualization.CPU, fldPath *field.Path) field.ErrorList {
	if cpu == nil {
		return nil
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i, f := range cpu.Features {
		p := fldPath.Child("features").Index(i)
		switch {
		case f.Name == "":
			errs = append(errs, field.Required(p.Child("name"), "the name of a CPU feature, such as pcid"))
		case !cpuModelRegexp.MatchString(f.Name):
			errs = append(errs, field.Invalid(p.Child("name"), f.Name, "must be a libvirt CPU feature name, such as pcid or x2apic"))
		case names.Has(f.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), f.Name))
		}
		names.Insert(f.Name)
		if f.Policy != "" && !slices.Contains(cpuFeaturePolicies, f.Policy) {
			errs = append(errs, field.NotSupported(p.Child("policy"), f.Policy, cpuFeaturePolicies))
		}
	}
	return errs
}

// validateFeatures checks the Hyper-V enlightenments' dependencies as
// KubeVirt does: QEMU refuses a guest that lacks one.
func validateFeatures(f *virtualization.Features, fldPath *field.Path) field.ErrorList {
	if f == nil || f.Hyperv == nil {
		return nil
	}
	var errs field.ErrorList
	h := f.Hyperv
	p := fldPath.Child("hyperv")
	on := func(s *virtualization.FeatureState) bool { return s != nil && (s.Enabled == nil || *s.Enabled) }
	needs := func(has bool, name, dependency string, dep *virtualization.FeatureState) {
		if has && !on(dep) {
			errs = append(errs, field.Invalid(p.Child(name), "enabled", fmt.Sprintf("%s needs %s enabled", name, dependency)))
		}
	}
	synicTimer := h.SyNICTimer != nil && (h.SyNICTimer.Enabled == nil || *h.SyNICTimer.Enabled)
	tlbflush := h.TLBFlush != nil && (h.TLBFlush.Enabled == nil || *h.TLBFlush.Enabled)
	needs(on(h.SyNIC), "synic", "vpindex", h.VPIndex)
	needs(synicTimer, "synictimer", "synic", h.SyNIC)
	needs(synicTimer, "synictimer", "vpindex", h.VPIndex)
	needs(tlbflush, "tlbflush", "vpindex", h.VPIndex)
	needs(on(h.IPI), "ipi", "vpindex", h.VPIndex)
	needs(on(h.EVMCS), "evmcs", "vapic", h.VAPIC)
	if s := h.Spinlocks; s != nil && s.Retries != nil && *s.Retries < 4096 {
		errs = append(errs, field.Invalid(p.Child("spinlocks", "spinlocks"), *s.Retries, "must be at least 4096"))
	}
	if v := h.VendorID; v != nil && (v.Enabled == nil || *v.Enabled) {
		if v.VendorID == "" {
			errs = append(errs, field.Required(p.Child("vendorid", "vendorid"), "the vendor ID, up to 12 characters"))
		} else if len(v.VendorID) > 12 {
			errs = append(errs, field.TooLong(p.Child("vendorid", "vendorid"), v.VendorID, 12))
		}
	}
	return errs
}

func validateClock(c *virtualization.Clock, fldPath *field.Path) field.ErrorList {
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	if c.UTC != nil && c.Timezone != nil {
		errs = append(errs, field.Forbidden(fldPath, "set either utc or timezone, not both"))
	}
	if tz := c.Timezone; tz != nil {
		if _, err := time.LoadLocation(string(*tz)); err != nil || *tz == "" || *tz == "Local" {
			errs = append(errs, field.Invalid(fldPath.Child("timezone"), *tz, "must be a time zone of the tz database, such as Europe/Berlin"))
		}
	}
	if t := c.Timer; t != nil {
		p := fldPath.Child("timer")
		if t.HPET != nil && t.HPET.TickPolicy != "" && !slices.Contains(hpetTickPolicies, t.HPET.TickPolicy) {
			errs = append(errs, field.NotSupported(p.Child("hpet", "tickPolicy"), t.HPET.TickPolicy, hpetTickPolicies))
		}
		if t.PIT != nil && t.PIT.TickPolicy != "" && !slices.Contains(pitTickPolicies, t.PIT.TickPolicy) {
			errs = append(errs, field.NotSupported(p.Child("pit", "tickPolicy"), t.PIT.TickPolicy, pitTickPolicies))
		}
		if r := t.RTC; r != nil {
			if r.TickPolicy != "" && !slices.Contains(rtcTickPolicies, r.TickPolicy) {
				errs = append(errs, field.NotSupported(p.Child("rtc", "tickPolicy"), r.TickPolicy, rtcTickPolicies))
			}
			if r.Track != "" && !slices.Contains(rtcTracks, r.Track) {
				errs = append(errs, field.NotSupported(p.Child("rtc", "track"), r.Track, rtcTracks))
			}
		}
	}
	return errs
}

// maxSMBIOSString bounds the chassis strings: SMBIOS strings are short, and
// an unbounded one would reach etcd before failing.
const maxSMBIOSString = 256

func validateChassis(c *virtualization.Chassis, fldPath *field.Path) field.ErrorList {
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	for _, f := range []struct{ name, value string }{
		{"manufacturer", c.Manufacturer}, {"version", c.Version}, {"serial", c.Serial}, {"asset", c.Asset}, {"sku", c.Sku},
	} {
		if len(f.value) > maxSMBIOSString {
			errs = append(errs, field.TooLong(fldPath.Child(f.name), "", maxSMBIOSString))
		}
	}
	return errs
}

// validateOtherDevices checks inputs, sound, video and panic devices.
func validateOtherDevices(dev *virtualization.Devices, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, in := range dev.Inputs {
		p := fldPath.Child("inputs").Index(i)
		errs = append(errs, validateName(in.Name, p.Child("name"))...)
		if names.Has(in.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), in.Name))
		}
		names.Insert(in.Name)
		if !slices.Contains(inputBuses, in.Bus) {
			errs = append(errs, field.NotSupported(p.Child("bus"), in.Bus, inputBuses))
		}
		if !slices.Contains(inputTypes, in.Type) {
			errs = append(errs, field.NotSupported(p.Child("type"), in.Type, inputTypes))
		}
	}
	if s := dev.Sound; s != nil {
		errs = append(errs, validateName(s.Name, fldPath.Child("sound", "name"))...)
		if !slices.Contains(soundModels, s.Model) {
			errs = append(errs, field.NotSupported(fldPath.Child("sound", "model"), s.Model, soundModels))
		}
	}
	if v := dev.Video; v != nil && v.Type != "" && !slices.Contains(videoTypes, v.Type) {
		errs = append(errs, field.NotSupported(fldPath.Child("video", "type"), v.Type, videoTypes))
	}
	if v := dev.Video; v != nil && dev.AutoattachGraphicsDevice != nil && !*dev.AutoattachGraphicsDevice {
		errs = append(errs, field.Forbidden(fldPath.Child("video"), "a video device needs autoattachGraphicsDevice (the graphics card is the video device)"))
	}
	for i, pd := range dev.PanicDevices {
		if pd.Model != nil && !slices.Contains(panicModels, *pd.Model) {
			errs = append(errs, field.NotSupported(fldPath.Child("panicDevices").Index(i).Child("model"), *pd.Model, panicModels))
		}
	}
	return errs
}

// validateDiskOptions checks the options of disks beyond bus and boot order.
func validateDiskOptions(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, d := range spec.Domain.Devices.Disks {
		p := fldPath.Index(i)
		if d.Cache != "" && !slices.Contains(diskCaches, d.Cache) {
			errs = append(errs, field.NotSupported(p.Child("cache"), d.Cache, diskCaches))
		}
		if d.IO != "" && !slices.Contains(diskIOs, d.IO) {
			errs = append(errs, field.NotSupported(p.Child("io"), d.IO, diskIOs))
		}
		if d.IO == virtualization.IONative && d.Cache != "" && d.Cache != virtualization.CacheNone {
			errs = append(errs, field.Invalid(p.Child("io"), d.IO, fmt.Sprintf("native I/O needs cache none, not %s (QEMU refuses it otherwise)", d.Cache)))
		}
		if d.Shareable != nil && *d.Shareable && d.Cache != "" && d.Cache != virtualization.CacheNone {
			errs = append(errs, field.Invalid(p.Child("cache"), d.Cache, "a shareable disk needs cache none: a host cache would hide one guest's writes from the other"))
		}
		if e := d.ErrorPolicy; e != nil && !slices.Contains(diskErrorPolicies, *e) {
			errs = append(errs, field.NotSupported(p.Child("errorPolicy"), *e, diskErrorPolicies))
		}
		if d.CDRom != nil && d.CDRom.Tray != "" && !slices.Contains(trayStates, d.CDRom.Tray) {
			errs = append(errs, field.NotSupported(p.Child("cdrom", "tray"), d.CDRom.Tray, trayStates))
		}
		if d.DedicatedIOThread != nil && *d.DedicatedIOThread && (d.Disk == nil || d.Disk.Bus != virtualization.DiskBusVirtio) {
			errs = append(errs, field.Invalid(p.Child("dedicatedIOThread"), true, "an I/O thread serves virtio disks only"))
		}
		if bs := d.BlockSize; bs != nil {
			errs = append(errs, validateBlockSize(bs, p.Child("blockSize"))...)
		}
	}
	return errs
}

func validateBlockSize(bs *virtualization.BlockSize, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if bs.Custom != nil && bs.MatchVolume != nil {
		errs = append(errs, field.Forbidden(fldPath, "set either custom or matchVolume, not both"))
	}
	c := bs.Custom
	if c == nil {
		return errs
	}
	p := fldPath.Child("custom")
	pow2 := func(v uint32) bool { return v != 0 && v&(v-1) == 0 }
	if !pow2(c.Logical) || c.Logical < 512 || c.Logical > 2<<20 {
		errs = append(errs, field.Invalid(p.Child("logical"), c.Logical, "must be a power of two from 512 to 2097152 bytes"))
	}
	if !pow2(c.Physical) || c.Physical < c.Logical || c.Physical > 2<<20 {
		errs = append(errs, field.Invalid(p.Child("physical"), c.Physical, "must be a power of two from the logical size to 2097152 bytes"))
	}
	if g := c.DiscardGranularity; g != nil && c.Logical != 0 && *g%c.Logical != 0 {
		errs = append(errs, field.Invalid(p.Child("discardGranularity"), *g, "must be a multiple of the logical block size"))
	}
	return errs
}

// validateInterfaceOptions checks the ACPI index and link state of NICs.
func validateInterfaceOptions(ifaces []virtualization.Interface, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	indexes := sets.New[int32]()
	for i, iface := range ifaces {
		p := fldPath.Index(i)
		if x := iface.ACPIIndex; x != 0 {
			switch {
			case x < 1 || x > MaxACPIIndex:
				errs = append(errs, field.Invalid(p.Child("acpiIndex"), x, fmt.Sprintf("must be between 1 and %d", MaxACPIIndex)))
			case indexes.Has(x):
				errs = append(errs, field.Duplicate(p.Child("acpiIndex"), x))
			}
			indexes.Insert(x)
		}
		if iface.State != "" && !slices.Contains(interfaceStates, iface.State) {
			errs = append(errs, field.NotSupported(p.Child("state"), iface.State, interfaceStates))
		}
	}
	return errs
}
