package virtualmachineinstancetype

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
)

// REST is the storage of virtualmachineinstancetypes.
type REST struct {
	*genericregistry.Store
}

var _ rest.ShortNamesProvider = &REST{}
var _ rest.CategoriesProvider = &REST{}

// ShortNames are KubeVirt's.
func (*REST) ShortNames() []string {
	return []string{"vminstancetype", "vminstancetypes", "vmf", "vmfs"}
}

// Categories put instancetypes in `kubectl get all`, as in KubeVirt.
func (*REST) Categories() []string { return []string{"all"} }

// NewREST returns the storage of virtualmachineinstancetypes.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	s := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &virtualization.VirtualMachineInstancetype{} },
		NewListFunc:               func() runtime.Object { return &virtualization.VirtualMachineInstancetypeList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  virtualization.Resource("virtualmachineinstancetypes"),
		SingularQualifiedResource: virtualization.Resource("virtualmachineinstancetype"),

		CreateStrategy: s,
		UpdateStrategy: s,
		DeleteStrategy: s,

		TableConvertor: tableConvertor{},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, fmt.Errorf("virtualmachineinstancetypes storage: %w", err)
	}
	return &REST{store}, nil
}
