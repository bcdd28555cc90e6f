package fieldownership

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/ownership"
)

// PluginName is the name to enable or disable the plugin by.
const PluginName = "VirtFieldOwnership"

var (
	vmis  = virtualization.Resource("virtualmachineinstances")
	vms   = virtualization.Resource("virtualmachines")
	vmims = virtualization.Resource("virtualmachineinstancemigrations")
)

// Plugin refuses a component's write that leaves its rows of
// internal/ownership.
type Plugin struct {
	*admission.Handler
	ids matcher
}

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin for the given identities.
func New(ids Identities) *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Update), ids: ids.matcher()}
}

// Validate refuses an update of a VMI, VM or migration by a component that
// changes what none of its writers owns.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	gr := a.GetResource().GroupResource()
	if (gr != vmis && gr != vms && gr != vmims) || a.GetUserInfo() == nil {
		return nil
	}
	id := p.ids.identify(a.GetUserInfo())
	if len(id.writers) == 0 {
		return nil
	}
	check, err := checker(gr, a)
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if check == nil {
		return nil
	}
	var refusals []string
	for _, w := range id.writers {
		v := check(w, id.node)
		if v == nil {
			return nil
		}
		refusals = append(refusals, refusal(w, v))
	}
	return admission.NewForbidden(a, fmt.Errorf("%s may not make this write (docs/ownership.md): %s", id.name, strings.Join(refusals, "; ")))
}

// checker is the check of the update a, by writer; nil for a subresource
// the tables say nothing of.
func checker(gr schema.GroupResource, a admission.Attributes) (func(ownership.Writer, string) []ownership.Violation, error) {
	switch gr {
	case vmis:
		obj, ok1 := a.GetObject().(*virtualization.VirtualMachineInstance)
		old, ok2 := a.GetOldObject().(*virtualization.VirtualMachineInstance)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("unexpected objects %T, %T", a.GetObject(), a.GetOldObject())
		}
		switch a.GetSubresource() {
		case "status":
			var s, o virtv1.VirtualMachineInstanceStatus
			if err := virtv1.Convert_virtualization_VirtualMachineInstanceStatus_To_v1_VirtualMachineInstanceStatus(&obj.Status, &s, nil); err != nil {
				return nil, err
			}
			if err := virtv1.Convert_virtualization_VirtualMachineInstanceStatus_To_v1_VirtualMachineInstanceStatus(&old.Status, &o, nil); err != nil {
				return nil, err
			}
			return func(w ownership.Writer, node string) []ownership.Violation { return ownership.Check(w, node, &o, &s) }, nil
		case "":
			return func(w ownership.Writer, _ string) []ownership.Violation {
				return ownership.CheckObject(ownership.VMIs, w, &old.ObjectMeta, &obj.ObjectMeta, &old.Spec, &obj.Spec)
			}, nil
		}
	case vms:
		obj, ok1 := a.GetObject().(*virtualization.VirtualMachine)
		old, ok2 := a.GetOldObject().(*virtualization.VirtualMachine)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("unexpected objects %T, %T", a.GetObject(), a.GetOldObject())
		}
		switch a.GetSubresource() {
		case "status":
			var s, o virtv1.VirtualMachineStatus
			if err := virtv1.Convert_virtualization_VirtualMachineStatus_To_v1_VirtualMachineStatus(&obj.Status, &s, nil); err != nil {
				return nil, err
			}
			if err := virtv1.Convert_virtualization_VirtualMachineStatus_To_v1_VirtualMachineStatus(&old.Status, &o, nil); err != nil {
				return nil, err
			}
			return func(w ownership.Writer, _ string) []ownership.Violation { return ownership.CheckVM(w, &o, &s) }, nil
		case "":
			return func(w ownership.Writer, _ string) []ownership.Violation {
				return ownership.CheckObject(ownership.VMs, w, &old.ObjectMeta, &obj.ObjectMeta, &old.Spec, &obj.Spec)
			}, nil
		}
	case vmims:
		obj, ok1 := a.GetObject().(*virtualization.VirtualMachineInstanceMigration)
		old, ok2 := a.GetOldObject().(*virtualization.VirtualMachineInstanceMigration)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("unexpected objects %T, %T", a.GetObject(), a.GetOldObject())
		}
		switch a.GetSubresource() {
		case "status":
			return func(w ownership.Writer, _ string) []ownership.Violation { return ownership.CheckMigrationStatus(w) }, nil
		case "":
			return func(w ownership.Writer, _ string) []ownership.Violation {
				return ownership.CheckObject(ownership.VMIMs, w, &old.ObjectMeta, &obj.ObjectMeta, &old.Spec, &obj.Spec)
			}, nil
		}
	}
	return nil, nil
}

// refusal says in one line what w may not do of the write.
func refusal(w ownership.Writer, v []ownership.Violation) string {
	parts := make([]string, len(v))
	for i := range v {
		parts[i] = v[i].String()
	}
	return fmt.Sprintf("as %s: %s", w, strings.Join(parts, ", "))
}
