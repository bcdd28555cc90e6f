package instancetype

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Expansion is what a VM's references resolved to. A nil spec means the VM
// references none of that sort.
type Expansion struct {
	// Instancetype is the spec of the instancetype (or of the revision of it
	// the VM captured).
	Instancetype *virtv1.VirtualMachineInstancetypeSpec
	// InstancetypeKind and InstancetypeName say which one, for messages and
	// the instance's annotations.
	InstancetypeKind, InstancetypeName string
	// Preference is the spec of the preference (or of its revision).
	Preference *virtv1.VirtualMachinePreferenceSpec
	// PreferenceKind and PreferenceName say which one.
	PreferenceKind, PreferenceName string
}

// Apply expands a VM's template with the instancetype, then the preference.
// specPath is the VM's spec: the template's fields are reported under
// specPath.template, the references under specPath.instancetype and
// specPath.preference. On a conflict nothing of the preference is applied
// and the template is left half expanded: callers expand a copy.
func (e *Expansion) Apply(specPath *field.Path, t *virtv1.VirtualMachineInstanceTemplateSpec) field.ErrorList {
	if e.Instancetype != nil {
		if errs := e.applyInstancetype(specPath, t); len(errs) > 0 {
			return errs
		}
	}
	if e.Preference != nil {
		e.applyPreference(&t.Spec)
		applyAnnotations(e.Preference.Annotations, &t.ObjectMeta.Annotations, false)
	}
	return e.checkRequirements(specPath, &t.Spec)
}

// conflict is the error of a template field the instancetype owns.
func (e *Expansion) conflict(p *field.Path, what string) *field.Error {
	return field.Forbidden(p, fmt.Sprintf("must not be set: the %s %s gives the guest its %s (remove the field, or spec.instancetype)",
		e.InstancetypeKind, e.InstancetypeName, what))
}

// applyInstancetype gives the template the instancetype's vCPUs, memory,
// placement and annotations, after refusing every template field that
// would say otherwise: an instancetype is the size the VM is billed and
// scheduled by, so a VM cannot quietly override it.
func (e *Expansion) applyInstancetype(specPath *field.Path, t *virtv1.VirtualMachineInstanceTemplateSpec) field.ErrorList {
	it := e.Instancetype
	spec := &t.Spec
	sp := specPath.Child("template", "spec")
	domain := sp.Child("domain")
	var errs field.ErrorList

	if cpu := spec.Domain.CPU; cpu != nil {
		for _, f := range []struct {
			name string
			set  bool
		}{{"sockets", cpu.Sockets != 0}, {"cores", cpu.Cores != 0}, {"threads", cpu.Threads != 0}} {
			if f.set {
				errs = append(errs, e.conflict(domain.Child("cpu", f.name), "vCPUs (spec.cpu.guest)"))
			}
		}
		if cpu.Model != "" && it.CPU.Model != nil {
			errs = append(errs, e.conflict(domain.Child("cpu", "model"), "CPU model (spec.cpu.model)"))
		}
	}
	res := &spec.Domain.Resources
	for _, r := range []struct {
		list corev1.ResourceList
		name string
	}{{res.Requests, "requests"}, {res.Limits, "limits"}} {
		if _, ok := r.list[corev1.ResourceCPU]; ok {
			errs = append(errs, e.conflict(domain.Child("resources", r.name).Key(string(corev1.ResourceCPU)), "vCPUs (spec.cpu.guest)"))
		}
		if _, ok := r.list[corev1.ResourceMemory]; ok {
			errs = append(errs, e.conflict(domain.Child("resources", r.name).Key(string(corev1.ResourceMemory)), "memory (spec.memory.guest)"))
		}
	}
	if m := spec.Domain.Memory; m != nil && m.Guest != nil {
		errs = append(errs, e.conflict(domain.Child("memory", "guest"), "memory (spec.memory.guest)"))
	}
	if len(it.NodeSelector) > 0 && len(spec.NodeSelector) > 0 {
		errs = append(errs, e.conflict(sp.Child("nodeSelector"), "node selector (spec.nodeSelector)"))
	}
	if it.SchedulerName != "" && spec.SchedulerName != "" {
		errs = append(errs, e.conflict(sp.Child("schedulerName"), "scheduler (spec.schedulerName)"))
	}
	for k, v := range it.Annotations {
		if have, ok := t.ObjectMeta.Annotations[k]; ok && have != v {
			errs = append(errs, field.Forbidden(specPath.Child("template", "metadata", "annotations").Key(k),
				fmt.Sprintf("must be %q or unset: the %s %s sets it", v, e.InstancetypeKind, e.InstancetypeName)))
		}
	}
	errs = append(errs, e.hardwareConflicts(domain, &spec.Domain)...)
	if spread := e.checkSpread(specPath); spread != nil {
		errs = append(errs, spread)
	}
	if len(errs) > 0 {
		return errs
	}

	if spec.Domain.CPU == nil {
		spec.Domain.CPU = &virtv1.CPU{}
	}
	if it.CPU.Model != nil {
		spec.Domain.CPU.Model = *it.CPU.Model
	}
	setTopology(spec.Domain.CPU, it.CPU.Guest, e.Preference)

	if spec.Domain.Memory == nil {
		spec.Domain.Memory = &virtv1.Memory{}
	}
	guest := it.Memory.Guest.DeepCopy()
	spec.Domain.Memory.Guest = &guest
	if pct := it.Memory.OvercommitPercent; pct > 0 {
		// The pod asks for less than the guest has; the platform's
		// overhead still comes on top of the request.
		if res.Requests == nil {
			res.Requests = corev1.ResourceList{}
		}
		res.Requests[corev1.ResourceMemory] = *resource.NewQuantity(guest.Value()*int64(100-pct)/100, guest.Format)
	}
	if len(it.NodeSelector) > 0 {
		spec.NodeSelector = make(map[string]string, len(it.NodeSelector))
		for k, v := range it.NodeSelector {
			spec.NodeSelector[k] = v
		}
	}
	if it.SchedulerName != "" {
		spec.SchedulerName = it.SchedulerName
	}
	applyHardware(it, &spec.Domain)
	applyAnnotations(it.Annotations, &t.ObjectMeta.Annotations, true)
	return nil
}

// hardwareConflicts refuses the template's fields for the rest of the
// hardware an instancetype can give, where the instancetype gives it.
// Of these only ioThreadsPolicy runs here; validation refuses the others
// in an instancetype (as on a VMI), so they only meet a template that
// sets them in a revision written elsewhere.
func (e *Expansion) hardwareConflicts(domain *field.Path, d *virtv1.DomainSpec) field.ErrorList {
	it := e.Instancetype
	var errs field.ErrorList
	for _, f := range []struct {
		path        *field.Path
		what        string
		it, written bool
	}{
		{domain.Child("ioThreadsPolicy"), "I/O threads policy (spec.ioThreadsPolicy)", it.IOThreadsPolicy != nil, d.IOThreadsPolicy != nil},
		{domain.Child("ioThreads"), "I/O threads (spec.ioThreads)", it.IOThreads != nil, d.IOThreads != nil},
		{domain.Child("launchSecurity"), "launch security (spec.launchSecurity)", it.LaunchSecurity != nil, d.LaunchSecurity != nil},
		{domain.Child("devices", "gpus"), "GPUs (spec.gpus)", len(it.GPUs) > 0, len(d.Devices.GPUs) > 0},
		{domain.Child("devices", "hostDevices"), "host devices (spec.hostDevices)", len(it.HostDevices) > 0, len(d.Devices.HostDevices) > 0},
		{domain.Child("cpu", "numa"), "NUMA topology (spec.cpu.numa)", it.CPU.NUMA != nil, d.CPU != nil && d.CPU.NUMA != nil},
		{domain.Child("cpu", "realtime"), "real-time vCPUs (spec.cpu.realtime)", it.CPU.Realtime != nil, d.CPU != nil && d.CPU.Realtime != nil},
		{domain.Child("memory", "hugepages"), "huge pages (spec.memory.hugepages)", it.Memory.Hugepages != nil, d.Memory != nil && d.Memory.Hugepages != nil},
	} {
		if f.it && f.written {
			errs = append(errs, e.conflict(f.path, f.what))
		}
	}
	return errs
}

// applyHardware gives the template the rest of the instancetype's
// hardware; d.CPU and d.Memory are set already.
func applyHardware(it *virtv1.VirtualMachineInstancetypeSpec, d *virtv1.DomainSpec) {
	if p := it.IOThreadsPolicy; p != nil {
		d.IOThreadsPolicy = ptr.To(*p)
	}
	if it.IOThreads != nil {
		d.IOThreads = it.IOThreads.DeepCopy()
	}
	if it.LaunchSecurity != nil {
		d.LaunchSecurity = it.LaunchSecurity.DeepCopy()
	}
	for i := range it.GPUs {
		d.Devices.GPUs = append(d.Devices.GPUs, *it.GPUs[i].DeepCopy())
	}
	for i := range it.HostDevices {
		d.Devices.HostDevices = append(d.Devices.HostDevices, *it.HostDevices[i].DeepCopy())
	}
	if it.CPU.NUMA != nil {
		d.CPU.NUMA = it.CPU.NUMA.DeepCopy()
	}
	if it.CPU.Realtime != nil {
		d.CPU.Realtime = it.CPU.Realtime.DeepCopy()
	}
	if it.Memory.Hugepages != nil {
		d.Memory.Hugepages = it.Memory.Hugepages.DeepCopy()
	}
}

// applyAnnotations adds from to *to: all of them when override (the
// instancetype's, already checked for conflicts), else only the keys *to
// does not have (the preference's).
func applyAnnotations(from map[string]string, to *map[string]string, override bool) {
	for k, v := range from {
		if *to == nil {
			*to = map[string]string{}
		}
		if _, ok := (*to)[k]; ok && !override {
			continue
		}
		(*to)[k] = v
	}
}

// checkRequirements refuses a VM that offers the guest less than its
// preference requires. With an instancetype the instancetype is what
// falls short; without, the template's own vCPUs and memory.
func (e *Expansion) checkRequirements(specPath *field.Path, spec *virtv1.VirtualMachineInstanceSpec) field.ErrorList {
	if e.Preference == nil || e.Preference.Requirements == nil {
		return nil
	}
	r := e.Preference.Requirements
	domain := specPath.Child("template", "spec", "domain")
	var errs field.ErrorList
	if r.CPU != nil {
		have := vcpus(spec.Domain.CPU)
		if e.Instancetype != nil {
			have = e.Instancetype.CPU.Guest
		}
		if have < r.CPU.Guest {
			p := domain.Child("cpu")
			if e.Instancetype != nil {
				p = specPath.Child("instancetype", "name")
			}
			errs = append(errs, field.Invalid(p, have, fmt.Sprintf("the %s %s requires at least %d vCPUs", e.PreferenceKind, e.PreferenceName, r.CPU.Guest)))
		}
	}
	if a := r.Architecture; a != nil {
		have := spec.Architecture
		if have == "" {
			have = defaultArchitecture
		}
		if have != *a {
			errs = append(errs, field.Invalid(specPath.Child("template", "spec", "architecture"), have,
				fmt.Sprintf("the %s %s requires the %s architecture", e.PreferenceKind, e.PreferenceName, *a)))
		}
	}
	if r.Memory != nil {
		var have resource.Quantity
		if spec.Domain.Memory != nil && spec.Domain.Memory.Guest != nil {
			have = *spec.Domain.Memory.Guest
		} else if req, ok := spec.Domain.Resources.Requests[corev1.ResourceMemory]; ok {
			have = req
		}
		if e.Instancetype != nil {
			have = e.Instancetype.Memory.Guest
		}
		if have.Cmp(r.Memory.Guest) < 0 {
			p := domain.Child("memory", "guest")
			if e.Instancetype != nil {
				p = specPath.Child("instancetype", "name")
			}
			errs = append(errs, field.Invalid(p, have.String(), fmt.Sprintf("the %s %s requires at least %s of memory", e.PreferenceKind, e.PreferenceName, r.Memory.Guest.String())))
		}
	}
	return errs
}

// defaultArchitecture is the architecture of a guest that names none: the
// nodes', the only one a VMI accepts.
const defaultArchitecture = "amd64"

// vcpus is the number of vCPUs of a template's CPU; an empty topology is
// one of each, as the defaults make it.
func vcpus(cpu *virtv1.CPU) uint32 {
	if cpu == nil {
		return 1
	}
	n := uint32(1)
	for _, v := range []uint32{cpu.Sockets, cpu.Cores, cpu.Threads} {
		if v > 0 {
			n *= v
		}
	}
	return n
}
