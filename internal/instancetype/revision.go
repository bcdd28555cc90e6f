package instancetype

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// kubevirtGroupVersion is where KubeVirt's own revisions come from: their
// JSON is ours, so a VM moved over with its revisions keeps them.
const kubevirtGroupVersion = "instancetype.kubevirt.io/v1beta1"

// Captured is an instancetype or preference as a revision holds it: one of
// the four kinds, with its name, UID and generation kept and the rest of
// its metadata dropped.
type Captured struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	// Instancetype is set for the two instancetype kinds.
	Instancetype *virtv1.VirtualMachineInstancetypeSpec
	// Preference is set for the two preference kinds.
	Preference *virtv1.VirtualMachinePreferenceSpec
}

// IsInstancetype reports whether c is a copy of an instancetype.
func (c *Captured) IsInstancetype() bool { return c.Instancetype != nil }

// NewRevision is the ControllerRevision in vm's namespace, controlled by vm,
// that holds a copy of obj (an instancetype or preference of either scope).
// Its name follows from vm and obj's identity and generation, so capturing
// the same object again finds the revision made before.
func NewRevision(vm *virtv1.VirtualMachine, obj runtime.Object) (*appsv1.ControllerRevision, error) {
	var kind string
	var meta metav1.ObjectMeta
	var spec any
	switch o := obj.(type) {
	case *virtv1.VirtualMachineInstancetype:
		kind, meta, spec = virtv1.InstancetypeKind, o.ObjectMeta, o.Spec
	case *virtv1.VirtualMachineClusterInstancetype:
		kind, meta, spec = virtv1.ClusterInstancetypeKind, o.ObjectMeta, o.Spec
	case *virtv1.VirtualMachinePreference:
		kind, meta, spec = virtv1.PreferenceKind, o.ObjectMeta, o.Spec
	case *virtv1.VirtualMachineClusterPreference:
		kind, meta, spec = virtv1.ClusterPreferenceKind, o.ObjectMeta, o.Spec
	default:
		return nil, fmt.Errorf("cannot capture a %T", obj)
	}
	// The object as a client would read it, minus what says nothing about
	// the size or preferences (labels, annotations, managed fields).
	raw, err := json.Marshal(map[string]any{
		"apiVersion": virtv1.SchemeGroupVersion.String(),
		"kind":       kind,
		"metadata": metav1.ObjectMeta{
			Name: meta.Name, Namespace: meta.Namespace, UID: meta.UID, Generation: meta.Generation,
		},
		"spec": spec,
	})
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", kind, meta.Name, err)
	}
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            RevisionName(vm.Name, meta.Name, string(meta.UID), meta.Generation),
			Namespace:       vm.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(vm, virtv1.SchemeGroupVersion.WithKind("VirtualMachine"))},
			Labels: map[string]string{
				virtv1.RevisionObjectKindLabel:       kind,
				virtv1.RevisionObjectNameLabel:       labelValue(meta.Name),
				virtv1.RevisionObjectUIDLabel:        string(meta.UID),
				virtv1.RevisionObjectGenerationLabel: strconv.FormatInt(meta.Generation, 10),
			},
		},
		// Raw, not Object: the protobuf encoding of a RawExtension carries
		// only Raw.
		Data:     runtime.RawExtension{Raw: raw},
		Revision: meta.Generation,
	}, nil
}

// RevisionName is the name of the revision of generation gen of the object
// objName (UID uid) captured for VM vmName: KubeVirt's
// <vm>-<object>-<uid>-<generation>, hashed when that is longer than a name
// may be.
func RevisionName(vmName, objName, uid string, gen int64) string {
	name := fmt.Sprintf("%s-%s-%s-%d", vmName, objName, uid, gen)
	if len(name) <= validation.DNS1123SubdomainMaxLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return vmName + "-" + hex.EncodeToString(sum[:10])
}

// labelValue is name if it fits in a label value, else a hash of it.
func labelValue(name string) string {
	if len(name) <= validation.LabelValueMaxLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:16])
}

// ReadRevision decodes what a revision holds: a copy of one of the four
// kinds, written by this platform or by KubeVirt.
func ReadRevision(cr *appsv1.ControllerRevision) (*Captured, error) {
	raw := cr.Data.Raw
	if len(raw) == 0 && cr.Data.Object != nil {
		var err error
		if raw, err = json.Marshal(cr.Data.Object); err != nil {
			return nil, fmt.Errorf("ControllerRevision %s: %w", cr.Name, err)
		}
	}
	var head struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("ControllerRevision %s holds no instancetype or preference: %w", cr.Name, err)
	}
	if head.APIVersion != virtv1.SchemeGroupVersion.String() && head.APIVersion != kubevirtGroupVersion {
		return nil, fmt.Errorf("ControllerRevision %s holds a %s %s, not an instancetype or preference", cr.Name, head.APIVersion, head.Kind)
	}
	c := &Captured{TypeMeta: head.TypeMeta, ObjectMeta: head.ObjectMeta}
	switch head.Kind {
	case virtv1.InstancetypeKind, virtv1.ClusterInstancetypeKind:
		c.Instancetype = &virtv1.VirtualMachineInstancetypeSpec{}
		if err := json.Unmarshal(head.Spec, c.Instancetype); err != nil {
			return nil, fmt.Errorf("ControllerRevision %s: spec of %s %s: %w", cr.Name, head.Kind, head.Name, err)
		}
	case virtv1.PreferenceKind, virtv1.ClusterPreferenceKind:
		c.Preference = &virtv1.VirtualMachinePreferenceSpec{}
		if err := json.Unmarshal(head.Spec, c.Preference); err != nil {
			return nil, fmt.Errorf("ControllerRevision %s: spec of %s %s: %w", cr.Name, head.Kind, head.Name, err)
		}
	default:
		return nil, fmt.Errorf("ControllerRevision %s holds a %s, not an instancetype or preference", cr.Name, head.Kind)
	}
	return c, nil
}
