package noderestriction

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"kubevirt.dev/virt/apis/virtualization"
)

const handler = "system:serviceaccount:virt-system:virt-handler"

func vmiOn(node string) *virtualization.VirtualMachineInstance {
	return &virtualization.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vmi", Namespace: "default"},
		Status:     virtualization.VirtualMachineInstanceStatus{NodeName: node},
	}
}

func TestValidate(t *testing.T) {
	nodeA := &user.DefaultInfo{Name: handler, Extra: map[string][]string{NodeNameExtra: {"node-a"}}}
	noNode := &user.DefaultInfo{Name: handler}
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}
	// The platform moved to another namespace: still restricted.
	movedA := &user.DefaultInfo{Name: "system:serviceaccount:virt-elsewhere:virt-handler", Extra: map[string][]string{NodeNameExtra: {"node-a"}}}
	namedLikeIt := &user.DefaultInfo{Name: "virt-handler", Extra: map[string][]string{NodeNameExtra: {"node-a"}}}
	controller := &user.DefaultInfo{Name: "system:serviceaccount:virt-system:virt-controller", Extra: map[string][]string{NodeNameExtra: {"node-b"}}}

	tests := []struct {
		name      string
		op        admission.Operation
		sub       string
		obj, old  runtime.Object
		user      user.Info
		resource  string
		forbidden bool
	}{
		{"own node status", admission.Update, "status", vmiOn("node-a"), vmiOn("node-a"), nodeA, "virtualmachineinstances", false},
		{"own node finalizer patch", admission.Update, "", vmiOn("node-a"), vmiOn("node-a"), nodeA, "virtualmachineinstances", false},
		{"other node status", admission.Update, "status", vmiOn("node-b"), vmiOn("node-b"), nodeA, "virtualmachineinstances", true},
		{"unassigned VMI", admission.Update, "status", vmiOn(""), vmiOn(""), nodeA, "virtualmachineinstances", true},
		{"steal a VMI", admission.Update, "status", vmiOn("node-a"), vmiOn("node-b"), nodeA, "virtualmachineinstances", true},
		{"give a VMI away", admission.Update, "status", vmiOn("node-b"), vmiOn("node-a"), nodeA, "virtualmachineinstances", true},
		{"create", admission.Create, "", vmiOn(""), nil, nodeA, "virtualmachineinstances", true},
		{"delete", admission.Delete, "", nil, vmiOn("node-a"), nodeA, "virtualmachineinstances", true},
		{"token without node", admission.Update, "status", vmiOn("node-a"), vmiOn("node-a"), noNode, "virtualmachineinstances", true},
		{"admin anywhere", admission.Update, "status", vmiOn("node-b"), vmiOn("node-b"), admin, "virtualmachineinstances", false},
		{"unrestricted pod identity", admission.Update, "status", vmiOn("node-a"), vmiOn("node-a"), controller, "virtualmachineinstances", false},
		{"other resource", admission.Update, "", nil, nil, nodeA, "virtualmachines", false},
		{"handler of another namespace, other node", admission.Update, "status", vmiOn("node-b"), vmiOn("node-b"), movedA, "virtualmachineinstances", true},
		{"handler of another namespace, own node", admission.Update, "status", vmiOn("node-a"), vmiOn("node-a"), movedA, "virtualmachineinstances", false},
		{"a user (no service account) named virt-handler", admission.Update, "status", vmiOn("node-b"), vmiOn("node-b"), namedLikeIt, "virtualmachineinstances", false},
	}
	p := New(Identities{ServiceAccounts: DefaultServiceAccounts})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			attrs := admission.NewAttributesRecord(tc.obj, tc.old, virtualization.Kind("VirtualMachineInstance").WithVersion(""),
				"default", "vmi", virtualization.Resource(tc.resource).WithVersion(""), tc.sub, tc.op, nil, false, tc.user)
			err := p.Validate(t.Context(), attrs, nil)
			if got := err != nil; got != tc.forbidden {
				t.Errorf("forbidden = %v (%v), want %v", got, err, tc.forbidden)
			}
		})
	}
}
