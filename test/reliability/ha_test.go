package reliability

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/test/reliability/load"
	"kubevirt.dev/virt/test/reliability/report"
)

const (
	// haAPIServerReplicas is virt-apiserver's replica count in the HA mode
	// (artifacts/overlays/ha).
	haAPIServerReplicas = 2
	// haSwitchTimeout bounds the switch to the HA mode (make up HA=1),
	// the first build of the etcd image included.
	haSwitchTimeout = 15 * time.Minute
	// haSwitchBackTimeout bounds the switch back to the default mode at the
	// end: nothing to build by then. It is kept out of the test's budget, so
	// that whatever hangs fails the test before go test's own deadline,
	// which would end the process without the switch back.
	haSwitchBackTimeout = 3 * time.Minute
	// failoverTarget is the failover target: the platform whole
	// again after a component's loss.
	failoverTarget = 15
	// failedShareTarget is the target for the requests a fault
	// costs, in percent of the storm's.
	failedShareTarget = 1
	// informerLag is what the kube-aggregator's EndpointSlice informer may
	// take to see a change this machine's watch saw.
	informerLag = time.Second
)

// TestHAFaults switches the cluster to the HA mode once (virt-apiserver's
// two replicas on the three-member etcd cluster virt-etcd) and kills, one
// storm each, a virt-apiserver replica, an etcd member that does not lead,
// and the etcd leader. No acknowledged write may be lost; the requests
// failed are held to the 1 %. The cluster goes back to the default
// mode at the end, whatever happened.
func TestHAFaults(t *testing.T) {
	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-haSwitchBackTimeout))
		defer cancel()
	}
	shape, err := stormShapeFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	// Registered before the switch: a switch that fails half-way leaves a
	// cluster to bring back too. The rest of the suite runs in the
	// embedded mode, so the switch back happens even if the cluster was
	// in the HA mode already (an interrupted run leaves it so).
	t.Cleanup(func() { switchBackToEmbedded(t) })
	if mode, err := cluster.Mode(); err == nil && mode != framework.ModeEmbedded {
		t.Logf("the cluster is in the %q mode already; it goes back to the embedded mode at the end", mode)
	}
	start := time.Now()
	switchCtx, cancel := context.WithTimeout(ctx, haSwitchTimeout)
	notHA := cluster.SwitchMode(switchCtx, framework.ModeHA)
	cancel()
	if notHA == nil {
		t.Logf("switched to the HA mode in %s", time.Since(start).Round(time.Second))
	}

	t.Run("virt-apiserver replica", func(t *testing.T) { haAPIServerKill(t, ctx, shape, notHA) })
	t.Run("etcd member", func(t *testing.T) { etcdMemberKill(t, ctx, shape, notHA) })
	t.Run("etcd leader", func(t *testing.T) { etcdLeaderKill(t, ctx, shape, notHA) })
}

// haAPIServerKill: SIGKILL of one of the two virt-apiserver replicas during
// the storm.
func haAPIServerKill(t *testing.T, ctx context.Context, shape stormShape, notHA error) {
	fig := book.Start(t, "ha-apiserver-kill", "SIGKILL of one of two virt-apiserver replicas (HA mode)")
	fig.Fault = `SIGKILL of the process of one of the two virt-apiserver replicas of the HA
mode (` + "`make up HA=1`" + `: both replicas on the three-member etcd cluster
virt-etcd). The other replica serves on. The kube-aggregator sends each
request to one ready endpoint of the Service virt-apiserver, chosen at
random, and tries no other when it fails: a request sent to the killed
replica fails (503, connection refused) until its endpoint leaves the
EndpointSlice. That takes the kubelet seeing the container exit (its PLEG
relists the containers every second) or its readiness probe failing twice
(every second), whichever comes first, then the EndpointSlice controller
and the aggregator's informer. The kubelet restarts the container.`
	fig.Load = stormLoad(shape)
	fig.Method = `The storm's figures, as defined above. A watch on the Service's
EndpointSlices follows the killed replica's endpoint (this machine's
clock): when it left the ready endpoints, when it came back after the
restart. **2 Ready replicas and full throughput** is the later of the
storm's time to full capacity and the endpoint's return: the platform as it
was before the fault. A failed request is *in the window* if it failed at
or after the kill and started before the endpoint left plus 1 s for the
aggregator's informer; the update or delete of a VM whose create failed in
the window fails too (404), a moment later. A request that failed before
the kill is not the fault's: it is counted apart, never in the window.
Bounds: the issue's targets (failed share < 1 %, back within 15 s). A
missed failed-share target is argued only if every failure is in the
window or such a 404: any other failure, before the kill or after the
window, fails the test.`
	requireHA(t, notHA)
	pods := freshAPIServers(t, ctx, fig)
	victim := pods[0]
	restarts := framework.RestartCount(&victim, apiServerContainer)
	ns := cluster.Namespace(t)
	endpoint := watchEndpoint(t, ctx, victim.Status.PodIP)
	unready := watchUnready(t, ctx, &victim, apiServerContainer)
	requireBudget(t, ctx, shape)

	rec, fault := runStorm(t, ns, shape, func() time.Time {
		return killContainer(t, ctx, victim.Name, apiServerContainer)
	})
	// The lost writes are checked whatever became of the endpoint.
	out, back, endpointErr := endpoint.wait(ctx, fault)
	bounds := stormBounds{
		failedShare: report.TargetBelow(failedShareTarget, "%"), downtime: report.Measured(), timeToFullCapacity: report.Measured(),
	}
	var split load.Split
	if endpointErr == nil {
		split = load.SplitFailures(rec, fault, out.Add(informerLag))
	}
	detected := "the kubelet marked the pod unready"
	if at, cause := unready.seen(); !at.IsZero() {
		detected = fmt.Sprintf("the kubelet marked the pod unready %.1f s after the kill, %s", at.Sub(fault).Seconds(), cause)
	}
	if endpointErr == nil && split.Explained() {
		bounds.failedShareArgument = fmt.Sprintf(`every failed request belongs to the fault's window:
%d failed from the kill on, having started before the killed replica's
endpoint left the EndpointSlice (%.1f s after the kill) plus 1 s for the
aggregator's informer, %d were the updates or deletes (404) of VMs whose
create had failed so, none failed before the kill or later. In the window the aggregator sends each request to either replica
at random and tries no other: a request to the dead one fails at once,
while one to the live one takes its time (from the kill to the end of the
window %d requests succeeded, %d failed). The share is that window over the
storm's length (%s here). The platform cannot shorten the window: %s,
and the endpoint leaves only then. The kubelet relists the containers
every second; a readiness probe, at its shortest period of a second, is no
quicker (with one failure instead of two it would catch the exit first
some of the time, at the price of dropping a replica on a single slow
answer). The aggregator (v1.37) retries no other endpoint; a retry in the
client would hide the fault, not remove it.`, split.Window, out.Sub(fault).Seconds(), split.FollowOn,
			split.OKInWindow, split.FailedInWindow, shape.before+shape.after, detected)
	}
	f := stormFigures(t, fig, ns, rec, fault, bounds)
	if endpointErr != nil {
		t.Fatal(endpointErr)
	}
	restarted, err := waitRestarted(ctx, &victim, apiServerContainer, restarts)
	if err != nil {
		t.Fatal(err)
	}
	if endpointErr == nil && !split.Explained() {
		logReplicaStart(t, ctx, restarted)
	}
	fig.Add(report.Seconds("endpoint out of the EndpointSlice", out.Sub(fault), report.Measured()))
	if s := containerStatus(restarted, apiServerContainer); s != nil && s.State.Running != nil {
		fig.Add(report.Seconds("container running again (kubelet)", s.State.Running.StartedAt.Sub(fault).Round(time.Second), report.Measured()))
	}
	fig.Add(report.Seconds("endpoint ready again (restarted)", back.Sub(fault), report.Measured()))
	if f.Recovered {
		whole := max(f.TimeToFullCapacity, back.Sub(fault))
		fig.Add(report.Seconds("2 Ready replicas and full throughput", whole, report.TargetBelow(failoverTarget, "s")))
	}
	fig.Note("Failed requests: %d before the fault, %d in the window, %d updates or deletes of a VM whose create failed in it, %d else%s; %s.",
		split.Before, split.Window, split.FollowOn, split.Unexplained, split.ExamplesString(), detected)
	fig.Note("Errors: %s.", errorKinds(rec))
	fig.Note("The kubelet restarted the container %s.", crashHistory(&victim, apiServerContainer, fault))
	if f.Requests > 0 {
		fig.Note("The failures in the window cost %.2f %% of this storm's %d requests; over a storm twice as long the same window would cost half that share.",
			100*float64(split.Window+split.FollowOn)/float64(f.Requests), f.Requests)
	}
}

// logReplicaStart logs the start of the killed replica's new container,
// for failures the fault's window does not explain. Once, four requests
// got 403 for system:anonymous right as the restarted replica's endpoint
// came back: what the new process did first (its authentication
// controllers' syncs) is what to read them against.
func logReplicaStart(t *testing.T, ctx context.Context, pod *corev1.Pod) {
	t.Helper()
	raw, err := cluster.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container: apiServerContainer, Timestamps: true, LimitBytes: ptr.To[int64](64 << 10),
	}).DoRaw(ctx)
	if err != nil {
		t.Logf("the restarted replica's log: %v", err)
		return
	}
	t.Logf("the restarted replica's log from its start (failures the window does not explain):\n%s", raw)
}

// etcdMemberKill: SIGKILL of an etcd member that does not lead, during the
// storm.
func etcdMemberKill(t *testing.T, ctx context.Context, shape stormShape, notHA error) {
	fig := book.Start(t, "ha-etcd-member-kill", "SIGKILL of an etcd member that does not lead (HA mode)")
	fig.Fault = `SIGKILL of the etcd process of a member of virt-etcd that is not the
leader (found by asking each member's Status right before). Two members
remain, a quorum, and the leader leads on. virt-apiserver's etcd client
balances its requests over the three members and moves on from one that
fails; a request in flight on the killed member's connection fails with it.
The kubelet restarts the container; the member rejoins with its data.`
	fig.Load = stormLoad(shape)
	fig.Method = `The storm's figures, as defined above; the member's way back (its
container restarted and the pod Ready: rejoined a quorum with a leader)
from the pod's status (seconds resolution). Bounds: no write lost (must),
failed share < 1 % (the issue's target); the rest measured.`
	requireHA(t, notHA)
	waitHAHealthy(t, ctx)
	ns := cluster.Namespace(t)
	requireBudget(t, ctx, shape)

	var victim *corev1.Pod
	var restarts int32
	var leaderBefore uint64
	rec, fault := runStorm(t, ns, shape, func() time.Time {
		view, err := readEtcd(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for id, p := range view.pods {
			if id != view.leader && (victim == nil || p.Name < victim.Name) {
				victim = p
			}
		}
		if victim == nil {
			t.Fatalf("no etcd member other than the leader %x", view.leader)
		}
		leaderBefore = view.leader
		restarts = framework.RestartCount(victim, etcdContainer)
		t.Logf("etcd leader %s; killing %s", view.name(view.leader), victim.Name)
		return killContainer(t, ctx, victim.Name, etcdContainer)
	})
	stormFigures(t, fig, ns, rec, fault, stormBounds{
		failedShare: report.TargetBelow(failedShareTarget, "%"), downtime: report.Measured(), timeToFullCapacity: report.Measured(),
	})
	fig.Note("Errors: %s.", errorKinds(rec))
	back, err := waitRestarted(ctx, victim, etcdContainer, restarts)
	if err != nil {
		t.Fatal(err)
	}
	memberBack(fig, back, fault)
	fig.Note("The kubelet restarted the member's container %s.", crashHistory(victim, etcdContainer, fault))
	view, err := waitEtcdQuorum(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leader := "the same member led throughout"
	if view.leader != leaderBefore {
		leader = fmt.Sprintf("the leader changed to %s meanwhile", view.name(view.leader))
	}
	fig.Note("Killed member %s; %s.", victim.Name, leader)
}

// etcdLeaderKill: SIGKILL of the etcd leader during the storm.
func etcdLeaderKill(t *testing.T, ctx context.Context, shape stormShape, notHA error) {
	fig := book.Start(t, "ha-etcd-leader-kill", "SIGKILL of the etcd leader (HA mode)")
	fig.Fault = `SIGKILL of the etcd process of the leader of virt-etcd (found by asking
each member's Status right before). No leadership transfer: the two
others elect a new leader once their election timeout (etcd's default 1 s,
randomized up to twice that) passed without a heartbeat, and until then no
write commits. Writes in flight fail or wait; virt-apiserver's etcd client
moves on from the killed member's connection. A write the old leader had
taken but not committed waits out etcd's request timeout (5 s plus twice
the election timeout: 7 s) and fails then ("request timed out"), after the
throughput is back: the failures after the recovery count those. The
kubelet restarts the container; the member rejoins as a follower with its
data.`
	fig.Load = stormLoad(shape)
	fig.Method = fmt.Sprintf(`The storm's figures, as defined above. **Time to a new leader**:
from the kill until a surviving member's Status (each asked every %s, on a
connection of its own) names a leader of a later Raft term than the killed
one's. The member's way back from the pod's status (seconds resolution).
Bounds: no write lost (must), failed share < 1 %% and a new leader within
15 s (the issue's targets); the rest measured.`, etcdPollInterval)
	requireHA(t, notHA)
	waitHAHealthy(t, ctx)
	ns := cluster.Namespace(t)
	requireBudget(t, ctx, shape)

	var victim *corev1.Pod
	var restarts int32
	var election <-chan leaderChange
	rec, fault := runStorm(t, ns, shape, func() time.Time {
		view, err := readEtcd(ctx)
		if err != nil {
			t.Fatal(err)
		}
		victim = view.pods[view.leader]
		restarts = framework.RestartCount(victim, etcdContainer)
		// The survivors' clients connect before the kill, so that the
		// first question after it does not wait for a handshake.
		watcher, err := newLeaderWatch(view, view.leader)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("killing the etcd leader %s (term %d)", victim.Name, view.term)
		at := killContainer(t, ctx, victim.Name, etcdContainer)
		election = watcher.await(ctx, view.term, time.Minute)
		return at
	})
	stormFigures(t, fig, ns, rec, fault, stormBounds{
		failedShare: report.TargetBelow(failedShareTarget, "%"), downtime: report.Measured(), timeToFullCapacity: report.Measured(),
	})
	fig.Note("Errors: %s.", errorKinds(rec))
	change := <-election
	if change.err != nil {
		fig.Add(report.Text("time to a new leader", "none seen: "+change.err.Error(), report.MustEqual("a new leader")))
	} else {
		fig.Add(report.Seconds("time to a new leader", change.at.Sub(fault), report.TargetBelow(failoverTarget, "s")))
		fig.Note("Killed the leader %s; %s leads from term %d on (first reported by %s).", victim.Name, change.leader, change.term, change.by)
	}
	back, err := waitRestarted(ctx, victim, etcdContainer, restarts)
	if err != nil {
		t.Fatal(err)
	}
	memberBack(fig, back, fault)
	fig.Note("The kubelet restarted the member's container %s.", crashHistory(victim, etcdContainer, fault))
	if _, err := waitEtcdQuorum(ctx); err != nil {
		t.Fatal(err)
	}
}

// stormLoad says what ran during a fault.
func stormLoad(shape stormShape) string {
	return fmt.Sprintf("The API storm (above): %d clients, the kill %s after its start, %s of storm after it.", shape.clients, shape.before, shape.after)
}

// memberBack adds an etcd member's way back after its kill.
func memberBack(fig *report.Figure, pod *corev1.Pod, fault time.Time) {
	if s := containerStatus(pod, etcdContainer); s != nil && s.State.Running != nil {
		fig.Add(report.Seconds("member's container running again", s.State.Running.StartedAt.Sub(fault).Round(time.Second), report.Measured()))
	}
	if ready := podCondition(pod, corev1.PodReady); ready != nil {
		fig.Add(report.Seconds("member Ready again (in the quorum)", ready.LastTransitionTime.Sub(fault).Round(time.Second), report.Measured()))
	}
}

func requireHA(t *testing.T, notHA error) {
	t.Helper()
	if notHA != nil {
		t.Fatalf("the cluster is not in the HA mode: %v", notHA)
	}
}

// requireBudget fails the test unless a storm, and the waits after it, fit
// in what is left of the test's budget: runStorm and stormFigures wait on
// the test's own context, which knows nothing of the switch back.
func requireBudget(t *testing.T, ctx context.Context, shape stormShape) {
	t.Helper()
	need := shape.before + shape.after + stormRequestTimeout + 2*componentTimeout
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < need {
		t.Fatalf("%s left before the switch back to the embedded mode must begin, a storm and its checks need %s: run go test with a longer -timeout",
			time.Until(deadline).Round(time.Second), need)
	}
}

// killContainer kills the container of a pod of virt-system by SIGKILL of
// its main process, and returns when.
func killContainer(t *testing.T, ctx context.Context, pod, container string) time.Time {
	t.Helper()
	cur, err := cluster.Kube.CoreV1().Pods(virtSystem).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := framework.KillContainer(cur, container)
	at := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kill -9 %d (%s of pod %s)", pid, container, pod)
	return at
}

// waitHAHealthy waits until the HA mode is whole: two ready virt-apiserver
// replicas, none terminating, three ready etcd members that agree on a
// leader, the APIService Available. It returns the replicas.
func waitHAHealthy(t *testing.T, ctx context.Context) []corev1.Pod {
	t.Helper()
	var ready []corev1.Pod
	err := framework.WaitFor(ctx, componentTimeout, fmt.Sprintf("%d ready virt-apiserver replicas", haAPIServerReplicas), func(ctx context.Context) (bool, error) {
		pods, err := cluster.Kube.CoreV1().Pods(virtSystem).List(ctx, metav1.ListOptions{LabelSelector: apiServerSelector})
		if err != nil {
			return false, err
		}
		ready = ready[:0]
		for _, p := range pods.Items {
			if ok := podCondition(&p, corev1.PodReady); p.DeletionTimestamp == nil && ok != nil && ok.Status == corev1.ConditionTrue {
				ready = append(ready, p)
			}
		}
		if len(pods.Items) != haAPIServerReplicas || len(ready) != haAPIServerReplicas {
			return false, fmt.Errorf("%d pods, %d ready and not terminating", len(pods.Items), len(ready))
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := waitEtcdQuorum(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitAPIServiceAvailable(ctx, apiService, componentTimeout); err != nil {
		t.Fatal(err)
	}
	return ready
}

// crashBackoffReset is how long after a container's exit the kubelet
// restarts the next crash at once again, without its back-off.
const crashBackoffReset = 10 * time.Minute

// crashHistory says how the kubelet restarted a container killed at fault,
// from the pod as it was before the kill: at once, or after its crash
// back-off for an exit shortly before.
func crashHistory(before *corev1.Pod, container string, fault time.Time) string {
	s := containerStatus(before, container)
	if s == nil || s.LastTerminationState.Terminated == nil {
		return "at once: the container's first exit"
	}
	ago := fault.Sub(s.LastTerminationState.Terminated.FinishedAt.Time)
	if ago < crashBackoffReset {
		return fmt.Sprintf("after its crash back-off: its previous exit was %s earlier (restart %d), and a container that exits again within %s waits 10 s, then 20 s, 40 s ... before its restart",
			ago.Round(time.Second), s.RestartCount, crashBackoffReset)
	}
	return fmt.Sprintf("at once: its previous exit was %s earlier", ago.Round(time.Second))
}

// freshAPIServers returns the two ready virt-apiserver replicas, rolled
// first if either exited within the crash back-off's memory: the switch to
// the HA mode starts them with the etcd members, and a replica that gives
// up on etcd before the members have a quorum exits once. A kill then
// would measure the kubelet's back-off (10 s) on top of the fault; a
// replica that has run for a while, as in a cluster that has been in the HA
// mode for long, has none.
func freshAPIServers(t *testing.T, ctx context.Context, fig *report.Figure) []corev1.Pod {
	t.Helper()
	pods := waitHAHealthy(t, ctx)
	var exited []string
	for i := range pods {
		if s := containerStatus(&pods[i], apiServerContainer); s != nil && s.LastTerminationState.Terminated != nil &&
			time.Since(s.LastTerminationState.Terminated.FinishedAt.Time) < crashBackoffReset {
			exited = append(exited, fmt.Sprintf("%s (restart %d, exit code %d %s)", pods[i].Name, s.RestartCount,
				s.LastTerminationState.Terminated.ExitCode, s.LastTerminationState.Terminated.Reason))
		}
	}
	if len(exited) == 0 {
		return pods
	}
	fig.Note("Before the storm the replicas were rolled (kubectl rollout restart), so that the killed one had no recent exit: %s had exited since the switch to the HA mode.",
		strings.Join(exited, ", "))
	if _, err := cluster.Kubectl(ctx, "-n", virtSystem, "rollout", "restart", "deployment/virt-apiserver"); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Kubectl(ctx, "-n", virtSystem, "rollout", "status", "deployment/virt-apiserver", "--timeout=3m"); err != nil {
		t.Fatal(err)
	}
	return waitHAHealthy(t, ctx)
}

// switchBackToEmbedded switches the cluster back to the default mode, with a
// context of its own: the test's is over by the time cleanups run.
func switchBackToEmbedded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), haSwitchBackTimeout)
	defer cancel()
	start := time.Now()
	if err := cluster.SwitchMode(ctx, framework.ModeEmbedded); err != nil {
		t.Errorf("switch back to the embedded mode: %v", err)
		return
	}
	t.Logf("switched back to the embedded mode in %s", time.Since(start).Round(time.Second))
	if mode, err := cluster.Mode(); err != nil || mode != framework.ModeEmbedded {
		t.Errorf("mode after the switch back: %q (%v)", mode, err)
	}
	if _, err := cluster.WaitPodReady(ctx, virtSystem, apiServerSelector, "", time.Minute); err != nil {
		t.Error(err)
	}
	if err := cluster.WaitAPIServiceAvailable(ctx, apiService, time.Minute); err != nil {
		t.Error(err)
	}
}

// stormObject is a storm's VM name in an error message.
var stormObject = regexp.MustCompile(`storm-\d+-\d+`)

// errorKinds counts the storm's failed requests by their error, the
// objects' names left out, most frequent first: what the clients were
// told.
func errorKinds(rec *load.Record) string {
	counts := map[string]int{}
	for _, r := range rec.Requests {
		if !r.OK() {
			msg := []rune(stormObject.ReplaceAllString(r.Err, "storm-…"))
			if len(msg) > 160 {
				msg = append(msg[:160], '…')
			}
			counts[r.Outcome()+" "+string(msg)]++
		}
	}
	if len(counts) == 0 {
		return "none"
	}
	kinds := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		if c := counts[b] - counts[a]; c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for i, k := range kinds {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("%d kinds more", len(kinds)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%d × %q", counts[k], k))
	}
	return strings.Join(parts, "; ")
}
