package reliability

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"kubevirt.dev/virt/test/e2e/framework"
)

// endpointWatch follows one address among the ready endpoints of the
// Service virt-apiserver, as the kube-aggregator's informer does: the
// aggregator sends requests to the ready endpoints of its EndpointSlices.
type endpointWatch struct {
	ip string

	mu sync.Mutex
	// inSlice is, per EndpointSlice, whether it lists ip ready.
	inSlice map[string]bool
	ready   bool
	// changes are the moments ip joined or left the ready endpoints.
	changes []endpointChange
}

type endpointChange struct {
	at    time.Time
	ready bool
}

// watchEndpoint starts following ip until the test ends.
func watchEndpoint(t *testing.T, ctx context.Context, ip string) *endpointWatch {
	t.Helper()
	w, err := cluster.Kube.DiscoveryV1().EndpointSlices(virtSystem).Watch(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=virt-apiserver",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	e := &endpointWatch{ip: ip, inSlice: map[string]bool{}}
	go func() {
		for ev := range w.ResultChan() {
			if es, ok := ev.Object.(*discoveryv1.EndpointSlice); ok {
				e.saw(es, ev.Type == watch.Deleted)
			}
		}
	}()
	return e
}

func (e *endpointWatch) saw(es *discoveryv1.EndpointSlice, deleted bool) {
	ready := false
	for _, ep := range es.Endpoints {
		// Unset Ready means ready, as the aggregator reads it.
		if !deleted && slices.Contains(ep.Addresses, e.ip) && (ep.Conditions.Ready == nil || *ep.Conditions.Ready) {
			ready = true
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inSlice[es.Name] = ready
	now := false
	for _, r := range e.inSlice {
		now = now || r
	}
	if now != e.ready || len(e.changes) == 0 {
		e.ready = now
		e.changes = append(e.changes, endpointChange{at: time.Now(), ready: now})
	}
}

// wait waits until the address left the ready endpoints after fault and
// came back, and returns when each happened.
func (e *endpointWatch) wait(ctx context.Context, fault time.Time) (out, back time.Time, err error) {
	err = framework.WaitFor(ctx, componentTimeout, "the endpoint "+e.ip+" out of virt-apiserver's ready endpoints and back", func(context.Context) (bool, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		out, back = time.Time{}, time.Time{}
		for _, c := range e.changes {
			switch {
			case c.at.Before(fault):
			case out.IsZero() && !c.ready:
				out = c.at
			case !out.IsZero() && c.ready:
				back = c.at
				return true, nil
			}
		}
		if out.IsZero() {
			return false, fmt.Errorf("still ready")
		}
		return false, fmt.Errorf("left %s after the fault, not back", out.Sub(fault).Round(10*time.Millisecond))
	})
	return out, back, err
}

// unreadyWatch records how the kubelet first reported a pod unready after
// a kill: when, and whether it had seen the container exit (its PLEG) or
// the container still ran, failing its readiness probe.
type unreadyWatch struct {
	container string
	mu        sync.Mutex
	at        time.Time
	cause     string
}

// watchUnready follows pod, Ready now, until the test ends.
func watchUnready(t *testing.T, ctx context.Context, pod *corev1.Pod, container string) *unreadyWatch {
	t.Helper()
	w, err := cluster.Kube.CoreV1().Pods(pod.Namespace).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pod.Name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	u := &unreadyWatch{container: container}
	running := ""
	if s := containerStatus(pod, container); s != nil {
		running = s.ContainerID
	}
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			ready := podCondition(p, corev1.PodReady)
			if ready == nil || ready.Status == corev1.ConditionTrue {
				continue
			}
			cause := "having seen the container exit"
			if s := containerStatus(p, container); s != nil && s.State.Running != nil && s.ContainerID == running {
				cause = "the container still running in its status: its readiness probe failed"
			}
			u.mu.Lock()
			if u.at.IsZero() {
				u.at, u.cause = time.Now(), cause
			}
			u.mu.Unlock()
		}
	}()
	return u
}

// seen returns when the pod was first seen unready, and why.
func (u *unreadyWatch) seen() (time.Time, string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.at, u.cause
}
