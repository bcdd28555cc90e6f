package framework

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// PollInterval is how often the helpers look again.
const PollInterval = 250 * time.Millisecond

// WaitFor polls cond until it reports true, for at most timeout. On timeout
// the error names what was awaited and the last error or observation cond
// returned, so a failure says what state the cluster was in.
func WaitFor(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	var last error
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		done, err := cond(ctx)
		if err != nil {
			last = err
			return false, nil
		}
		return done, nil
	})
	if err == nil {
		return nil
	}
	if last != nil {
		return fmt.Errorf("%s: not reached after %s: last: %w", what, time.Since(start).Round(time.Millisecond), last)
	}
	return fmt.Errorf("%s: not reached after %s", what, time.Since(start).Round(time.Millisecond))
}

var apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// WaitAPIServiceAvailable waits until the APIService reports Available=True.
func (c *Cluster) WaitAPIServiceAvailable(ctx context.Context, name string, timeout time.Duration) error {
	return WaitFor(ctx, timeout, "APIService "+name+" Available", func(ctx context.Context) (bool, error) {
		u, err := c.Dynamic.Resource(apiServiceGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructuredSlice(u.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Available" {
				if m["status"] == "True" {
					return true, nil
				}
				return false, fmt.Errorf("Available=%v: %v: %v", m["status"], m["reason"], m["message"])
			}
		}
		return false, fmt.Errorf("no Available condition yet")
	})
}

// WaitDeploymentAvailable waits until every replica of the Deployment's
// current generation is updated and available.
func (c *Cluster) WaitDeploymentAvailable(ctx context.Context, ns, name string, timeout time.Duration) error {
	return WaitFor(ctx, timeout, "Deployment "+ns+"/"+name+" rolled out", func(ctx context.Context) (bool, error) {
		d, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return deploymentDone(d)
	})
}

func deploymentDone(d *appsv1.Deployment) (bool, error) {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	if s.ObservedGeneration < d.Generation || s.UpdatedReplicas != want || s.AvailableReplicas != want || s.Replicas != want {
		return false, fmt.Errorf("generation %d observed %d, replicas %d updated %d available %d, want %d",
			d.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, want)
	}
	return true, nil
}

// WaitPodReady waits until a pod matching selector in ns is Ready and, when
// not is set, is not the pod of that UID (a replacement, not the original).
func (c *Cluster) WaitPodReady(ctx context.Context, ns, selector, not string, timeout time.Duration) (*corev1.Pod, error) {
	var ready *corev1.Pod
	err := WaitFor(ctx, timeout, fmt.Sprintf("a Ready pod %q in %s", selector, ns), func(ctx context.Context) (bool, error) {
		pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if string(p.UID) == not || p.DeletionTimestamp != nil {
				continue
			}
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					ready = p
					return true, nil
				}
			}
		}
		return false, fmt.Errorf("%d pods, none Ready", len(pods.Items))
	})
	return ready, err
}

func unstructuredSlice(obj map[string]any, fields ...string) ([]any, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("%s is not an object", f)
		}
		cur, ok = m[f]
		if !ok {
			return nil, false, nil
		}
	}
	s, ok := cur.([]any)
	return s, ok, nil
}
