package reliability

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/test/reliability/report"
)

const (
	// controllerName names virt-controller's Deployment, container and
	// Lease.
	controllerName     = "virt-controller"
	controllerSelector = virtv1.ComponentLabel + "=" + controllerName
	// controllerReplicas is what artifacts/virt-controller deploys.
	controllerReplicas = 2
	// failoverGuests is how many VMIs are created around the kill, half
	// before it and half while nobody leads.
	failoverGuests = 20
	// failoverBootTimeout bounds the way of all of them to Running: 20
	// guests starting at once under TCG on 2 cores.
	failoverBootTimeout = 8 * time.Minute
)

// TestControllerLeaderKill: SIGKILL of the leading virt-controller replica
// while VMIs are being created. The Lease is not released; the other
// replica (or the killed one's restarted container) takes it once it
// expired and carries on with the VMIs: each gets exactly one launcher pod
// and runs.
func TestControllerLeaderKill(t *testing.T) {
	fig := book.Start(t, "controller-leader-kill", "SIGKILL of the virt-controller leader")
	fig.Fault = `SIGKILL of the virt-controller process that holds the Lease
(virt-system/virt-controller; two replicas, leader election with client-go).
No release: the Lease must expire before another process takes it.`
	fig.Load = fmt.Sprintf(`%d VMIs of the test guest (artifacts/examples/vmi-tiny.yaml, 128 MiB, a CPU
request of %s so that all fit the 2-core node): %d created before the kill,
which comes once the leader made 3 of their launcher pods, and %d right
after it, while nobody leads.`, failoverGuests, guestCPU.String(), failoverGuests/2, failoverGuests/2)
	fig.Method = `**Failover time** is from the kill to the first launcher pod created after
the Lease changed hands (seen by a watch on the namespace's pods, this
machine's clock): the moment the new leader acts, which is later than the
hand-over itself (its informers sync first). The hand-over is reported
too: kill to the Lease's ` + "`acquireTime`" + ` written by the new holder (the same
clock). **Duplicate launcher pods** counts, from a watch on the pods from
before the first VMI until every VMI was deleted, the pods beyond the
first of each VMI: two leaders at once, or a new leader not seeing the old
one's pod, would show here. **VMIs Running**: each must reach Running and
Ready, none may fail.`
	ctx := t.Context()
	lease, leader := controllerLeader(t)
	t.Cleanup(func() {
		// Two healthy replicas for whoever comes next.
		ctx := context.Background()
		if err := cluster.WaitDeploymentAvailable(ctx, virtSystem, controllerName, componentTimeout); err != nil {
			t.Error(err)
		}
	})
	ns := cluster.Namespace(t)
	pods := cluster.RecordLauncherPods(t, ns)

	vmis := createGuests(t, ns, "guest", 0, failoverGuests/2)
	err := framework.WaitFor(ctx, 2*time.Minute, "3 launcher pods made by the leader", func(context.Context) (bool, error) {
		return len(pods.All()) >= 3, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cur, err := cluster.Kube.CoreV1().Pods(virtSystem).Get(ctx, leader, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := framework.KillContainer(cur, controllerName)
	killed := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	madeBefore := len(pods.All())
	t.Logf("kill -9 %d (virt-controller of pod %s, the leader) with %d launcher pods made", pid, leader, madeBefore)
	vmis = append(vmis, createGuests(t, ns, "guest", failoverGuests/2, failoverGuests/2)...)

	old := ptr.Deref(lease.Spec.HolderIdentity, "")
	taken, err := waitNewHolder(ctx, old, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	acquired := taken.Spec.AcquireTime.Time
	var acted time.Time
	err = framework.WaitFor(ctx, 2*time.Minute, "a launcher pod made by the new leader", func(context.Context) (bool, error) {
		for _, p := range pods.All() {
			if p.Seen.After(acquired) {
				acted = p.Seen
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	running, failed := waitRunning(ctx, t, vmis, failoverBootTimeout)
	deleteGuests(ctx, t, vmis)
	dups, which := pods.Duplicates()

	fig.Add(
		report.Seconds("failover time (kill → the new leader's first launcher pod)", acted.Sub(killed), report.TargetBelow(15, "s")),
		report.Seconds("kill → Lease held by another process", acquired.Sub(killed), report.Measured()),
		report.Count("duplicate launcher pods", dups, report.MustBe(0)),
		report.Count("VMIs Running", len(running), report.MustBe(failoverGuests)),
	)
	if failed > 0 {
		fig.Note("%d VMIs did not run (the log says why).", failed)
	}
	if dups > 0 {
		fig.Note("Duplicates: %s.", which)
	}
	took := "the standby"
	if holderPod(ptr.Deref(taken.Spec.HolderIdentity, "")) == leader {
		took = "the killed pod's restarted container"
	}
	fig.Note("Lease: duration %d s (virt-controller's defaults: 8 s, renew deadline 5 s, retry every 1 s); %s took it over. %d of the first %d launcher pods were made before the kill.",
		ptr.Deref(taken.Spec.LeaseDurationSeconds, 0), took, madeBefore, failoverGuests/2)
}

// controllerLeader waits for two Ready virt-controller replicas, one of
// which holds the Lease, and returns the Lease and the leader's pod name.
func controllerLeader(t *testing.T) (*coordinationv1.Lease, string) {
	t.Helper()
	var lease *coordinationv1.Lease
	var leader string
	err := framework.WaitFor(t.Context(), componentTimeout, fmt.Sprintf("%d Ready virt-controller replicas, one holding the Lease", controllerReplicas),
		func(ctx context.Context) (bool, error) {
			pods, err := cluster.Kube.CoreV1().Pods(virtSystem).List(ctx, metav1.ListOptions{LabelSelector: controllerSelector})
			if err != nil {
				return false, err
			}
			ready := map[string]bool{}
			for i := range pods.Items {
				p := &pods.Items[i]
				if c := podCondition(p, corev1.PodReady); p.DeletionTimestamp == nil && c != nil && c.Status == corev1.ConditionTrue {
					ready[p.Name] = true
				}
			}
			if len(ready) != controllerReplicas || len(pods.Items) != controllerReplicas {
				return false, fmt.Errorf("%d pods, %d of them Ready", len(pods.Items), len(ready))
			}
			lease, err = cluster.Kube.CoordinationV1().Leases(virtSystem).Get(ctx, controllerName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			leader = holderPod(ptr.Deref(lease.Spec.HolderIdentity, ""))
			if !ready[leader] {
				return false, fmt.Errorf("the Lease names %q, not a Ready replica", ptr.Deref(lease.Spec.HolderIdentity, ""))
			}
			return true, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return lease, leader
}

// waitNewHolder waits until the Lease names a holder other than old, with
// its acquireTime, and returns it.
func waitNewHolder(ctx context.Context, old string, timeout time.Duration) (*coordinationv1.Lease, error) {
	var lease *coordinationv1.Lease
	err := framework.WaitFor(ctx, timeout, "the Lease held by another process than "+old, func(ctx context.Context) (bool, error) {
		var err error
		lease, err = cluster.Kube.CoordinationV1().Leases(virtSystem).Get(ctx, controllerName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		holder := ptr.Deref(lease.Spec.HolderIdentity, "")
		if holder == "" || holder == old || lease.Spec.AcquireTime == nil {
			return false, fmt.Errorf("holder %q", holder)
		}
		return true, nil
	})
	return lease, err
}

// holderPod is the pod name in a holder identity (<hostname>_<uuid>; a
// pod's hostname is its name).
func holderPod(identity string) string {
	name, _, _ := strings.Cut(identity, "_")
	return name
}
