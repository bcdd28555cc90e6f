package ownership

import (
	"fmt"
	"slices"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// VMRow is one writer's part of a VM's status.
type VMRow struct {
	Writer Writer
	// Fields it may change.
	Fields []string
}

// VM is the table of a VM's status. The VM's conditions are all the VM
// controller's, so they are one field here. A new status field (pinned
// revisions, say) gets its row's writer before anyone may write it.
var VM = []VMRow{{
	Writer: VMController,
	Fields: []string{"printableStatus", "created", "ready", "conditions", "startFailure", "observedGeneration",
		"stateChangeRequests", "instancetypeRef", "preferenceRef"},
}, {
	// start, stop and restart append the user's request and end a
	// crash-loop back-off; written inside the server, not through /status.
	Writer: APIServer,
	Fields: []string{"stateChangeRequests", "startFailure"},
}}

// VMRowOf is w's row of the VM table, nil if w writes no VM status.
func VMRowOf(w Writer) *VMRow {
	for i := range VM {
		if VM[i].Writer == w {
			return &VM[i]
		}
	}
	return nil
}

// CheckVM lists what a write of a VM's status from old to updated by w
// changes that w does not own, nil when it stays in w's row.
func CheckVM(w Writer, old, updated *virtv1.VirtualMachineStatus) []Violation {
	changed := ChangedVM(old, updated)
	if len(changed) == 0 {
		return nil
	}
	r := VMRowOf(w)
	if r == nil {
		return []Violation{{"status", fmt.Sprintf("%s writes no VM status", w)}}
	}
	var out []Violation
	for _, f := range changed {
		if !slices.Contains(r.Fields, f) {
			out = append(out, Violation{"status." + f, fmt.Sprintf("%s does not own it (%s)", w, vmOwners(f))})
		}
	}
	return out
}

func vmOwners(f string) string {
	var ws []string
	for _, r := range VM {
		if slices.Contains(r.Fields, f) {
			ws = append(ws, string(r.Writer))
		}
	}
	if len(ws) == 0 {
		return "no component writes it"
	}
	return fmt.Sprintf("written by %v", ws)
}
