package guestpod

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtfake "kubevirt.dev/virt/generated/clientset/versioned/fake"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions"
)

func pod(name, node string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid,
			Labels: map[string]string{virtv1.CreatedByLabel: "vmi-uid"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: virtv1.SchemeGroupVersion.String(), Kind: "VirtualMachineInstance",
				Name: "vm", UID: "vmi-uid", Controller: ptrTrue()}}},
		Spec: corev1.PodSpec{NodeName: node, ReadinessGates: []corev1.PodReadinessGate{{ConditionType: GuestInPodCondition}}},
	}
}

func ptrTrue() *bool { t := true; return &t }

func running(active map[types.UID]string, ms *virtv1.VirtualMachineInstanceMigrationState) *virtv1.VirtualMachineInstance {
	return &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "vmi-uid"},
		Status: virtv1.VirtualMachineInstanceStatus{Phase: virtv1.Running, NodeName: "n1",
			ActivePods: active, MigrationState: ms},
	}
}

func TestGuestPod(t *testing.T) {
	src, dst := pod("src", "n1", "src-uid"), pod("dst", "n2", "dst-uid")
	both := map[types.UID]string{"src-uid": "n1", "dst-uid": "n2"}
	for _, tc := range []struct {
		name string
		vmi  *virtv1.VirtualMachineInstance
		want string
	}{
		{"one pod", running(map[types.UID]string{"src-uid": "n1"}, nil), "src"},
		{"migration running: the source", running(both, &virtv1.VirtualMachineInstanceMigrationState{SourcePod: "src", TargetPod: "dst"}), "src"},
		{"migration failed: the source", running(both, &virtv1.VirtualMachineInstanceMigrationState{SourcePod: "src", TargetPod: "dst", Failed: true}), "src"},
		{"migration completed: the target", running(both, &virtv1.VirtualMachineInstanceMigrationState{SourcePod: "src", TargetPod: "dst", Completed: true}), "dst"},
		{"not running", &virtv1.VirtualMachineInstance{Status: virtv1.VirtualMachineInstanceStatus{Phase: virtv1.Scheduled, NodeName: "n1"}}, ""},
		{"a pod not in activePods", running(map[types.UID]string{}, nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GuestPod(tc.vmi, []*corev1.Pod{src, dst}); got != tc.want {
				t.Errorf("GuestPod = %q, want %q", got, tc.want)
			}
		})
	}
	if s, _, gated := Desired(&corev1.Pod{}, running(nil, nil), ""); gated || s != "" {
		t.Errorf("a pod without the gate: %q gated=%v, want untouched", s, gated)
	}
}

// TestControllerFollowsTheSwitchOver: the target pod's condition turns True
// and the source's False in the sync after the migration completed.
func TestControllerFollowsTheSwitchOver(t *testing.T) {
	ctx := t.Context()
	src, dst := pod("src", "n1", "src-uid"), pod("dst", "n2", "dst-uid")
	vmi := running(map[types.UID]string{"src-uid": "n1", "dst-uid": "n2"},
		&virtv1.VirtualMachineInstanceMigrationState{SourcePod: "src", TargetPod: "dst"})
	kube := fake.NewClientset(src, dst)
	virt := virtfake.NewClientset(vmi)
	kf := kubeinformers.NewSharedInformerFactory(kube, 0)
	vf := virtinformers.NewSharedInformerFactory(virt, 0)
	c, err := New(ctx, kube, vf.Virtualization().V1().VirtualMachineInstances(), kf.Core().V1().Pods(), clocktesting.NewFakeClock(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	kf.Start(ctx.Done())
	vf.Start(ctx.Done())
	kf.WaitForCacheSync(ctx.Done())
	vf.WaitForCacheSync(ctx.Done())

	check := func(want map[string]corev1.ConditionStatus) {
		t.Helper()
		if err := c.sync(context.Background(), "ns/vm"); err != nil {
			t.Fatal(err)
		}
		for name, status := range want {
			p, err := kube.CoreV1().Pods("ns").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := Current(p); got != status {
				t.Errorf("pod %s: condition %q, want %q", name, got, status)
			}
		}
	}
	check(map[string]corev1.ConditionStatus{"src": corev1.ConditionTrue, "dst": corev1.ConditionFalse})

	vmi = vmi.DeepCopy()
	vmi.Status.MigrationState.Completed = true
	vmi.Status.NodeName = "n2"
	if err := vf.Virtualization().V1().VirtualMachineInstances().Informer().GetIndexer().Update(vmi); err != nil {
		t.Fatal(err)
	}
	check(map[string]corev1.ConditionStatus{"src": corev1.ConditionFalse, "dst": corev1.ConditionTrue})
}
