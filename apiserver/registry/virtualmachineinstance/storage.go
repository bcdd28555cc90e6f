package virtualmachineinstance

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"kubevirt.dev/virt/apis/virtualization"
)

// REST is the storage of virtualmachineinstances.
type REST struct {
	*genericregistry.Store
}

var _ rest.ShortNamesProvider = &REST{}
var _ rest.CategoriesProvider = &REST{}

// ShortNames are what kubectl accepts instead of virtualmachineinstances.
func (*REST) ShortNames() []string { return []string{"vmi", "vmis"} }

// Categories put VMIs in `kubectl get all` and `kubectl get virt`.
func (*REST) Categories() []string { return []string{"all", "virt"} }

// NewREST returns the storage of the main resource and of /status.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, *StatusREST, error) {
	s := NewStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &virtualization.VirtualMachineInstance{} },
		NewListFunc:               func() runtime.Object { return &virtualization.VirtualMachineInstanceList{} },
		PredicateFunc:             Match,
		DefaultQualifiedResource:  virtualization.Resource("virtualmachineinstances"),
		SingularQualifiedResource: virtualization.Resource("virtualmachineinstance"),

		CreateStrategy:      s,
		UpdateStrategy:      s,
		DeleteStrategy:      s,
		ResetFieldsStrategy: s,

		TableConvertor: tableConvertor{},
	}
	options := &generic.StoreOptions{
		RESTOptions: optsGetter,
		AttrFunc:    GetAttrs,
		TriggerFunc: map[string]storage.IndexerFunc{NodeNameField: NodeNameTriggerFunc},
		Indexers: &cache.Indexers{
			storage.FieldIndex(NodeNameField):   NodeNameIndexFunc,
			storage.FieldIndex(TargetNodeField): TargetNodeIndexFunc,
		},
	}
	if err := store.CompleteWithOptions(options); err != nil {
		return nil, nil, fmt.Errorf("virtualmachineinstances storage: %w", err)
	}

	// The status store shares the main store's etcd and watch cache; only
	// how an update is prepared and validated differs.
	statusStore := *store
	status := NewStatusStrategy(s)
	statusStore.UpdateStrategy = status
	statusStore.ResetFieldsStrategy = status
	return &REST{store}, &StatusREST{store: &statusStore}, nil
}

// StatusREST is the storage of virtualmachineinstances/status.
type StatusREST struct {
	store *genericregistry.Store
}

var _ rest.Patcher = &StatusREST{}

// New returns an empty VMI.
func (r *StatusREST) New() runtime.Object { return &virtualization.VirtualMachineInstance{} }

// Destroy does nothing: the main store owns the storage.
func (r *StatusREST) Destroy() {}

// Get returns the VMI, so PATCH of /status can read what it patches.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update writes the status of a VMI; it never creates one.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields says what a status write leaves alone.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable prints a VMI read through /status like the main resource.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}
