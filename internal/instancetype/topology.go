package instancetype

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// defaultSpreadRatio is KubeVirt's cores per socket of the spread topology.
const defaultSpreadRatio uint32 = 2

// threadsPerCore of the SocketsCoresThreads spread, fixed as in KubeVirt.
const threadsPerCore uint32 = 2

// preferredTopology is the layout the preference asks for, the deprecated
// v1alpha spellings mapped onto the current ones; sockets when it says
// none, as in KubeVirt.
func preferredTopology(p *virtv1.VirtualMachinePreferenceSpec) virtv1.PreferredCPUTopology {
	if p == nil || p.CPU == nil || p.CPU.PreferredCPUTopology == nil {
		return virtv1.PreferSockets
	}
	switch t := *p.CPU.PreferredCPUTopology; t {
	case virtv1.DeprecatedPreferSockets:
		return virtv1.PreferSockets
	case virtv1.DeprecatedPreferCores:
		return virtv1.PreferCores
	case virtv1.DeprecatedPreferThreads:
		return virtv1.PreferThreads
	case virtv1.DeprecatedPreferSpread:
		return virtv1.PreferSpread
	case virtv1.DeprecatedPreferAny:
		return virtv1.PreferAny
	default:
		return t
	}
}

// spreadOptions are the ratio and what the spread topology spreads over.
func spreadOptions(p *virtv1.VirtualMachinePreferenceSpec) (uint32, virtv1.SpreadAcross) {
	ratio, across := defaultSpreadRatio, virtv1.SpreadAcrossSocketsCores
	if p.PreferSpreadSocketToCoreRatio != 0 {
		ratio = p.PreferSpreadSocketToCoreRatio
	}
	if p.CPU != nil && p.CPU.SpreadOptions != nil {
		if p.CPU.SpreadOptions.Across != nil {
			across = *p.CPU.SpreadOptions.Across
		}
		if p.CPU.SpreadOptions.Ratio != nil {
			ratio = *p.CPU.SpreadOptions.Ratio
		}
	}
	return ratio, across
}

// setTopology lays n vCPUs out as the preference prefers.
func setTopology(cpu *virtv1.CPU, n uint32, p *virtv1.VirtualMachinePreferenceSpec) {
	cpu.Sockets, cpu.Cores, cpu.Threads = 1, 1, 1
	if n == 1 {
		return
	}
	switch preferredTopology(p) {
	case virtv1.PreferCores:
		cpu.Cores = n
	case virtv1.PreferThreads:
		cpu.Threads = n
	case virtv1.PreferSpread:
		ratio, across := spreadOptions(p)
		switch across {
		case virtv1.SpreadAcrossCoresThreads:
			cpu.Threads, cpu.Cores = ratio, n/ratio
		case virtv1.SpreadAcrossSocketsCoresThreads:
			cpu.Threads, cpu.Cores, cpu.Sockets = threadsPerCore, ratio, n/threadsPerCore/ratio
		default:
			cpu.Cores, cpu.Sockets = ratio, n/ratio
		}
	default: // sockets, and any: with an instancetype there is no template topology to keep
		cpu.Sockets = n
	}
}

// checkSpread refuses a spread the instancetype's vCPUs cannot be divided
// into: sockets * cores * threads must come to exactly cpu.guest, or the
// guest would get fewer vCPUs than the instancetype says.
func (e *Expansion) checkSpread(specPath *field.Path) *field.Error {
	if e.Preference == nil || preferredTopology(e.Preference) != virtv1.PreferSpread {
		return nil
	}
	n := e.Instancetype.CPU.Guest
	if n == 1 {
		return nil
	}
	ratio, across := spreadOptions(e.Preference)
	per := ratio
	if across == virtv1.SpreadAcrossSocketsCoresThreads {
		per = ratio * threadsPerCore
	}
	if across == virtv1.SpreadAcrossCoresThreads && ratio != threadsPerCore {
		return field.Invalid(specPath.Child("preference", "name"), e.PreferenceName,
			fmt.Sprintf("the %s spreads across CoresThreads with ratio %d; only 2 threads per core are supported", e.PreferenceKind, ratio))
	}
	if per == 0 || n%per != 0 {
		return field.Invalid(specPath.Child("instancetype", "name"), e.InstancetypeName,
			fmt.Sprintf("the %s has %d vCPUs, which the %s %s cannot spread across %s %d at a time", e.InstancetypeKind, n, e.PreferenceKind, e.PreferenceName, across, per))
	}
	return nil
}
