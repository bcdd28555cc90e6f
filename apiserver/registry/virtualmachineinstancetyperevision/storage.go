package virtualmachineinstancetyperevision

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
)

// REST is the storage of virtualmachineinstancetyperevisions.
type REST struct {
	*genericregistry.Store
}

var _ rest.ShortNamesProvider = &REST{}

// ShortNames: KubeVirt has no such kind to share names with.
func (*REST) ShortNames() []string {
	return []string{"vmrevision", "vmrevisions", "vmrev", "vmrevs"}
}

// NewREST returns the storage of virtualmachineinstancetyperevisions.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	s := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &virtualization.VirtualMachineInstancetypeRevision{} },
		NewListFunc:               func() runtime.Object { return &virtualization.VirtualMachineInstancetypeRevisionList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  virtualization.Resource("virtualmachineinstancetyperevisions"),
		SingularQualifiedResource: virtualization.Resource("virtualmachineinstancetyperevision"),

		CreateStrategy: s,
		UpdateStrategy: s,
		DeleteStrategy: s,

		TableConvertor: tableConvertor{},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, fmt.Errorf("virtualmachineinstancetyperevisions storage: %w", err)
	}
	return &REST{store}, nil
}
