package launcher_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/api/resource"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// Bounds of the waits. TCG on a loaded 2-core machine boots the guest in
// 4-11 s; the bounds leave room for CI's load without hiding a hang.
const (
	bootTimeout = 120 * time.Second
	exitTimeout = 30 * time.Second
)

func unmarshalDomain(b []byte, d *apiv1.Domain) error { return protojson.Unmarshal(b, d) }

// watcher collects a WatchDomain stream.
type watcher struct {
	mu     sync.Mutex
	events []*apiv1.DomainEvent
	ended  chan struct{}
	err    error
}

func watch(t *testing.T, l *launcher) *watcher {
	t.Helper()
	stream, err := l.client.WatchDomain(t.Context(), &apiv1.WatchDomainRequest{})
	if err != nil {
		t.Fatalf("WatchDomain: %v", err)
	}
	w := &watcher{ended: make(chan struct{})}
	go func() {
		defer close(w.ended)
		for {
			ev, err := stream.Recv()
			w.mu.Lock()
			if err != nil {
				w.err = err
				w.mu.Unlock()
				return
			}
			w.events = append(w.events, ev)
			w.mu.Unlock()
		}
	}()
	return w
}

// names are the events seen so far as TYPE/detail.
func (w *watcher) names() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, e := range w.events {
		out = append(out, strings.TrimPrefix(e.Type.String(), "EVENT_TYPE_")+"/"+e.Detail)
	}
	return out
}

func (w *watcher) waitEvent(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, n := range w.names() {
			if n == want {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("WatchDomain did not report %s within %v; it reported %v", want, timeout, w.names())
}

// boot syncs the launcher's VMI and waits for the guest's marker.
func boot(t *testing.T, l *launcher) (syncToRunning, toMarker time.Duration) {
	t.Helper()
	start := time.Now()
	d, err := l.sync(t.Context())
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	syncToRunning = time.Since(start)
	if d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING {
		t.Fatalf("after Sync the domain is %v (%s), want RUNNING", d.State, d.Reason)
	}
	if !d.SoftwareEmulation {
		t.Errorf("domain does not report software emulation on a host without usable KVM")
	}
	l.waitSerial("VIRT-GUEST-READY "+l.vmi.Name, bootTimeout)
	return syncToRunning, time.Since(start)
}

func TestInfoReportsSoftwareEmulation(t *testing.T) {
	l := startLauncher(t, guestVMI("info", 30))
	t.Logf("launcher start to ready: %v", l.ready)
	info, err := l.client.Info(t.Context(), &apiv1.InfoRequest{})
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	if info.LibvirtVersion == "" || info.HypervisorVersion == "" || info.LauncherVersion == "" {
		t.Errorf("Info lacks versions: %v", info)
	}
	if info.DomainType != "qemu" || info.HardwareVirtualization.GetUsable() || info.HardwareVirtualization.GetReason() == "" {
		t.Errorf("Info = %v; on this host (no vmx/svm) want domain type qemu and a reason why KVM is unusable", info)
	}
	if info.Arch != "x86_64" || len(info.MachineTypes) == 0 || info.Vmi.GetUid() != string(l.vmi.UID) {
		t.Errorf("Info = %v", info)
	}
	d, err := l.client.GetDomain(t.Context(), &apiv1.GetDomainRequest{})
	if err != nil || d.Domain.State != apiv1.DomainState_DOMAIN_STATE_ABSENT {
		t.Errorf("GetDomain before Sync = %v, %v; want ABSENT: the launcher must wait for Sync", d, err)
	}
	l.cmd.Process.Signal(syscall.SIGTERM)
	if code := l.waitExit(exitTimeout); code != apiv1.ExitGuestShutdown {
		t.Errorf("launcher without a guest exited %d on SIGTERM, want %d", code, apiv1.ExitGuestShutdown)
	}
}

// A machine type QEMU lacks is refused by libvirt as an unsupported
// configuration: Sync answers a permanent code, no domain is defined, and
// the launcher waits on (a Sync with a fixed VMI would do).
func TestSyncOfUnsupportedMachineIsPermanent(t *testing.T) {
	vmi := guestVMI("badmachine", 30)
	vmi.Spec.Domain.Machine = &virtv1.Machine{Type: "no-such-machine"}
	l := startLauncher(t, vmi)
	_, err := l.sync(t.Context())
	if status.Code(err) != codes.InvalidArgument || !apiv1.SyncErrorIsPermanent(err) {
		t.Fatalf("Sync of an unknown machine type = %v, want InvalidArgument (permanent)", err)
	}
	d, err := l.client.GetDomain(t.Context(), &apiv1.GetDomainRequest{})
	if err != nil || d.Domain.State != apiv1.DomainState_DOMAIN_STATE_ABSENT {
		t.Errorf("GetDomain after the refused Sync = %v, %v; want ABSENT", d, err)
	}
	l.cmd.Process.Signal(syscall.SIGTERM)
	if code := l.waitExit(exitTimeout); code != apiv1.ExitGuestShutdown {
		t.Errorf("launcher without a guest exited %d on SIGTERM, want %d", code, apiv1.ExitGuestShutdown)
	}
}

func TestBootWatchAndACPIShutdown(t *testing.T) {
	l := startLauncher(t, guestVMI("acpi", 30))
	w := watch(t, l)
	syncToRunning, toMarker := boot(t, l)
	t.Logf("launcher start to ready %v; Sync to running %v; Sync to marker %v", l.ready, syncToRunning, toMarker)
	t.Logf("memory (VmRSS) of virt-launcher %s, of QEMU %s", rss(l.cmd.Process.Pid), rss(l.qemuPid()))
	w.waitEvent(t, "STARTED/booted", 10*time.Second)

	// Sync is idempotent on a running domain.
	if d, err := l.sync(t.Context()); err != nil || d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING {
		t.Fatalf("second Sync: %v, %v", d, err)
	}
	if n := strings.Count(strings.Join(w.names(), " "), "STARTED/"); n != 1 {
		t.Errorf("the domain was started %d times, want once: %v", n, w.names())
	}

	// Pause and unpause.
	if _, err := l.client.Pause(t.Context(), &apiv1.PauseRequest{}); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	w.waitEvent(t, "SUSPENDED/paused", 10*time.Second)
	if _, err := l.client.Unpause(t.Context(), &apiv1.UnpauseRequest{}); err != nil {
		t.Fatalf("Unpause: %v", err)
	}
	w.waitEvent(t, "RESUMED/unpaused", 10*time.Second)

	start := time.Now()
	grace := int64(60)
	if _, err := l.client.Shutdown(t.Context(), &apiv1.ShutdownRequest{GracePeriodSeconds: &grace}); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	w.waitEvent(t, "STOPPED/shutdown", time.Duration(grace)*time.Second)
	t.Logf("ACPI shutdown took %v", time.Since(start))
	if !strings.Contains(l.serial(), "VIRT-GUEST-ACPI-SHUTDOWN") {
		t.Errorf("the guest did not report the ACPI power button")
	}
	select {
	case <-w.ended:
	case <-time.After(10 * time.Second):
		t.Errorf("WatchDomain did not end after the final STOPPED event")
	}
	names := w.names()
	if names[0] != "CURRENT/" || names[len(names)-1] != "STOPPED/shutdown" {
		t.Errorf("WatchDomain reported %v; want CURRENT first and STOPPED/shutdown last", names)
	}
	// While it lingers, the launcher still tells how the guest ended.
	if d, err := l.client.GetDomain(t.Context(), &apiv1.GetDomainRequest{}); err == nil &&
		d.Domain.StopReason != apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN {
		t.Errorf("GetDomain after the end = %v", d.Domain)
	}
	if code := l.waitExit(exitTimeout); code != apiv1.ExitGuestShutdown {
		t.Errorf("exit status %d, want %d (guest shutdown)", code, apiv1.ExitGuestShutdown)
	}
	if f := l.finalState(); f.StopReason != apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN || f.VmiUid != string(l.vmi.UID) {
		t.Errorf("final state = %v", f)
	}
}

func TestSIGTERMShutsGuestDownByACPI(t *testing.T) {
	l := startLauncher(t, guestVMI("sigterm", 60))
	boot(t, l)
	start := time.Now()
	l.cmd.Process.Signal(syscall.SIGTERM)
	code := l.waitExit(60*time.Second + exitTimeout)
	t.Logf("SIGTERM to exit: %v", time.Since(start))
	if code != apiv1.ExitGuestShutdown {
		t.Errorf("exit status %d, want %d (guest shutdown)", code, apiv1.ExitGuestShutdown)
	}
	if !strings.Contains(l.serial(), "VIRT-GUEST-ACPI-SHUTDOWN") {
		t.Errorf("the guest did not report the ACPI power button")
	}
	if f := l.finalState(); f.StopReason != apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN || !f.ShutdownRequested {
		t.Errorf("final state = %v", f)
	}
}

func TestGuestIgnoringACPIIsDestroyedAfterGracePeriod(t *testing.T) {
	const grace = 5
	l := startLauncher(t, guestVMI("noacpi", grace, "virt.acpi=ignore"))
	boot(t, l)
	if !strings.Contains(l.serial(), "VIRT-GUEST-ACPI-IGNORED") {
		t.Fatalf("the guest was not told to ignore ACPI")
	}
	start := time.Now()
	l.cmd.Process.Signal(syscall.SIGTERM)
	code := l.waitExit(grace*time.Second + exitTimeout)
	elapsed := time.Since(start)
	t.Logf("SIGTERM to exit with a guest ignoring ACPI: %v (grace %ds)", elapsed, grace)
	if code != apiv1.ExitDestroyed {
		t.Errorf("exit status %d, want %d (destroyed)", code, apiv1.ExitDestroyed)
	}
	if elapsed < grace*time.Second {
		t.Errorf("the guest was destroyed after %v, before its grace period of %ds", elapsed, grace)
	}
	if strings.Contains(l.serial(), "VIRT-GUEST-ACPI-SHUTDOWN") {
		t.Errorf("the guest shut down by ACPI although told to ignore it")
	}
	if f := l.finalState(); f.StopReason != apiv1.StopReason_STOP_REASON_DESTROYED {
		t.Errorf("final state = %v, want DESTROYED", f)
	}
}

func TestKillDestroysAtOnce(t *testing.T) { testKill(t) }

// TestKillDestroysAtOnceAsRoot covers libvirt's privileged mode, which a
// launcher run by root takes.
func TestKillDestroysAtOnceAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root; the suite runs as root in CI (make test)")
	}
	testKill(t)
}

func testKill(t *testing.T) {
	l := startLauncher(t, guestVMI("kill", 30))
	ctx, cancel := context.WithTimeout(t.Context(), bootTimeout)
	defer cancel()
	if _, err := l.sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if _, err := l.client.Kill(ctx, &apiv1.KillRequest{}); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if code := l.waitExit(exitTimeout); code != apiv1.ExitDestroyed {
		t.Errorf("exit status %d, want %d (destroyed)", code, apiv1.ExitDestroyed)
	}
	f := l.finalState()
	want := &apiv1.Domain{State: apiv1.DomainState_DOMAIN_STATE_SHUTOFF, Reason: "destroyed", StopReason: apiv1.StopReason_STOP_REASON_DESTROYED}
	got := &apiv1.Domain{State: f.State, Reason: f.Reason, StopReason: f.StopReason}
	if !proto.Equal(got, want) {
		t.Errorf("final state = %v, want %v", got, want)
	}
	if _, err := l.sync(ctx); err == nil {
		t.Errorf("Sync after the guest ended succeeded; a launcher runs its guest once")
	}
}

// BenchmarkStartToReady measures a launcher's start, from exec to its ready
// file, seeded with QEMU's capabilities as from its image (TestMain writes
// the seed).
func BenchmarkStartToReady(b *testing.B) {
	l := startLauncher(b, guestVMI("bench", 30))
	l.cmd.Process.Signal(syscall.SIGTERM)
	l.waitExit(exitTimeout)
	var slowest time.Duration
	b.ResetTimer()
	for range b.N {
		l := startLauncher(b, guestVMI("bench", 30))
		slowest = max(slowest, l.ready)
		b.StopTimer()
		l.cmd.Process.Signal(syscall.SIGTERM)
		l.waitExit(exitTimeout)
		b.StartTimer()
	}
	b.ReportMetric(float64(slowest.Milliseconds()), "slowest-ms")
}

// rss is a process's resident memory as /proc reports it.
func rss(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func TestQEMUCrashExitsCrashed(t *testing.T) {
	l := startLauncher(t, guestVMI("crash", 30))
	if _, err := l.sync(t.Context()); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	pid := l.qemuPid()
	if pid <= 1 {
		t.Fatalf("no QEMU pid file in the embedded libvirt's run directory")
	}
	// Something outside libvirt kills QEMU: the OOM killer, a bug.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill QEMU %d: %v", pid, err)
	}
	if code := l.waitExit(exitTimeout); code != apiv1.ExitCrashed {
		t.Errorf("exit status %d, want %d (crashed)", code, apiv1.ExitCrashed)
	}
	if f := l.finalState(); f.StopReason != apiv1.StopReason_STOP_REASON_CRASHED {
		t.Errorf("final state = %v, want CRASHED", f)
	}
}

// TestEFIKernelBoot boots the test guest through OVMF (Debian's ovmf
// package), with its variable store copied from the template per domain.
func TestEFIKernelBoot(t *testing.T) {
	vmi := guestVMI("efi", 30)
	vmi.Spec.Domain.Firmware.Bootloader = &virtv1.Bootloader{EFI: &virtv1.EFI{}}
	// OVMF keeps more memory for itself than SeaBIOS.
	mem := resource.MustParse("256Mi")
	vmi.Spec.Domain.Memory.Guest = &mem
	l := startLauncher(t, vmi)
	_, toMarker := boot(t, l)
	t.Logf("EFI: Sync to marker %v", toMarker)
	if _, err := l.client.Kill(t.Context(), &apiv1.KillRequest{}); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	l.waitExit(exitTimeout)
}
