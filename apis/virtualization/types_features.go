package virtualization

// FeatureState turns a feature on or off.
type FeatureState struct {
	// Enabled turns the feature on (true) or off. Defaults to true.
	Enabled *bool
}

// Features are platform features of the guest.
type Features struct {
	// ACPI turns ACPI on or off. On unless disabled: the graceful shutdown
	// presses the ACPI power button.
	ACPI FeatureState
	// APIC turns the APIC on or off. On unless disabled.
	APIC *FeatureAPIC
	// HypervPassthrough turns on every Hyper-V enlightenment the hypervisor
	// has. The enlightenments are KVM's: such a VMI runs only on a node
	// that reports the capability kvm, and is refused while none does.
	HypervPassthrough *HyperVPassthrough
	// Hyperv turns single Hyper-V enlightenments on, for Windows guests.
	// Under software emulation QEMU does not implement them: the guest
	// runs, without the speed-up.
	Hyperv *FeatureHyperv
	// SMM turns System Management Mode on or off (EFI Secure Boot turns it
	// on).
	SMM *FeatureState
	// KVM says how KVM shows itself to the guest.
	KVM *FeatureKVM
	// Pvspinlock tells the guest whether paravirtual spinlocks are
	// available.
	Pvspinlock *FeatureState
}

// FeatureAPIC is the APIC.
type FeatureAPIC struct {
	// Enabled turns the APIC on (true) or off. Defaults to true.
	Enabled *bool
	// EndOfInterrupt turns on the paravirtual end-of-interrupt.
	EndOfInterrupt bool
}

// HyperVPassthrough turns on every Hyper-V enlightenment.
type HyperVPassthrough struct {
	// Enabled turns passthrough on.
	Enabled *bool
}

// FeatureKVM says how KVM shows itself.
type FeatureKVM struct {
	// Hidden hides the KVM signature from the guest's CPUID.
	Hidden bool
}

// FeatureHyperv are the Hyper-V enlightenments.
type FeatureHyperv struct {
	// Relaxed turns off the guest's watchdog timeouts.
	Relaxed *FeatureState
	// VAPIC is the paravirtual APIC.
	VAPIC *FeatureState
	// Spinlocks sets the spinlock retries before a guest yields.
	Spinlocks *FeatureSpinlocks
	// VPIndex is the virtual processor index.
	VPIndex *FeatureState
	// Runtime is the per-vCPU run time.
	Runtime *FeatureState
	// SyNIC is the synthetic interrupt controller (needs vpindex).
	SyNIC *FeatureState
	// SyNICTimer are the synthetic timers (need synic and vpindex).
	SyNICTimer *SyNICTimer
	// HypervReset is the Hyper-V reset (JSON: reset; Reset is the protobuf
	// marshaller's method).
	HypervReset *FeatureState
	// VendorID is the hypervisor vendor ID the guest sees.
	VendorID *FeatureVendorID
	// Frequencies exposes the TSC and APIC frequencies.
	Frequencies *FeatureState
	// Reenlightenment notifies the guest of TSC frequency changes.
	Reenlightenment *FeatureState
	// TLBFlush is the paravirtual TLB flush (needs vpindex).
	TLBFlush *TLBFlush
	// IPI is the paravirtual inter-processor interrupt (needs vpindex).
	IPI *FeatureState
	// EVMCS is the enlightened VMCS for nested guests (needs vapic).
	EVMCS *FeatureState
}

// FeatureSpinlocks sets the Hyper-V spinlock retries.
type FeatureSpinlocks struct {
	// Enabled turns the feature on (true) or off. Defaults to true.
	Enabled *bool
	// Retries before the guest yields, at least 4096. Defaults to 4096.
	Retries *uint32
}

// FeatureVendorID sets the hypervisor vendor ID.
type FeatureVendorID struct {
	// Enabled turns the feature on (true) or off. Defaults to true.
	Enabled *bool
	// VendorID, up to 12 characters.
	VendorID string
}

// SyNICTimer are the Hyper-V synthetic timers.
type SyNICTimer struct {
	// Enabled turns the feature on (true) or off. Defaults to true.
	Enabled *bool
	// Direct delivers the timers' messages as interrupts.
	Direct *FeatureState
}

// TLBFlush is the Hyper-V paravirtual TLB flush.
type TLBFlush struct {
	// Enabled turns the feature on (true) or off. Defaults to true.
	Enabled *bool
	// Direct sends the flushes to the hypervisor directly.
	Direct *FeatureState
	// Extended allows partial flushes.
	Extended *FeatureState
}

// Clock is the guest's real-time clock.
type Clock struct {
	// ClockOffset is the clock's offset: utc or timezone. At most one may
	// be set; none is UTC.
	ClockOffset
	// Timer are the timers the guest sees.
	Timer *Timer
}

// ClockOffset is the offset of the guest's clock. At most one member may be
// set.
type ClockOffset struct {
	// UTC keeps the clock in UTC, optionally offset.
	UTC *ClockOffsetUTC
	// Timezone keeps the clock in a time zone, such as Europe/Berlin
	// (Windows guests expect local time).
	Timezone *ClockOffsetTimezone
}

// ClockOffsetUTC keeps the clock in UTC.
type ClockOffsetUTC struct {
	// OffsetSeconds is added to UTC. When set, the guest's own changes to
	// its clock survive its reboots.
	OffsetSeconds *int32
}

// ClockOffsetTimezone is a time zone name of the tz database.
type ClockOffsetTimezone string

// Timer are the timers of the guest. An unset timer is the machine type's
// choice.
type Timer struct {
	// HPET is the High Precision Event Timer.
	HPET *HPETTimer
	// KVM is kvmclock, the paravirtual clock of Linux guests.
	KVM *KVMTimer
	// PIT is the Programmable Interval Timer.
	PIT *PITTimer
	// RTC is the Real Time Clock.
	RTC *RTCTimer
	// Hyperv is the Hyper-V reference clock of Windows guests.
	Hyperv *HypervTimer
}

// Tick policies: what happens to the ticks the hypervisor could not deliver
// in time.
const (
	TickPolicyDelay   = "delay"
	TickPolicyCatchup = "catchup"
	TickPolicyMerge   = "merge"
	TickPolicyDiscard = "discard"
)

// HPETTickPolicy is the tick policy of the HPET: delay, catchup, merge or
// discard.
type HPETTickPolicy string

// PITTickPolicy is the tick policy of the PIT: delay, catchup or discard.
type PITTickPolicy string

// RTCTickPolicy is the tick policy of the RTC: delay or catchup.
type RTCTickPolicy string

// RTCTimerTrack is what the RTC follows: guest or wall.
type RTCTimerTrack string

// HPETTimer is the HPET.
type HPETTimer struct {
	// TickPolicy: delay, catchup, merge or discard.
	TickPolicy HPETTickPolicy
	// Enabled set to false removes the timer. Defaults to true.
	Enabled *bool
}

// PITTimer is the PIT.
type PITTimer struct {
	// TickPolicy: delay, catchup or discard.
	TickPolicy PITTickPolicy
	// Enabled set to false removes the timer. Defaults to true.
	Enabled *bool
}

// RTCTimer is the RTC.
type RTCTimer struct {
	// TickPolicy: delay or catchup.
	TickPolicy RTCTickPolicy
	// Enabled set to false removes the timer. Defaults to true.
	Enabled *bool
	// Track: guest (the guest's time) or wall (the host's).
	Track RTCTimerTrack
}

// KVMTimer is kvmclock.
type KVMTimer struct {
	// Enabled set to false removes the timer. Defaults to true.
	Enabled *bool
}

// HypervTimer is the Hyper-V reference clock.
type HypervTimer struct {
	// Enabled set to false removes the timer. Defaults to true.
	Enabled *bool
}
