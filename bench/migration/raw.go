package migration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/podusr"
	"kubevirt.dev/virt/bench/proc"
	"kubevirt.dev/virt/bench/startup"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/hypervisor"
	"kubevirt.dev/virt/launcher/kvm"
)

// childEnv carries the raw move's spec to the child process; its presence
// makes the process the child (IsChild).
const childEnv = "VIRT_BENCH_RAW_MIGRATION"

// childSpec is one raw move, done by the child.
type childSpec struct {
	// Dir is the move's directory (short: QEMU's and libvirt's sockets are
	// below it), owned by podusr.UID.
	Dir string
	// Name and XML are the domain's.
	Name, XML string
	// Type is the domain type (qemu or kvm).
	Type string
	// SerialLog is the guest's serial log; the target's QEMU appends to
	// the same file.
	SerialLog string
	Timeout   time.Duration
	Case      Case
}

// IsChild says whether this process is the raw side's libvirt: main (or a
// test's TestMain) must then call ChildMain and nothing else.
func IsChild() bool {
	_, ok := os.LookupEnv(childEnv)
	return ok
}

// ChildMain does the raw move of the spec in the environment, writes the
// Move as JSON on stdout and returns the exit code.
func ChildMain() int {
	var spec childSpec
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "raw migration:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), spec.Timeout)
	defer cancel()
	m, err := moveRaw(ctx, spec)
	if err != nil {
		m.Error = err.Error()
	}
	if err := json.NewEncoder(os.Stdout).Encode(m); err != nil {
		fmt.Fprintln(os.Stderr, "raw migration:", err)
		return 1
	}
	return 0
}

// settleTicks is how many heartbeats (100 ms each) the guest prints before
// it is moved: its dirtying loop runs by then.
const settleTicks = 20

// moveRaw boots the domain under an embedded libvirt, starts a private
// libvirtd as the target (as a target launcher does), and moves the guest
// there peer to peer with the flags the platform's source launcher uses.
func moveRaw(ctx context.Context, spec childSpec) (m Move, err error) {
	m.Side = Raw
	srcRoot := filepath.Join(spec.Dir, "s")
	if err := hypervisor.PrepareEmbedRoot(srcRoot); err != nil {
		return m, err
	}
	src, err := hypervisor.Open(hypervisor.EmbedURI(srcRoot))
	if err != nil {
		return m, err
	}
	defer func() { err = errors.Join(err, src.Close()) }()
	go func() {
		for range src.Events() {
		}
	}()
	// Capabilities before any clock: a running libvirt has probed QEMU.
	if _, err := src.Info(); err != nil {
		return m, err
	}
	daemon, err := hypervisor.StartDaemon(ctx, hypervisor.DaemonConfig{
		Root: filepath.Join(spec.Dir, "t"), Socket: filepath.Join(spec.Dir, "t.sock"), Stderr: os.Stderr,
	}, time.Minute)
	if err != nil {
		return m, err
	}
	defer daemon.Stop()
	dst, err := hypervisor.Open(hypervisor.DaemonURI(daemon.Socket))
	if err != nil {
		return m, err
	}
	defer func() { err = errors.Join(err, dst.Close()) }()
	go func() {
		for range dst.Events() {
		}
	}()
	if _, err := dst.Info(); err != nil {
		return m, err
	}
	if m.Paused, err = src.LiveMigrationLosesWrites(spec.Type); err != nil {
		return m, err
	}

	if err := src.Define(spec.XML); err != nil {
		return m, err
	}
	if err := src.Start(spec.Name); err != nil {
		return m, err
	}
	// Whichever side holds the guest destroys it.
	defer func() {
		_ = src.Destroy(spec.Name)
		_ = dst.Destroy(spec.Name)
	}()
	before, err := waitSettled(ctx, spec.SerialLog, spec.Case, 3*time.Minute)
	if err != nil {
		return m, err
	}
	migDir := filepath.Join(spec.Dir, "m")
	if err := os.MkdirAll(migDir, 0o700); err != nil {
		return m, err
	}
	start := time.Now()
	err = src.Migrate(spec.Name, hypervisor.MigrateOptions{
		DestURI:    hypervisor.DaemonURI(daemon.Socket),
		MigrateURI: "unix://" + filepath.Join(migDir, "qemu"),
		Paused:     m.Paused,
	})
	m.Total = time.Since(start)
	if err != nil {
		return m, fmt.Errorf("migrate: %w", err)
	}
	// The target has the completed incoming job's statistics a moment
	// after the switch-over (docs/launcher.md, Live migration); the
	// platform's downtime is the target's, so this one is too.
	stats, serr := waitStats(ctx, dst, spec.Name)
	if serr != nil {
		// The source's completed job says the same.
		if stats, err = src.JobStats(spec.Name, true); err != nil || !stats.DowntimeSet {
			return m, fmt.Errorf("libvirt's downtime: target: %v; source: %v", serr, err)
		}
	}
	m.Downtime = time.Duration(stats.DowntimeMs) * time.Millisecond
	m.Job = time.Duration(stats.ElapsedMs) * time.Millisecond
	m.DataMiB = float64(stats.DataProcessed) / (1 << 20)
	if _, err := waitTick(ctx, spec.SerialLog, lastTick(spec.SerialLog), 30*time.Second); err != nil {
		return m, fmt.Errorf("the guest at the target (heartbeat %d before the move): %w", before, err)
	}
	m.TicksAfter = true
	return m, nil
}

// waitStats polls the target's statistics of the completed incoming job
// until they carry the downtime.
func waitStats(ctx context.Context, conn *hypervisor.Conn, name string) (hypervisor.JobStats, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := conn.JobStats(name, true)
		if err == nil && s.DowntimeSet {
			return s, nil
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("no downtime in the completed job's statistics (%+v, %v)", s, err)
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// rawMove runs one raw move in a child process as the pods' user and
// returns what it measured.
func rawMove(ctx context.Context, guest startup.Guest, c Case, seq int, timeout time.Duration) (m Move, err error) {
	m = Move{Side: Raw, Case: c}
	// Short: the domain's QEMU monitor socket lands below it.
	dir, err := os.MkdirTemp("", "vbm-")
	if err != nil {
		return m, err
	}
	defer func() {
		// Nothing outlives the move, also when the child failed.
		for _, pid := range qemuPIDs(dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		os.RemoveAll(dir)
	}()
	spec, err := rawSpec(dir, guest, c, seq)
	if err != nil {
		return m, err
	}
	if err := podusr.WriteUserFiles(dir); err != nil {
		return m, err
	}
	if err := podusr.Chown(dir); err != nil {
		return m, err
	}
	spec.Timeout = timeout
	b, err := json.Marshal(spec)
	if err != nil {
		return m, err
	}
	self, err := os.Executable()
	if err != nil {
		return m, err
	}
	cmd := podusr.Command(dir, self)
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	// libvirt logs its warnings (no /dev/kvm, no D-Bus) there: shown only
	// when the move fails.
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return m, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return m, ctx.Err()
	}
	var got Move
	if jerr := json.Unmarshal(out.Bytes(), &got); jerr != nil {
		return m, fmt.Errorf("raw migration child: %v (%v): %s", err, jerr, lastLine(stderr.String()))
	}
	got.Case = c
	if got.Error != "" {
		return got, fmt.Errorf("%s (libvirt: %s)", got.Error, lastLine(stderr.String()))
	}
	return got, nil
}

// rawSpec is the test guest's domain as the launcher makes it, its files
// in dir.
func rawSpec(dir string, guest startup.Guest, c Case, seq int) (childSpec, error) {
	vmi := guestVMI(fmt.Sprintf("mig-%d", seq), c)
	vmi.Namespace, vmi.UID = "bench", types.UID(fmt.Sprintf("00000000-0000-4000-8001-%012d", seq))
	// No NIC: its tap would be someone's to make. The platform's guest has
	// its pod's, whose device state is a few KiB of the move.
	vmi.Spec.Domain.Devices.AutoattachPodInterface = ptr.To(false)
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	// The pods' user cannot read the bench's cache under /root.
	kernel, initrd := filepath.Join(dir, "vmlinuz"), filepath.Join(dir, "initrd.gz")
	for src, dst := range map[string]string{guest.Kernel: kernel, guest.Initrd: initrd} {
		if err := copyFile(src, dst); err != nil {
			return childSpec{}, err
		}
	}
	typ := domain.TypeQEMU
	if ok, _ := kvm.Usable(); ok {
		typ = domain.TypeKVM
	}
	// The same paths on both ends, as in two pods: the target's QEMU
	// replaces the sockets (the bench never connects to them) and appends
	// to the same serial log, which then holds the whole heartbeat.
	host := domain.Host{Type: typ, Kernel: kernel, Initrd: initrd,
		SerialSocket: filepath.Join(dir, "serial0.sock"), SerialLog: filepath.Join(dir, "serial0.log"),
		VNCSocket: filepath.Join(dir, "vnc.sock")}
	d, err := domain.Convert(vmi, host)
	if err != nil {
		return childSpec{}, err
	}
	x, err := d.Marshal()
	if err != nil {
		return childSpec{}, err
	}
	return childSpec{Dir: dir, Name: d.Name, XML: x, Type: typ, SerialLog: host.SerialLog, Case: c}, nil
}

// guestVMI is the test guest of a case: startup's VMI with the case's
// memory, the heartbeat and the dirtying loop.
func guestVMI(name string, c Case) *virtv1.VirtualMachineInstance {
	vmi := startup.VMI(name)
	vmi.Spec.Domain.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(fmt.Sprintf("%dMi", c.MemoryMiB))
	kb := vmi.Spec.Domain.Firmware.KernelBoot
	kb.KernelArgs += " virt.tick=1"
	if c.DirtyMiB > 0 {
		kb.KernelArgs += fmt.Sprintf(" virt.dirty=%d", c.DirtyMiB)
	}
	return vmi
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// qemuPIDs are the QEMU processes whose command line names dir.
func qemuPIDs(dir string) []int {
	return proc.WithCommandLine(func(args []string) bool {
		return strings.HasPrefix(filepath.Base(args[0]), "qemu-system") && strings.Contains(strings.Join(args, "\x00"), dir)
	})
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
