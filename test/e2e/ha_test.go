package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubectl/pkg/util/podutils"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

const (
	// etcdMembers is the HA mode's etcd cluster size (artifacts/etcd).
	etcdMembers = 3
	// haReplicas is virt-apiserver's replica count in the HA mode.
	haReplicas = 2
	// pollInterval is how often a client asks the API while a replica goes.
	pollInterval = 100 * time.Millisecond
	// switchTimeout bounds a mode switch (make up HA=...), image builds
	// included.
	switchTimeout = 15 * time.Minute
	// switchBackTimeout bounds the switch back to the default mode at the
	// end. Nothing is left to build by then, but the step still rebuilds
	// the images' check-and-import on a node that a loaded machine slows
	// down (149 s seen with four builds beside it): a bound against a
	// hang, not a speed goal (those are make bench's).
	switchBackTimeout = 8 * time.Minute
	// etcdTimeout bounds one request to the etcd cluster.
	etcdTimeout = 10 * time.Second
)

// TestHA checks the HA mode (docs/cluster.md "HA mode"; issue 17): `make up
// HA=1` runs three healthy etcd members and two ready virt-apiserver
// replicas on them behind an Available APIService, keeps the platform's
// objects in the etcd cluster, and a client polling `kubectl get vmi -A`
// every 100 ms sees no failure while a replica is deleted or rolled. Both
// switches carry the store (issue 24): the VMs of either mode are in the
// other, and a running guest keeps running through both (same VMI, same
// launcher pod, same QEMU process). At the end the cluster is back in the
// default mode. Faults and what they cost are test/reliability's
// TestHAFaults.
func TestHA(t *testing.T) {
	ctx := t.Context()
	// Whatever hangs must fail before go test's own timeout, which would
	// end the process without the switch back to the default mode.
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-switchBackTimeout))
		defer cancel()
	}
	if mode, err := cluster.Mode(); err != nil || mode != framework.ModeEmbedded {
		t.Fatalf("the e2e tests start in the embedded mode, the cluster is in %q (%v): make up HA=0", mode, err)
	}
	ns := cluster.Namespace(t)
	// A VM of the default store, carried to the HA store and back.
	defaultVM := createHaltedVM(t, ns, "in-default-store")
	// A running guest, which both switches leave running (issue 24).
	guest := startRunningVM(t, ctx, ns, "runs-through-switches")

	start := time.Now()
	switchCtx, cancel := context.WithTimeout(ctx, switchTimeout)
	defer cancel()
	if err := cluster.SwitchMode(switchCtx, framework.ModeHA); err != nil {
		t.Fatal(err)
	}
	t.Logf("switched to the HA mode in %s", time.Since(start).Round(time.Second))
	var haVM *virtv1.VirtualMachine
	t.Cleanup(func() { switchBack(t, ns, defaultVM, haVM, guest) })

	t.Run("the store was carried: VMs and the running guest", func(t *testing.T) {
		if !slices.ContainsFunc(listVMs(t, ns), func(vm virtv1.VirtualMachine) bool { return vm.UID == defaultVM.UID }) {
			t.Errorf("the default store's VM %s (UID %s) is not in the HA store: the switch did not carry the store", defaultVM.Name, defaultVM.UID)
		}
		guest.stillRunning(t, ctx, "after the switch to the HA mode")
	})

	t.Run("three etcd members healthy", func(t *testing.T) {
		etcdHealthy(t, ctx)
	})
	t.Run("two virt-apiserver replicas ready", func(t *testing.T) {
		if _, err := readyAPIServers(ctx, haReplicas); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("APIService available", func(t *testing.T) {
		if err := cluster.WaitAPIServiceAvailable(ctx, apiService, time.Minute); err != nil {
			t.Fatal(err)
		}
	})
	if t.Failed() {
		t.FailNow()
	}

	t.Run("a VM created through the aggregator is in the etcd cluster", func(t *testing.T) {
		haVM = createHaltedVM(t, ns, "in-etcd-cluster")
		value := etcdValue(t, ctx, vmKey(haVM), false)
		for _, want := range []string{haVM.Name, string(haVM.UID)} {
			if !bytes.Contains(value, []byte(want)) {
				t.Errorf("etcd's %s does not hold %q: %q", vmKey(haVM), want, value)
			}
		}
	})
	if haVM == nil {
		t.FailNow()
	}

	t.Run("a recreated member rejoins with its data", func(t *testing.T) {
		memberRejoins(t, ctx, haVM)
	})

	t.Run("a replica without etcd leaves the endpoints", func(t *testing.T) {
		readinessFollowsEtcd(t, ctx, haVM)
	})

	t.Run("deleting a replica's pod fails no request", func(t *testing.T) {
		pods, err := readyAPIServers(ctx, haReplicas)
		if err != nil {
			t.Fatal(err)
		}
		victim := pods[0]
		polls := pollDuring(t, ctx, func() {
			t.Logf("deleting pod %s (grace period %ds)", victim.Name, *victim.Spec.TerminationGracePeriodSeconds)
			if err := cluster.Kube.CoreV1().Pods("virt-system").Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			waitPodGone(t, ctx, victim)
			if _, err := readyAPIServers(ctx, haReplicas); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("kubectl get vmi -A every %s while %s went: %s", pollInterval, victim.Name, polls)
		if n := len(polls.Failed()); n != 0 {
			t.Errorf("%d polls failed while a replica was deleted, want 0", n)
		}
	})

	t.Run("kubectl rollout restart fails no request", func(t *testing.T) {
		polls := pollDuring(t, ctx, func() {
			if _, err := cluster.Kubectl(ctx, "-n", "virt-system", "rollout", "restart", "deployment/virt-apiserver"); err != nil {
				t.Fatal(err)
			}
			if _, err := cluster.Kubectl(ctx, "-n", "virt-system", "rollout", "status", "deployment/virt-apiserver", "--timeout=5m"); err != nil {
				t.Fatal(err)
			}
			if _, err := readyAPIServers(ctx, haReplicas); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("kubectl get vmi -A every %s during the rollout: %s", pollInterval, polls)
		if n := len(polls.Failed()); n != 0 {
			t.Errorf("%d polls failed during a rollout, want 0", n)
		}
	})
	// Faults (SIGKILL of a replica, of an etcd member, of the leader, with
	// the window of failed requests measured) are the reliability suite's
	// (test/reliability TestHAFaults): this test checks what the HA mode
	// does, not what a fault costs.
}

// createHaltedVM creates a VM of the example guest that never runs (no
// launcher, no guest): an object of the store and nothing else.
func createHaltedVM(t *testing.T, ns, name string) *virtv1.VirtualMachine {
	t.Helper()
	tiny, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vm := &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: virtv1.VirtualMachineSpec{
			RunStrategy: ptr.To(virtv1.RunStrategyHalted),
			Template:    &virtv1.VirtualMachineInstanceTemplateSpec{Spec: tiny.Spec},
		},
	}
	created, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Create(t.Context(), vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VM %s/%s: %v", ns, name, err)
	}
	return created
}

func listVMs(t *testing.T, ns string) []virtv1.VirtualMachine {
	t.Helper()
	var vms *virtv1.VirtualMachineList
	err := framework.WaitFor(t.Context(), time.Minute, "VMs listed", func(ctx context.Context) (bool, error) {
		var err error
		vms, err = cluster.Virt.VirtualizationV1().VirtualMachines(ns).List(ctx, metav1.ListOptions{})
		return err == nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return vms.Items
}

// vmKey is where virt-apiserver stores a VM in etcd (apiserver/options.go:
// /registry/<group>/<resource>/<namespace>/<name>).
func vmKey(vm *virtv1.VirtualMachine) string {
	return "/registry/virtualization.kubevirt.io/virtualmachines/" + vm.Namespace + "/" + vm.Name
}

// etcdHealthy checks every member as `etcdctl endpoint health` does (a
// quorum read through that member, with the client certificate), and that
// the members are the three of the StatefulSet.
func etcdHealthy(t *testing.T, ctx context.Context) {
	t.Helper()
	members, err := cluster.EtcdMembers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	endpoints := framework.EtcdEndpoints(members)
	if len(endpoints) != etcdMembers {
		t.Fatalf("want %d etcd member pods with an address, got %d", etcdMembers, len(endpoints))
	}
	for _, ep := range endpoints {
		cli, err := cluster.EtcdClient(ep)
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, etcdTimeout)
		_, err = cli.Get(rctx, "health")
		cancel()
		cli.Close()
		if err != nil {
			t.Errorf("etcd member %s is not healthy: %v", ep, err)
		}
	}
	cli, err := cluster.EtcdClient(endpoints...)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	rctx, cancel := context.WithTimeout(ctx, etcdTimeout)
	defer cancel()
	list, err := cli.MemberList(rctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range list.Members {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	if want := []string{"virt-etcd-0", "virt-etcd-1", "virt-etcd-2"}; !slices.Equal(names, want) {
		t.Errorf("etcd members %v, want %v", names, want)
	}
}

// etcdValue reads key from the etcd cluster; serializable reads from the
// first endpoint only (a member's own copy).
func etcdValue(t *testing.T, ctx context.Context, key string, serializable bool, endpoints ...string) []byte {
	t.Helper()
	if len(endpoints) == 0 {
		members, err := cluster.EtcdMembers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		endpoints = framework.EtcdEndpoints(members)
	}
	cli, err := cluster.EtcdClient(endpoints...)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var opts []clientv3.OpOption
	if serializable {
		opts = append(opts, clientv3.WithSerializable())
	}
	rctx, cancel := context.WithTimeout(ctx, etcdTimeout)
	defer cancel()
	resp, err := cli.Get(rctx, key, opts...)
	if err != nil {
		t.Fatalf("etcd get %s from %v: %v", key, endpoints, err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("etcd has no %s (at %v)", key, endpoints)
	}
	return resp.Kvs[0].Value
}

// memberRejoins deletes a member's pod: the StatefulSet recreates it on the
// same claim, and it must come back as the same member (same ID: had it
// lost its data it would bootstrap a cluster of its own and be refused)
// holding the store.
func memberRejoins(t *testing.T, ctx context.Context, vm *virtv1.VirtualMachine) {
	const name = "virt-etcd-1"
	old, err := cluster.Kube.CoreV1().Pods("virt-system").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim, err := cluster.Kube.CoreV1().PersistentVolumeClaims("virt-system").Get(ctx, "data-"+name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	idOf := func() uint64 {
		members, err := cluster.EtcdMembers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cli, err := cluster.EtcdClient(framework.EtcdEndpoints(members)...)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		rctx, cancel := context.WithTimeout(ctx, etcdTimeout)
		defer cancel()
		list, err := cli.MemberList(rctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range list.Members {
			if m.Name == name {
				return m.ID
			}
		}
		t.Fatalf("no etcd member %s in %v", name, list.Members)
		return 0
	}
	before := idOf()
	start := time.Now()
	if err := cluster.Kube.CoreV1().Pods("virt-system").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var recreated *corev1.Pod
	err = framework.WaitFor(ctx, 3*time.Minute, "member "+name+" recreated and ready", func(ctx context.Context) (bool, error) {
		p, err := cluster.Kube.CoreV1().Pods("virt-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.UID == old.UID || p.DeletionTimestamp != nil || !podutils.IsPodReady(p) {
			return false, fmt.Errorf("pod %s (uid %s) not yet a ready replacement", p.Name, p.UID)
		}
		recreated = p
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("member %s back and ready %s after its pod was deleted", name, time.Since(start).Round(100*time.Millisecond))
	if after := idOf(); after != before {
		t.Errorf("member %s came back as %x, was %x", name, after, before)
	}
	if c, err := cluster.Kube.CoreV1().PersistentVolumeClaims("virt-system").Get(ctx, "data-"+name, metav1.GetOptions{}); err != nil || c.UID != claim.UID {
		t.Errorf("member %s's claim changed (%v)", name, err)
	}
	value := etcdValue(t, ctx, vmKey(vm), true, "https://"+recreated.Status.PodIP+":2379")
	if !bytes.Contains(value, []byte(vm.UID)) {
		t.Errorf("the recreated member's copy of %s lacks the VM's UID", vmKey(vm))
	}
	etcdHealthy(t, ctx)
}

// readinessFollowsEtcd stops the etcd cluster: both replicas must turn
// unready within seconds, /readyz naming etcd, and come back with it; the
// members restart on their claims with the store.
func readinessFollowsEtcd(t *testing.T, ctx context.Context, vm *virtv1.VirtualMachine) {
	pods, err := readyAPIServers(ctx, haReplicas)
	if err != nil {
		t.Fatal(err)
	}
	scale := func(n int) {
		if _, err := cluster.Kubectl(ctx, "-n", "virt-system", "scale", "statefulset/virt-etcd", fmt.Sprintf("--replicas=%d", n)); err != nil {
			t.Fatal(err)
		}
	}
	scale(0)
	restored := false
	defer func() {
		if !restored {
			scale(etcdMembers)
		}
	}()
	var gone time.Time
	err = framework.WaitFor(ctx, 2*time.Minute, "etcd members gone", func(ctx context.Context) (bool, error) {
		members, err := cluster.EtcdMembers(ctx)
		gone = time.Now()
		return err == nil && len(members) == 0, err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = framework.WaitFor(ctx, 30*time.Second, "every virt-apiserver replica unready", func(ctx context.Context) (bool, error) {
		n, err := readyCount(ctx)
		return err == nil && n == 0, err
	})
	if err != nil {
		t.Fatal(err)
	}
	unready := time.Since(gone)
	t.Logf("both replicas unready %s after the last etcd member was gone", unready.Round(100*time.Millisecond))
	if unready > 10*time.Second {
		t.Errorf("replicas without etcd took %s to turn unready, want <= 10s", unready.Round(100*time.Millisecond))
	}
	status, body := readyz(t, pods[0])
	if status == http.StatusOK || !strings.Contains(body, "[-]etcd") {
		t.Errorf("replica %s's /readyz without etcd: %d, want a failure naming etcd:\n%s", pods[0].Name, status, body)
	}

	scale(etcdMembers)
	restored = true
	if err := waitStatefulSetReady(ctx, "virt-etcd", etcdMembers); err != nil {
		t.Fatal(err)
	}
	if _, err := readyAPIServers(ctx, haReplicas); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitAPIServiceAvailable(ctx, apiService, time.Minute); err != nil {
		t.Fatal(err)
	}
	etcdHealthy(t, ctx)
	if !bytes.Contains(etcdValue(t, ctx, vmKey(vm), false), []byte(vm.UID)) {
		t.Errorf("the VM %s is not in the etcd cluster after its restart", vm.Name)
	}
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(vm.Namespace).Get(ctx, vm.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("get VM %s/%s after etcd's restart: %v", vm.Namespace, vm.Name, err)
	}
}

// readyz asks a replica's /readyz?verbose directly, as the kubelet does
// (anonymous; the serving certificate checked against virt-apiserver's CA).
func readyz(t *testing.T, pod corev1.Pod) (int, string) {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(cluster.State, "pki", "virt-apiserver-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	client := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: roots, ServerName: "virt-apiserver.virt-system.svc", MinVersion: tls.VersionTLS12,
		}},
	}
	resp, err := client.Get("https://" + pod.Status.PodIP + ":8443/readyz?verbose")
	if err != nil {
		t.Fatalf("GET /readyz of %s: %v", pod.Name, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// pollDuring runs `kubectl get vmi -A` every pollInterval, as a user at a
// terminal would, from a second before action until two seconds after it
// returned, and returns every poll's outcome.
func pollDuring(t *testing.T, ctx context.Context, action func()) framework.Polls {
	t.Helper()
	p := framework.StartPolling(ctx, pollInterval, func(ctx context.Context) error {
		_, err := cluster.Kubectl(ctx, "get", "vmi", "-A", "--request-timeout=10s")
		return err
	})
	stopped := false
	defer func() {
		if !stopped {
			p.Stop()
		}
	}()
	if err := p.WaitPolls(ctx, 10, time.Minute); err != nil {
		t.Fatal(err)
	}
	action()
	if err := p.WaitPolls(ctx, 20, time.Minute); err != nil {
		t.Fatal(err)
	}
	stopped = true
	return p.Stop()
}

// readyAPIServers waits until exactly want virt-apiserver pods run, all
// ready and none terminating, and returns them.
func readyAPIServers(ctx context.Context, want int) ([]corev1.Pod, error) {
	var ready []corev1.Pod
	err := framework.WaitFor(ctx, 3*time.Minute, fmt.Sprintf("%d ready virt-apiserver replicas", want), func(ctx context.Context) (bool, error) {
		pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{LabelSelector: virtAPIServerSelector})
		if err != nil {
			return false, err
		}
		ready = ready[:0]
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && podutils.IsPodReady(&p) {
				ready = append(ready, p)
			}
		}
		if len(ready) != want || len(pods.Items) != want {
			return false, fmt.Errorf("%d pods, %d ready and not terminating", len(pods.Items), len(ready))
		}
		return true, nil
	})
	return ready, err
}

// readyCount is how many virt-apiserver pods are ready.
func readyCount(ctx context.Context) (int, error) {
	pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{LabelSelector: virtAPIServerSelector})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods.Items {
		if podutils.IsPodReady(&p) {
			n++
		}
	}
	return n, nil
}

func waitPodGone(t *testing.T, ctx context.Context, pod corev1.Pod) {
	t.Helper()
	err := framework.WaitFor(ctx, 2*time.Minute, "pod "+pod.Name+" gone", func(ctx context.Context) (bool, error) {
		p, err := cluster.Kube.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && p.UID != pod.UID) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitStatefulSetReady(ctx context.Context, name string, want int32) error {
	return framework.WaitFor(ctx, 5*time.Minute, "StatefulSet "+name+" ready", func(ctx context.Context) (bool, error) {
		s, err := cluster.Kube.AppsV1().StatefulSets("virt-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if s.Status.ReadyReplicas != want {
			return false, fmt.Errorf("%d of %d ready", s.Status.ReadyReplicas, want)
		}
		return true, nil
	})
}

// switchBack switches the cluster back to the default mode and checks it
// is that mode's platform: virt-apiserver exactly as the default overlay
// has it (kubectl apply removed every field the HA mode added), no etcd
// members but their claims, and the store carried back: the VMs of both
// modes, the running guest still running.
func switchBack(t *testing.T, ns string, defaultVM, haVM *virtv1.VirtualMachine, guest *runningGuest) {
	ctx, cancel := context.WithTimeout(context.Background(), switchBackTimeout)
	defer cancel()
	start := time.Now()
	if err := cluster.SwitchMode(ctx, framework.ModeEmbedded); err != nil {
		t.Fatal(err)
	}
	t.Logf("switched back to the embedded mode in %s", time.Since(start).Round(time.Second))
	if mode, err := cluster.Mode(); err != nil || mode != framework.ModeEmbedded {
		t.Errorf("mode after the switch back: %q (%v)", mode, err)
	}

	live, err := cluster.Kube.AppsV1().Deployments("virt-system").Get(ctx, "virt-apiserver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := renderedAPIServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameAPIServer(live, want); err != nil {
		t.Errorf("virt-apiserver after the switch back is not the default overlay's: %v", err)
	}
	if _, err := readyAPIServers(ctx, 1); err != nil {
		t.Error(err)
	}

	if _, err := cluster.Kube.AppsV1().StatefulSets("virt-system").Get(ctx, "virt-etcd", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the etcd StatefulSet is still there in the embedded mode (%v)", err)
	}
	for i := range etcdMembers {
		name := fmt.Sprintf("data-virt-etcd-%d", i)
		if _, err := cluster.Kube.CoreV1().PersistentVolumeClaims("virt-system").Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("the HA store's claim %s: %v, want it kept", name, err)
		}
	}
	for _, want := range []*virtv1.VirtualMachine{defaultVM, haVM} {
		if want == nil {
			continue
		}
		vm, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil || vm.UID != want.UID {
			t.Errorf("VM %s after the switch back: %v, want UID %s (carried)", want.Name, err, want.UID)
		}
	}
	guest.stillRunning(t, ctx, "after the switch back to the embedded mode")
}

// probe sums a probe up with the API server's defaults filled in, so that
// a rendered probe compares with a live one.
func probe(p *corev1.Probe) string {
	if p == nil {
		return "none"
	}
	or := func(v, def int32) int32 {
		if v == 0 {
			return def
		}
		return v
	}
	target := "other"
	if g := p.HTTPGet; g != nil {
		target = fmt.Sprintf("%s %s:%s", g.Scheme, g.Path, g.Port.String())
	}
	return fmt.Sprintf("%s delay %d period %d timeout %d failures %d", target, p.InitialDelaySeconds,
		or(p.PeriodSeconds, 10), or(p.TimeoutSeconds, 1), or(p.FailureThreshold, 3))
}

// renderedAPIServer is virt-apiserver's Deployment as the default mode's
// kustomization (deploy.sh's, ${VIRT_STATE}/deploy) renders it.
func renderedAPIServer(ctx context.Context) (*appsv1.Deployment, error) {
	out, err := cluster.Kubectl(ctx, "kustomize", filepath.Join(cluster.State, "deploy"))
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	for {
		var d appsv1.Deployment
		if err := dec.Decode(&d); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("no Deployment virt-apiserver in the rendered %s", filepath.Join(cluster.State, "deploy"))
			}
			return nil, err
		}
		if d.Kind == "Deployment" && d.Name == "virt-apiserver" {
			return &d, nil
		}
	}
}

// sameAPIServer compares what the modes set differently: replicas, the
// strategy, the pod's affinity, grace period, volumes, and the container's
// arguments, probes and mounts.
func sameAPIServer(live, want *appsv1.Deployment) error {
	var diffs []string
	check := func(what string, got, want any) {
		if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
			diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s", what, g, w))
		}
	}
	check("replicas", ptr.Deref(live.Spec.Replicas, 0), ptr.Deref(want.Spec.Replicas, 0))
	check("strategy type", live.Spec.Strategy.Type, want.Spec.Strategy.Type)
	check("strategy rollingUpdate", live.Spec.Strategy.RollingUpdate, want.Spec.Strategy.RollingUpdate)
	lp, wp := live.Spec.Template.Spec, want.Spec.Template.Spec
	check("affinity", lp.Affinity, wp.Affinity)
	check("terminationGracePeriodSeconds", ptr.Deref(lp.TerminationGracePeriodSeconds, 0), ptr.Deref(wp.TerminationGracePeriodSeconds, 0))
	names := func(vs []corev1.Volume) []string {
		var n []string
		for _, v := range vs {
			src := "other"
			switch {
			case v.HostPath != nil:
				src = "hostPath:" + v.HostPath.Path
			case v.Secret != nil:
				src = "secret"
			case v.EmptyDir != nil:
				src = "emptyDir"
			case v.PersistentVolumeClaim != nil:
				src = "claim:" + v.PersistentVolumeClaim.ClaimName
			}
			n = append(n, v.Name+"="+src)
		}
		slices.Sort(n)
		return n
	}
	check("volumes", names(lp.Volumes), names(wp.Volumes))
	if len(lp.Containers) != 1 || len(wp.Containers) != 1 {
		return fmt.Errorf("want one container each, got %d and %d", len(lp.Containers), len(wp.Containers))
	}
	lc, wc := lp.Containers[0], wp.Containers[0]
	check("args", lc.Args, wc.Args)
	check("readinessProbe", probe(lc.ReadinessProbe), probe(wc.ReadinessProbe))
	check("livenessProbe", probe(lc.LivenessProbe), probe(wc.LivenessProbe))
	check("volumeMounts", lc.VolumeMounts, wc.VolumeMounts)
	if len(diffs) > 0 {
		return errors.New(strings.Join(diffs, "; "))
	}
	return nil
}
