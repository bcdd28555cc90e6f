package launcher_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// The live migration tests run two launchers like two pods of one node:
// each in its own mount namespace where its own directory is mounted at the
// same path (a pod's volumes are at the same paths in every pod), as uid
// 107 with a passwd entry (the launcher image has one) and without
// capabilities. The test plays virt-handler's two proxies: it listens on
// the source pod's migration sockets (layout.MigrationDir) and forwards each
// connection to the target pod's socket of the same name.

// migrationTimeout bounds one migration of the 128 MiB test guest under TCG
// on a loaded machine (1-8 s measured by the probe).
const migrationTimeout = 90 * time.Second

// podLauncher is a launcher in a pod-like mount namespace: host is its
// directory as the test sees it, podPath the same directory as the
// launcher sees it.
type podLauncher struct {
	*launcher
	host string
}

// launchPod starts virt-launcher for vmi in a mount namespace where host
// dir is mounted at podPath, with the extra flags given, and returns once
// its socket is served.
func launchPod(t *testing.T, vmi *virtv1.VirtualMachineInstance, podPath string, extra ...string) *podLauncher {
	t.Helper()
	dir, err := os.MkdirTemp("", "vp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() && os.Getenv("LAUNCHER_IT_KEEP") != "" {
			t.Logf("kept pod directory %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	kernelBoot := filepath.Join(dir, "k")
	if err := os.MkdirAll(kernelBoot, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(guestDir, "vmlinuz"), filepath.Join(kernelBoot, layout.KernelName))
	copyFile(t, filepath.Join(guestDir, "initrd.gz"), filepath.Join(kernelBoot, layout.InitrdName))
	for _, f := range []struct{ name, line string }{
		{"passwd", fmt.Sprintf("qemu:x:%d:%d::/nonexistent:/usr/sbin/nologin\n", podUID, podUID)},
		{"group", fmt.Sprintf("qemu:x:%d:\n", podUID)},
	} {
		b, err := os.ReadFile(filepath.Join("/etc", f.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), append(b, f.line...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chownTree(t, dir, podUID)
	args := []string{
		"--vmi-namespace", vmi.Namespace, "--vmi-name", vmi.Name, "--vmi-uid", string(vmi.UID),
		"--grace-period-seconds", fmt.Sprint(*vmi.Spec.TerminationGracePeriodSeconds),
		"--private-dir", filepath.Join(podPath, "p"), "--disks-dir", filepath.Join(podPath, "d"), "--pvc-dir", filepath.Join(podPath, "v"),
		"--kernel-boot-dir", filepath.Join(podPath, "k"), "--capabilities-seed-dir", capsSeed, "--linger", "2s",
	}
	args = append(args, extra...)
	script := `mount --bind "$1" "$2" && mount --bind "$1/passwd" /etc/passwd && mount --bind "$1/group" /etc/group && shift 2 && exec "$@"`
	argv := append([]string{"--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", dir, podPath,
		"setpriv", fmt.Sprintf("--reuid=%d", podUID), fmt.Sprintf("--regid=%d", podUID), "--clear-groups",
		"--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", launcherBin}, args...)
	private := filepath.Join(dir, "p")
	l := &launcher{t: t, private: private, vmi: vmi, exited: make(chan struct{}), log: &bytes.Buffer{}}
	l.cmd = exec.Command("unshare", argv...)
	l.cmd.Stdout, l.cmd.Stderr = syncWriter(l.log), syncWriter(l.log)
	l.started = time.Now()
	if err := l.cmd.Start(); err != nil {
		t.Fatalf("start virt-launcher: %v", err)
	}
	go func() { l.cmd.Wait(); close(l.exited) }()
	p := &podLauncher{launcher: l, host: dir}
	t.Cleanup(p.stop)
	l.waitFor("the launcher's socket", 90*time.Second, func() bool {
		_, err := os.Stat(layout.LauncherSocket(private))
		return err == nil
	})
	cc, err := grpc.NewClient("unix://"+layout.LauncherSocket(private), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	l.client = apiv1.NewLauncherClient(cc)
	return p
}

// stop kills the launcher and every QEMU of its pod.
func (p *podLauncher) stop() {
	p.launcher.stop()
	p.killQEMU()
}

// killQEMU kills the pod's QEMU, whichever libvirt started it.
func (p *podLauncher) killQEMU() {
	for _, dir := range []string{
		filepath.Join(layout.LibvirtRoot(p.private), "run", "qemu"),
		filepath.Join(layout.LibvirtDaemonRoot(p.private), "libvirt", "qemu", "run"),
	} {
		pids, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
		for _, f := range pids {
			if filepath.Base(f) == "driver.pid" {
				continue
			}
			var pid int
			if b, err := os.ReadFile(f); err == nil {
				fmt.Sscan(string(b), &pid)
			}
			if pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// lockedBuffer serialises the writes of a launcher's stdout and stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

var logLocks sync.Map

func syncWriter(b *bytes.Buffer) io.Writer {
	w, _ := logLocks.LoadOrStore(b, &lockedBuffer{b: b})
	return w.(io.Writer)
}

// proxy forwards the source pod's migration sockets to the target pod's,
// as virt-handler's two proxies do across nodes.
type proxy struct {
	t         *testing.T
	listeners []net.Listener
	mu        sync.Mutex
	conns     []net.Conn
	accepted  map[string]int
}

func startProxy(t *testing.T, source, target *podLauncher) *proxy {
	t.Helper()
	p := &proxy{t: t, accepted: map[string]int{}}
	for _, sock := range []func(string) string{layout.MigrationLibvirtSocket, layout.MigrationQEMUSocket, layout.MigrationBlockSocket} {
		from, to := sock(source.private), sock(target.private)
		os.Remove(from)
		lis, err := net.Listen("unix", from)
		if err != nil {
			t.Fatalf("proxy: %v", err)
		}
		// The node's proxy creates its sockets as root; the pod's user
		// (QEMU, libvirt) must be able to connect. The directory is the
		// pod user's, mode 0700: nobody else reaches them.
		if err := os.Chmod(from, 0o666); err != nil {
			t.Fatal(err)
		}
		p.listeners = append(p.listeners, lis)
		go p.serve(lis, filepath.Base(from), to)
	}
	t.Cleanup(p.close)
	return p
}

func (p *proxy) serve(lis net.Listener, name, to string) {
	for {
		c, err := lis.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.accepted[name]++
		p.mu.Unlock()
		go func() {
			u, err := net.Dial("unix", to)
			if err != nil {
				c.Close()
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.(*net.UnixConn).CloseWrite() }()
			io.Copy(c, u)
			c.(*net.UnixConn).CloseWrite()
		}()
	}
}

func (p *proxy) close() {
	for _, l := range p.listeners {
		l.Close()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *proxy) connections() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps(p.accepted)
}

func maps(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// counterRE is a complete line of the guest's counter: its heartbeat
// (virt.tick=1, every 100 ms, with its uptime), or its lines printed
// without end (virt.spew=1).
var counterRE = regexp.MustCompile(`(?m)^VIRT-GUEST-TICK ([0-9]+) [0-9.]+\r?$`)

func init() {
	if counterGuest() == "spew" {
		counterRE = regexp.MustCompile(`(?m)^VIRT-GUEST-SPEW ([0-9]+) 0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\r?$`)
	}
}

// counters are the counter values of the complete lines in a pod's serial
// logs (the rotated generation first).
func counters(l *launcher) []int {
	var out []int
	for _, f := range []string{layout.SerialLog(l.private) + ".1", layout.SerialLog(l.private)} {
		b, _ := os.ReadFile(f)
		for _, m := range counterRE.FindAllSubmatch(b, -1) {
			n, _ := strconv.Atoi(string(m[1]))
			out = append(out, n)
		}
	}
	return out
}

func lastCounter(l *launcher) int {
	c := counters(l)
	if len(c) == 0 {
		return 0
	}
	return c[len(c)-1]
}

// boots counts the guest's boots in a pod's serial logs.
func boots(l *launcher) int {
	n := 0
	for _, f := range []string{layout.SerialLog(l.private) + ".1", layout.SerialLog(l.private)} {
		b, _ := os.ReadFile(f)
		n += bytes.Count(b, []byte("Linux version "))
	}
	return n
}

// counterGuest is LAUNCHER_IT_MIGRATION_GUEST: by default ("tick") the
// guest prints a numbered heartbeat every 100 ms (virt.tick=1), "spew" one
// prints without end (virt.spew=1); either counter must continue at the
// target. "quiet" migrates a guest that prints nothing and proves it runs on
// at the target only by answering the power button there. Under TCG with a
// live memory copy (QEMU 7.2 loses the guest's last writes,
// hypervisor.LiveMigrationLosesWrites) the counting guests showed it: the
// spewing one oopsed right after the switch-over (its 8250 interrupt
// handler or hrtimers jumping to data addresses), the ticking one printed
// nothing more at the target.
func counterGuest() string {
	if g := os.Getenv("LAUNCHER_IT_MIGRATION_GUEST"); g != "" {
		return g
	}
	return "tick"
}

// counterClock notes when the guest's counter lines appear in a pod's
// serial log, as the host sees them (polled every counterPoll).
type counterClock struct {
	mu            sync.Mutex
	first, last   time.Time
	firstN, lastN int
	stop, stopped chan struct{}
}

const counterPoll = 20 * time.Millisecond

// clockCounter follows l's serial log until the test ends.
func clockCounter(t *testing.T, l *launcher) *counterClock {
	c := &counterClock{stop: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(c.stopped)
		var (
			off  int64
			rest []byte
		)
		tick := time.NewTicker(counterPoll)
		defer tick.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-tick.C:
			}
			f, err := os.Open(layout.SerialLog(l.private))
			if err != nil {
				continue
			}
			if st, err := f.Stat(); err == nil && st.Size() < off {
				// Rotated (copytruncate): start over.
				off, rest = 0, nil
			}
			b, _ := io.ReadAll(io.NewSectionReader(f, off, 1<<62))
			f.Close()
			off += int64(len(b))
			b = append(rest, b...)
			end := bytes.LastIndexByte(b, '\n')
			if end < 0 {
				rest = b
				continue
			}
			rest = append([]byte(nil), b[end+1:]...)
			now := time.Now()
			for _, m := range counterRE.FindAllSubmatch(b[:end+1], -1) {
				n, _ := strconv.Atoi(string(m[1]))
				c.mu.Lock()
				if c.first.IsZero() {
					c.first, c.firstN = now, n
				}
				c.last, c.lastN = now, n
				c.mu.Unlock()
			}
		}
	}()
	t.Cleanup(c.close)
	return c
}

func (c *counterClock) close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.stopped
}

// waitCounterPast waits for the guest's counter in l's serial log to pass n.
func waitCounterPast(t *testing.T, l *launcher, n int, timeout time.Duration) {
	t.Helper()
	l.waitFor(fmt.Sprintf("the guest's counter past %d", n), timeout, func() bool { return lastCounter(l) > n })
}

// resumeSlack bounds how long after the switch-over's pause (libvirt's
// downtime) the host may see no new line of the migrated guest: the
// heartbeat's period, the polling, the logs' writes. Under TCG with QEMU
// 7.2 the memory moves paused (hypervisor.LiveMigrationLosesWrites): the
// downtime is the whole memory copy, 0.4-2.3 s measured on this loaded
// 2-core machine, and issue 26's 2 s for the whole gap is kept only when
// the machine has the time (the gap is logged).
const resumeSlack = time.Second

// kernelFailed reports an oops or a BUG of the guest's kernel in l's
// serial log.
func kernelFailed(l *launcher) bool {
	s := l.serial()
	return strings.Contains(s, "Oops") || strings.Contains(s, "BUG:") || strings.Contains(s, "general protection")
}

// contiguous reports whether c counts up by one.
func contiguous(c []int) bool {
	for i := 1; i < len(c); i++ {
		if c[i] != c[i-1]+1 {
			return false
		}
	}
	return true
}

func getDomain(t *testing.T, l *launcher) *apiv1.Domain {
	t.Helper()
	d, err := l.client.GetDomain(t.Context(), &apiv1.GetDomainRequest{})
	if err != nil {
		t.Fatalf("GetDomain: %v", err)
	}
	return d.Domain
}

// waitMigration waits for l's Domain.migration to reach one of states.
func waitMigration(t *testing.T, l *launcher, timeout time.Duration, states ...apiv1.MigrationState) *apiv1.Migration {
	t.Helper()
	var m *apiv1.Migration
	l.waitFor(fmt.Sprintf("migration state %v", states), timeout, func() bool {
		d, err := l.client.GetDomain(t.Context(), &apiv1.GetDomainRequest{})
		if err != nil {
			return false
		}
		m = d.Domain.GetMigration()
		return slices.Contains(states, m.GetState())
	})
	return m
}

// prepareTarget starts a target launcher and prepares it for the source's
// guest, checking what a target reports before the guest arrives.
func prepareTarget(t *testing.T, vmi *virtv1.VirtualMachineInstance, podPath, uid string) *podLauncher {
	t.Helper()
	target := launchPod(t, vmi, podPath, "--migration-target")
	target.waitReady()
	info, err := target.client.Info(t.Context(), &apiv1.InfoRequest{})
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	if !slices.Contains(info.Features, "migration-target") || !slices.Contains(info.Features, "migration-source") {
		t.Errorf("a --migration-target launcher reports features %v", info.Features)
	}
	// A target boots no guest of its own.
	if _, err := target.sync(t.Context()); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Sync on a target before its guest arrived = %v, want FailedPrecondition", err)
	}
	b, _ := json.Marshal(vmi)
	if _, err := target.client.PrepareMigrationTarget(t.Context(), &apiv1.PrepareMigrationTargetRequest{VmiJson: b, MigrationUid: uid}); err != nil {
		t.Fatalf("PrepareMigrationTarget: %v", err)
	}
	d := getDomain(t, target.launcher)
	if d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT || d.GetMigration().GetState() != apiv1.MigrationState_MIGRATION_STATE_PREPARED ||
		d.GetMigration().GetRole() != "target" || d.GetMigration().GetMigrationUid() != uid {
		t.Fatalf("target after PrepareMigrationTarget: %v; want ABSENT with migration PREPARED (target, %s)", d, uid)
	}
	if st, err := os.Stat(layout.MigrationLibvirtSocket(target.private)); err != nil || st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o600 {
		t.Errorf("target's libvirtd socket: %v, %v; want a socket with mode 0600", st, err)
	}
	return target
}

// TestLiveMigration moves the test guest between two launchers as between
// two pods: a cancelled migration and one whose target dies leave it
// running at the source; a completed one leaves it running at the target,
// where it is that launcher's guest like any other, and the source exits
// ExitMigrated.
func TestLiveMigration(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root: each launcher runs in a mount namespace of its own, as in a pod; the suite runs as root in CI (make test)")
	}
	podPath, err := os.MkdirTemp("", "vm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(podPath) })
	var args []string
	switch g := counterGuest(); g {
	case "tick":
		args = []string{"virt.tick=1"}
	case "spew":
		args = []string{"virt.spew=1"}
	case "quiet":
	default:
		t.Fatalf("LAUNCHER_IT_MIGRATION_GUEST=%q: want tick, spew or quiet", g)
	}
	counting := args != nil
	vmi := guestVMI("mig", 30, args...)

	source := launchPod(t, vmi, podPath)
	source.waitReady()
	info, err := source.client.Info(t.Context(), &apiv1.InfoRequest{})
	if err != nil || !slices.Contains(info.Features, "migration-source") || slices.Contains(info.Features, "migration-target") {
		t.Errorf("source Info features = %v, %v; want migration-source only", info.GetFeatures(), err)
	}
	w := watch(t, source.launcher)
	if _, err := source.sync(t.Context()); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	source.waitSerial("VIRT-GUEST-READY mig", bootTimeout)
	if counting {
		waitCounterPast(t, source.launcher, 0, 30*time.Second)
	}
	qemu := source.qemuPid()
	// stillAtSource checks the guest runs on at the source, as it was.
	stillAtSource := func(t *testing.T) {
		t.Helper()
		if d := getDomain(t, source.launcher); d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING {
			t.Fatalf("source: %v (%s); want RUNNING", d.State, d.Reason)
		}
		if pid := source.qemuPid(); pid != qemu || boots(source.launcher) != 1 {
			t.Fatalf("the source's QEMU is %d (was %d), the guest booted %d times; want the same QEMU and guest", pid, qemu, boots(source.launcher))
		}
		if counting {
			waitCounterPast(t, source.launcher, lastCounter(source.launcher), 30*time.Second)
		}
	}

	if _, err := source.client.CancelMigration(t.Context(), &apiv1.CancelMigrationRequest{MigrationUid: "none"}); status.Code(err) != codes.NotFound {
		t.Errorf("CancelMigration of an unknown migration = %v, want NotFound", err)
	}

	// Slow migrations (1 MiB/s: 128 MiB take minutes) that end early.
	slow := func(uid string) *apiv1.MigrateRequest {
		return &apiv1.MigrateRequest{MigrationUid: uid, BandwidthBytesPerSecond: 1 << 20, CompletionTimeoutPerGibSeconds: 150, ProgressTimeoutSeconds: 150}
	}
	waitTransferring := func(l *launcher) {
		l.waitFor("the migration to move data", migrationTimeout, func() bool {
			d, err := l.client.GetDomain(t.Context(), &apiv1.GetDomainRequest{})
			return err == nil && d.Domain.GetMigration().GetDataProcessedBytes() > 0
		})
	}

	t.Run("cancel", func(t *testing.T) {
		target := prepareTarget(t, vmi, podPath, "m-cancel")
		px := startProxy(t, source, target)
		if _, err := source.client.Migrate(t.Context(), slow("m-cancel")); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
		// The same UID again is a no-op; another UID is refused.
		if _, err := source.client.Migrate(t.Context(), slow("m-cancel")); err != nil {
			t.Errorf("Migrate again with the same UID: %v", err)
		}
		if _, err := source.client.Migrate(t.Context(), slow("m-other")); status.Code(err) != codes.FailedPrecondition {
			t.Errorf("Migrate with another UID while one runs = %v, want FailedPrecondition", err)
		}
		waitTransferring(source.launcher)
		waitMigration(t, target.launcher, 30*time.Second, apiv1.MigrationState_MIGRATION_STATE_RUNNING)
		if _, err := source.client.CancelMigration(t.Context(), &apiv1.CancelMigrationRequest{MigrationUid: "m-cancel"}); err != nil {
			t.Fatalf("CancelMigration: %v", err)
		}
		m := waitMigration(t, source.launcher, 30*time.Second, apiv1.MigrationState_MIGRATION_STATE_CANCELLED, apiv1.MigrationState_MIGRATION_STATE_FAILED, apiv1.MigrationState_MIGRATION_STATE_COMPLETED)
		if m.State != apiv1.MigrationState_MIGRATION_STATE_CANCELLED || m.EndTimeUnixNano == 0 {
			t.Fatalf("source's migration after CancelMigration: %v; want CANCELLED with an end time", m)
		}
		tm := waitMigration(t, target.launcher, 30*time.Second, apiv1.MigrationState_MIGRATION_STATE_FAILED)
		t.Logf("cancelled: source %v; target %v; proxied connections %v", m, tm, px.connections())
		if d := getDomain(t, target.launcher); d.State != apiv1.DomainState_DOMAIN_STATE_ABSENT {
			t.Errorf("target after the cancelled migration: %v; want ABSENT", d.State)
		}
		stillAtSource(t)
	})

	t.Run("target dies", func(t *testing.T) {
		target := prepareTarget(t, vmi, podPath, "m-dies")
		startProxy(t, source, target)
		if _, err := source.client.Migrate(t.Context(), slow("m-dies")); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
		waitTransferring(source.launcher)
		// The target pod goes away: its launcher, its libvirtd (the
		// launcher's child) and its QEMU.
		target.cmd.Process.Signal(syscall.SIGKILL)
		<-target.exited
		target.killQEMU()
		m := waitMigration(t, source.launcher, migrationTimeout, apiv1.MigrationState_MIGRATION_STATE_FAILED, apiv1.MigrationState_MIGRATION_STATE_CANCELLED, apiv1.MigrationState_MIGRATION_STATE_COMPLETED)
		if m.State != apiv1.MigrationState_MIGRATION_STATE_FAILED || m.FailureReason == "" {
			t.Fatalf("source's migration after its target died: %v; want FAILED with a reason", m)
		}
		t.Logf("target died: %s", m.FailureReason)
		stillAtSource(t)
	})

	t.Run("completion timeout", func(t *testing.T) {
		target := prepareTarget(t, vmi, podPath, "m-slow")
		startProxy(t, source, target)
		// 1 s per GiB: the ~0.2 GiB of memory and disk get a fraction of a
		// second, far less than 1 MiB/s needs.
		req := slow("m-slow")
		req.CompletionTimeoutPerGibSeconds = 1
		if _, err := source.client.Migrate(t.Context(), req); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
		m := waitMigration(t, source.launcher, migrationTimeout, apiv1.MigrationState_MIGRATION_STATE_FAILED, apiv1.MigrationState_MIGRATION_STATE_CANCELLED, apiv1.MigrationState_MIGRATION_STATE_COMPLETED)
		if m.State != apiv1.MigrationState_MIGRATION_STATE_FAILED || !strings.Contains(m.FailureReason, "did not complete within") {
			t.Fatalf("source's migration past its completion timeout: %v; want FAILED, aborted by the launcher", m)
		}
		t.Logf("timed out: %s", m.FailureReason)
		stillAtSource(t)
	})

	t.Run("completes", func(t *testing.T) {
		target := prepareTarget(t, vmi, podPath, "m-done")
		tw := watch(t, target.launcher)
		px := startProxy(t, source, target)
		before := lastCounter(source.launcher)
		sourceClock, targetClock := clockCounter(t, source.launcher), clockCounter(t, target.launcher)
		start := time.Now()
		if _, err := source.client.Migrate(t.Context(), &apiv1.MigrateRequest{
			MigrationUid: "m-done", CompletionTimeoutPerGibSeconds: 150, ProgressTimeoutSeconds: 150,
		}); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
		w.waitEvent(t, "STOPPED/migrated", migrationTimeout)
		total := time.Since(start)
		if code := source.waitExit(exitTimeout); code != apiv1.ExitMigrated {
			t.Errorf("source launcher exited %d after the migration, want %d (ExitMigrated)", code, apiv1.ExitMigrated)
		}
		final := source.finalState()
		sm := final.GetMigration()
		if final.StopReason != apiv1.StopReason_STOP_REASON_MIGRATED || sm.GetState() != apiv1.MigrationState_MIGRATION_STATE_COMPLETED ||
			sm.GetRole() != "source" || sm.GetMigrationUid() != "m-done" || sm.GetDataProcessedBytes() == 0 {
			t.Errorf("source's final state: %v; want STOP_REASON_MIGRATED with migration m-done COMPLETED (source) and its statistics", final)
		}
		tw.waitEvent(t, "STARTED/migrated", 10*time.Second)
		tw.waitEvent(t, "RESUMED/migrated", 10*time.Second)
		tm := waitMigration(t, target.launcher, 10*time.Second, apiv1.MigrationState_MIGRATION_STATE_COMPLETED)
		// libvirt's statistics of the incoming job follow the switch-over.
		target.waitFor("the target's downtime", 15*time.Second, func() bool {
			tm = getDomain(t, target.launcher).GetMigration()
			return tm.GetDowntimeMs() > 0
		})
		d := getDomain(t, target.launcher)
		if d.State != apiv1.DomainState_DOMAIN_STATE_RUNNING || tm.GetRole() != "target" || tm.DowntimeMs <= 0 {
			t.Errorf("target after the migration: %v; want RUNNING with migration COMPLETED (target) and a downtime", d)
		}
		// The guest runs on without a reboot; a counting guest's counter
		// continues where the source's log ended (a line the switch-over
		// cut in two is complete in neither log).
		counter := ""
		if counting {
			last := lastCounter(source.launcher)
			target.waitFor(fmt.Sprintf("the guest's counter past %d at the target", last+10), 60*time.Second, func() bool {
				return lastCounter(target.launcher) > last+10 || kernelFailed(target.launcher)
			})
			if kernelFailed(target.launcher) {
				t.Fatalf("the guest's kernel failed at the target:\n%s", target.serial())
			}
			first := counters(target.launcher)[0]
			if last <= before || first <= last-1 || first > last+2 {
				t.Errorf("the guest's counter: %d before the migration, %d last at the source, %d first at the target; want it to continue", before, last, first)
			}
			// The host saw the guest print nothing for gap: the
			// switch-over's pause and the last line's period.
			sourceClock.close()
			targetClock.close()
			gap := targetClock.first.Sub(sourceClock.last)
			if max := time.Duration(tm.DowntimeMs)*time.Millisecond + resumeSlack; sourceClock.lastN != last || targetClock.firstN != first || gap > max {
				t.Errorf("the guest's counter: last %d at the source at %v, first %d at the target %v later; want %d then %d, at most %v apart (downtime %d ms)",
					sourceClock.lastN, sourceClock.last.Format(time.StampMilli), targetClock.firstN, gap, last, first, max, tm.DowntimeMs)
			}
			if c := counters(target.launcher); counterGuest() == "tick" && !contiguous(c) {
				t.Errorf("the guest's counter at the target skips or repeats: %v", c)
			}
			counter = fmt.Sprintf("; counter %d -> %d, %v without a line", last, first, gap.Round(time.Millisecond))
		}
		if kernelFailed(target.launcher) {
			t.Errorf("the guest's kernel failed at the target:\n%s", target.serial())
		}
		t.Logf("migration: %v from Migrate to the source's STOPPED/migrated; libvirt's downtime %d ms (source %d ms); %d bytes moved%s; proxied connections %v",
			total, tm.DowntimeMs, sm.GetDowntimeMs(), sm.GetDataProcessedBytes(), counter, px.connections())
		if px.connections()[layout.MigrationBlockSocketName] == 0 {
			t.Errorf("the empty disk was not copied through the block socket: connections %v", px.connections())
		}

		// The guest is the target's like any other: a shutdown there ends
		// it and that launcher.
		grace := int64(60)
		if _, err := target.client.Shutdown(t.Context(), &apiv1.ShutdownRequest{GracePeriodSeconds: &grace}); err != nil {
			t.Fatalf("Shutdown at the target: %v", err)
		}
		tw.waitEvent(t, "STOPPED/shutdown", time.Duration(grace)*time.Second)
		if !bytes.Contains([]byte(target.serial()), []byte("VIRT-GUEST-ACPI-SHUTDOWN")) || boots(target.launcher) != 0 {
			t.Errorf("the guest did not answer the power button at the target without a reboot (boots there: %d); serial log there:\n%s", boots(target.launcher), target.serial())
		}
		if code := target.waitExit(exitTimeout); code != apiv1.ExitGuestShutdown {
			t.Errorf("target launcher exited %d after the guest's shutdown, want %d", code, apiv1.ExitGuestShutdown)
		}
	})
}
