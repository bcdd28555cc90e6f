package ownership

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Resource names the kind of object a row of the object table is about.
type Resource string

const (
	VMIs  Resource = "virtualmachineinstances"
	VMs   Resource = "virtualmachines"
	VMIMs Resource = "virtualmachineinstancemigrations"
)

// ObjectRow is what one writer may change of an object outside its status:
// its spec and the metadata users and controllers write.
type ObjectRow struct {
	Resource Resource
	Writer   Writer
	// Fields, of objectFields.
	Fields []string
}

// objectFields are the parts of an object a write of the main resource can
// change; the rest of its metadata is the server's or immutable.
var objectFields = []string{"spec", "metadata.labels", "metadata.annotations", "metadata.finalizers", "metadata.ownerReferences"}

// Object is the table of the components' writes of a VMI's and a VM's main
// resource. Users (and their controllers) own the rest; a component has no
// business in a VMI's spec.
var Object = []ObjectRow{
	// The guest-shutdown finalizer, once the guest is down.
	{VMIs, Handler, []string{"metadata.finalizers"}},
	// The launcher-pod and guest-shutdown finalizers.
	{VMIs, VMIController, []string{"metadata.finalizers"}},
	// The guest-shutdown finalizer of a VMI whose node is gone.
	{VMIs, NodeHealth, []string{"metadata.finalizers"}},
	// Adopting and releasing VMIs.
	{VMIs, ReplicaSetController, []string{"metadata.ownerReferences"}},
	// The pinned instancetype and preference revisions.
	{VMs, VMController, []string{"spec"}},
	// The finalizer that makes deleting a migration cancel it.
	{VMIMs, MigrationController, []string{"metadata.finalizers"}},
}

// ObjectRowOf is w's row for resource r, nil if it has none.
func ObjectRowOf(r Resource, w Writer) *ObjectRow {
	for i := range Object {
		if Object[i].Resource == r && Object[i].Writer == w {
			return &Object[i]
		}
	}
	return nil
}

// CheckObject lists what a write of an object's main resource by w changes
// that w does not own: oldMeta and meta are the object's metadata,
// oldSpec and spec its spec (compared deeply).
func CheckObject(r Resource, w Writer, oldMeta, meta *metav1.ObjectMeta, oldSpec, spec any) []Violation {
	// Semantic equality: a nil and an empty list are the same, as they are
	// after a round trip through JSON (a patch).
	eq := equality.Semantic.DeepEqual
	diff := map[string]bool{
		"spec":                     !eq(oldSpec, spec),
		"metadata.labels":          !eq(oldMeta.Labels, meta.Labels),
		"metadata.annotations":     !eq(oldMeta.Annotations, meta.Annotations),
		"metadata.finalizers":      !eq(oldMeta.Finalizers, meta.Finalizers),
		"metadata.ownerReferences": !eq(oldMeta.OwnerReferences, meta.OwnerReferences),
	}
	row := ObjectRowOf(r, w)
	var out []Violation
	for _, f := range objectFields {
		if !diff[f] || (row != nil && slices.Contains(row.Fields, f)) {
			continue
		}
		out = append(out, Violation{f, fmt.Sprintf("%s does not change it of %s", w, r)})
	}
	return out
}

// CheckMigrationStatus says whether w may write a migration's status: only
// the migration controller does.
func CheckMigrationStatus(w Writer) []Violation {
	if w == MigrationController {
		return nil
	}
	return []Violation{{"status", fmt.Sprintf("%s writes no migration status (%s does)", w, MigrationController)}}
}
