package instancetype

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	strictjson "sigs.k8s.io/json"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apivalidation "kubevirt.dev/virt/apis/virtualization/validation"
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

// NewRevision is the revision in vm's namespace, controlled by vm, that
// holds a copy of obj (an instancetype or preference of either scope).
// Its name follows from vm and obj's identity and generation, so capturing
// the same object again finds the revision made before.
func NewRevision(vm *virtv1.VirtualMachine, obj runtime.Object) (*virtv1.VirtualMachineInstancetypeRevision, error) {
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
	return &virtv1.VirtualMachineInstancetypeRevision{
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
func ReadRevision(r *virtv1.VirtualMachineInstancetypeRevision) (*Captured, error) {
	raw := r.Data.Raw
	if len(raw) == 0 && r.Data.Object != nil {
		var err error
		if raw, err = json.Marshal(r.Data.Object); err != nil {
			return nil, fmt.Errorf("revision %s: %w", r.Name, err)
		}
	}
	c, _, err := readData(raw)
	if err != nil {
		return nil, fmt.Errorf("revision %s: %w", r.Name, err)
	}
	return c, nil
}

// readData decodes a revision's data. It also reports the fields of the
// copied spec that no instancetype or preference has: decoding ignores
// them, creating a revision refuses them.
func readData(raw []byte) (*Captured, []error, error) {
	var head struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, nil, fmt.Errorf("holds no instancetype or preference: %w", err)
	}
	if head.APIVersion != virtv1.SchemeGroupVersion.String() && head.APIVersion != kubevirtGroupVersion {
		return nil, nil, fmt.Errorf("holds a %s %s, not an instancetype or preference", head.APIVersion, head.Kind)
	}
	c := &Captured{TypeMeta: head.TypeMeta, ObjectMeta: head.ObjectMeta}
	var spec any
	switch head.Kind {
	case virtv1.InstancetypeKind, virtv1.ClusterInstancetypeKind:
		c.Instancetype = &virtv1.VirtualMachineInstancetypeSpec{}
		spec = c.Instancetype
	case virtv1.PreferenceKind, virtv1.ClusterPreferenceKind:
		c.Preference = &virtv1.VirtualMachinePreferenceSpec{}
		spec = c.Preference
	default:
		return nil, nil, fmt.Errorf("holds a %s, not an instancetype or preference", head.Kind)
	}
	if len(head.Spec) == 0 {
		return nil, nil, fmt.Errorf("%s %s has no spec", head.Kind, head.Name)
	}
	strict, err := strictjson.UnmarshalStrict(head.Spec, spec, strictjson.DisallowUnknownFields)
	if err != nil {
		return nil, nil, fmt.Errorf("spec of %s %s: %w", head.Kind, head.Name, err)
	}
	return c, strict, nil
}

// ValidateRevisionData checks a revision's data as the object it copies
// would be checked when created: virt-apiserver runs it once, when the
// revision is created (revisions never change), so that a VM's validation
// and its instances can trust what a revision holds.
func ValidateRevisionData(raw []byte, p *field.Path) field.ErrorList {
	c, strict, err := readData(raw)
	if err != nil {
		return field.ErrorList{field.Invalid(p, "", err.Error())}
	}
	var errs field.ErrorList
	for _, e := range strict {
		errs = append(errs, field.Invalid(p.Child("spec"), "", e.Error()))
	}
	if len(errs) > 0 {
		return errs
	}
	specPath := p.Child("spec")
	if c.Instancetype != nil {
		var internal virtualization.VirtualMachineInstancetypeSpec
		if err := virtv1.Convert_v1_VirtualMachineInstancetypeSpec_To_virtualization_VirtualMachineInstancetypeSpec(c.Instancetype, &internal, nil); err != nil {
			return field.ErrorList{field.Invalid(specPath, "", err.Error())}
		}
		return apivalidation.ValidateInstancetypeSpec(&internal, specPath)
	}
	var internal virtualization.VirtualMachinePreferenceSpec
	if err := virtv1.Convert_v1_VirtualMachinePreferenceSpec_To_virtualization_VirtualMachinePreferenceSpec(c.Preference, &internal, nil); err != nil {
		return field.ErrorList{field.Invalid(specPath, "", err.Error())}
	}
	return apivalidation.ValidatePreferenceSpec(&internal, specPath)
}
