package guestaccess

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
)

const (
	handlerNS  = "virt-system"
	selector   = "app.kubernetes.io/name=virt-handler"
	portName   = "guest-access"
	handlerApp = "virt-handler"
)

type podOpt func(*corev1.Pod)

func handlerPod(name, node, ip string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: handlerNS,
			Labels:            map[string]string{"app.kubernetes.io/name": handlerApp},
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "virt-handler", Ports: []corev1.ContainerPort{
				{Name: "metrics", ContainerPort: 8443},
				{Name: portName, ContainerPort: 8187},
			}}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			PodIP:      ip,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func notReady(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }
func deleting(p *corev1.Pod) { now := metav1.Now(); p.DeletionTimestamp = &now }
func pending(p *corev1.Pod)  { p.Status.Phase = corev1.PodPending }
func noIP(p *corev1.Pod)     { p.Status.PodIP = "" }
func noPort(p *corev1.Pod)   { p.Spec.Containers[0].Ports = p.Spec.Containers[0].Ports[:1] }
func newer(p *corev1.Pod)    { p.CreationTimestamp.Time = p.CreationTimestamp.Add(time.Hour) }
func labelled(app string) podOpt {
	return func(p *corev1.Pod) { p.Labels["app.kubernetes.io/name"] = app }
}
func inNamespace(ns string) podOpt { return func(p *corev1.Pod) { p.Namespace = ns } }

func startResolver(t *testing.T, pods ...*corev1.Pod) *PodResolver {
	t.Helper()
	objs := make([]runtime.Object, len(pods))
	for i, p := range pods {
		objs[i] = p
	}
	r, err := NewPodResolver(fake.NewClientset(objs...), handlerNS, selector, portName)
	if err != nil {
		t.Fatal(err)
	}
	r.Start(t.Context())
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return r.informer.HasSynced(), nil
	}); err != nil {
		t.Fatal("informer did not sync")
	}
	return r
}

func TestPodResolver(t *testing.T) {
	for _, tc := range []struct {
		name string
		pods []*corev1.Pod
		want string
		// err is part of the 503's message when want is empty.
		err string
	}{
		{name: "ready handler", pods: []*corev1.Pod{handlerPod("h", "node-1", "198.18.0.1")}, want: "198.18.0.1:8187"},
		{name: "IPv6", pods: []*corev1.Pod{handlerPod("h", "node-1", "fd00::1")}, want: "[fd00::1]:8187"},
		{name: "other node only", pods: []*corev1.Pod{handlerPod("h", "node-2", "198.18.0.2")}, err: "no ready virt-handler on node node-1 (namespace virt-system, selector app.kubernetes.io/name=virt-handler)"},
		{name: "not ready", pods: []*corev1.Pod{handlerPod("h", "node-1", "198.18.0.1", notReady)}, err: "no ready virt-handler on node node-1"},
		{name: "being deleted", pods: []*corev1.Pod{handlerPod("h", "node-1", "198.18.0.1", deleting)}, err: "no ready virt-handler on node node-1"},
		{name: "pending", pods: []*corev1.Pod{handlerPod("h", "node-1", "198.18.0.1", pending)}, err: "no ready virt-handler on node node-1"},
		{name: "no IP", pods: []*corev1.Pod{handlerPod("h", "node-1", "", noIP)}, err: "no ready virt-handler on node node-1"},
		{name: "other label", pods: []*corev1.Pod{handlerPod("h", "node-1", "198.18.0.1", labelled("virt-launcher"))}, err: "no ready virt-handler on node node-1"},
		{name: "other namespace", pods: []*corev1.Pod{handlerPod("h", "node-1", "198.18.0.1", inNamespace("default"))}, err: "no ready virt-handler on node node-1"},
		{name: "no guest-access port", pods: []*corev1.Pod{handlerPod("h", "node-1", "198.18.0.1", noPort)}, err: `virt-handler pod h on node node-1 has no container port named "guest-access"`},
		{name: "rollout: the newer ready pod", pods: []*corev1.Pod{
			handlerPod("old", "node-1", "198.18.0.1"), handlerPod("new", "node-1", "198.18.0.9", newer),
		}, want: "198.18.0.9:8187"},
		{name: "rollout: the ready one", pods: []*corev1.Pod{
			handlerPod("old", "node-1", "198.18.0.1"), handlerPod("new", "node-1", "198.18.0.9", newer, notReady),
		}, want: "198.18.0.1:8187"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startResolver(t, tc.pods...)
			got, err := r.Resolve("node-1")
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("Resolve = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Resolve = %q, %v; want a 503 saying %q", got, err, tc.err)
			}
		})
	}
}

func TestPodResolverNotSynced(t *testing.T) {
	r, err := NewPodResolver(fake.NewClientset(handlerPod("h", "node-1", "198.18.0.1")), handlerNS, selector, portName)
	if err != nil {
		t.Fatal(err)
	}
	// Not started: nothing listed yet.
	_, err = r.Resolve("node-1")
	if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "not listed the virt-handler pods yet") {
		t.Fatalf("Resolve before the informer synced = %v, want a 503", err)
	}
	if code := err.(apierrors.APIStatus).Status().Code; code != http.StatusServiceUnavailable {
		t.Errorf("code %d", code)
	}
}
