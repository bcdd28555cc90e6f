package fieldownership

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apiserver/admission/noderestriction"
)

var t0 = metav1.Unix(1700000000, 0)

func vmi(phase virtualization.VirtualMachineInstancePhase, node string) *virtualization.VirtualMachineInstance {
	v := &virtualization.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vmi", Namespace: "default", Finalizers: []string{"a", "b"}},
	}
	for _, p := range []virtualization.VirtualMachineInstancePhase{virtualization.Pending, virtualization.Scheduling,
		virtualization.Scheduled, virtualization.Running} {
		v.Status.SetPhase(p, "", t0)
		if p == phase {
			break
		}
	}
	v.Status.NodeName = node
	return v
}

func with(v *virtualization.VirtualMachineInstance, f func(*virtualization.VirtualMachineInstance)) *virtualization.VirtualMachineInstance {
	c := v.DeepCopy()
	f(c)
	return c
}

func TestValidate(t *testing.T) {
	handlerOf := func(node string) user.Info {
		return &user.DefaultInfo{Name: "system:serviceaccount:virt-system:virt-handler", Extra: map[string][]string{noderestriction.NodeNameExtra: {node}}}
	}
	controller := &user.DefaultInfo{Name: "system:serviceaccount:virt-system:virt-controller"}
	movedController := &user.DefaultInfo{Name: "system:serviceaccount:elsewhere:virt-controller"}
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}
	namedLikeIt := &user.DefaultInfo{Name: "virt-controller"}

	scheduling := vmi(virtualization.Scheduling, "")
	scheduledA := vmi(virtualization.Scheduled, "node-a")
	runningA := vmi(virtualization.Running, "node-a")
	handOff := with(scheduling, func(v *virtualization.VirtualMachineInstance) {
		v.Status.SetPhase(virtualization.Scheduled, "", t0)
		v.Status.NodeName = "node-a"
	})
	nodeNameOnly := with(scheduling, func(v *virtualization.VirtualMachineInstance) { v.Status.NodeName = "node-a" })
	vm := &virtualization.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "default"}}
	vmReady := vm.DeepCopy()
	vmReady.Status.Ready = true

	tests := []struct {
		name     string
		user     user.Info
		resource string
		sub      string
		obj, old runtime.Object
		refused  string // a field the refusal names; "" if allowed
	}{
		{"handler runs its VMI", handlerOf("node-a"), "virtualmachineinstances", "status", runningA, scheduledA, ""},
		{"handler hands a VMI to its node", handlerOf("node-a"), "virtualmachineinstances", "status", handOff, scheduling, "status.nodeName"},
		{"handler sets nodeName of a Scheduling VMI", handlerOf("node-a"), "virtualmachineinstances", "status", nodeNameOnly, scheduling, "status.nodeName"},
		{"handler sets phase Scheduled", handlerOf("node-a"), "virtualmachineinstances", "status", vmi(virtualization.Scheduled, "node-a"),
			vmi(virtualization.Scheduling, "node-a"), "status.phase"},
		{"handler of another node", handlerOf("node-b"), "virtualmachineinstances", "status", runningA, scheduledA, "status.phase"},
		{"handler removes a finalizer", handlerOf("node-a"), "virtualmachineinstances", "",
			with(runningA, func(v *virtualization.VirtualMachineInstance) { v.Finalizers = []string{"a"} }), runningA, ""},
		{"handler relabels", handlerOf("node-a"), "virtualmachineinstances", "",
			with(runningA, func(v *virtualization.VirtualMachineInstance) { v.Labels = map[string]string{"x": "y"} }), runningA, "metadata.labels"},
		{"handler writes a VM", handlerOf("node-a"), "virtualmachines", "status", vmReady, vm, "status"},
		{"controller hands off", controller, "virtualmachineinstances", "status", handOff, scheduling, ""},
		{"controller of another namespace hands off", movedController, "virtualmachineinstances", "status", handOff, scheduling, ""},
		{"controller runs a VMI", controller, "virtualmachineinstances", "status", runningA, scheduledA, "status.phase"},
		{"controller marks NodeUnresponsive (node health)", controller, "virtualmachineinstances", "status",
			with(runningA, func(v *virtualization.VirtualMachineInstance) {
				v.Status.Conditions = []virtualization.VirtualMachineInstanceCondition{{Type: "NodeUnresponsive", Status: "True"}}
			}), runningA, ""},
		{"controller writes interfaces", controller, "virtualmachineinstances", "status",
			with(runningA, func(v *virtualization.VirtualMachineInstance) {
				v.Status.Interfaces = []virtualization.VirtualMachineInstanceNetworkInterface{{Name: "x"}}
			}), runningA, "status.interfaces"},
		{"controller adopts (replica set)", controller, "virtualmachineinstances", "",
			with(runningA, func(v *virtualization.VirtualMachineInstance) {
				v.OwnerReferences = []metav1.OwnerReference{{UID: "rs"}}
			}), runningA, ""},
		{"controller changes a VMI's spec", controller, "virtualmachineinstances", "",
			with(runningA, func(v *virtualization.VirtualMachineInstance) { v.Spec.Hostname = "x" }), runningA, "spec"},
		{"controller writes VM status", controller, "virtualmachines", "status", vmReady, vm, ""},
		{"admin writes anything", admin, "virtualmachineinstances", "status", runningA, scheduling, ""},
		{"a user named like the controller", namedLikeIt, "virtualmachineinstances", "status", runningA, scheduling, ""},
		{"another resource", handlerOf("node-a"), "virtualmachineinstancereplicasets", "status", nil, nil, ""},
	}
	p := New(Identities{HandlerServiceAccounts: noderestriction.DefaultServiceAccounts, ControllerServiceAccounts: DefaultControllerServiceAccounts})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			attrs := admission.NewAttributesRecord(tc.obj, tc.old, virtualization.Kind("X").WithVersion(""),
				"default", "x", virtualization.Resource(tc.resource).WithVersion(""), tc.sub, admission.Update, nil, false, tc.user)
			err := p.Validate(t.Context(), attrs, nil)
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.refused != "" && err == nil:
				t.Errorf("allowed, want %s refused", tc.refused)
			case tc.refused != "" && !strings.Contains(err.Error(), tc.refused+":"):
				t.Errorf("refusal %q does not name %s", err, tc.refused)
			}
		})
	}
}
