package virtualmachineinstancereplicaset

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// scaleResource names the subresource in errors.
var scaleResource = virtualization.Resource("virtualmachineinstancereplicasets/scale")

// replicasPaths says where each served version of the replica set keeps
// what a Scale calls spec.replicas, so that the field manager credits a
// scale's writer with the replica set's spec.replicas and the other way
// round.
var replicasPaths = managedfields.ResourcePathMappings{
	virtv1.SchemeGroupVersion.String(): fieldpath.MakePathOrDie("spec", "replicas"),
}

// AddScaleToScheme registers autoscaling/v1 Scale, the kind of /scale. It is
// registered as the internal version of autoscaling too: the API handlers
// convert a request's object to its group's internal version and back, and
// this server has no other Scale type, so both are the same Go type.
func AddScaleToScheme(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(autoscalingv1.SchemeGroupVersion, &autoscalingv1.Scale{})
	scheme.AddKnownTypes(schema.GroupVersion{Group: autoscalingv1.GroupName, Version: runtime.APIVersionInternal}, &autoscalingv1.Scale{})
	return nil
}

// ScaleREST is the storage of virtualmachineinstancereplicasets/scale: a
// view of a replica set whose only writable field is spec.replicas.
type ScaleREST struct {
	store *genericregistry.Store
}

var _ rest.Patcher = &ScaleREST{}
var _ rest.GroupVersionKindProvider = &ScaleREST{}

// GroupVersionKind is autoscaling/v1 Scale, what clients of any scalable
// resource (kubectl scale, the HorizontalPodAutoscaler) expect, whatever
// the version of the replica set.
func (r *ScaleREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

// New returns an empty Scale.
func (r *ScaleREST) New() runtime.Object { return &autoscalingv1.Scale{} }

// Destroy does nothing: the main store owns the storage.
func (r *ScaleREST) Destroy() {}

// Get returns the scale of the replica set name.
func (r *ScaleREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, scaleError(err, name)
	}
	return scaleOf(obj.(*virtualization.VirtualMachineInstanceReplicaSet)), nil
}

// Update sets spec.replicas of the replica set name from the Scale objInfo
// makes of its current scale, through the main resource's strategy, and
// returns the new scale. Admission sees Scales, not replica sets.
func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	obj, _, err := r.store.Update(ctx, name, &scaleUpdate{name: name, scale: objInfo},
		func(ctx context.Context, obj runtime.Object) error {
			return createValidation(ctx, scaleOf(obj.(*virtualization.VirtualMachineInstanceReplicaSet)))
		},
		func(ctx context.Context, obj, old runtime.Object) error {
			return updateValidation(ctx, scaleOf(obj.(*virtualization.VirtualMachineInstanceReplicaSet)),
				scaleOf(old.(*virtualization.VirtualMachineInstanceReplicaSet)))
		},
		false, options)
	if err != nil {
		return nil, false, scaleError(err, name)
	}
	return scaleOf(obj.(*virtualization.VirtualMachineInstanceReplicaSet)), false, nil
}

// scaleError names the subresource in a replica set's NotFound.
func scaleError(err error, name string) error {
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(scaleResource, name)
	}
	return err
}

// scaleOf is the Scale view of rs. The selector is the spec's, as a
// string, which is what the HorizontalPodAutoscaler lists instances with.
func scaleOf(rs *virtualization.VirtualMachineInstanceReplicaSet) *autoscalingv1.Scale {
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name:              rs.Name,
			Namespace:         rs.Namespace,
			UID:               rs.UID,
			ResourceVersion:   rs.ResourceVersion,
			CreationTimestamp: rs.CreationTimestamp,
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: desired(rs)},
		Status: autoscalingv1.ScaleStatus{Replicas: rs.Status.Replicas, Selector: selectorString(rs)},
	}
}

// scaleUpdate turns the stored replica set into its scale, lets the
// request change that scale, and carries the new replicas (and the
// resourceVersion the client saw, for its precondition) back into the
// replica set.
type scaleUpdate struct {
	name  string
	scale rest.UpdatedObjectInfo
}

func (u *scaleUpdate) Preconditions() *metav1.Preconditions { return u.scale.Preconditions() }

func (u *scaleUpdate) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	rs := oldObj.DeepCopyObject().(*virtualization.VirtualMachineInstanceReplicaSet)
	// The store hands an empty object when there is none to update.
	if rs.ResourceVersion == "" {
		return nil, apierrors.NewNotFound(scaleResource, u.name)
	}
	gv := virtv1.SchemeGroupVersion
	if info, ok := genericapirequest.RequestInfoFrom(ctx); ok {
		if requested := (schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}); replicasPaths[requested.String()] != nil {
			gv = requested
		}
	}
	managed := managedfields.NewScaleHandler(rs.ManagedFields, gv, replicasPaths)

	old := scaleOf(rs)
	var err error
	if old.ManagedFields, err = managed.ToSubresource(); err != nil {
		return nil, err
	}
	obj, err := u.scale.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	scale, ok := obj.(*autoscalingv1.Scale)
	if !ok || scale == nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected an autoscaling/v1 Scale, got %T", obj))
	}
	if errs := apimachineryvalidation.ValidateNonnegativeField(int64(scale.Spec.Replicas), field.NewPath("spec", "replicas")); len(errs) > 0 {
		return nil, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), rs.Name, errs)
	}
	if scale.UID != "" && scale.UID != rs.UID {
		return nil, apierrors.NewConflict(scaleResource, rs.Name,
			fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", scale.UID, rs.UID))
	}
	rs.Spec.Replicas = &scale.Spec.Replicas
	rs.ResourceVersion = scale.ResourceVersion
	if rs.ManagedFields, err = managed.ToParent(scale.ManagedFields); err != nil {
		return nil, err
	}
	return rs, nil
}
