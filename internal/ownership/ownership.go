package ownership

import (
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/util/sets"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Writer is a component that writes VMI status through /status.
type Writer string

const (
	// VMIController is virt-controller's VMI controller: the VMI from
	// Pending to the hand-off, and its failure before the hand-off.
	VMIController Writer = "virt-controller (VMI controller)"
	// NodeHealth is virt-controller's node-health controller: it marks the
	// VMIs of nodes whose virt-handler stopped renewing its Lease
	// NodeUnresponsive, and fails those whose launcher is known not to run.
	NodeHealth Writer = "virt-controller (node health)"
	// Handler is the virt-handler of the VMI's node, after the hand-off.
	Handler Writer = "virt-handler"
)

// The phase, its reason and its history move together (SetPhase), and every
// writer ends a VMI through Fail, which says why in Ready and drops Paused.
var phase = []string{"phase", "reason", "phaseTransitionTimestamps", "conditions[Ready]", "conditions[Paused]", "conditions[AgentConnected]"}

// Owned lists the status fields each writer may change.
var Owned = map[Writer]sets.Set[string]{
	VMIController: sets.New(append(phase, "nodeName", "activePods", "launcherContainerImageVersion", "conditions[PodScheduled]", "volumeStatus")...),
	NodeHealth:    sets.New(append(phase, "conditions[NodeUnresponsive]")...),
	Handler:       sets.New(append(phase, "conditions[SoftwareEmulation]", "interfaces", "guestOSInfo")...),
}

// Foreign lists the fields a write from old to updated changes that w does
// not own, sorted; nil when the write stays in w's fields.
func Foreign(w Writer, old, updated *virtv1.VirtualMachineInstanceStatus) []string {
	var foreign []string // nil, not empty, when the write stays inside
	for _, f := range Changed(old, updated) {
		if !Owned[w].Has(f) {
			foreign = append(foreign, f)
		}
	}
	return foreign
}

// Changed lists the fields that differ between a and b, sorted. It compares
// the JSON forms, so a field added to the type later is seen without a
// change here.
func Changed(a, b *virtv1.VirtualMachineInstanceStatus) []string {
	fa, fb := fields(a), fields(b)
	changed := sets.New[string]()
	for k, v := range fa {
		if !reflect.DeepEqual(v, fb[k]) {
			changed.Insert(k)
		}
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			changed.Insert(k)
		}
	}
	return sets.List(changed)
}

// fields flattens s into its JSON fields, each condition a field of its own.
func fields(s *virtv1.VirtualMachineInstanceStatus) map[string]any {
	c := s.DeepCopy()
	conditions := c.Conditions
	c.Conditions = nil
	raw, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("marshal VMI status: %v", err)) // a status always marshals
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(fmt.Sprintf("unmarshal VMI status: %v", err))
	}
	for _, cond := range conditions {
		out[fmt.Sprintf("conditions[%s]", cond.Type)] = cond
	}
	return out
}
