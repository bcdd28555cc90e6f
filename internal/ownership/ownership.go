package ownership

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Writer is a component that writes VMI or VM status through /status.
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
	// VMController is virt-controller's VM controller: a VM's status from
	// its instance, and the state change requests it carried out.
	VMController Writer = "virt-controller (VM controller)"
	// ReplicaSetController is virt-controller's VMI replica set controller:
	// it adopts and releases VMIs (their controller reference).
	ReplicaSetController Writer = "virt-controller (replica set controller)"
	// MigrationController is virt-controller's migration controller: a
	// VMI's migration bookkeeping (which migration, between which pods and
	// nodes, with which settings, abort requests), the target pod in
	// activePods, and whether the VMI can migrate at all.
	MigrationController Writer = "virt-controller (migration controller)"
	// MigrationTarget is the virt-handler of a migration's target node
	// (status.migrationState.targetNode) until the migration ends: the
	// target's readiness and the migration's completion, and in the write
	// that completes it the switch-over of nodeName to its own node. From
	// then on it is the VMI's Handler.
	MigrationTarget Writer = "virt-handler (migration target)"
	// EvictionWebhook is virt-apiserver's pods/eviction webhook: it marks a
	// VMI whose launcher pod a drain evicts (evacuationNodeName), in the
	// server past admission; the table documents it.
	EvictionWebhook Writer = "virt-apiserver (eviction webhook)"
	// APIServer is virt-apiserver itself: the VM actions (start, stop,
	// restart) record the user's request in the VM's status in the server,
	// past admission; the table documents them.
	APIServer Writer = "virt-apiserver (VM actions)"
)

// Stage is the side of the hand-off on which a writer writes a VMI.
type Stage string

const (
	// BeforeHandOff: status.nodeName is empty (the write that sets it is
	// the hand-off, and still before it).
	BeforeHandOff Stage = "before the hand-off"
	// AfterHandOff: status.nodeName is set.
	AfterHandOff Stage = "after the hand-off"
	// OnItsNode: status.nodeName is the writer's own node (the one its
	// credentials were issued on).
	OnItsNode Stage = "after the hand-off, on its node"
	// MigratingToItsNode: status.migrationState.targetNode is the writer's
	// own node and the migration has neither completed nor failed.
	MigratingToItsNode Stage = "while a migration to its node runs"
)

// VMIRow is one writer's part of a VMI's status.
type VMIRow struct {
	Writer Writer
	// Stage is when the writer may write the VMI's status at all.
	Stage Stage
	// Phases are the phase values it may move a VMI to; with a phase go
	// its reason and its transition (phase, reason,
	// phaseTransitionTimestamps).
	Phases []virtv1.VirtualMachineInstancePhase
	// Reason, when set, is the only reason its changes of phase carry, and
	// no other writer may give a phase that reason.
	Reason string
	// Fields it may change in any write.
	Fields []string
	// Ending are fields it may change only in the write that ends the VMI
	// (Succeeded or Failed): the API type's End sets Ready and drops Paused
	// and AgentConnected.
	Ending []string
}

// phaseFields move together: SetPhase changes all three.
var phaseFields = []string{"phase", "reason", "phaseTransitionTimestamps"}

// ended are the conditions End changes.
var ended = []string{"conditions[Ready]", "conditions[Paused]", "conditions[AgentConnected]"}

// VMI is the table of a VMI's status: one row per writer. Extend it, never
// share a field between rows without a Stage or Ending that keeps the
// writers apart.
var VMI = []VMIRow{{
	Writer: VMIController,
	Stage:  BeforeHandOff,
	Phases: []virtv1.VirtualMachineInstancePhase{virtv1.Scheduling, virtv1.Scheduled, virtv1.Failed},
	Fields: []string{"nodeName", "activePods", "launcherContainerImageVersion", "conditions[PodScheduled]", "volumeStatus"},
	Ending: ended,
}, {
	Writer: NodeHealth,
	Stage:  AfterHandOff,
	Phases: []virtv1.VirtualMachineInstancePhase{virtv1.Failed},
	Reason: virtv1.ReasonNodeUnresponsive,
	Fields: []string{"conditions[NodeUnresponsive]"},
	Ending: ended,
}, {
	Writer: Handler,
	Stage:  OnItsNode,
	Phases: []virtv1.VirtualMachineInstancePhase{virtv1.Running, virtv1.Succeeded, virtv1.Failed},
	Fields: append(slices.Clone(ended), "conditions[SoftwareEmulation]", "interfaces", "guestOSInfo",
		// As a migration's source.
		"migrationState.startTimestamp", "migrationState.mode", "migrationState.failed",
		"migrationState.failureReason", "migrationState.abortStatus", "migrationState.endTimestamp"),
}, {
	Writer: MigrationController,
	Stage:  AfterHandOff,
	Fields: []string{"migrationState.migrationUid", "migrationState.sourceNode", "migrationState.sourcePod",
		"migrationState.targetNode", "migrationState.targetPod", "migrationState.migrationConfiguration",
		"migrationState.abortRequested", "activePods", "conditions[LiveMigratable]", "evacuationNodeName"},
}, {
	Writer: MigrationTarget,
	Stage:  MigratingToItsNode,
	Fields: []string{"migrationState.targetNodeAddress", "migrationState.targetDirectMigrationNodePorts",
		"migrationState.targetNodeDomainDetected", "migrationState.targetNodeDomainReadyTimestamp",
		"migrationState.completed", "migrationState.endTimestamp", "migrationState.downtimeMilliseconds"},
}, {
	Writer: EvictionWebhook,
	Stage:  AfterHandOff,
	Fields: []string{"evacuationNodeName"},
}}

// switchOverField is the field MigrationTarget changes only in the write
// that completes the migration, and only to its own node.
const switchOverField = "nodeName"

// Row is w's row of the VMI table, nil if w writes no VMI status.
func Row(w Writer) *VMIRow {
	for i := range VMI {
		if VMI[i].Writer == w {
			return &VMI[i]
		}
	}
	return nil
}

// Owned lists every VMI status field each writer may ever change.
var Owned = func() map[Writer]sets.Set[string] {
	owned := map[Writer]sets.Set[string]{}
	for _, r := range VMI {
		s := sets.New(r.Fields...).Insert(r.Ending...)
		if len(r.Phases) > 0 {
			s.Insert(phaseFields...)
		}
		owned[r.Writer] = s
	}
	owned[MigrationTarget].Insert(switchOverField)
	return owned
}()

// Violation is one part of a write its writer does not own.
type Violation struct {
	// Field is the field's path below the object (status.nodeName).
	Field string
	// Why says what the writer may not do.
	Why string
}

func (v Violation) String() string { return v.Field + ": " + v.Why }

// Check lists what a write of a VMI's status from old to updated by w
// leaves w's row for, nil when the write stays inside it. node is the node
// w's credentials name; only the handler's is checked (OnItsNode).
func Check(w Writer, node string, old, updated *virtv1.VirtualMachineInstanceStatus) []Violation {
	changed := Changed(old, updated)
	if len(changed) == 0 {
		return nil
	}
	r := Row(w)
	if r == nil {
		return []Violation{{"status", fmt.Sprintf("%s writes no VMI status", w)}}
	}
	if why := r.stage(node, old); why != "" {
		var out []Violation
		for _, f := range changed {
			out = append(out, Violation{"status." + f, why})
		}
		return out
	}
	var out []Violation
	ends := updated.Phase != old.Phase && updated.Phase.IsFinal()
	phaseChanged := false
	for _, f := range changed {
		switch {
		case slices.Contains(phaseFields, f):
			phaseChanged = true
		case slices.Contains(r.Fields, f), ends && slices.Contains(r.Ending, f):
		case w == MigrationController && strings.HasPrefix(f, migrationStatePrefix) && newMigration(old, updated):
			// A new migration replaces the whole state of the last one.
		case w == MigrationTarget && f == switchOverField:
			if !switchesOver(node, updated) {
				out = append(out, Violation{"status." + f, fmt.Sprintf("%s changes it only to its own node, in the write that sets migrationState.completed", w)})
			}
		case slices.Contains(r.Ending, f):
			out = append(out, Violation{"status." + f, fmt.Sprintf("%s changes it only in the write that ends the VMI", w)})
		default:
			out = append(out, Violation{"status." + f, fmt.Sprintf("%s does not own it (%s)", w, owners(f))})
		}
	}
	if phaseChanged {
		out = append(out, r.phase(old, updated)...)
	}
	slices.SortFunc(out, func(a, b Violation) int { return strings.Compare(a.Field, b.Field) })
	return out
}

// stage says why the VMI is not on w's side of the hand-off, "" if it is.
func (r *VMIRow) stage(node string, old *virtv1.VirtualMachineInstanceStatus) string {
	switch r.Stage {
	case BeforeHandOff:
		if old.NodeName != "" {
			return fmt.Sprintf("%s writes a VMI's status only %s; this one was handed to node %q", r.Writer, r.Stage, old.NodeName)
		}
	case AfterHandOff:
		if old.NodeName == "" {
			return fmt.Sprintf("%s writes a VMI's status only %s; this one has no node yet", r.Writer, r.Stage)
		}
	case OnItsNode:
		if node == "" {
			return fmt.Sprintf("%s writes only the VMIs of its node, and its credentials name none", r.Writer)
		}
		if old.NodeName != node {
			return fmt.Sprintf("%s of node %q writes a VMI's status only %s; this one is on node %q", r.Writer, node, r.Stage, old.NodeName)
		}
	case MigratingToItsNode:
		m := old.MigrationState
		switch {
		case node == "":
			return fmt.Sprintf("%s writes only the VMIs migrating to its node, and its credentials name none", r.Writer)
		case old.NodeName == "" || m == nil || m.TargetNode != node:
			return fmt.Sprintf("%s of node %q writes a VMI's status only %s; this one is not migrating there", r.Writer, node, r.Stage)
		case m.Completed || m.Failed:
			return fmt.Sprintf("%s of node %q writes a VMI's status only %s; this migration has ended", r.Writer, node, r.Stage)
		}
	}
	return ""
}

// newMigration says the write starts another migration than the VMI's last:
// migrationState's migrationUid changes.
func newMigration(old, updated *virtv1.VirtualMachineInstanceStatus) bool {
	return updated.MigrationState != nil && (old.MigrationState == nil || old.MigrationState.MigrationUID != updated.MigrationState.MigrationUID)
}

// switchesOver says the write moves the VMI to node as the completion of
// the migration there.
func switchesOver(node string, updated *virtv1.VirtualMachineInstanceStatus) bool {
	m := updated.MigrationState
	return node != "" && updated.NodeName == node && m != nil && m.Completed && !m.Failed && m.TargetNode == node
}

// phase checks a change of phase, reason or transitions against the row.
func (r *VMIRow) phase(old, updated *virtv1.VirtualMachineInstanceStatus) []Violation {
	if len(r.Phases) == 0 {
		return []Violation{{"status.phase", fmt.Sprintf("%s does not change a VMI's phase, reason or transitions", r.Writer)}}
	}
	target := updated.Phase
	if !slices.Contains(r.Phases, target) {
		return []Violation{{"status.phase", fmt.Sprintf("%s may not move a VMI to phase %q (it moves VMIs to %v)", r.Writer, target, r.Phases)}}
	}
	if r.Reason != "" && updated.Reason != r.Reason {
		return []Violation{{"status.reason", fmt.Sprintf("%s moves a VMI to %s only for reason %s", r.Writer, target, r.Reason)}}
	}
	if updated.Reason != old.Reason || updated.Phase != old.Phase {
		for _, o := range VMI {
			if o.Writer != r.Writer && o.Reason != "" && o.Reason == updated.Reason {
				return []Violation{{"status.reason", fmt.Sprintf("reason %s is %s's", updated.Reason, o.Writer)}}
			}
		}
	}
	return nil
}

// owners names the writers of status field f, for a refusal.
func owners(f string) string {
	var ws []string
	for _, r := range VMI {
		if Owned[r.Writer].Has(f) {
			ws = append(ws, string(r.Writer))
		}
	}
	if len(ws) == 0 {
		return "no component writes it"
	}
	return fmt.Sprintf("written by %v", ws)
}

// Foreign lists the VMI status fields a write from old to updated by w
// changes that w does not own, sorted; nil when the write stays in w's
// row. node is as for Check.
func Foreign(w Writer, node string, old, updated *virtv1.VirtualMachineInstanceStatus) []string {
	var out []string
	for _, v := range Check(w, node, old, updated) {
		out = append(out, v.Field)
	}
	return out
}
