// Package launcher_test runs the real virt-launcher binary on the host with
// real libvirt and QEMU: it boots the project's test guest (hack/build-guest.sh)
// by kernel boot and checks the node <-> launcher contract end to end.
package launcher_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
)

var (
	// guestDir holds the test guest's vmlinuz and initrd.gz.
	guestDir string
	// launcherBin is the virt-launcher built for this run.
	launcherBin string
	// capsSeed is the QEMU capabilities seed of this run's launchers,
	// written once by virt-launcher --write-capabilities-seed as the launcher
	// image's build does, and read-only for them.
	capsSeed string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := filepath.Abs("../../..")
	if err != nil {
		return fail("%v", err)
	}
	out, err := exec.Command(filepath.Join(root, "hack/build-guest.sh")).Output()
	if err != nil {
		return fail("hack/build-guest.sh failed, the test guest is needed: %v\n%s", err, stderr(err))
	}
	guestDir = strings.TrimSpace(string(out))
	for _, f := range []string{"vmlinuz", "initrd.gz"} {
		if _, err := os.Stat(filepath.Join(guestDir, f)); err != nil {
			return fail("hack/build-guest.sh printed %q, which lacks %s: %v", guestDir, f, err)
		}
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		return fail("qemu-system-x86_64 is not installed: run hack/install-deps.sh")
	}
	tmp, err := os.MkdirTemp("", "launcher-it-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(tmp)
	// The launcher's user must reach the capabilities seed in here.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fail("%v", err)
	}
	launcherBin = filepath.Join(tmp, "virt-launcher")
	build := exec.Command("go", "build", "-o", launcherBin, "./cmd/virt-launcher")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return fail("build virt-launcher: %v\n%s", err, out)
	}
	capsSeed = filepath.Join(tmp, "capabilities-seed")
	name, argv := launcherBin, []string{"--write-capabilities-seed", capsSeed}
	if os.Geteuid() == 0 {
		// As the launchers run: libvirt's entries of root and of other
		// users differ.
		if err := os.Mkdir(capsSeed, 0o755); err != nil {
			return fail("%v", err)
		}
		if err := os.Chown(capsSeed, podUID, podUID); err != nil {
			return fail("%v", err)
		}
		name, argv = "setpriv", append([]string{fmt.Sprintf("--reuid=%d", podUID), fmt.Sprintf("--regid=%d", podUID),
			"--clear-groups", "--no-new-privs", launcherBin}, argv...)
	}
	seed := exec.Command(name, argv...)
	seed.Dir = tmp
	if out, err := seed.CombinedOutput(); err != nil {
		return fail("write the capabilities seed: %v\n%s", err, out)
	}
	return m.Run()
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "launcher integration tests: "+format+"\n", args...)
	return 1
}

func stderr(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}

// launcher is one virt-launcher process and a client of its socket.
type launcher struct {
	t       testing.TB
	cmd     *exec.Cmd
	private string
	client  apiv1.LauncherClient
	vmi     *virtv1.VirtualMachineInstance
	exited  chan struct{}
	log     *bytes.Buffer
	// ready is how long the launcher took from exec to its ready file.
	ready   time.Duration
	started time.Time
}

// startLauncher starts virt-launcher for vmi like a pod would: with every
// capability dropped (when run as root) and the guest's files already copied
// to its kernel-boot directory; it returns once the launcher is ready.
func startLauncher(t testing.TB, vmi *virtv1.VirtualMachineInstance) *launcher {
	t.Helper()
	l := launch(t, vmi)
	l.waitReady()
	return l
}

// launch starts virt-launcher for vmi as startLauncher does, naming its
// containerDisk volumes as the pod does, and returns once its socket is
// served, ready or not.
func launch(t testing.TB, vmi *virtv1.VirtualMachineInstance) *launcher {
	t.Helper()
	// Short paths: unix socket addresses are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "vl-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	private := filepath.Join(dir, "p")
	kernelBoot := filepath.Join(dir, "k")
	if err := os.MkdirAll(kernelBoot, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(guestDir, "vmlinuz"), filepath.Join(kernelBoot, layout.KernelName))
	copyFile(t, filepath.Join(guestDir, "initrd.gz"), filepath.Join(kernelBoot, layout.InitrdName))

	args := []string{
		"--vmi-namespace", vmi.Namespace, "--vmi-name", vmi.Name, "--vmi-uid", string(vmi.UID),
		"--grace-period-seconds", fmt.Sprint(*vmi.Spec.TerminationGracePeriodSeconds),
		"--private-dir", private, "--disks-dir", filepath.Join(dir, "d"), "--pvc-dir", filepath.Join(dir, "v"),
		"--kernel-boot-dir", kernelBoot, "--capabilities-seed-dir", capsSeed, "--linger", "1s",
	}
	for _, v := range vmi.Spec.Volumes {
		if v.ContainerDisk != nil {
			args = append(args, "--container-disk", v.Name)
		}
	}
	name, argv := launcherBin, args
	if os.Geteuid() == 0 && !asRoot(t) {
		// A launcher pod runs as a non-root user with ALL capabilities
		// dropped; so does this test.
		chownTree(t, dir, podUID)
		name, argv = "setpriv", append([]string{
			fmt.Sprintf("--reuid=%d", podUID), fmt.Sprintf("--regid=%d", podUID), "--clear-groups",
			"--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", launcherBin}, args...)
	}
	l := &launcher{t: t, private: private, vmi: vmi, exited: make(chan struct{}), log: &bytes.Buffer{}}
	l.cmd = exec.Command(name, argv...)
	l.cmd.Stdout, l.cmd.Stderr = l.log, l.log
	start := time.Now()
	if err := l.cmd.Start(); err != nil {
		t.Fatalf("start virt-launcher: %v", err)
	}
	go func() { l.cmd.Wait(); close(l.exited) }()
	t.Cleanup(l.stop)

	l.started = start
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
	if st, err := os.Stat(layout.LauncherSocket(private)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("launcher socket: %v, mode %v; want mode 0600", err, st.Mode().Perm())
	}
	return l
}

// waitReady waits for the launcher's ready file, what its pod's startup
// probe looks for.
func (l *launcher) waitReady() {
	l.t.Helper()
	l.waitFor("the launcher's ready file", 90*time.Second, l.isReady)
	l.ready = time.Since(l.started)
	if os.Getenv("LAUNCHER_IT_DEBUG") != "" {
		l.t.Logf("launcher output so far:\n%s", l.log.String())
	}
}

func (l *launcher) isReady() bool {
	_, err := os.Stat(layout.ReadyFile(l.private))
	return err == nil
}

// qemuPid is the pid of the launcher's QEMU, or 0.
func (l *launcher) qemuPid() int {
	pids, _ := filepath.Glob(filepath.Join(layout.LibvirtRoot(l.private), "run", "qemu", "*.pid"))
	for _, p := range pids {
		if filepath.Base(p) == "driver.pid" {
			continue
		}
		var pid int
		if b, err := os.ReadFile(p); err == nil {
			fmt.Sscan(string(b), &pid)
		}
		return pid
	}
	return 0
}

// stop kills a launcher a test left running, and its QEMU, so nothing
// outlives the test.
func (l *launcher) stop() {
	select {
	case <-l.exited:
	default:
		l.cmd.Process.Signal(syscall.SIGKILL)
		<-l.exited
	}
	// QEMU is the launcher's child but not in its process group's
	// lifetime: kill it by its pid file in the embedded root.
	if pid := l.qemuPid(); pid > 1 {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if l.t.Failed() {
		l.t.Logf("virt-launcher output:\n%s", l.log.String())
		if b, err := os.ReadFile(layout.SerialLog(l.private)); err == nil {
			l.t.Logf("guest serial log:\n%s", b)
		}
		// libvirt's swtpm_setup and swtpm log here, for a domain with a TPM.
		logs, _ := filepath.Glob(filepath.Join(layout.LibvirtRoot(l.private), "log", "swtpm", "*.log"))
		for _, f := range logs {
			if b, err := os.ReadFile(f); err == nil {
				l.t.Logf("%s:\n%s", filepath.Base(f), b)
			}
		}
	}
}

// waitFor polls cond every 100 ms until it holds or timeout passes.
func (l *launcher) waitFor(what string, timeout time.Duration, cond func() bool) {
	l.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		select {
		case <-l.exited:
			l.t.Fatalf("virt-launcher exited (%v) while waiting for %s", l.cmd.ProcessState, what)
		default:
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitSerial waits for a line of the guest's serial log to contain marker.
func (l *launcher) waitSerial(marker string, timeout time.Duration) {
	l.t.Helper()
	l.waitFor(fmt.Sprintf("%q on the guest's serial console", marker), timeout, func() bool {
		b, _ := os.ReadFile(layout.SerialLog(l.private))
		return bytes.Contains(b, []byte(marker))
	})
}

func (l *launcher) serial() string {
	b, _ := os.ReadFile(layout.SerialLog(l.private))
	return string(b)
}

// waitExit waits for the launcher to exit and returns its exit status.
func (l *launcher) waitExit(timeout time.Duration) int {
	l.t.Helper()
	select {
	case <-l.exited:
		return l.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		l.t.Fatalf("virt-launcher did not exit within %v", timeout)
		return -1
	}
}

func (l *launcher) sync(ctx context.Context) (*apiv1.Domain, error) {
	b, err := json.Marshal(l.vmi)
	if err != nil {
		l.t.Fatal(err)
	}
	resp, err := l.client.Sync(ctx, &apiv1.SyncRequest{VmiJson: b})
	return resp.GetDomain(), err
}

// finalState reads the final-state file the launcher leaves behind.
func (l *launcher) finalState() *apiv1.Domain {
	l.t.Helper()
	b, err := os.ReadFile(layout.FinalStateFile(l.private))
	if err != nil {
		l.t.Fatalf("final state file: %v", err)
	}
	var d apiv1.Domain
	if err := unmarshalDomain(b, &d); err != nil {
		l.t.Fatalf("final state file is not a Domain: %v\n%s", err, b)
	}
	return &d
}

// guestVMI is a VMI booting the test guest by kernel boot, with the extra
// kernel arguments given, without a NIC.
func guestVMI(name string, grace int64, kernelArgs ...string) *virtv1.VirtualMachineInstance {
	vmi := &virtv1.VirtualMachineInstance{
		TypeMeta:   metav1.TypeMeta{APIVersion: "virtualization.kubevirt.io/v1", Kind: "VirtualMachineInstance"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "it", Name: name, UID: uuid.NewUUID()},
		Spec: virtv1.VirtualMachineInstanceSpec{
			TerminationGracePeriodSeconds: ptr.To(grace),
			Domain: virtv1.DomainSpec{
				Resources: virtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}},
				Firmware: &virtv1.Firmware{KernelBoot: &virtv1.KernelBoot{
					KernelArgs: strings.Join(append([]string{"console=ttyS0", "panic=-1", "no_timer_check", "virt.hostname=" + name}, kernelArgs...), " "),
					Container:  &virtv1.KernelBootContainer{Image: "guest", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd.gz"},
				}},
				Devices: virtv1.Devices{
					Disks: []virtv1.Disk{{Name: "scratch"}, {Name: "cloudinit"}},
					Rng:   &virtv1.Rng{},
					// No NIC: a NIC's tap is prepared by virt-handler's
					// binding in a pod's network namespace, which these
					// tests do not have (test/e2e covers networking).
					AutoattachPodInterface: ptr.To(false),
				},
			},
			Volumes: []virtv1.Volume{
				{Name: "scratch", VolumeSource: virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("64Mi")}}},
				{Name: "cloudinit", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
			},
		},
	}
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	return vmi
}

// asRoot reports whether a test runs its launcher as root with all
// capabilities, the way a host-level test or a privileged pod would: tests
// whose name ends in "AsRoot", or all with LAUNCHER_IT_AS=root.
func asRoot(t testing.TB) bool {
	return strings.HasSuffix(t.Name(), "AsRoot") || os.Getenv("LAUNCHER_IT_AS") == "root"
}

// podUID is the user the launcher runs as when the tests run as root, as
// virt-controller's launcher pods do (KubeVirt's qemu user is 107 too).
const podUID = 107

func chownTree(t testing.TB, dir string, uid int) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatalf("chown %s: %v", dir, err)
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
