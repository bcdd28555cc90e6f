package virtualmachineinstancereplicaset

import (
	"context"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
)

func TestScale(t *testing.T) {
	storage, status, scale := newStorage(t)
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)
	rs := validReplicaSet("web")
	rs.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}
	rs.Spec.Template.ObjectMeta.Labels["tier"] = "front"
	if _, err := storage.Create(ctx, rs, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	update(t, ctx, status, "web", func(rs *virtualization.VirtualMachineInstanceReplicaSet) { rs.Status.Replicas = 1 })

	obj, err := scale.Get(ctx, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*autoscalingv1.Scale)
	if got.Name != "web" || got.Spec.Replicas != 2 || got.Status.Replicas != 1 || got.Status.Selector != "app=web,tier" {
		t.Errorf("scale = %+v, want web: 2 replicas asked, 1 observed, selector app=web,tier", got)
	}

	setReplicas := func(n int32, mutate ...func(*autoscalingv1.Scale)) (*autoscalingv1.Scale, error) {
		obj, _, err := scale.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			s := old.(*autoscalingv1.Scale).DeepCopy()
			s.Spec.Replicas = n
			for _, m := range mutate {
				m(s)
			}
			return s, nil
		}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		return obj.(*autoscalingv1.Scale), nil
	}
	scaled, err := setReplicas(5)
	if err != nil {
		t.Fatal(err)
	}
	if scaled.Spec.Replicas != 5 {
		t.Errorf("scaled to %d, want 5", scaled.Spec.Replicas)
	}
	stored, err := storage.Get(ctx, "web", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := stored.(*virtualization.VirtualMachineInstanceReplicaSet); *s.Spec.Replicas != 5 || s.Generation != 2 || s.Status.Replicas != 1 {
		t.Errorf("replica set after scale: replicas %d generation %d status.replicas %d; want 5, 2, 1", *s.Spec.Replicas, s.Generation, s.Status.Replicas)
	}

	t.Run("negative replicas are refused", func(t *testing.T) {
		_, err := setReplicas(-1)
		if !apierrors.IsInvalid(err) {
			t.Fatalf("err = %v, want Invalid", err)
		}
		if causes := err.(apierrors.APIStatus).Status().Details.Causes; len(causes) != 1 || causes[0].Field != "spec.replicas" {
			t.Errorf("causes = %+v, want one at spec.replicas", causes)
		}
	})
	t.Run("stale resourceVersion conflicts", func(t *testing.T) {
		_, err := setReplicas(3, func(s *autoscalingv1.Scale) { s.ResourceVersion = got.ResourceVersion })
		if !apierrors.IsConflict(err) {
			t.Errorf("err = %v, want Conflict", err)
		}
	})
	t.Run("other UID conflicts", func(t *testing.T) {
		_, err := setReplicas(3, func(s *autoscalingv1.Scale) { s.UID = "other" })
		if !apierrors.IsConflict(err) {
			t.Errorf("err = %v, want Conflict", err)
		}
	})
	t.Run("missing replica set", func(t *testing.T) {
		_, err := scale.Get(ctx, "missing", &metav1.GetOptions{})
		if !apierrors.IsNotFound(err) || err.(apierrors.APIStatus).Status().Details.Kind != "virtualmachineinstancereplicasets/scale" {
			t.Errorf("get: err = %v, want NotFound of the scale", err)
		}
		_, _, err = scale.Update(ctx, "missing", rest.DefaultUpdatedObjectInfo(&autoscalingv1.Scale{}), rest.ValidateAllObjectFunc,
			rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("update: err = %v, want NotFound", err)
		}
	})
	t.Run("admission sees Scales", func(t *testing.T) {
		var seen []runtime.Object
		_, _, err := scale.Update(ctx, "web", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			s := old.(*autoscalingv1.Scale).DeepCopy()
			s.Spec.Replicas = 4
			return s, nil
		}), rest.ValidateAllObjectFunc, func(_ context.Context, obj, old runtime.Object) error {
			seen = append(seen, obj, old)
			return nil
		}, false, &metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 2 || seen[0].(*autoscalingv1.Scale).Spec.Replicas != 4 || seen[1].(*autoscalingv1.Scale).Spec.Replicas != 5 {
			t.Errorf("validation saw %v, want the new (4) and old (5) Scale", seen)
		}
	})
}
