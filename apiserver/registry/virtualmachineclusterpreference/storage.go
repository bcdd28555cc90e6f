package virtualmachineclusterpreference

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
)

// REST is the storage of virtualmachineclusterpreferences.
type REST struct {
	*genericregistry.Store
}

var _ rest.ShortNamesProvider = &REST{}

// ShortNames are KubeVirt's.
func (*REST) ShortNames() []string {
	return []string{"vmcp", "vmcps"}
}

// NewREST returns the storage of virtualmachineclusterpreferences.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	s := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &virtualization.VirtualMachineClusterPreference{} },
		NewListFunc:               func() runtime.Object { return &virtualization.VirtualMachineClusterPreferenceList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  virtualization.Resource("virtualmachineclusterpreferences"),
		SingularQualifiedResource: virtualization.Resource("virtualmachineclusterpreference"),

		CreateStrategy: s,
		UpdateStrategy: s,
		DeleteStrategy: s,

		TableConvertor: tableConvertor{},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, fmt.Errorf("virtualmachineclusterpreferences storage: %w", err)
	}
	return &REST{store}, nil
}
