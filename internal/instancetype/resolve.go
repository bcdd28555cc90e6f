package instancetype

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apis/virtualization/validation"
)

// Source reads what a VM's references name. The API server reads its own
// storage, the VM controller its informers; both read revisions from the
// kube-apiserver.
type Source struct {
	Instancetype        func(ctx context.Context, namespace, name string) (*virtv1.VirtualMachineInstancetype, error)
	ClusterInstancetype func(ctx context.Context, name string) (*virtv1.VirtualMachineClusterInstancetype, error)
	Preference          func(ctx context.Context, namespace, name string) (*virtv1.VirtualMachinePreference, error)
	ClusterPreference   func(ctx context.Context, name string) (*virtv1.VirtualMachineClusterPreference, error)
	// Revision reads a ControllerRevision; nil where there are none to
	// read: a virt-apiserver without a kube-apiserver (--standalone).
	Revision func(ctx context.Context, namespace, name string) (*appsv1.ControllerRevision, error)
}

// Resolve finds the instancetype and preference vm references: the
// revision its revisionName names, else the object as it is now. What the
// VM gets wrong (a kind, a missing object, a revision of something else)
// is a field error under spec; failing to read is an error.
func (s *Source) Resolve(ctx context.Context, vm *virtv1.VirtualMachine) (*Expansion, field.ErrorList, error) {
	e := &Expansion{}
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if m := vm.Spec.Instancetype; m != nil {
		fe, err := s.resolveInstancetype(ctx, vm.Namespace, m, spec.Child("instancetype"), e)
		if err != nil {
			return nil, nil, err
		}
		errs = append(errs, fe...)
	}
	if m := vm.Spec.Preference; m != nil {
		fe, err := s.resolvePreference(ctx, vm.Namespace, m, spec.Child("preference"), e)
		if err != nil {
			return nil, nil, err
		}
		errs = append(errs, fe...)
	}
	if len(errs) > 0 {
		return nil, errs, nil
	}
	return e, nil, nil
}

func (s *Source) resolveInstancetype(ctx context.Context, ns string, m *virtv1.InstancetypeMatcher, p *field.Path, e *Expansion) (field.ErrorList, error) {
	kind, ok := virtv1.NormalizeInstancetypeKind(m.Kind)
	if !ok {
		return field.ErrorList{field.NotSupported(p.Child("kind"), m.Kind, []string{virtv1.ClusterInstancetypeKind, virtv1.InstancetypeKind})}, nil
	}
	e.InstancetypeKind, e.InstancetypeName = kind, m.Name
	if m.RevisionName != "" {
		c, fe, err := s.revision(ctx, ns, m.RevisionName, p.Child("revisionName"))
		if fe != nil || err != nil {
			return fe, err
		}
		if !c.IsInstancetype() {
			return field.ErrorList{field.Invalid(p.Child("revisionName"), m.RevisionName, "holds a "+c.Kind+", not an instancetype")}, nil
		}
		e.Instancetype = c.Instancetype
		return validateCaptured(p.Child("revisionName"), m.RevisionName, c), nil
	}
	switch kind {
	case virtv1.InstancetypeKind:
		it, err := s.Instancetype(ctx, ns, m.Name)
		if err != nil {
			return notFound(p.Child("name"), m.Name, kind, err)
		}
		e.Instancetype = &it.Spec
	default:
		it, err := s.ClusterInstancetype(ctx, m.Name)
		if err != nil {
			return notFound(p.Child("name"), m.Name, kind, err)
		}
		e.Instancetype = &it.Spec
	}
	return nil, nil
}

func (s *Source) resolvePreference(ctx context.Context, ns string, m *virtv1.PreferenceMatcher, p *field.Path, e *Expansion) (field.ErrorList, error) {
	kind, ok := virtv1.NormalizePreferenceKind(m.Kind)
	if !ok {
		return field.ErrorList{field.NotSupported(p.Child("kind"), m.Kind, []string{virtv1.ClusterPreferenceKind, virtv1.PreferenceKind})}, nil
	}
	e.PreferenceKind, e.PreferenceName = kind, m.Name
	if m.RevisionName != "" {
		c, fe, err := s.revision(ctx, ns, m.RevisionName, p.Child("revisionName"))
		if fe != nil || err != nil {
			return fe, err
		}
		if c.IsInstancetype() {
			return field.ErrorList{field.Invalid(p.Child("revisionName"), m.RevisionName, "holds a "+c.Kind+", not a preference")}, nil
		}
		e.Preference = c.Preference
		return validateCaptured(p.Child("revisionName"), m.RevisionName, c), nil
	}
	switch kind {
	case virtv1.PreferenceKind:
		pref, err := s.Preference(ctx, ns, m.Name)
		if err != nil {
			return notFound(p.Child("name"), m.Name, kind, err)
		}
		e.Preference = &pref.Spec
	default:
		pref, err := s.ClusterPreference(ctx, m.Name)
		if err != nil {
			return notFound(p.Child("name"), m.Name, kind, err)
		}
		e.Preference = &pref.Spec
	}
	return nil, nil
}

func (s *Source) revision(ctx context.Context, ns, name string, p *field.Path) (*Captured, field.ErrorList, error) {
	if s.Revision == nil {
		return nil, field.ErrorList{field.Forbidden(p, "ControllerRevisions are kept in the kube-apiserver, and this server has none (--standalone)")}, nil
	}
	cr, err := s.Revision(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, field.ErrorList{field.NotFound(p, name)}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read ControllerRevision %s/%s: %w", ns, name, err)
	}
	c, err := ReadRevision(cr)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(p, name, err.Error())}, nil
	}
	return c, nil, nil
}

// validateCaptured checks a revision's copy as if it were created now: a
// revision is written by a client (the VM controller, or KubeVirt before a
// move) and is no more trusted than any object.
func validateCaptured(p *field.Path, name string, c *Captured) field.ErrorList {
	var errs field.ErrorList
	if c.Instancetype != nil {
		var internal virtualization.VirtualMachineInstancetypeSpec
		if err := virtv1.Convert_v1_VirtualMachineInstancetypeSpec_To_virtualization_VirtualMachineInstancetypeSpec(c.Instancetype, &internal, nil); err != nil {
			return field.ErrorList{field.Invalid(p, name, err.Error())}
		}
		errs = validation.ValidateInstancetypeSpec(&internal, field.NewPath("spec"))
	} else {
		var internal virtualization.VirtualMachinePreferenceSpec
		if err := virtv1.Convert_v1_VirtualMachinePreferenceSpec_To_virtualization_VirtualMachinePreferenceSpec(c.Preference, &internal, nil); err != nil {
			return field.ErrorList{field.Invalid(p, name, err.Error())}
		}
		errs = validation.ValidatePreferenceSpec(&internal, field.NewPath("spec"))
	}
	if len(errs) > 0 {
		return field.ErrorList{field.Invalid(p, name, "the "+c.Kind+" it holds is invalid: "+errs.ToAggregate().Error())}
	}
	return nil
}

// notFound turns a missing object into a field error and passes other
// failures on.
func notFound(p *field.Path, name, kind string, err error) (field.ErrorList, error) {
	if apierrors.IsNotFound(err) {
		return field.ErrorList{field.NotFound(p, name)}, nil
	}
	return nil, fmt.Errorf("read %s %s: %w", kind, name, err)
}
