package virtualmachineinstance

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/node/fakelauncher"
)

var evicted = corev1.PodCondition{
	Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
	Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting",
}

// terminatePod marks the pod deleted, as the API server does on a delete
// or an eviction (with the DisruptionTarget condition cond, if set).
func (f *fixture) terminatePod(pod *corev1.Pod, cond *corev1.PodCondition) {
	f.t.Helper()
	cur, err := f.kube.CoreV1().Pods(pod.Namespace).Get(f.t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	cur.DeletionTimestamp = ptr.To(metav1.Now())
	cur.DeletionGracePeriodSeconds = ptr.To[int64](37)
	if cond != nil {
		cur.Status.Conditions = append(cur.Status.Conditions, *cond)
	}
	if err := f.kube.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), cur, pod.Namespace); err != nil {
		f.t.Fatal(err)
	}
}

// TestPodTerminated: a launcher pod evicted or deleted under a running
// guest of a VMI nobody deleted fails the VMI with PodTerminated (so its
// VM starts it again), whether the guest obeyed the launcher's ACPI
// shutdown or was destroyed after the grace period; a guest that powered
// off on its own or crashed ends as it did.
func TestPodTerminated(t *testing.T) {
	tests := []struct {
		name string
		// cond is the pod's DisruptionTarget condition, nil for a plain delete.
		cond *corev1.PodCondition
		// end ends the guest after the pod was marked deleted.
		end        func(f *fixture, l *fakelauncher.Server, pod *corev1.Pod)
		wantPhase  virtv1.VirtualMachineInstancePhase
		wantReason string
		// wantMessage is in the Ready condition's message and the Stopped event.
		wantMessage string
	}{{
		name:      "evicted, the guest obeys ACPI",
		cond:      &evicted,
		end:       func(_ *fixture, l *fakelauncher.Server, _ *corev1.Pod) { l.Terminate("shutdown") },
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonPodTerminated,
		wantMessage: "The launcher pod virt-launcher-vm was evicted (Eviction API: evicting); the guest powered off",
	}, {
		name:      "deleted, the guest ignores ACPI",
		end:       func(_ *fixture, l *fakelauncher.Server, _ *corev1.Pod) { l.Terminate("destroyed") },
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonPodTerminated,
		wantMessage: "The launcher pod virt-launcher-vm was deleted; the guest did not power off within its grace period and was destroyed",
	}, {
		name: "evicted, known only by the exit code",
		cond: &evicted,
		end: func(f *fixture, l *fakelauncher.Server, pod *corev1.Pod) {
			l.Exit()
			f.updatePod(pod, terminated(0))
		},
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonPodTerminated,
		wantMessage: "was evicted (Eviction API: evicting); the guest powered off (launcher exit code 0",
	}, {
		// The pod may be gone from the cache when the end is synced.
		name: "deleted and gone once the guest obeyed",
		end: func(f *fixture, l *fakelauncher.Server, pod *corev1.Pod) {
			l.Terminate("shutdown")
			f.deletePod(pod)
		},
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonPodTerminated,
		wantMessage: "The launcher pod virt-launcher-vm was deleted; the ",
	}, {
		name:      "the guest powered off on its own",
		end:       func(_ *fixture, l *fakelauncher.Server, _ *corev1.Pod) { l.End("shutdown") },
		wantPhase: virtv1.Succeeded, wantReason: virtv1.ReasonGuestShutdown,
	}, {
		name:      "the guest crashed",
		cond:      &evicted,
		end:       func(_ *fixture, l *fakelauncher.Server, _ *corev1.Pod) { l.End("crashed") },
		wantPhase: virtv1.Failed, wantReason: virtv1.ReasonGuestCrashed,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := scheduledVMI("vm")
			pod := launcherPodOf(vmi)
			f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
			l := f.launcher(vmi, pod)
			f.start()
			f.waitVMI("vm", "Running", isRunning)
			f.terminatePod(pod, tt.cond)
			f.waitFor("the PodTerminating event", func() bool { return f.hasEvent(ReasonPodTerminating) })
			tt.end(f, l, pod)
			got := f.waitVMI("vm", string(tt.wantPhase)+"/"+tt.wantReason, phaseIs(tt.wantPhase, tt.wantReason))
			if tt.wantMessage == "" {
				return
			}
			if msg := condition(got, virtv1.VirtualMachineInstanceReady).Message; !strings.Contains(msg, tt.wantMessage) {
				t.Errorf("Ready message %q, want it to contain %q", msg, tt.wantMessage)
			}
			f.waitFor("the Stopped event", func() bool {
				for _, e := range f.eventList() {
					if strings.Contains(e, ReasonStopped) && strings.Contains(e, tt.wantMessage) {
						return true
					}
				}
				return false
			})
		})
	}
}

// TestSIGTERMWithoutPodTermination: a launcher told to shut down while
// its pod is neither deleted nor evicted (in the cache and in the API):
// nobody outside the pod stopped it, the guest shut down.
func TestSIGTERMWithoutPodTermination(t *testing.T) {
	vmi := scheduledVMI("vm")
	pod := launcherPodOf(vmi)
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
	l := f.launcher(vmi, pod)
	f.start()
	f.waitVMI("vm", "Running", isRunning)
	l.Terminate("shutdown")
	f.waitVMI("vm", "Succeeded/GuestShutdown", phaseIs(virtv1.Succeeded, virtv1.ReasonGuestShutdown))
	if f.hasEvent(ReasonPodTerminating) {
		t.Errorf("PodTerminating event for a pod nobody terminated: %v", f.eventList())
	}
}
