package apipath

import (
	"context"
	"fmt"
	"strconv"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

const (
	controllerNamespace = "virt-system"
	controllerName      = "virt-controller"
	controllerSelector  = "virtualization.kubevirt.io/component=virt-controller"
	// replicasAnnotation remembers the replicas to restore, so a run that
	// was killed is undone by the next one.
	replicasAnnotation = "bench.kubevirt.io/paused-replicas"
)

// pauseController scales virt-controller to zero and waits for its pods to
// be gone. The returned function scales it back.
func pauseController(ctx context.Context, kube kubernetes.Interface, logf func(string, ...any)) (func(context.Context) error, error) {
	deps := kube.AppsV1().Deployments(controllerNamespace)
	d, err := deps.Get(ctx, controllerName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("virt-controller's Deployment: %w", err)
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	if v, ok := d.Annotations[replicasAnnotation]; ok {
		n, err := strconv.Atoi(v)
		if err == nil {
			replicas = int32(n)
		}
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, replicasAnnotation, strconv.Itoa(int(replicas)))
	if _, err := deps.Patch(ctx, controllerName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return nil, fmt.Errorf("annotate virt-controller: %w", err)
	}
	restore := func(ctx context.Context) error {
		if err := scale(ctx, kube, replicas); err != nil {
			return err
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, replicasAnnotation)
		if _, err := deps.Patch(ctx, controllerName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("unannotate virt-controller: %w", err)
		}
		logf("virt-controller scaled back to %d", replicas)
		return nil
	}
	if err := scale(ctx, kube, 0); err != nil {
		return nil, err
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := kube.CoreV1().Pods(controllerNamespace).List(ctx, metav1.ListOptions{LabelSelector: controllerSelector})
		return err == nil && len(pods.Items) == 0, nil
	})
	if err != nil {
		_ = restore(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("virt-controller's pods did not stop: %w", err)
	}
	logf("virt-controller paused (was %d replicas)", replicas)
	return restore, nil
}

func scale(ctx context.Context, kube kubernetes.Interface, n int32) error {
	s := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: controllerName, Namespace: controllerNamespace},
		Spec:       autoscalingv1.ScaleSpec{Replicas: n},
	}
	if _, err := kube.AppsV1().Deployments(controllerNamespace).UpdateScale(ctx, controllerName, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("scale virt-controller to %d: %w", n, err)
	}
	return nil
}
