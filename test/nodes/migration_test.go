package nodes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// maxHeartbeatGap is the longest pause of the guest's heartbeat (every
// 100 ms) a live migration may cause (issue 26).
const maxHeartbeatGap = 2 * time.Second

// maxServiceGap bounds the longest time a client polling the guest's
// Service every 100 ms goes without an answer during a move: the
// switch-over plus the endpoints' update (kube-proxy) of the new pod.
const maxServiceGap = 10 * time.Second

// migratingVM is alwaysVM(name) with a heartbeat on its console and the
// given eviction strategy.
func migratingVM(t *testing.T, name string, strategy virtv1.EvictionStrategy) *virtv1.VirtualMachine {
	t.Helper()
	vm := alwaysVM(t, name)
	vm.Spec.Template.Spec.Domain.Firmware.KernelBoot.KernelArgs += " virt.tick=1"
	vm.Spec.Template.Spec.EvictionStrategy = ptr.To(strategy)
	return vm
}

// onBridge makes a VM's guest take its pod's address (bridge binding on
// the pod network): such a guest cannot move, its address being the pod's.
func onBridge(vm *virtv1.VirtualMachine) *virtv1.VirtualMachine {
	spec := &vm.Spec.Template.Spec
	spec.Networks = []virtv1.Network{{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}}
	spec.Domain.Devices.Interfaces = []virtv1.Interface{{Name: "default",
		InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Bridge: &virtv1.InterfaceBridge{}}}}
	return vm
}

// servicePoller asks a URL every 100 ms (1 s timeout each) and records
// when it got the answer it wanted.
type servicePoller struct {
	mu      sync.Mutex
	answers []time.Time
	asked   int
	stop    context.CancelFunc
	done    chan struct{}
}

func pollService(t *testing.T, url, want string) *servicePoller {
	ctx, cancel := context.WithCancel(context.Background())
	p := &servicePoller{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			asked, cancelAsk := context.WithTimeout(ctx, time.Second)
			body, err := framework.HTTPGet(asked, url)
			cancelAsk()
			p.mu.Lock()
			p.asked++
			if err == nil && strings.Contains(body, want) {
				p.answers = append(p.answers, time.Now())
			}
			p.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(p.Stop)
	return p
}

func (p *servicePoller) Stop() {
	p.stop()
	<-p.done
}

// longestGap is the longest time between two answers within [from, to],
// the window's ends counting as answers' bounds.
func (p *servicePoller) longestGap(from, to time.Time) (time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	last, longest := from, time.Duration(0)
	for _, a := range p.answers {
		if a.Before(from) || a.After(to) {
			continue
		}
		longest = max(longest, a.Sub(last))
		last = a
	}
	return max(longest, to.Sub(last)), p.asked
}

// TestMigrationAcrossNodes: a guest on node 2 moves live to another node
// (the target pod's anti-affinity keeps it off the source); the migration
// succeeds; its heartbeat goes on without a lost line or a pause above 2 s;
// a client polling its Service every 100 ms meanwhile goes at most
// maxServiceGap without an answer (measured and logged).
func TestMigrationAcrossNodes(t *testing.T) {
	ctx := t.Context()
	nodes := cluster.Nodes()
	if len(nodes) < 2 {
		t.Fatalf("nodes %v: the test needs two", nodes)
	}
	from := nodes[1]
	ns := cluster.Namespace(t)
	vm := migratingVM(t, "mover", virtv1.EvictionStrategyLiveMigrate)
	vmi, _ := createVMOn(ctx, t, ns, vm, from)
	ticks := cluster.FollowTicks(t, vmi)
	if _, err := ticks.WaitPast(ctx, 0, "", time.Minute); err != nil {
		t.Fatal(err)
	}
	svc, err := cluster.Kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: vm.Name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": vm.Name},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	page := "VIRT-GUEST-HTTP " + vm.Name
	url := "http://" + svc.Spec.ClusterIP + "/"
	if _, err := framework.WaitHTTP(ctx, url, page, time.Minute); err != nil {
		t.Fatalf("the guest's Service before the move: %v", err)
	}
	poller := pollService(t, url, page)
	before := ticks.Last()

	start := time.Now()
	m, err := cluster.Migrate(ctx, ns, vmi.Name)
	if err != nil {
		t.Fatal(err)
	}
	ended, err := cluster.WaitMigrationEnded(ctx, ns, m.Name)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Status.Phase != virtv1.MigrationSucceeded {
		t.Fatalf("migration ended %s: %s", ended.Status.Phase, framework.MigrationFailure(ended))
	}
	moved, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, vmi.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if moved.UID != vmi.UID || moved.Status.Phase != virtv1.Running || moved.Status.NodeName == from || moved.Status.NodeName == "" {
		t.Fatalf("after the move: VMI %s %s on %q, want %s Running on another node than %s", moved.UID, moved.Status.Phase, moved.Status.NodeName, vmi.UID, from)
	}
	after, err := ticks.WaitPast(ctx, before.N, moved.Status.MigrationState.TargetPod, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ticks.WaitPast(ctx, after.N+10, "", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	longest, switched, err := ticks.Continuity(before.N, after.N+10)
	if err != nil {
		t.Error(err)
	}
	// As in test/e2e's TestLiveMigration: 2 s, or libvirt's own downtime
	// plus a second where the copy ran with the guest paused (TCG).
	limit := max(maxHeartbeatGap, time.Duration(moved.Status.MigrationState.DowntimeMilliseconds)*time.Millisecond+time.Second)
	if longest > limit {
		t.Errorf("the heartbeat paused %s during the move, want at most %s", longest.Round(time.Millisecond), limit)
	}
	// The Service finds the guest at its new pod.
	if _, err := framework.WaitHTTP(ctx, url, page, time.Minute); err != nil {
		t.Errorf("the guest's Service after the move: %v", err)
	}
	gap, asked := poller.longestGap(start, time.Now())
	t.Logf("moved %s -> %s in %s (downtime %d ms by libvirt); heartbeat: longest pause %s, switch %d@%s -> %d@%s; Service: %d requests, longest without an answer %s",
		from, moved.Status.NodeName, ended.Status.PhaseTransitionTimestamps[len(ended.Status.PhaseTransitionTimestamps)-1].PhaseTransitionTimestamp.Sub(start).Round(100*time.Millisecond),
		moved.Status.MigrationState.DowntimeMilliseconds, longest.Round(time.Millisecond), switched[0].N, switched[0].Pod, switched[1].N, switched[1].Pod, asked, gap.Round(time.Millisecond))
	if gap > maxServiceGap {
		t.Errorf("the Service went %s without an answer during the move, want at most %s", gap.Round(time.Millisecond), maxServiceGap)
	}
}

// TestDrainMigrates: `kubectl drain` of a node with three VMs. The
// LiveMigrate VM moves live to another node (same VMI, unbroken heartbeat)
// through an evacuation migration; the LiveMigrateIfPossible VM that cannot
// move (bridge binding: the guest holds its pod's address) is stopped and
// started again elsewhere; the LiveMigrate VM that cannot move blocks the
// drain with a message naming why, and keeps running. Once that VM is
// stopped, the drain completes.
func TestDrainMigrates(t *testing.T) {
	ctx := t.Context()
	nodes := cluster.Nodes()
	if len(nodes) < 3 {
		t.Fatalf("nodes %v: the test needs node 1 and two more", nodes)
	}
	drained := nodes[len(nodes)-1]
	ns := cluster.Namespace(t)
	t.Cleanup(func() {
		if _, err := cluster.Kubectl(context.Background(), "uncordon", drained); err != nil {
			t.Errorf("uncordon %s: %v", drained, err)
		}
	})
	mover, _ := createVMOn(ctx, t, ns, migratingVM(t, "drain-mover", virtv1.EvictionStrategyLiveMigrate), drained)
	restarted, _ := createVMOn(ctx, t, ns, onBridge(migratingVM(t, "drain-restarted", virtv1.EvictionStrategyLiveMigrateIfPossible)), drained)
	blocker, _ := createVMOn(ctx, t, ns, onBridge(migratingVM(t, "drain-blocker", virtv1.EvictionStrategyLiveMigrate)), drained)
	ticks := cluster.FollowTicks(t, mover)
	if _, err := ticks.WaitPast(ctx, 0, "", time.Minute); err != nil {
		t.Fatal(err)
	}
	before := ticks.Last()

	// The first drain cannot complete: the blocker stays. A minute shows
	// it blocked; the mover's evacuation goes on after it gave up.
	start := time.Now()
	out, err := cluster.Kubectl(ctx, "drain", drained, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=60s")
	t.Logf("kubectl drain %s (%s, blocked):\n%s", drained, time.Since(start).Round(time.Second), out)
	if err == nil {
		t.Fatalf("the drain completed though VM %s (LiveMigrate, not migratable) runs on the node", blocker.Name)
	}
	if !strings.Contains(out+err.Error(), blocker.Name) || !strings.Contains(strings.ToLower(out+err.Error()), "migrat") {
		t.Errorf("the blocked drain does not say that %s cannot migrate: %v\n%s", blocker.Name, err, out)
	}

	// The LiveMigrate VM moved: same instance, another node, heartbeat on.
	moved, err := cluster.WaitVMI(ctx, ns, mover.Name, 2*time.Minute, "moved off "+drained, func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.Status.NodeName != drained && v.Status.Phase == virtv1.Running, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if moved.UID != mover.UID {
		t.Errorf("VM %s got a new instance %s instead of moving %s", mover.Name, moved.UID, mover.UID)
	}
	migrations, err := cluster.Virt.VirtualizationV1().VirtualMachineInstanceMigrations(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evacuated := false
	for _, m := range migrations.Items {
		if m.Spec.VMIName == mover.Name && m.Annotations[virtv1.EvacuationMigrationAnnotation] == drained && m.Status.Phase == virtv1.MigrationSucceeded {
			evacuated = true
		}
	}
	if !evacuated {
		t.Errorf("no Succeeded evacuation migration of %s from %s among %d migrations", mover.Name, drained, len(migrations.Items))
	}
	if _, _, err := ticks.Continuity(before.N, ticks.Last().N); err != nil {
		t.Errorf("the moved guest's heartbeat: %v", err)
	}

	// The LiveMigrateIfPossible VM was stopped and runs again elsewhere.
	again, err := cluster.WaitVMI(ctx, ns, restarted.Name, framework.BootTimeout, "a new instance off "+drained, func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.UID != restarted.UID && v.Status.Phase == virtv1.Running, nil
	})
	if err != nil {
		t.Error(err)
	} else if again.Status.NodeName == drained {
		t.Errorf("VM %s restarted on the drained node", restarted.Name)
	}

	// The blocker still runs where it was.
	still, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, blocker.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if still.UID != blocker.UID || still.Status.Phase != virtv1.Running || still.Status.NodeName != drained {
		t.Errorf("the blocker %s after the drain: %s %s on %q, want %s Running on %s", blocker.Name, still.UID, still.Status.Phase, still.Status.NodeName, blocker.UID, drained)
	}

	// Stopped, it no longer holds the drain.
	patch := []byte(`{"spec":{"runStrategy":"Halted"}}`)
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Patch(ctx, blocker.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitVMIGone(ctx, ns, blocker.Name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	out, err = cluster.Kubectl(ctx, "drain", drained, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=2m")
	if err != nil {
		t.Errorf("the drain after the blocker stopped: %v\n%s", err, out)
	}
	if left, err := launcherPodsOn(ctx, drained); err != nil || len(left) != 0 {
		t.Errorf("launcher pods left on the drained node: %v (%v)", left, err)
	}
}

// TestMigrationLimits: six migrations asked for at once, two from each
// node, slowed down so they overlap: at no time more than 5 run in the
// cluster (KubeVirt's parallelMigrationsPerCluster) nor more than 2 leave
// one node (parallelOutboundMigrationsPerNode); all six succeed.
func TestMigrationLimits(t *testing.T) {
	ctx := t.Context()
	nodes := cluster.Nodes()
	if len(nodes) < 3 {
		t.Fatalf("nodes %v: the test needs three", nodes)
	}
	// 16 MiB/s makes each move of a 128 MiB guest take several seconds
	// beside its target pod's start, so the six overlap; the completion
	// timeout (150 s per GiB: 18.75 s here) is raised so that a loaded
	// machine finishes them at that pace.
	cluster.SetControllerArgs(t, map[string]string{controlPlaneLabel: ""}, "--migration-bandwidth=16Mi", "--migration-completion-timeout-per-gib=1200")
	ns := cluster.Namespace(t)
	// Started together, spread over the nodes by the scheduler (a soft
	// anti-affinity, which the targets then ignore where they must).
	var names []string
	for i := range 6 {
		name := fmt.Sprintf("limited-%d", i)
		vm := migratingVM(t, name, virtv1.EvictionStrategyLiveMigrate)
		vm.Spec.Template.ObjectMeta.Labels["group"] = "limited"
		vm.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{
					TopologyKey:   hostnameLabel,
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"group": "limited"}},
				},
			}},
		}}
		if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	placed := map[string]int{}
	for _, name := range names {
		vmi, err := cluster.WaitVMIRunning(ctx, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		placed[vmi.Status.NodeName]++
	}
	t.Logf("guests per node before the migrations: %v", placed)
	var created []string
	for _, name := range names {
		m, err := cluster.Migrate(ctx, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, m.Name)
	}
	// A migration runs from its target pod's creation (Scheduling) to its
	// end.
	active := func(p virtv1.VirtualMachineInstanceMigrationPhase) bool {
		return p != "" && p != virtv1.MigrationPending && !p.Final()
	}
	mostCluster, mostNode := 0, map[string]int{}
	err := framework.WaitFor(ctx, 8*time.Minute, "six migrations ended", func(ctx context.Context) (bool, error) {
		list, err := cluster.Virt.VirtualizationV1().VirtualMachineInstanceMigrations(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		n, perNode, ended := 0, map[string]int{}, 0
		for _, m := range list.Items {
			if !slices.Contains(created, m.Name) {
				continue
			}
			if m.Status.Phase.Final() {
				ended++
			}
			if active(m.Status.Phase) {
				n++
				if ms := m.Status.MigrationState; ms != nil && ms.SourceNode != "" {
					perNode[ms.SourceNode]++
				}
			}
		}
		mostCluster = max(mostCluster, n)
		for node, k := range perNode {
			mostNode[node] = max(mostNode[node], k)
		}
		return ended == len(created), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("at most %d migrations running at once; per source node %v", mostCluster, mostNode)
	if mostCluster > 5 {
		t.Errorf("%d migrations ran at once, want at most 5", mostCluster)
	}
	for node, k := range mostNode {
		if k > 2 {
			t.Errorf("%d migrations left node %s at once, want at most 2", k, node)
		}
	}
	if mostCluster < 2 {
		t.Errorf("at most %d migrations ran at once: they did not overlap, the limits were not exercised", mostCluster)
	}
	for _, name := range created {
		m, err := cluster.Virt.VirtualizationV1().VirtualMachineInstanceMigrations(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Status.Phase != virtv1.MigrationSucceeded {
			t.Errorf("migration %s of %s ended %s: %s", m.Name, m.Spec.VMIName, m.Status.Phase, framework.MigrationFailure(m))
			logVMIEnd(ctx, t, cluster, ns, m.Spec.VMIName)
		}
	}
}

// logVMIEnd logs what the VMI's status and its events say, for a migration
// that failed because its VMI ended: which component ended it, and why.
func logVMIEnd(ctx context.Context, t *testing.T, cluster *framework.Cluster, ns, name string) {
	t.Helper()
	if vmi, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
		t.Logf("VMI %s: phase %s reason %q node %s migrationState %+v", name, vmi.Status.Phase, vmi.Status.Reason, vmi.Status.NodeName, vmi.Status.MigrationState)
	} else {
		t.Logf("VMI %s: %v", name, err)
	}
	events, err := cluster.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Logf("events: %v", err)
		return
	}
	for _, e := range events.Items {
		if strings.HasPrefix(e.InvolvedObject.Name, name) || strings.Contains(e.InvolvedObject.Name, "-"+name+"-") {
			t.Logf("event %s %s/%s %s: %s", e.LastTimestamp.Format("15:04:05"), e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
}
