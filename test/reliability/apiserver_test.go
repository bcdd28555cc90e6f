package reliability

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/test/reliability/report"
)

const (
	virtSystem         = "virt-system"
	apiService         = "v1.virtualization.kubevirt.io"
	apiServerSelector  = virtv1.ComponentLabel + "=virt-apiserver"
	apiServerContainer = "virt-apiserver"
	// componentTimeout bounds a component's way back after a kill: the
	// kubelet's restart (with its crash back-off after earlier kills) and
	// its readiness.
	componentTimeout = 3 * time.Minute
)

// TestAPIServerKill: SIGKILL of the single virt-apiserver replica of the
// default (embedded etcd) deployment in the middle of the API storm. The
// API is down until the kubelet restarted the container and it is ready
// again; no write it acknowledged may be lost.
func TestAPIServerKill(t *testing.T) {
	fig := book.Start(t, "apiserver-kill", "SIGKILL of the embedded virt-apiserver")
	shape, err := stormShapeFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	fig.Fault = `SIGKILL of the virt-apiserver process of the default deployment: one
replica serving from its embedded etcd (its data on the node). The kubelet
restarts the container; until it is ready again the aggregator has no
endpoint to send the API's requests to.`
	fig.Load = fmt.Sprintf("The API storm (above): %d clients, the kill %s after its start, %s of storm after it.", shape.clients, shape.before, shape.after)
	fig.Method = `The storm's figures, as defined above. The container's restart is read
from the pod's status (seconds resolution). Bounds: a single replica is down
while it restarts, so failures and downtime are measured, not held to the
HA targets; the platform must be back at full capacity within the storm.`
	ctx := t.Context()
	pod := readyAPIServer(t)
	ns := cluster.Namespace(t)
	restarts := framework.RestartCount(pod, apiServerContainer)
	var lastExit *metav1.Time
	if s := containerStatus(pod, apiServerContainer); s != nil && s.LastTerminationState.Terminated != nil {
		lastExit = &s.LastTerminationState.Terminated.FinishedAt
	}

	rec, fault := runStorm(t, ns, shape, func() time.Time {
		cur, err := cluster.Kube.CoreV1().Pods(virtSystem).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pid, err := framework.KillContainer(cur, apiServerContainer)
		at := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kill -9 %d (virt-apiserver of pod %s)", pid, pod.Name)
		return at
	})

	back, err := waitRestarted(ctx, pod, apiServerContainer, restarts)
	if err != nil {
		t.Fatal(err)
	}
	stormFigures(t, fig, ns, rec, fault, stormBounds{
		failedShare: report.Measured(), downtime: report.Measured(), timeToFullCapacity: report.Measured(),
	})
	if s := containerStatus(back, apiServerContainer); s != nil && s.State.Running != nil {
		fig.Add(report.Seconds("container running again (kubelet)", s.State.Running.StartedAt.Sub(fault).Round(time.Second), report.Measured()))
	}
	if ready := podCondition(back, corev1.PodReady); ready != nil {
		fig.Add(report.Seconds("pod Ready again", ready.LastTransitionTime.Sub(fault).Round(time.Second), report.Measured()))
	}
	backoff := "the kubelet restarted it at once: its first crash in 10 minutes"
	if lastExit != nil && fault.Sub(lastExit.Time) < 10*time.Minute {
		backoff = fmt.Sprintf("its previous exit was %s earlier, so the kubelet's crash back-off delayed this restart", fault.Sub(lastExit.Time).Round(time.Second))
	}
	fig.Note("Restart %d of the container; %s. The kubelet restarts a crashed container at once, but one that crashes again within 10 minutes of its previous crash waits 10 s, then 20 s, 40 s ... up to 5 min (CrashLoopBackOff): killed twice in a row, the second outage is about 10 s longer.",
		restarts+1, backoff)
}

// readyAPIServer returns the one virt-apiserver pod, Ready, with the
// APIService Available: the default embedded mode, at rest.
func readyAPIServer(t *testing.T) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	pod, err := cluster.WaitPodReady(ctx, virtSystem, apiServerSelector, "", componentTimeout)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cluster.Kube.CoreV1().Pods(virtSystem).List(ctx, metav1.ListOptions{LabelSelector: apiServerSelector})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("the embedded-etcd fault needs the default single virt-apiserver replica; found %d pods", len(pods.Items))
	}
	if err := cluster.WaitAPIServiceAvailable(ctx, apiService, componentTimeout); err != nil {
		t.Fatal(err)
	}
	return pod
}

// waitRestarted waits until the kubelet restarted the container of pod
// after a kill (its restart count passed before) and the pod is Ready
// again, and returns the pod.
func waitRestarted(ctx context.Context, pod *corev1.Pod, container string, before int32) (*corev1.Pod, error) {
	var cur *corev1.Pod
	err := framework.WaitFor(ctx, componentTimeout, fmt.Sprintf("container %s of pod %s restarted and Ready", container, pod.Name),
		func(ctx context.Context) (bool, error) {
			var err error
			cur, err = cluster.Kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			n := framework.RestartCount(cur, container)
			ready := podCondition(cur, corev1.PodReady)
			if n <= before || ready == nil || ready.Status != corev1.ConditionTrue {
				return false, fmt.Errorf("restarts %d (before the kill %d), Ready %v", n, before, ready != nil && ready.Status == corev1.ConditionTrue)
			}
			return true, nil
		})
	return cur, err
}

func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
