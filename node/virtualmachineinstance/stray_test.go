package virtualmachineinstance

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/fakelauncher"
)

// boot makes a fake launcher's domain run, as a Sync of an earlier handler
// (or of another node's, for a VMI that moved) would have.
func boot(l *fakelauncher.Server) {
	l.Event(apiv1.EventType_EVENT_TYPE_STARTED, "booted", apiv1.DomainState_DOMAIN_STATE_RUNNING, "booted")
}

func destroyed(l *fakelauncher.Server) bool {
	return l.Domain().GetStopReason() == apiv1.StopReason_STOP_REASON_DESTROYED
}

// TestStrayGuestsKilledBeforeAnyReport: a handler that starts finds
// launchers on its node running guests no VMI of the node claims any more,
// and destroys them before it writes anything about any VMI; a claimed
// guest, and a launcher still waiting for its hand-off, are left alone.
func TestStrayGuestsKilledBeforeAnyReport(t *testing.T) {
	// The VMI this node runs: it gets its status write only after the sweep.
	mine := scheduledVMI("mine")
	minePod := launcherPodOf(mine)

	// Its VMI was deleted while the node was away.
	gonePod := launcherPodOf(scheduledVMI("gone"))

	// The VM's old instance here; the new one (same name, another UID)
	// runs on node-2.
	oldVMI := scheduledVMI("moved")
	movedPod := launcherPodOf(oldVMI)
	newVMI := scheduledVMI("moved")
	newVMI.UID = "vmi-moved-2"
	newVMI.Status.NodeName = "node-2"
	newVMI.Status.ActivePods = map[types.UID]string{"pod-moved-2": "node-2"}

	// Handed to this node with another pod: this one is not its launcher.
	replaced := scheduledVMI("replaced")
	replacedPod := launcherPodOf(replaced)
	replaced.Status.ActivePods = map[types.UID]string{"pod-replaced-2": testNode}

	// Failed by node health while the node was away (out of service).
	failed := scheduledVMI("failed")
	failed.Status.Phase, failed.Status.Reason = virtv1.Failed, virtv1.ReasonNodeUnresponsive
	failedPod := launcherPodOf(failed)

	// Force-deleted from the API (pod GC of an out-of-service node): only
	// its directory on the node is left.
	forgottenPod := launcherPodOf(scheduledVMI("forgotten"))

	// Not handed off yet: its VMI is on no node, its launcher has no domain.
	waiting := scheduledVMI("waiting")
	waiting.Status.Phase, waiting.Status.NodeName = virtv1.Scheduling, ""
	waitingPod := launcherPodOf(waiting)

	f := newFixture(t,
		[]*virtv1.VirtualMachineInstance{mine, newVMI, replaced, failed, waiting},
		[]*corev1.Pod{minePod, gonePod, movedPod, replacedPod, failedPod, waitingPod})
	strays := map[string]*fakelauncher.Server{
		"gone":      f.launcher(scheduledVMI("gone"), gonePod),
		"moved":     f.launcher(oldVMI, movedPod),
		"replaced":  f.launcher(replaced, replacedPod),
		"failed":    f.launcher(failed, failedPod),
		"forgotten": f.launcher(scheduledVMI("forgotten"), forgottenPod),
	}
	for _, l := range strays {
		boot(l)
		// Longer than the node's own guest takes to start: a sweep that
		// only raced the workers would lose.
		l.SlowKill(500 * time.Millisecond)
	}
	mineLauncher := f.launcher(mine, minePod)
	waitingLauncher := f.launcher(waiting, waitingPod)

	// At the first status write, every stray must be gone already.
	var mu sync.Mutex
	var firstWrite []string
	f.virt.PrependReactor("update", "virtualmachineinstances", func(action k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if firstWrite != nil || action.GetSubresource() != "status" {
			return false, nil, nil
		}
		firstWrite = []string{}
		for name, l := range strays {
			if !destroyed(l) {
				firstWrite = append(firstWrite, name)
			}
		}
		return false, nil, nil
	})

	f.start()
	f.waitVMI("mine", "Running", isRunning)
	f.settled()
	mu.Lock()
	if len(firstWrite) != 0 {
		t.Errorf("guests still running at the first status write: %v", firstWrite)
	}
	mu.Unlock()
	for name, l := range strays {
		if !destroyed(l) {
			t.Errorf("%s: stray guest not destroyed (domain %v)", name, l.Domain())
		}
		if c := l.Calls(); c.Kill != 1 || c.Sync != 0 || c.Watch != 0 {
			t.Errorf("%s: launcher calls %+v, want one Kill, no Sync, no watch", name, c)
		}
	}
	if c := mineLauncher.Calls(); c.Kill != 0 || c.Sync != 1 {
		t.Errorf("the node's own launcher got %+v, want its Sync and no Kill", c)
	}
	if c := waitingLauncher.Calls(); c.Kill != 0 || c.Sync != 0 {
		t.Errorf("a launcher waiting for its hand-off got %+v, want nothing", c)
	}
	if v := f.vmi("failed"); v.Status.Reason != virtv1.ReasonNodeUnresponsive {
		t.Errorf("the failed VMI was rewritten: %s", describe(v))
	}
	var killed int
	for _, e := range f.eventList() {
		if strings.Contains(e, ReasonStrayGuestKilled) {
			killed++
		}
	}
	if killed != len(strays) {
		t.Errorf("%d %s events, want %d: %v", killed, ReasonStrayGuestKilled, len(strays), f.eventList())
	}
}

// TestStrayGuestKilledWhileRunning: a guest whose VMI ends without its
// node (failed by node health) or leaves the node is destroyed by the
// running handler.
func TestStrayGuestKilledWhileRunning(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(f *fixture)
	}{{
		name: "VMI failed by node health",
		change: func(f *fixture) {
			v := f.vmi("vm")
			v.Status.Fail(virtv1.ReasonNodeUnresponsive, "node-1 is out of service", metav1.Now())
			v.ResourceVersion = "5000"
			if err := f.virt.Tracker().Update(vmiGVR, v, testNS); err != nil {
				t.Fatal(err)
			}
		},
	}, {
		name: "VMI deleted",
		change: func(f *fixture) {
			if err := f.virt.Tracker().Delete(vmiGVR, testNS, "vm"); err != nil {
				t.Fatal(err)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := scheduledVMI("vm")
			pod := launcherPodOf(vmi)
			f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
			l := f.launcher(vmi, pod)
			f.start()
			f.waitVMI("vm", "Running", isRunning)
			tc.change(f)
			f.waitFor("the guest destroyed", func() bool { return destroyed(l) })
			f.waitFor("the event", func() bool { return f.hasEvent(ReasonStrayGuestKilled) })
		})
	}
}

// TestStrayLauncherNotAnswering: a stray pod whose socket is not one (or a
// launcher that does not answer) is reported once and does not keep the
// handler from starting.
func TestStrayLauncherNotAnswering(t *testing.T) {
	pod := launcherPodOf(scheduledVMI("stray"))
	f := newFixture(t, nil, []*corev1.Pod{pod})
	sock := layout.LauncherSocket(f.privateDir(pod))
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sock, []byte("not a socket"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.start()
	f.waitFor("ready", f.ctrl.HasSynced)
	f.waitFor("the warning", func() bool { return f.hasEvent(ReasonStrayGuestKillFailed) })
	f.ctrl.sweep(f.ctx)
	var n int
	for _, e := range f.eventList() {
		if strings.Contains(e, ReasonStrayGuestKillFailed) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d %s events after two sweeps, want 1", n, ReasonStrayGuestKillFailed)
	}
}

func TestStrayWhy(t *testing.T) {
	vmi := scheduledVMI("vm")
	pod := launcherPodOf(vmi)
	final := vmi.DeepCopy()
	final.Status.Phase, final.Status.Reason = virtv1.Failed, virtv1.ReasonNodeUnresponsive
	other := vmi.DeepCopy()
	other.Status.ActivePods = map[types.UID]string{"pod-other": testNode}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		vmis map[types.UID]*virtv1.VirtualMachineInstance
		want string
	}{
		{"pod not in the API", nil, nil, "is no longer in the API"},
		{"VMI not on the node", pod, nil, "is not on node node-1 any more"},
		{"VMI ended", pod, map[types.UID]*virtv1.VirtualMachineInstance{vmi.UID: final}, "has ended (Failed, NodeUnresponsive)"},
		{"another active pod", pod, map[types.UID]*virtv1.VirtualMachineInstance{vmi.UID: other}, "does not count launcher pod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strayWhy(podUID("vm"), tc.pod, tc.vmis, testNode); !strings.Contains(got, tc.want) {
				t.Errorf("strayWhy = %q, want it to say %q", got, tc.want)
			}
		})
	}
}
