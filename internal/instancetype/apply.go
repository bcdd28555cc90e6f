package instancetype

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

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
	applyAnnotations(it.Annotations, &t.ObjectMeta.Annotations, true)
	return nil
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
