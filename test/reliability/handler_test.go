package reliability

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/test/reliability/guests"
	"kubevirt.dev/virt/test/reliability/report"
)

const (
	handlerSelector  = virtv1.ComponentLabel + "=virt-handler"
	handlerContainer = "virt-handler"
	// handlerGuests is how many guests are starting, then shutting down,
	// when the handler dies.
	handlerGuests = 3
)

// TestHandlerKill: SIGKILL of virt-handler while guests start, and again
// while they shut down. The restarted handler must finish what the dead
// one began: every VMI reaches the phase it was on its way to (Running,
// then gone), each guest keeps its one QEMU process, and none is left
// after the deletions.
func TestHandlerKill(t *testing.T) {
	fig := book.Start(t, "handler-kill", "SIGKILL of virt-handler")
	fig.Fault = `SIGKILL of the node's virt-handler process, twice: once while guests
start (once the first of them has its QEMU process, the others perhaps
still on their way), and once while they shut down (once the handler asked
the first of them to power off). The kubelet restarts the container; the
new process finds the guests through their launchers.`
	fig.Load = fmt.Sprintf(`%d test guests (artifacts/examples/vmi-tiny.yaml, 128 MiB) created together,
then, once Running, deleted together (an ACPI shutdown each, 30 s grace period).`, handlerGuests)
	fig.Method = `**Start**: every VMI must reach Running and Ready; a watch on each from
before the kill until the new handler resynced every guest (its log names
each launcher it connected to, and its work queue is empty) must never see
it end, be replaced or leave Running once there. **With a QEMU at the kill**
counts the guests that had a QEMU process then (` + "`/proc`" + `, by the domain's
name): only those can be lost, so at least one must have had one. Such a
guest is **lost** when the QEMU process it had at the kill is gone after;
a guest is **doubled** when it has not exactly one QEMU process after.
**Shut down**: every VMI must be gone, with no QEMU process and no launcher
pod left. Launcher pods are counted by a watch, as in the controller fault.`
	ctx := t.Context()
	ns := cluster.Namespace(t)
	pods := cluster.RecordLauncherPods(t, ns)

	// The watches see the first hand-off to the node as it happens; from
	// there /proc is polled for the first QEMU process: the kill then finds
	// at least one guest with its QEMU (one the kill could lose), the
	// others perhaps still on their way.
	phases := newPhaseLog()
	handler := readyHandler(t)
	vmis := createGuests(t, ns, "guest", 0, handlerGuests)
	var watches []*framework.VMIWatch
	for _, v := range vmis {
		w, err := cluster.WatchVMI(ctx, ns, v.Name, phases.onTheWayToRunning(v))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Stop() })
		watches = append(watches, w)
	}
	select {
	case <-phases.handedOff:
	case <-time.After(framework.BootTimeout):
		t.Fatalf("no guest handed to the node within %s", framework.BootTimeout)
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if err := waitFirstQEMU(ctx, vmis, framework.BootTimeout); err != nil {
		t.Fatal(err)
	}
	killHandler(t, handler)
	atKill, err := qemuOf(vmis)
	if err != nil {
		t.Fatal(err)
	}
	fig.Note("Start: at the kill the guests were %s.", phases.now(vmis, atKill))

	handler, err = waitRestarted(ctx, handler, handlerContainer, framework.RestartCount(handler, handlerContainer))
	if err != nil {
		t.Fatal(err)
	}
	running, failed := waitRunning(ctx, t, vmis, framework.BootTimeout)
	if err := cluster.WaitHandlerResynced(ctx, handler, running, 2*time.Minute); err != nil {
		t.Error(err)
	}
	left := 0
	for _, w := range watches {
		if err := w.Stop(); err != nil {
			t.Error(err)
			left++
		}
	}
	after, err := qemuOf(vmis)
	if err != nil {
		t.Fatal(err)
	}
	fate := guests.Judge(atKill, after)
	fig.Add(
		report.Count("start: VMIs Running", handlerGuests-failed, report.MustBe(handlerGuests)),
		report.Count("start: VMIs that ended or left Running (watched)", left, report.MustBe(0)),
		report.Count("start: guests with a QEMU at the kill", len(fate.Running), report.MustBeAtLeast(1)),
		report.Count("start: guests lost (of those)", len(fate.Lost), report.MustBe(0)),
		report.Count("start: guests doubled", len(fate.Doubled), report.MustBe(0)),
	)
	if len(fate.Lost)+len(fate.Doubled) > 0 {
		fig.Note("Start: QEMU processes at the kill %s; after %s.", pidsString(vmis, atKill), pidsString(vmis, after))
	}
	if failed > 0 {
		t.FailNow()
	}

	// The shutdown: the handler dies once it asked a guest to power off.
	shutdownAsked := time.Now()
	for _, v := range vmis {
		if err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Delete(ctx, v.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	err = framework.WaitFor(ctx, time.Minute, "the handler shutting a guest down (event ShuttingDown)", func(ctx context.Context) (bool, error) {
		events, err := cluster.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=ShuttingDown"})
		if err != nil {
			return false, err
		}
		return len(events.Items) > 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	atKill, err = qemuOf(vmis)
	if err != nil {
		t.Fatal(err)
	}
	handler = readyHandler(t)
	killHandler(t, handler)
	fig.Note("Shut down: the kill came %s after the deletes; the guests' QEMU processes then: %s.",
		time.Since(shutdownAsked).Round(100*time.Millisecond), pidsString(vmis, atKill))
	if _, err := waitRestarted(ctx, handler, handlerContainer, framework.RestartCount(handler, handlerContainer)); err != nil {
		t.Error(err)
	}
	gone := 0
	for _, v := range vmis {
		if err := cluster.WaitVMIGone(ctx, ns, v.Name, deleteTimeout); err != nil {
			t.Error(err)
			continue
		}
		gone++
	}
	qemuLeft, podsLeft := 0, 0
	for _, v := range vmis {
		pids, err := framework.QEMUProcesses(v)
		if err != nil {
			t.Fatal(err)
		}
		qemuLeft += len(pids)
		if err := waitLaunchersDeleted(ctx, pods, v.UID); err != nil {
			t.Error(err)
			podsLeft++
		}
	}
	dups, which := pods.Duplicates()
	fig.Add(
		report.Count("shut down: VMIs gone", gone, report.MustBe(handlerGuests)),
		report.Count("shut down: QEMU processes left", qemuLeft, report.MustBe(0)),
		report.Count("shut down: VMIs with a launcher pod left", podsLeft, report.MustBe(0)),
		report.Count("launcher pods beyond one per VMI", dups, report.MustBe(0)),
	)
	if dups > 0 {
		fig.Note("Duplicates: %s.", which)
	}
	fig.Note("How the guests ended (the handler's Stopped events): %s.", guestEnds(vmis))
}

// waitFirstQEMU waits until one of the VMIs has a QEMU process. It polls
// /proc more often than framework.WaitFor, so that the kill comes while the
// others may still be starting.
func waitFirstQEMU(ctx context.Context, vmis []*virtv1.VirtualMachineInstance, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		qemu, err := qemuOf(vmis)
		if err != nil {
			return false, err
		}
		for _, pids := range qemu {
			if len(pids) > 0 {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("no guest has a QEMU process within %s: %w", timeout, err)
	}
	return nil
}

// readyHandler returns the node's virt-handler pod, Ready.
func readyHandler(t *testing.T) *corev1.Pod {
	t.Helper()
	pod, err := cluster.WaitPodReady(t.Context(), virtSystem, handlerSelector, "", componentTimeout)
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// killHandler sends SIGKILL to the virt-handler of pod.
func killHandler(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	pid, err := framework.KillContainer(pod, handlerContainer)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kill -9 %d (virt-handler of pod %s)", pid, pod.Name)
}

// waitLaunchersDeleted waits until every launcher pod seen for the VMI of
// uid was deleted.
func waitLaunchersDeleted(ctx context.Context, pods *framework.LauncherPodLog, uid types.UID) error {
	return framework.WaitFor(ctx, time.Minute, "launcher pods of VMI "+string(uid)+" deleted", func(context.Context) (bool, error) {
		for _, p := range pods.Of(uid) {
			if !p.Deleted {
				return false, fmt.Errorf("pod %s still exists", p.Name)
			}
		}
		return true, nil
	})
}

// phaseLog keeps the last version of each VMI a watch saw, and closes
// handedOff when the first is handed to a node.
type phaseLog struct {
	mu        sync.Mutex
	last      map[string]*virtv1.VirtualMachineInstance
	handedOff chan struct{}
	once      sync.Once
}

func newPhaseLog() *phaseLog {
	return &phaseLog{last: map[string]*virtv1.VirtualMachineInstance{}, handedOff: make(chan struct{})}
}

// onTheWayToRunning is a WatchVMI check: the VMI v itself, never ended,
// and once Running, Running. Deletion is fine (the shutdown comes later).
func (l *phaseLog) onTheWayToRunning(v *virtv1.VirtualMachineInstance) func(*virtv1.VirtualMachineInstance) error {
	wasRunning := false
	return func(x *virtv1.VirtualMachineInstance) error {
		if x == nil {
			return fmt.Errorf("gone, want %s Running", v.UID)
		}
		l.mu.Lock()
		l.last[x.Name] = x.DeepCopy()
		l.mu.Unlock()
		if x.Status.NodeName != "" {
			l.once.Do(func() { close(l.handedOff) })
		}
		switch {
		case x.UID != v.UID:
			return fmt.Errorf("replaced by %s", x.UID)
		case x.Status.Phase.IsFinal():
			return fmt.Errorf("ended %s (%s): %s", x.Status.Phase, x.Status.Reason, readyMessage(x))
		case wasRunning && x.Status.Phase != virtv1.Running:
			return fmt.Errorf("left Running for %s", x.Status.Phase)
		}
		wasRunning = x.Status.Phase == virtv1.Running
		return nil
	}
}

// now describes the VMIs' phases, as last seen, and QEMU processes.
func (l *phaseLog) now(vmis []*virtv1.VirtualMachineInstance, qemu map[string][]int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for _, v := range vmis {
		phase := virtv1.VirtualMachineInstancePhase("unknown")
		if x := l.last[v.Name]; x != nil {
			phase = x.Status.Phase
		}
		q := "no QEMU yet"
		if len(qemu[v.Name]) > 0 {
			q = fmt.Sprintf("QEMU %v", qemu[v.Name])
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", v.Name, phase, q))
	}
	return strings.Join(parts, ", ")
}

// guestEnds says how each VMI's guest ended, as the handler recorded it.
func guestEnds(vmis []*virtv1.VirtualMachineInstance) string {
	var parts []string
	for _, v := range vmis {
		parts = append(parts, fmt.Sprintf("%s: %s", v.Name, endEvent(v)))
	}
	return strings.Join(parts, "; ")
}

// endEvent is the message of the handler's Stopped event of a VMI, which
// says how its guest ended, or what is missing.
func endEvent(v *virtv1.VirtualMachineInstance) string {
	events, err := cluster.Kube.CoreV1().Events(v.Namespace).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(v.UID) + ",reason=Stopped",
	})
	if err != nil {
		return err.Error()
	}
	if len(events.Items) == 0 {
		return "no Stopped event (its end was not recorded before it went)"
	}
	return events.Items[len(events.Items)-1].Message
}

func readyMessage(v *virtv1.VirtualMachineInstance) string {
	for _, c := range v.Status.Conditions {
		if c.Type == virtv1.VirtualMachineInstanceReady {
			return c.Message
		}
	}
	return ""
}

func pidsString(vmis []*virtv1.VirtualMachineInstance, qemu map[string][]int) string {
	var parts []string
	for _, v := range vmis {
		parts = append(parts, fmt.Sprintf("%s %v", v.Name, qemu[v.Name]))
	}
	return strings.Join(parts, ", ")
}
