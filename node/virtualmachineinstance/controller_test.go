package virtualmachineinstance

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/fakelauncher"
)

func isRunning(v *virtv1.VirtualMachineInstance) bool {
	return v != nil && v.Status.Phase == virtv1.Running
}

func TestScheduledToRunningInOneWrite(t *testing.T) {
	vmi := scheduledVMI("vm")
	pod := launcherPodOf(vmi)
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
	launcher := f.launcher(vmi, pod)
	f.start()

	f.waitVMI("vm", "Running", isRunning)
	f.settled()
	got := f.vmi("vm")
	if n := f.statusWrites.Load(); n != 1 {
		t.Errorf("status writes from Scheduled to Running = %d, want 1", n)
	}
	if c := launcher.Calls(); c.Sync != 1 {
		t.Errorf("Sync calls = %d, want 1", c.Sync)
	}
	if c := condition(got, virtv1.VirtualMachineInstanceReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %+v, want True", c)
	}
	if c := condition(got, virtv1.VirtualMachineInstanceSoftwareEmulation); c == nil || c.Status != corev1.ConditionTrue ||
		c.Reason != virtv1.ReasonSoftwareEmulation || c.Message == "" {
		t.Errorf("SoftwareEmulation = %+v, want True with reason %s and a message", c, virtv1.ReasonSoftwareEmulation)
	}
	want := []virtv1.VirtualMachineInstanceNetworkInterface{{
		Name: "default", MAC: "52:54:00:00:01:00", IPAddress: "198.18.0.9", IPAddresses: []string{"198.18.0.9"},
		InfoSource: "domain", PodInterfaceName: "eth0",
	}}
	if !slices.EqualFunc(got.Status.Interfaces, want, func(a, b virtv1.VirtualMachineInstanceNetworkInterface) bool {
		return a.Name == b.Name && a.MAC == b.MAC && a.IPAddress == b.IPAddress && slices.Equal(a.IPAddresses, b.IPAddresses) &&
			a.InfoSource == b.InfoSource && a.PodInterfaceName == b.PodInterfaceName
	}) {
		t.Errorf("interfaces = %+v, want %+v", got.Status.Interfaces, want)
	}
	// virt-controller's fields pass through.
	if got.Status.NodeName != testNode || len(got.Status.ActivePods) != 1 || got.Status.LauncherContainerImageVersion != "virt-launcher:test" ||
		condition(got, virtv1.VirtualMachineInstancePodScheduled) == nil {
		t.Errorf("virt-controller's fields changed: %+v", got.Status)
	}
	if !f.hasEvent(ReasonStarted) {
		t.Errorf("no %s event; events: %v", ReasonStarted, f.eventList())
	}
}

func TestDomainEvents(t *testing.T) {
	type step struct {
		do   func(l *fakelauncher.Server)
		want func(*virtv1.VirtualMachineInstance) bool
		what string
	}
	pausedCond := func(v *virtv1.VirtualMachineInstance) bool {
		c := condition(v, virtv1.VirtualMachineInstancePaused)
		r := condition(v, virtv1.VirtualMachineInstanceReady)
		return isRunning(v) && c != nil && c.Status == corev1.ConditionTrue && r != nil && r.Status == corev1.ConditionFalse
	}
	resumed := func(v *virtv1.VirtualMachineInstance) bool {
		r := condition(v, virtv1.VirtualMachineInstanceReady)
		return isRunning(v) && condition(v, virtv1.VirtualMachineInstancePaused) == nil && r != nil && r.Status == corev1.ConditionTrue
	}
	ended := func(detail string) func(l *fakelauncher.Server) {
		return func(l *fakelauncher.Server) {
			l.End(detail)
		}
	}
	pause := func(l *fakelauncher.Server) {
		l.Event(apiv1.EventType_EVENT_TYPE_SUSPENDED, "paused", apiv1.DomainState_DOMAIN_STATE_PAUSED, "user")
	}
	resume := func(l *fakelauncher.Server) {
		l.Event(apiv1.EventType_EVENT_TYPE_RESUMED, "unpaused", apiv1.DomainState_DOMAIN_STATE_RUNNING, "unpaused")
	}

	tests := []struct {
		name       string
		steps      []step
		wantEvents []string
	}{
		{name: "pause and resume", steps: []step{
			{pause, pausedCond, "Paused=True, Ready=False"},
			{resume, resumed, "Paused gone, Ready=True"},
		}, wantEvents: []string{ReasonPaused, ReasonResumed}},
		{name: "guest powers off", steps: []step{{ended("shutdown"), phaseIs(virtv1.Succeeded, virtv1.ReasonGuestShutdown), "Succeeded/GuestShutdown"}},
			wantEvents: []string{ReasonStopped}},
		{name: "guest crashes", steps: []step{{ended("crashed"), phaseIs(virtv1.Failed, virtv1.ReasonGuestCrashed), "Failed/GuestCrashed"}}},
		{name: "qemu killed", steps: []step{{ended("failed"), phaseIs(virtv1.Failed, virtv1.ReasonGuestCrashed), "Failed/GuestCrashed"}}},
		{name: "destroyed", steps: []step{{ended("destroyed"), phaseIs(virtv1.Failed, virtv1.ReasonGuestDestroyed), "Failed/GuestDestroyed"}}},
		{name: "paused, then crashes", steps: []step{
			{pause, pausedCond, "paused"},
			{ended("crashed"), func(v *virtv1.VirtualMachineInstance) bool {
				return phaseIs(virtv1.Failed, virtv1.ReasonGuestCrashed)(v) && condition(v, virtv1.VirtualMachineInstancePaused) == nil
			}, "Failed/GuestCrashed without Paused"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := scheduledVMI("vm")
			pod := launcherPodOf(vmi)
			f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
			launcher := f.launcher(vmi, pod)
			f.start()
			f.waitVMI("vm", "Running", isRunning)
			writes := f.statusWrites.Load()
			for _, s := range tt.steps {
				s.do(launcher)
				f.waitVMI("vm", s.what, s.want)
			}
			f.settled()
			if v := f.vmi("vm"); v.Status.Phase.IsFinal() && len(f.ctrl.monitor.PodUIDs()) != 0 {
				t.Errorf("launchers still watched for a %s VMI: %v", v.Status.Phase, f.ctrl.monitor.PodUIDs())
			}
			if n := f.statusWrites.Load() - writes; n != int32(len(tt.steps)) {
				t.Errorf("status writes for %d steps = %d, want one each", len(tt.steps), n)
			}
			for _, r := range tt.wantEvents {
				if !f.hasEvent(r) {
					t.Errorf("no %s event; events: %v", r, f.eventList())
				}
			}
		})
	}
}

// A permanent Sync error before any domain started fails the VMI, once.
func TestSyncRefused(t *testing.T) {
	for _, err := range []error{
		status.Error(codes.InvalidArgument, "define domain: XML error: invalid value for attribute 'bus'"),
		status.Error(codes.FailedPrecondition, `prepare volumes: volume "root": disk image: no such file`),
	} {
		t.Run(status.Code(err).String(), func(t *testing.T) {
			vmi := scheduledVMI("vm")
			pod := launcherPodOf(vmi)
			f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
			launcher := f.launcher(vmi, pod)
			launcher.FailSync(err)
			f.start()

			got := f.waitVMI("vm", "Failed/SyncFailed", phaseIs(virtv1.Failed, virtv1.ReasonSyncFailed))
			if c := condition(got, virtv1.VirtualMachineInstanceReady); c == nil || c.Status != corev1.ConditionFalse || c.Reason != virtv1.ReasonSyncFailed {
				t.Errorf("Ready = %+v, want False/SyncFailed", c)
			}
			if !f.hasEvent(ReasonSyncFailed) {
				t.Errorf("no %s event; events: %v", ReasonSyncFailed, f.eventList())
			}
			f.settled()
			if c := launcher.Calls(); c.Sync != 1 {
				t.Errorf("Sync calls = %d, want 1: a refused VMI is not retried", c.Sync)
			}
		})
	}
}

// The NICs the network preparer made ready reach the launcher with the
// Sync, and the VMI reports the MACs they carry.
func TestNetworkPreparedBeforeSync(t *testing.T) {
	vmi := scheduledVMI("vm")
	pod := launcherPodOf(vmi)
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
	launcher := f.launcher(vmi, pod)
	f.start()

	got := f.waitVMI("vm", "Running", isRunning)
	f.settled()
	nics := launcher.Calls().NICs
	if len(nics) != 1 || nics[0].GetName() != vmi.Spec.Domain.Devices.Interfaces[0].Name || nics[0].GetTapDevice() != "tap0" {
		t.Fatalf("Sync carried NICs %v, want the prepared tap0 for the VMI's interface", nics)
	}
	if len(got.Status.Interfaces) != 1 || got.Status.Interfaces[0].MAC != nics[0].GetMacAddress() {
		t.Errorf("status.interfaces = %+v, want the prepared MAC %s", got.Status.Interfaces, nics[0].GetMacAddress())
	}
}

// A network that cannot be prepared yet is retried with back-off, with a
// warning, and the launcher is not asked to start a guest without it.
func TestNetworkSetupFailureIsRetried(t *testing.T) {
	vmi := scheduledVMI("vm")
	pod := launcherPodOf(vmi)
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
	launcher := f.launcher(vmi, pod)
	f.network.failNext(errors.New("open the network namespace of launcher pid 42: no such process"),
		errors.New("interface \"default\" (masquerade): add DNAT rules: busy"))
	f.start()

	f.waitVMI("vm", "Running after the retries", isRunning)
	f.settled()
	if n := f.network.callCount(); n != 3 {
		t.Errorf("network prepared %d times, want 3: two failures, then the success", n)
	}
	if c := launcher.Calls(); c.Sync != 1 {
		t.Errorf("Sync calls = %d, want 1: no start without a network", c.Sync)
	}
	if !f.hasEvent(ReasonNetworkSetupFailed) {
		t.Errorf("no %s event; events: %v", ReasonNetworkSetupFailed, f.eventList())
	}
}

// A retryable Sync error (Internal included: libvirt failed, the spec may
// be fine) is retried with back-off and never fails the VMI: once the
// launcher manages, the VMI runs.
func TestSyncRetryableErrorIsRetried(t *testing.T) {
	for _, code := range []codes.Code{codes.Internal, codes.DeadlineExceeded, codes.Aborted} {
		t.Run(code.String(), func(t *testing.T) {
			vmi := scheduledVMI("vm")
			pod := launcherPodOf(vmi)
			f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
			launcher := f.launcher(vmi, pod)
			launcher.ScriptSync(status.Error(code, "start domain: internal error: qemu unexpectedly closed the monitor"),
				status.Error(code, "start domain: internal error: qemu unexpectedly closed the monitor"))
			f.start()

			f.waitVMI("vm", "Running after the retries", isRunning)
			f.settled()
			if c := launcher.Calls(); c.Sync != 3 {
				t.Errorf("Sync calls = %d, want 3: two failures, then the success", c.Sync)
			}
			if n := f.statusWrites.Load(); n != 1 {
				t.Errorf("status writes = %d, want 1 (Running): the failures wrote nothing", n)
			}
			if f.hasEvent(ReasonSyncFailed) || !f.hasEvent(ReasonSyncRetrying) {
				t.Errorf("want %s events and no %s; events: %v", ReasonSyncRetrying, ReasonSyncFailed, f.eventList())
			}
		})
	}
}

// A Sync that fails after the domain started, whatever its code, leaves
// the guest running: the VMI goes Running and is not asked to start again.
func TestSyncFailingAfterStartKeepsGuest(t *testing.T) {
	for _, code := range []codes.Code{codes.Internal, codes.InvalidArgument, codes.FailedPrecondition, codes.DeadlineExceeded} {
		t.Run(code.String(), func(t *testing.T) {
			vmi := scheduledVMI("vm")
			pod := launcherPodOf(vmi)
			f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
			launcher := f.launcher(vmi, pod)
			launcher.FailSyncAfterStart(status.Error(code, "read interfaces: transient libvirt error"))
			f.start()

			f.waitVMI("vm", "Running", isRunning)
			f.settled()
			if v := f.vmi("vm"); !isRunning(v) {
				t.Fatalf("VMI after a failed Sync of a started domain: %s, want Running", describe(v))
			}
			if f.hasEvent(ReasonSyncFailed) {
				t.Errorf("%s event for a running guest; events: %v", ReasonSyncFailed, f.eventList())
			}
			if c := launcher.Calls(); c.Sync != 1 {
				t.Errorf("Sync calls = %d, want 1: a started domain is not synced again", c.Sync)
			}
			if n := f.statusWrites.Load(); n != 1 {
				t.Errorf("status writes = %d, want 1 (Running)", n)
			}
		})
	}
}

func TestLauncherGone(t *testing.T) {
	tests := []struct {
		name string
		// gone makes the launcher disappear; the launcher is running a guest.
		gone       func(f *fixture, l *fakelauncher.Server, pod *corev1.Pod)
		wantPhase  virtv1.VirtualMachineInstancePhase
		wantReason string
	}{
		{
			name: "launcher killed: no final state, exit 137",
			gone: func(f *fixture, l *fakelauncher.Server, pod *corev1.Pod) {
				l.Exit()
				f.updatePod(pod, terminated(137))
			},
			wantPhase: virtv1.Failed, wantReason: virtv1.ReasonLauncherGone,
		},
		{
			name: "launcher failed: exit 1",
			gone: func(f *fixture, l *fakelauncher.Server, pod *corev1.Pod) {
				l.Exit()
				f.updatePod(pod, terminated(1))
			},
			wantPhase: virtv1.Failed, wantReason: virtv1.ReasonLauncherGone,
		},
		{
			name: "pod deleted and gone",
			gone: func(f *fixture, l *fakelauncher.Server, pod *corev1.Pod) {
				l.Exit()
				f.deletePod(pod)
			},
			wantPhase: virtv1.Failed, wantReason: virtv1.ReasonLauncherGone,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := scheduledVMI("vm")
			pod := launcherPodOf(vmi)
			f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
			launcher := f.launcher(vmi, pod)
			f.start()
			f.waitVMI("vm", "Running", isRunning)
			tt.gone(f, launcher, pod)
			f.waitVMI("vm", string(tt.wantPhase)+"/"+tt.wantReason, phaseIs(tt.wantPhase, tt.wantReason))
		})
	}
}

// TestEndWhileNotConnected: the handler was away when the guest ended; the
// launcher's final state file or, without one, its exit code tells how.
func TestEndWhileNotConnected(t *testing.T) {
	tests := []struct {
		name       string
		final      string // domain.final.json, "" for none
		exitCode   int32
		wantPhase  virtv1.VirtualMachineInstancePhase
		wantReason string
	}{
		{"final state: guest shutdown", `{"stopReason":"STOP_REASON_GUEST_SHUTDOWN","reason":"shutdown"}`, 0, virtv1.Succeeded, virtv1.ReasonGuestShutdown},
		{"final state: qemu killed", `{"stopReason":"STOP_REASON_CRASHED","reason":"failed"}`, 3, virtv1.Failed, virtv1.ReasonGuestCrashed},
		{"final state wins over the exit code", `{"stopReason":"STOP_REASON_CRASHED","reason":"crashed"}`, 0, virtv1.Failed, virtv1.ReasonGuestCrashed},
		{"exit code 0 of a running guest", "", 0, virtv1.Succeeded, virtv1.ReasonGuestShutdown},
		{"exit code 3", "", 3, virtv1.Failed, virtv1.ReasonGuestCrashed},
		{"exit code 4", "", 4, virtv1.Failed, virtv1.ReasonGuestDestroyed},
		{"killed", "", 137, virtv1.Failed, virtv1.ReasonLauncherGone},
		// A tenant's final state is refused (node/podfs), never read: the
		// exit code decides, and the sync neither hangs nor runs out of
		// memory.
		{"final state a symlink to /dev/zero", "link:/dev/zero", 3, virtv1.Failed, virtv1.ReasonGuestCrashed},
		{"final state a FIFO", "fifo", 4, virtv1.Failed, virtv1.ReasonGuestDestroyed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := scheduledVMI("vm")
			vmi.Status.Phase = virtv1.Running
			pod := launcherPodOf(vmi)
			terminated(tt.exitCode)(pod)
			f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
			final := layout.FinalStateFile(f.privateDir(pod))
			switch target, link := strings.CutPrefix(tt.final, "link:"); {
			case link:
				if err := os.Symlink(target, final); err != nil {
					t.Fatal(err)
				}
			case tt.final == "fifo":
				if err := unix.Mkfifo(final, 0o666); err != nil {
					t.Fatal(err)
				}
			case tt.final != "":
				writeFile(t, f.privateDir(pod), tt.final)
			}
			f.start()
			f.waitVMI("vm", string(tt.wantPhase)+"/"+tt.wantReason, phaseIs(tt.wantPhase, tt.wantReason))
		})
	}
}

func TestDeletion(t *testing.T) {
	tests := []struct {
		name string
		// running: the guest was started before the deletion; otherwise the
		// VMI is deleted before the handler starts.
		running bool
		// setup scripts the launcher or the pod before the deletion.
		setup func(f *fixture, l *fakelauncher.Server, pod *corev1.Pod)
		// deleted, if set, runs once the VMI is marked deleted and the
		// handler runs.
		deleted func(t *testing.T, f *fixture, l *fakelauncher.Server)
		// wantPhase is the final phase, "" for no final status write.
		wantPhase     virtv1.VirtualMachineInstancePhase
		wantReason    string
		wantShutdowns []int64
	}{
		{
			name: "guest obeys ACPI", running: true,
			setup: func(_ *fixture, l *fakelauncher.Server, _ *corev1.Pod) {
				l.OnShutdown(func(int64) { go l.End("shutdown") })
			},
			wantPhase: virtv1.Succeeded, wantReason: virtv1.ReasonGuestShutdown, wantShutdowns: []int64{7},
		},
		{
			name: "guest ignores ACPI and is destroyed after its grace period", running: true,
			deleted: func(t *testing.T, f *fixture, l *fakelauncher.Server) {
				// The handler asked once and waits out the grace period,
				// holding the VMI, until the launcher destroys the guest.
				f.settled()
				if v := f.vmi("vm"); v.Status.Phase != virtv1.Running || !slices.Contains(v.Finalizers, virtv1.GuestShutdownFinalizer) {
					t.Fatalf("VMI of a guest ignoring ACPI: %s; want it Running and held", describe(v))
				}
				l.End("destroyed")
			},
			wantPhase: virtv1.Failed, wantReason: virtv1.ReasonGuestDestroyed, wantShutdowns: []int64{7},
		},
		{
			name: "grace period shortened during the shutdown (virtctl stop --grace-period)", running: true,
			deleted: func(t *testing.T, f *fixture, l *fakelauncher.Server) {
				f.settled()
				v := f.vmi("vm")
				v.Spec.TerminationGracePeriodSeconds = ptr.To[int64](2)
				if _, err := f.virt.VirtualizationV1().VirtualMachineInstances(v.Namespace).Update(t.Context(), v, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				f.settled()
				l.End("destroyed")
			},
			wantPhase: virtv1.Failed, wantReason: virtv1.ReasonGuestDestroyed, wantShutdowns: []int64{7, 2},
		},
		{
			name: "deleted before the guest started", running: false,
		},
		{
			name: "launcher pod already gone", running: true,
			setup: func(f *fixture, l *fakelauncher.Server, pod *corev1.Pod) {
				l.Exit()
				f.deletePod(pod)
			},
			wantPhase: virtv1.Failed, wantReason: virtv1.ReasonLauncherGone,
		},
		{
			name: "launcher already exited after the guest powered off", running: true,
			setup: func(f *fixture, l *fakelauncher.Server, pod *corev1.Pod) {
				// The end is written by the launcher while the handler is
				// stopped, so only the file and the exit code tell it.
				f.stop()
				l.End("shutdown")
				l.Exit()
				f.updatePod(pod, terminated(0))
			},
			wantPhase: virtv1.Succeeded, wantReason: virtv1.ReasonGuestShutdown,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := scheduledVMI("vm")
			pod := launcherPodOf(vmi)
			f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
			launcher := f.launcher(vmi, pod)
			writes := int32(0)
			if tt.running {
				f.start()
				f.waitVMI("vm", "Running", isRunning)
				// The deletion is the one change left to take in.
				f.settled()
				if tt.setup != nil {
					tt.setup(f, launcher, pod)
				}
				writes = f.statusWrites.Load()
				f.deleteVMI("vm")
				f.start() // a no-op unless the setup stopped the handler
			} else {
				f.deleteVMI("vm")
				f.start()
			}
			if tt.deleted != nil {
				tt.deleted(t, f, launcher)
			}

			f.waitVMI("vm", "guest-shutdown finalizer removed", func(v *virtv1.VirtualMachineInstance) bool {
				return v != nil && !slices.Contains(v.Finalizers, virtv1.GuestShutdownFinalizer)
			})
			// Nothing more once the VMI is released: no write, no call.
			f.settled()
			got := f.vmi("vm")
			if !slices.Contains(got.Finalizers, virtv1.LauncherPodFinalizer) {
				t.Errorf("finalizers = %v: virt-controller's %s must stay", got.Finalizers, virtv1.LauncherPodFinalizer)
			}
			if tt.wantPhase == "" {
				if n := f.statusWrites.Load() - writes; n != 0 || launcher.Calls().Sync != 0 {
					t.Errorf("status writes = %d, Sync calls = %d; want none for a guest that never started", n, launcher.Calls().Sync)
				}
			} else if got.Status.Phase != tt.wantPhase || got.Status.Reason != tt.wantReason {
				t.Errorf("phase = %s/%s, want %s/%s", got.Status.Phase, got.Status.Reason, tt.wantPhase, tt.wantReason)
			}
			if s := launcher.Calls().Shutdowns; !slices.Equal(s, tt.wantShutdowns) {
				t.Errorf("Shutdown grace periods = %v, want %v", s, tt.wantShutdowns)
			}
			if len(tt.wantShutdowns) > 0 && !f.hasEvent(ReasonShuttingDown) {
				t.Errorf("no %s event; events: %v", ReasonShuttingDown, f.eventList())
			}
		})
	}
}

// TestRestartKeepsRunningGuest: a new handler process finds the guest
// running and the VMI Running, and neither restarts the one nor rewrites
// the other.
func TestRestartKeepsRunningGuest(t *testing.T) {
	vmi := scheduledVMI("vm")
	pod := launcherPodOf(vmi)
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
	launcher := f.launcher(vmi, pod)
	f.start()
	before := f.waitVMI("vm", "Running", isRunning)
	f.stop()

	watches := launcher.Calls().Watch
	f.start()
	f.settled()
	if launcher.Calls().Watch == watches {
		t.Errorf("the new handler does not watch the launcher")
	}
	after := f.vmi("vm")
	if n := f.statusWrites.Load(); n != 1 {
		t.Errorf("status writes across a restart = %d, want the 1 of the start", n)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("resourceVersion moved from %s to %s across the restart", before.ResourceVersion, after.ResourceVersion)
	}
	if c := launcher.Calls(); c.Sync != 1 || len(c.Shutdowns) != 0 || c.Kill != 0 {
		t.Errorf("launcher calls across the restart = %+v, want the one Sync of the start only", c)
	}
	if d := launcher.Domain(); d.GetState() != apiv1.DomainState_DOMAIN_STATE_RUNNING {
		t.Errorf("domain = %v, want still running", d.GetState())
	}
}

func TestOtherNodesVMIsAreLeftAlone(t *testing.T) {
	vmi := scheduledVMI("vm")
	vmi.Status.NodeName = "node-2"
	vmi.Status.ActivePods = map[types.UID]string{podUID("vm"): "node-2"}
	pod := launcherPodOf(vmi)
	pod.Spec.NodeName = "node-2"
	f := newFixture(t, []*virtv1.VirtualMachineInstance{vmi}, []*corev1.Pod{pod})
	launcher := f.launcher(vmi, pod)
	f.start()
	f.settled()
	if n := f.statusWrites.Load(); n != 0 {
		t.Errorf("status writes = %d for another node's VMI", n)
	}
	if c := launcher.Calls(); c.Info != 0 || c.Sync != 0 {
		t.Errorf("launcher calls = %+v for another node's VMI", c)
	}
}

func writeFile(t *testing.T, privateDir, content string) {
	t.Helper()
	if err := os.WriteFile(layout.FinalStateFile(privateDir), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
