package noderestriction

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/admission"

	"kubevirt.dev/virt/apis/virtualization"
)

// PluginName is the name to enable or disable the plugin by.
const PluginName = "VirtNodeRestriction"

// NodeNameExtra is the user extra holding the node of a pod's bound token.
const NodeNameExtra = "authentication.kubernetes.io/node-name"

var vmis = virtualization.Resource("virtualmachineinstances")

// Plugin refuses node-restricted identities any write to a VMI of another
// node.
type Plugin struct {
	*admission.Handler
	restricted matcher
}

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin for the given identities.
func New(ids Identities) *Plugin {
	return &Plugin{
		Handler:    admission.NewHandler(admission.Create, admission.Update, admission.Delete),
		restricted: ids.matcher(),
	}
}

// Validate refuses the write when a node-restricted identity reaches beyond
// its node.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != vmis {
		return nil
	}
	user := a.GetUserInfo()
	if !p.restricted.restricted(user) {
		return nil
	}
	node := node(user)
	if node == "" {
		return admission.NewForbidden(a, fmt.Errorf("%s is a node-restricted identity, but its credentials name no node (%s): it must use the bound service-account token of its pod", user.GetName(), NodeNameExtra))
	}
	switch a.GetOperation() {
	case admission.Create:
		return admission.NewForbidden(a, fmt.Errorf("node %q may not create VirtualMachineInstances", node))
	case admission.Delete:
		return admission.NewForbidden(a, fmt.Errorf("node %q may not delete VirtualMachineInstances", node))
	case admission.Update:
		old, ok := a.GetOldObject().(*virtualization.VirtualMachineInstance)
		if !ok {
			return admission.NewForbidden(a, fmt.Errorf("unexpected object %T", a.GetOldObject()))
		}
		// A live migration's target node writes the VMI coming to it; it
		// moves the VMI only to itself (internal/ownership says when).
		if old.Status.NodeName != node && !migratingTo(old, node) {
			return admission.NewForbidden(a, fmt.Errorf("node %q may only write VirtualMachineInstances of its own node or migrating to it; %s/%s is on node %q",
				node, old.Namespace, old.Name, old.Status.NodeName))
		}
		if vmi, ok := a.GetObject().(*virtualization.VirtualMachineInstance); ok && vmi.Status.NodeName != node && vmi.Status.NodeName != old.Status.NodeName {
			return admission.NewForbidden(a, fmt.Errorf("node %q may not hand %s/%s to node %q", node, old.Namespace, old.Name, vmi.Status.NodeName))
		}
	}
	return nil
}

// migratingTo says vmi is migrating to node and the migration has not ended.
func migratingTo(vmi *virtualization.VirtualMachineInstance, node string) bool {
	m := vmi.Status.MigrationState
	return m != nil && m.TargetNode == node && !m.Completed && !m.Failed
}
