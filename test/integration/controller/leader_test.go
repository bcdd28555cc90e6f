package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

const (
	// retryPeriod is virt-controller's --leader-elect-retry-period (its
	// default, which artifacts/virt-controller keeps).
	retryPeriod = time.Second
	// retryJitter is client-go's leader election jitter: a candidate tries
	// again between 1 and 1+retryJitter retry periods after its last try.
	retryJitter = 1.2
	// apiSlack covers API round trips on a loaded machine and this test's
	// 250 ms polling.
	apiSlack = 2 * time.Second
	// quietTimeout bounds the wait for another engineer's benchmark.
	quietTimeout = 20 * time.Minute
	// replicasTimeout bounds the wait for both replicas to run again after
	// one was killed (a container restart) or deleted (a new pod).
	replicasTimeout = 3 * time.Minute
)

// TestLeaderFailover: with two virt-controller replicas, stopping the one
// that leads hands the Lease to another process, and no VMI ever gets a
// second launcher pod, neither one the old leader was working on nor one
// created while nobody led.
//
//   - SIGKILL (a crash): another replica takes over once the Lease expires,
//     within the lease duration plus two jittered retry periods (the standby
//     saw the last renewal up to one late, and tries again up to one later).
//   - Deleting the pod (SIGTERM): the leader releases the Lease on its way
//     out; a replica takes over within a retry period, well before the
//     lease duration.
func TestLeaderFailover(t *testing.T) {
	ctx := t.Context()
	explainFailure(t)
	if err := waitQuiet(ctx, quietTimeout); err != nil {
		t.Fatalf("the fail-over test restarts virt-controller: %v", err)
	}
	t.Cleanup(func() {
		// Leave two healthy replicas behind for whoever comes next.
		ctx := context.Background()
		if err := cluster.WaitDeploymentAvailable(ctx, controllerNamespace, controllerName, replicasTimeout); err != nil {
			t.Error(err)
		}
		if _, err := waitReplicas(ctx, replicasTimeout); err != nil {
			t.Error(err)
		}
	})
	ns := cluster.Namespace(t)
	pods := watchLaunchers(t, ns)

	tests := []struct {
		name string
		// stop stops the leading replica.
		stop func(t *testing.T, leader *corev1.Pod)
		// bound is the longest hand-over allowed for a lease duration.
		bound func(lease time.Duration) time.Duration
	}{
		{
			name: "kill-9",
			stop: func(t *testing.T, leader *corev1.Pod) {
				pid, err := killController(leader)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("kill -9 %d (virt-controller of pod %s)", pid, leader.Name)
			},
			bound: func(lease time.Duration) time.Duration {
				return lease + 2*time.Duration(float64(retryPeriod)*(1+retryJitter)) + apiSlack
			},
		},
		{
			name: "pod-deleted",
			stop: func(t *testing.T, leader *corev1.Pod) {
				err := cluster.Kube.CoreV1().Pods(controllerNamespace).Delete(t.Context(), leader.Name,
					metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &leader.UID}})
				if err != nil {
					t.Fatalf("delete leader pod %s: %v", leader.Name, err)
				}
				t.Logf("deleted pod %s", leader.Name)
			},
			bound: func(lease time.Duration) time.Duration {
				return lease - time.Second
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			explainFailure(t)
			rs, err := waitReplicas(ctx, replicasTimeout)
			if err != nil {
				t.Fatal(err)
			}
			old := *rs.lease.Spec.HolderIdentity
			leaseDuration := time.Duration(*rs.lease.Spec.LeaseDurationSeconds) * time.Second
			t.Logf("leader %s, standby %s, lease duration %s", rs.leader.Name, rs.standby.Name, leaseDuration)

			// One VMI the leader is in the middle of (its pod exists, the
			// hand-off has not happened), one it has just been told about.
			busy := createVMI(t, ns, tt.name+"-busy")
			if err := pods.waitCreated(ctx, busy, time.Minute); err != nil {
				t.Fatal(err)
			}
			fresh := createVMI(t, ns, tt.name+"-fresh")
			stopped := time.Now()
			tt.stop(t, rs.leader)
			// And one created while nobody leads.
			orphan := createVMI(t, ns, tt.name+"-orphan")

			for _, vmi := range []*virtv1.VirtualMachineInstance{busy, fresh} {
				if got, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, vmi.Name, metav1.GetOptions{}); err == nil {
					t.Logf("VMI %s when the leader stopped: phase %s, node %q, %d launcher pods", vmi.Name, got.Status.Phase, got.Status.NodeName, len(pods.of(vmi.UID)))
				}
			}

			holder, err := waitNewHolder(ctx, old, tt.bound(leaseDuration)+10*time.Second)
			handedOver := time.Now()
			took := handedOver.Sub(stopped)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("Lease %s -> %s after %s (bound %s)", old, holder, took.Round(10*time.Millisecond), tt.bound(leaseDuration))
			if took > tt.bound(leaseDuration) {
				t.Errorf("hand-over took %s, want at most %s", took.Round(10*time.Millisecond), tt.bound(leaseDuration))
			}
			// Another process, not necessarily the standby: a killed
			// replica's container restarts at once and competes for the
			// expired Lease too; a deleted pod's replacement may take the
			// released Lease before the standby's next try.
			switch p := holderPod(holder); p {
			case rs.standby.Name:
				t.Logf("the standby %s took over", p)
			case rs.leader.Name:
				t.Logf("the old leader's pod %s took over with its restarted container", p)
			default:
				t.Logf("a new pod %s took over", p)
			}

			vmis := []*virtv1.VirtualMachineInstance{busy, fresh, orphan}
			for _, vmi := range vmis {
				running, err := cluster.WaitVMIRunning(ctx, ns, vmi.Name)
				if err != nil {
					t.Error(err)
					continue
				}
				t.Logf("VMI %s Running %s after the hand-over", vmi.Name, since(handedOver))
				checkLaunched(t, pods, running)
			}
			deleteVMIs(t, pods, vmis...)
			for _, vmi := range vmis {
				if _, err := pods.only(vmi); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
