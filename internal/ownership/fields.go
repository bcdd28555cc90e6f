package ownership

import (
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/util/sets"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Changed lists the VMI status fields that differ between a and b, sorted.
// It compares the JSON forms, so a field added to the type later is seen
// without a change here.
func Changed(a, b *virtv1.VirtualMachineInstanceStatus) []string {
	return changed(vmiFields(a), vmiFields(b))
}

// ChangedVM lists the VM status fields that differ between a and b, sorted.
func ChangedVM(a, b *virtv1.VirtualMachineStatus) []string {
	return changed(flatten(a), flatten(b))
}

func changed(fa, fb map[string]any) []string {
	out := sets.New[string]()
	for k, v := range fa {
		if !reflect.DeepEqual(v, fb[k]) {
			out.Insert(k)
		}
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			out.Insert(k)
		}
	}
	return sets.List(out)
}

// vmiFields flattens s into its JSON fields, each condition a field of its
// own, and each field of migrationState one (migrationState.targetNode):
// the two ends of a migration and virt-controller write different fields
// of it.
func vmiFields(s *virtv1.VirtualMachineInstanceStatus) map[string]any {
	c := s.DeepCopy()
	conditions := c.Conditions
	c.Conditions = nil
	migration := c.MigrationState
	c.MigrationState = nil
	out := flatten(c)
	for _, cond := range conditions {
		out[fmt.Sprintf("conditions[%s]", cond.Type)] = cond
	}
	if migration != nil {
		for k, v := range flatten(migration) {
			out[migrationStatePrefix+k] = v
		}
	}
	return out
}

// migrationStatePrefix starts the names of migrationState's fields.
const migrationStatePrefix = "migrationState."

// flatten is v's JSON object as a map of its top-level fields.
func flatten(v any) map[string]any {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", v, err)) // API types always marshal
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(fmt.Sprintf("unmarshal %T: %v", v, err))
	}
	return out
}
