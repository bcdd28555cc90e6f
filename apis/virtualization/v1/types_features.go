package v1

// FeatureState turns a feature on or off.
type FeatureState struct {
	// Enabled turns the feature on (true) or off. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
}

// Features are platform features of the guest.
type Features struct {
	// ACPI turns ACPI on or off. On unless disabled: the graceful shutdown
	// presses the ACPI power button.
	// +optional
	ACPI FeatureState `json:"acpi,omitempty" protobuf:"bytes,1,opt,name=acpi"`
	// APIC turns the APIC on or off. On unless disabled.
	// +optional
	APIC *FeatureAPIC `json:"apic,omitempty" protobuf:"bytes,2,opt,name=apic"`
	// HypervPassthrough turns on every Hyper-V enlightenment the hypervisor
	// has. The enlightenments are KVM's: such a VMI runs only on a node
	// that reports the capability kvm, and is refused while none does.
	// +optional
	HypervPassthrough *HyperVPassthrough `json:"hypervPassthrough,omitempty" protobuf:"bytes,3,opt,name=hypervPassthrough"`
	// Hyperv turns single Hyper-V enlightenments on, for Windows guests.
	// Under software emulation QEMU does not implement them: the guest
	// runs, without the speed-up.
	// +optional
	Hyperv *FeatureHyperv `json:"hyperv,omitempty" protobuf:"bytes,4,opt,name=hyperv"`
	// SMM turns System Management Mode on or off (EFI Secure Boot turns it
	// on).
	// +optional
	SMM *FeatureState `json:"smm,omitempty" protobuf:"bytes,5,opt,name=smm"`
	// KVM says how KVM shows itself to the guest.
	// +optional
	KVM *FeatureKVM `json:"kvm,omitempty" protobuf:"bytes,6,opt,name=kvm"`
	// Pvspinlock tells the guest whether paravirtual spinlocks are
	// available.
	// +optional
	Pvspinlock *FeatureState `json:"pvspinlock,omitempty" protobuf:"bytes,7,opt,name=pvspinlock"`
}

// FeatureAPIC is the APIC.
type FeatureAPIC struct {
	// Enabled turns the APIC on (true) or off. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
	// EndOfInterrupt turns on the paravirtual end-of-interrupt.
	// +optional
	EndOfInterrupt bool `json:"endOfInterrupt,omitempty" protobuf:"varint,2,opt,name=endOfInterrupt"`
}

// HyperVPassthrough turns on every Hyper-V enlightenment.
type HyperVPassthrough struct {
	// Enabled turns passthrough on.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
}

// FeatureKVM says how KVM shows itself.
type FeatureKVM struct {
	// Hidden hides the KVM signature from the guest's CPUID.
	// +optional
	Hidden bool `json:"hidden,omitempty" protobuf:"varint,1,opt,name=hidden"`
}

// FeatureHyperv are the Hyper-V enlightenments.
type FeatureHyperv struct {
	// Relaxed turns off the guest's watchdog timeouts.
	// +optional
	Relaxed *FeatureState `json:"relaxed,omitempty" protobuf:"bytes,1,opt,name=relaxed"`
	// VAPIC is the paravirtual APIC.
	// +optional
	VAPIC *FeatureState `json:"vapic,omitempty" protobuf:"bytes,2,opt,name=vapic"`
	// Spinlocks sets the spinlock retries before a guest yields.
	// +optional
	Spinlocks *FeatureSpinlocks `json:"spinlocks,omitempty" protobuf:"bytes,3,opt,name=spinlocks"`
	// VPIndex is the virtual processor index.
	// +optional
	VPIndex *FeatureState `json:"vpindex,omitempty" protobuf:"bytes,4,opt,name=vpindex"`
	// Runtime is the per-vCPU run time.
	// +optional
	Runtime *FeatureState `json:"runtime,omitempty" protobuf:"bytes,5,opt,name=runtime"`
	// SyNIC is the synthetic interrupt controller (needs vpindex).
	// +optional
	SyNIC *FeatureState `json:"synic,omitempty" protobuf:"bytes,6,opt,name=synic"`
	// SyNICTimer are the synthetic timers (need synic and vpindex).
	// +optional
	SyNICTimer *SyNICTimer `json:"synictimer,omitempty" protobuf:"bytes,7,opt,name=synictimer"`
	// HypervReset is the Hyper-V reset (JSON: reset; Reset is the protobuf
	// marshaller's method).
	// +optional
	HypervReset *FeatureState `json:"reset,omitempty" protobuf:"bytes,15,opt,name=reset"`
	// VendorID is the hypervisor vendor ID the guest sees.
	// +optional
	VendorID *FeatureVendorID `json:"vendorid,omitempty" protobuf:"bytes,9,opt,name=vendorid"`
	// Frequencies exposes the TSC and APIC frequencies.
	// +optional
	Frequencies *FeatureState `json:"frequencies,omitempty" protobuf:"bytes,10,opt,name=frequencies"`
	// Reenlightenment notifies the guest of TSC frequency changes.
	// +optional
	Reenlightenment *FeatureState `json:"reenlightenment,omitempty" protobuf:"bytes,11,opt,name=reenlightenment"`
	// TLBFlush is the paravirtual TLB flush (needs vpindex).
	// +optional
	TLBFlush *TLBFlush `json:"tlbflush,omitempty" protobuf:"bytes,12,opt,name=tlbflush"`
	// IPI is the paravirtual inter-processor interrupt (needs vpindex).
	// +optional
	IPI *FeatureState `json:"ipi,omitempty" protobuf:"bytes,13,opt,name=ipi"`
	// EVMCS is the enlightened VMCS for nested guests (needs vapic).
	// +optional
	EVMCS *FeatureState `json:"evmcs,omitempty" protobuf:"bytes,14,opt,name=evmcs"`
}

// FeatureSpinlocks sets the Hyper-V spinlock retries.
type FeatureSpinlocks struct {
	// Enabled turns the feature on (true) or off. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
	// Retries before the guest yields, at least 4096. Defaults to 4096.
	// +optional
	Retries *uint32 `json:"spinlocks,omitempty" protobuf:"varint,2,opt,name=spinlocks"`
}

// FeatureVendorID sets the hypervisor vendor ID.
type FeatureVendorID struct {
	// Enabled turns the feature on (true) or off. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
	// VendorID, up to 12 characters.
	// +optional
	VendorID string `json:"vendorid,omitempty" protobuf:"bytes,2,opt,name=vendorid"`
}

// SyNICTimer are the Hyper-V synthetic timers.
type SyNICTimer struct {
	// Enabled turns the feature on (true) or off. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
	// Direct delivers the timers' messages as interrupts.
	// +optional
	Direct *FeatureState `json:"direct,omitempty" protobuf:"bytes,2,opt,name=direct"`
}

// TLBFlush is the Hyper-V paravirtual TLB flush.
type TLBFlush struct {
	// Enabled turns the feature on (true) or off. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
	// Direct sends the flushes to the hypervisor directly.
	// +optional
	Direct *FeatureState `json:"direct,omitempty" protobuf:"bytes,2,opt,name=direct"`
	// Extended allows partial flushes.
	// +optional
	Extended *FeatureState `json:"extended,omitempty" protobuf:"bytes,3,opt,name=extended"`
}

// Clock is the guest's real-time clock.
type Clock struct {
	// ClockOffset is the clock's offset: utc or timezone. At most one may
	// be set; none is UTC.
	ClockOffset `json:",inline" protobuf:"bytes,1,opt,name=clockOffset"`
	// Timer are the timers the guest sees.
	// +optional
	Timer *Timer `json:"timer,omitempty" protobuf:"bytes,2,opt,name=timer"`
}

// ClockOffset is the offset of the guest's clock. At most one member may be
// set.
type ClockOffset struct {
	// UTC keeps the clock in UTC, optionally offset.
	// +optional
	UTC *ClockOffsetUTC `json:"utc,omitempty" protobuf:"bytes,1,opt,name=utc"`
	// Timezone keeps the clock in a time zone, such as Europe/Berlin
	// (Windows guests expect local time).
	// +optional
	Timezone *ClockOffsetTimezone `json:"timezone,omitempty" protobuf:"bytes,2,opt,name=timezone,casttype=ClockOffsetTimezone"`
}

// ClockOffsetUTC keeps the clock in UTC.
type ClockOffsetUTC struct {
	// OffsetSeconds is added to UTC. When set, the guest's own changes to
	// its clock survive its reboots.
	// +optional
	OffsetSeconds *int32 `json:"offsetSeconds,omitempty" protobuf:"varint,1,opt,name=offsetSeconds"`
}

// ClockOffsetTimezone is a time zone name of the tz database.
type ClockOffsetTimezone string

// Timer are the timers of the guest. An unset timer is the machine type's
// choice.
type Timer struct {
	// HPET is the High Precision Event Timer.
	// +optional
	HPET *HPETTimer `json:"hpet,omitempty" protobuf:"bytes,1,opt,name=hpet"`
	// KVM is kvmclock, the paravirtual clock of Linux guests.
	// +optional
	KVM *KVMTimer `json:"kvm,omitempty" protobuf:"bytes,2,opt,name=kvm"`
	// PIT is the Programmable Interval Timer.
	// +optional
	PIT *PITTimer `json:"pit,omitempty" protobuf:"bytes,3,opt,name=pit"`
	// RTC is the Real Time Clock.
	// +optional
	RTC *RTCTimer `json:"rtc,omitempty" protobuf:"bytes,4,opt,name=rtc"`
	// Hyperv is the Hyper-V reference clock of Windows guests.
	// +optional
	Hyperv *HypervTimer `json:"hyperv,omitempty" protobuf:"bytes,5,opt,name=hyperv"`
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
	// +optional
	TickPolicy HPETTickPolicy `json:"tickPolicy,omitempty" protobuf:"bytes,1,opt,name=tickPolicy,casttype=HPETTickPolicy"`
	// Enabled set to false removes the timer. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty" protobuf:"varint,2,opt,name=present"`
}

// PITTimer is the PIT.
type PITTimer struct {
	// TickPolicy: delay, catchup or discard.
	// +optional
	TickPolicy PITTickPolicy `json:"tickPolicy,omitempty" protobuf:"bytes,1,opt,name=tickPolicy,casttype=PITTickPolicy"`
	// Enabled set to false removes the timer. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty" protobuf:"varint,2,opt,name=present"`
}

// RTCTimer is the RTC.
type RTCTimer struct {
	// TickPolicy: delay or catchup.
	// +optional
	TickPolicy RTCTickPolicy `json:"tickPolicy,omitempty" protobuf:"bytes,1,opt,name=tickPolicy,casttype=RTCTickPolicy"`
	// Enabled set to false removes the timer. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty" protobuf:"varint,2,opt,name=present"`
	// Track: guest (the guest's time) or wall (the host's).
	// +optional
	Track RTCTimerTrack `json:"track,omitempty" protobuf:"bytes,3,opt,name=track,casttype=RTCTimerTrack"`
}

// KVMTimer is kvmclock.
type KVMTimer struct {
	// Enabled set to false removes the timer. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty" protobuf:"varint,1,opt,name=present"`
}

// HypervTimer is the Hyper-V reference clock.
type HypervTimer struct {
	// Enabled set to false removes the timer. Defaults to true.
	// +optional
	Enabled *bool `json:"present,omitempty" protobuf:"varint,1,opt,name=present"`
}
