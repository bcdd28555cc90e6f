package debian

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/generated/clientset/versioned/fake"
)

func vmiAt(uid types.UID, phase virtv1.VirtualMachineInstancePhase, ip string) *virtv1.VirtualMachineInstance {
	v := &virtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "debian-1", Namespace: Namespace, UID: uid}}
	v.Status.Phase = phase
	if ip != "" {
		v.Status.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "default", IPAddress: ip}}
	}
	return v
}

// Running is timed at its first event; the wait goes on until the first
// interface has an address; other VMIs' events do not count.
func TestWaitRunning(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []*virtv1.VirtualMachineInstance
		wantIP string
		err    string
	}{
		{name: "address after Running", events: []*virtv1.VirtualMachineInstance{
			vmiAt("u", virtv1.Scheduling, ""), vmiAt("other", virtv1.Running, "198.18.0.99"), vmiAt("u", virtv1.Running, ""), vmiAt("u", virtv1.Running, "198.18.0.7"),
		}, wantIP: "198.18.0.7"},
		{name: "address before Running", events: []*virtv1.VirtualMachineInstance{
			vmiAt("u", virtv1.Scheduled, "198.18.0.7"), vmiAt("u", virtv1.Running, "198.18.0.7"),
		}, wantIP: "198.18.0.7"},
		{name: "failed", events: []*virtv1.VirtualMachineInstance{vmiAt("u", virtv1.Scheduling, ""), vmiAt("u", virtv1.Failed, "")}, err: "ended Failed"},
		{name: "never Running", events: []*virtv1.VirtualMachineInstance{vmiAt("u", virtv1.Scheduled, "198.18.0.7")}, err: "within 1s (last: phase Scheduled)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := watch.NewFakeWithChanSize(len(tc.events), false)
			defer w.Stop()
			for _, e := range tc.events {
				w.Modify(e)
			}
			start := time.Now()
			running, ip, err := waitRunning(t.Context(), w, "u", start, time.Second)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ip != tc.wantIP || running <= 0 || running > time.Since(start) {
				t.Errorf("Running after %s at %q, want %q", running, ip, tc.wantIP)
			}
		})
	}
}

// A watch that ends is an error, not a hang.
func TestWaitRunningWatchEnds(t *testing.T) {
	w := watch.NewFake()
	go w.Stop()
	_, _, err := waitRunning(t.Context(), w, "u", time.Now(), time.Minute)
	if err == nil || !strings.Contains(err.Error(), "the watch of VMIs ended") {
		t.Fatalf("err = %v", err)
	}
}

// Deleting waits for the VMI and its launcher pod to be gone.
func TestDeleteVMI(t *testing.T) {
	vmi := vmiAt("u", virtv1.Running, "")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-debian-1", Namespace: Namespace, Labels: map[string]string{virtv1.CreatedByLabel: "u"}}}
	kube := kubefake.NewClientset(pod)
	env := Env{Virt: fake.NewSimpleClientset(vmi), Kube: kube, Logf: t.Logf}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- deleteVMI(ctx, env, "debian-1", "u") }()
	// The pod goes while deleteVMI waits.
	if err := kube.CoreV1().Pods(Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("deleteVMI did not return once the VMI and its pod were gone")
	}
	if _, err := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).Get(ctx, "debian-1", metav1.GetOptions{}); err == nil {
		t.Error("the VMI is still there")
	}
}
