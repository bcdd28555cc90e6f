package instancetype

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Source reads what a VM's references name, all of it kept in the
// platform's own store: the API server reads its storage, the VM
// controller its informers and its client.
type Source struct {
	Instancetype        func(ctx context.Context, namespace, name string) (*virtv1.VirtualMachineInstancetype, error)
	ClusterInstancetype func(ctx context.Context, name string) (*virtv1.VirtualMachineClusterInstancetype, error)
	Preference          func(ctx context.Context, namespace, name string) (*virtv1.VirtualMachinePreference, error)
	ClusterPreference   func(ctx context.Context, name string) (*virtv1.VirtualMachineClusterPreference, error)
	// Revision reads a VirtualMachineInstancetypeRevision.
	Revision func(ctx context.Context, namespace, name string) (*virtv1.VirtualMachineInstancetypeRevision, error)
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
		return nil, nil
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
		return nil, nil
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
	r, err := s.Revision(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, field.ErrorList{field.NotFound(p, name)}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read revision %s/%s: %w", ns, name, err)
	}
	// What it holds was validated when it was created, and it never
	// changes: only whether it holds the kind the reference needs is left
	// to check.
	c, err := ReadRevision(r)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(p, name, err.Error())}, nil
	}
	return c, nil, nil
}

// notFound turns a missing object into a field error and passes other
// failures on.
func notFound(p *field.Path, name, kind string, err error) (field.ErrorList, error) {
	if apierrors.IsNotFound(err) {
		return field.ErrorList{field.NotFound(p, name)}, nil
	}
	return nil, fmt.Errorf("read %s %s: %w", kind, name, err)
}
