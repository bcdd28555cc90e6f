package apiserver

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/registry/virtualmachine"

	"kubevirt.dev/virt/apiserver/registry/virtualmachineclusterinstancetype"
	"kubevirt.dev/virt/apiserver/registry/virtualmachineclusterpreference"
	"kubevirt.dev/virt/apiserver/registry/virtualmachineinstancetype"
	"kubevirt.dev/virt/apiserver/registry/virtualmachineinstancetyperevision"
	"kubevirt.dev/virt/apiserver/registry/virtualmachinepreference"
	"kubevirt.dev/virt/internal/instancetype"
)

// instancetypeStorage is the storage of the four kinds a VM's
// spec.instancetype and spec.preference refer to, and of the revisions VMs
// are pinned to.
type instancetypeStorage struct {
	instancetypes        *virtualmachineinstancetype.REST
	clusterInstancetypes *virtualmachineclusterinstancetype.REST
	preferences          *virtualmachinepreference.REST
	clusterPreferences   *virtualmachineclusterpreference.REST
	revisions            *virtualmachineinstancetyperevision.REST
}

func newInstancetypeStorage(optsGetter generic.RESTOptionsGetter) (*instancetypeStorage, error) {
	var s instancetypeStorage
	var err error
	if s.instancetypes, err = virtualmachineinstancetype.NewREST(Scheme, optsGetter); err != nil {
		return nil, err
	}
	if s.clusterInstancetypes, err = virtualmachineclusterinstancetype.NewREST(Scheme, optsGetter); err != nil {
		return nil, err
	}
	if s.preferences, err = virtualmachinepreference.NewREST(Scheme, optsGetter); err != nil {
		return nil, err
	}
	if s.clusterPreferences, err = virtualmachineclusterpreference.NewREST(Scheme, optsGetter); err != nil {
		return nil, err
	}
	if s.revisions, err = virtualmachineinstancetyperevision.NewREST(Scheme, optsGetter); err != nil {
		return nil, err
	}
	return &s, nil
}

// storage maps each resource to its storage, for the API group.
func (s *instancetypeStorage) storage() map[string]rest.Storage {
	return map[string]rest.Storage{
		"virtualmachineinstancetypes":         s.instancetypes,
		"virtualmachineclusterinstancetypes":  s.clusterInstancetypes,
		"virtualmachinepreferences":           s.preferences,
		"virtualmachineclusterpreferences":    s.clusterPreferences,
		"virtualmachineinstancetyperevisions": s.revisions,
	}
}

// expander expands VMs with the instancetypes, preferences and revisions
// of this server's own storage: validating a VM reads nothing from the
// kube-apiserver.
type expander struct {
	source instancetype.Source
}

var _ virtualmachine.Expander = &expander{}

// newExpander reads the storage of the five kinds.
func (s *instancetypeStorage) newExpander() *expander {
	get := func(store *genericregistry.Store, ctx context.Context, namespace, name string, out runtime.Object) error {
		obj, err := store.Get(genericapirequest.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		return Scheme.Convert(obj, out, nil)
	}
	src := instancetype.Source{
		Instancetype: func(ctx context.Context, namespace, name string) (*virtv1.VirtualMachineInstancetype, error) {
			out := &virtv1.VirtualMachineInstancetype{}
			return out, get(s.instancetypes.Store, ctx, namespace, name, out)
		},
		ClusterInstancetype: func(ctx context.Context, name string) (*virtv1.VirtualMachineClusterInstancetype, error) {
			out := &virtv1.VirtualMachineClusterInstancetype{}
			return out, get(s.clusterInstancetypes.Store, ctx, "", name, out)
		},
		Preference: func(ctx context.Context, namespace, name string) (*virtv1.VirtualMachinePreference, error) {
			out := &virtv1.VirtualMachinePreference{}
			return out, get(s.preferences.Store, ctx, namespace, name, out)
		},
		ClusterPreference: func(ctx context.Context, name string) (*virtv1.VirtualMachineClusterPreference, error) {
			out := &virtv1.VirtualMachineClusterPreference{}
			return out, get(s.clusterPreferences.Store, ctx, "", name, out)
		},
		Revision: func(ctx context.Context, namespace, name string) (*virtv1.VirtualMachineInstancetypeRevision, error) {
			out := &virtv1.VirtualMachineInstancetypeRevision{}
			return out, get(s.revisions.Store, ctx, namespace, name, out)
		},
	}
	return &expander{source: src}
}

// Expand converts vm to v1, where the expansion is defined, and the
// result back.
func (e *expander) Expand(ctx context.Context, vm *virtualization.VirtualMachine) (*virtualization.VirtualMachine, field.ErrorList, error) {
	v1vm := &virtv1.VirtualMachine{}
	if err := Scheme.Convert(vm, v1vm, nil); err != nil {
		return nil, nil, fmt.Errorf("convert VM %s: %w", vm.Name, err)
	}
	exp, errs, err := e.source.Resolve(ctx, v1vm)
	if err != nil || len(errs) > 0 {
		return nil, errs, err
	}
	expanded, errs := instancetype.ExpandVM(v1vm, exp)
	if len(errs) > 0 {
		return nil, errs, nil
	}
	out := &virtualization.VirtualMachine{}
	if err := Scheme.Convert(expanded, out, nil); err != nil {
		return nil, nil, fmt.Errorf("convert expanded VM %s: %w", vm.Name, err)
	}
	return out, nil, nil
}
