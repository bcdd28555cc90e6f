package controller

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

const (
	controllerNamespace = "virt-system"
	// controllerName names virt-controller's Deployment and its Lease.
	controllerName     = "virt-controller"
	controllerSelector = virtv1.ComponentLabel + "=" + controllerName
	// controllerReplicas is what artifacts/virt-controller deploys.
	controllerReplicas = 2
	// masterMetric is client-go's leader election gauge: 1 on the replica
	// that leads.
	masterMetric = `leader_election_master_status{name="virt-controller"}`
	// benchmarkNamespacePrefix: namespaces of the project's benchmarks,
	// which must not see virt-controller restart under them.
	benchmarkNamespacePrefix = "bench-"
)

// replicaSet is virt-controller's replicas as the test found them.
type replicaSet struct {
	lease   *coordinationv1.Lease
	leader  *corev1.Pod
	standby *corev1.Pod
}

// holderPod is the pod name in a holder identity (<hostname>_<uuid>; a
// pod's hostname is its name).
func holderPod(identity string) string {
	name, _, _ := strings.Cut(identity, "_")
	return name
}

// waitQuiet waits until no benchmark runs on the cluster (namespaces
// bench-*, or virt-controller scaled down): killing virt-controller under
// one would spoil its numbers.
func waitQuiet(ctx context.Context, timeout time.Duration) error {
	return framework.WaitFor(ctx, timeout, "no benchmark running (namespaces "+benchmarkNamespacePrefix+"*, virt-controller scaled down)",
		func(ctx context.Context) (bool, error) {
			nss, err := cluster.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			var bench []string
			for _, ns := range nss.Items {
				if strings.HasPrefix(ns.Name, benchmarkNamespacePrefix) {
					bench = append(bench, ns.Name)
				}
			}
			if len(bench) > 0 {
				return false, fmt.Errorf("benchmark namespaces %v", bench)
			}
			d, err := cluster.Kube.AppsV1().Deployments(controllerNamespace).Get(ctx, controllerName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if d.Spec.Replicas != nil && *d.Spec.Replicas != controllerReplicas {
				return false, fmt.Errorf("virt-controller has %d replicas, deployed with %d", *d.Spec.Replicas, controllerReplicas)
			}
			return true, nil
		})
}

// waitReplicas waits until virt-controller runs two Ready replicas of
// which exactly one leads: the Lease names it, and it alone reports
// itself master on /metrics.
func waitReplicas(ctx context.Context, timeout time.Duration) (*replicaSet, error) {
	var found *replicaSet
	err := framework.WaitFor(ctx, timeout, fmt.Sprintf("%d Ready virt-controller replicas, one leading", controllerReplicas),
		func(ctx context.Context) (bool, error) {
			rs, err := replicas(ctx)
			if err != nil {
				return false, err
			}
			found = rs
			return true, nil
		})
	return found, err
}

func replicas(ctx context.Context) (*replicaSet, error) {
	pods, err := cluster.Kube.CoreV1().Pods(controllerNamespace).List(ctx, metav1.ListOptions{LabelSelector: controllerSelector})
	if err != nil {
		return nil, err
	}
	var ready []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if c := podCondition(p, corev1.PodReady); p.DeletionTimestamp == nil && c != nil && c.Status == corev1.ConditionTrue {
			ready = append(ready, p)
		}
	}
	if len(ready) != controllerReplicas || len(pods.Items) != controllerReplicas {
		return nil, fmt.Errorf("%d pods, %d of them Ready and not being deleted", len(pods.Items), len(ready))
	}
	lease, err := cluster.Kube.CoordinationV1().Leases(controllerNamespace).Get(ctx, controllerName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	holder := ""
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	rs := &replicaSet{lease: lease}
	for _, p := range ready {
		master, err := scrapeMaster(ctx, p)
		if err != nil {
			return nil, err
		}
		holds := holderPod(holder) == p.Name
		switch {
		case holds && master:
			rs.leader = p
		case !holds && !master:
			rs.standby = p
		default:
			return nil, fmt.Errorf("pod %s: holds the Lease (%q) %v, reports itself leader %v", p.Name, holder, holds, master)
		}
	}
	if rs.leader == nil || rs.standby == nil {
		return nil, fmt.Errorf("Lease held by %q: want one leader and one standby among %d Ready pods", holder, len(ready))
	}
	return rs, nil
}

// scrapeMaster reads leader_election_master_status from a replica's
// /metrics (plain HTTP on the pod network, reachable from the node).
func scrapeMaster(ctx context.Context, pod *corev1.Pod) (bool, error) {
	port := int32(8080)
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == "http" {
				port = p.ContainerPort
			}
		}
	}
	url := "http://" + net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port))) + "/metrics"
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, fmt.Errorf("pod %s metrics: %w", pod.Name, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), masterMetric+" "); ok {
			return strings.TrimSpace(v) == "1", nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("pod %s metrics: %w", pod.Name, err)
	}
	return false, fmt.Errorf("pod %s: no %s in %s", pod.Name, masterMetric, url)
}

// killController sends SIGKILL to the virt-controller process of pod, which
// runs on this machine (the cluster's only node): a crash, no chance to
// release the Lease.
func killController(pod *corev1.Pod) (int, error) {
	marker := "pod" + string(pod.UID)
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	var pids []int
	for _, p := range procs {
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		if filepath.Base(string(argv0)) != controllerName {
			continue
		}
		cgroup, err := os.ReadFile(filepath.Join(p, "cgroup"))
		if err != nil || !bytes.Contains(cgroup, []byte(marker)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(p))
		pids = append(pids, pid)
	}
	if len(pids) != 1 {
		return 0, fmt.Errorf("want the one virt-controller process of pod %s (cgroup %s), found %v", pod.Name, marker, pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("kill -9 %d (pod %s): %w", pids[0], pod.Name, err)
	}
	return pids[0], nil
}

// waitNewHolder waits until the Lease names a holder other than old and
// returns it.
func waitNewHolder(ctx context.Context, old string, timeout time.Duration) (string, error) {
	var holder string
	err := framework.WaitFor(ctx, timeout, "Lease "+controllerNamespace+"/"+controllerName+" held by another replica than "+old,
		func(ctx context.Context) (bool, error) {
			lease, err := cluster.Kube.CoordinationV1().Leases(controllerNamespace).Get(ctx, controllerName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			holder = ""
			if lease.Spec.HolderIdentity != nil {
				holder = *lease.Spec.HolderIdentity
			}
			if holder == "" || holder == old {
				return false, fmt.Errorf("holder %q", holder)
			}
			return true, nil
		})
	return holder, err
}

// explainFailure logs, when the test fails, whether someone else worked
// the shared cluster meanwhile: a benchmark scales virt-controller to zero
// (then nothing acts on VMIs and VMs, and nobody takes the Lease), other
// tests restart it.
func explainFailure(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if nss, err := cluster.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err == nil {
			for _, ns := range nss.Items {
				if strings.HasPrefix(ns.Name, benchmarkNamespacePrefix) {
					t.Logf("note: benchmark namespace %s exists (created %s)", ns.Name, ns.CreationTimestamp.Format(time.TimeOnly))
				}
			}
		}
		if d, err := cluster.Kube.AppsV1().Deployments(controllerNamespace).Get(ctx, controllerName, metav1.GetOptions{}); err == nil {
			t.Logf("note: virt-controller: %d replicas wanted, %d available", ptr.Deref(d.Spec.Replicas, 1), d.Status.AvailableReplicas)
		}
		// The Deployment's own scaling, which this test never does.
		events, err := cluster.Kube.CoreV1().Events(controllerNamespace).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Deployment,involvedObject.name=" + controllerName + ",reason=ScalingReplicaSet",
		})
		if err == nil {
			for _, e := range events.Items {
				if e.LastTimestamp.Time.After(start) {
					t.Logf("note: during the test, at %s: %s (someone scaled virt-controller)", e.LastTimestamp.Format(time.TimeOnly), e.Message)
				}
			}
		}
	})
}
