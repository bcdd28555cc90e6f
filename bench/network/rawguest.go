package network

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/startup"
	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/hypervisor"
	"kubevirt.dev/virt/launcher/kvm"
)

// childEnv carries the raw guest's domain to the child process; its
// presence makes the process the child (IsRawLibvirt).
const childEnv = "VIRT_BENCH_RAW_LIBVIRT"

// runningLine is what the child prints once the domain runs.
const runningLine = "running"

// Names of the raw guest.
const (
	// rawName is its VMI's name, host name and the domain's name part.
	rawName = "net-raw"
	// guestMAC is its NIC's address (locally administered).
	guestMAC = "02:62:65:6e:00:02"
)

// stopTimeout bounds the child's destroy of the domain and its exit.
const stopTimeout = time.Minute

// childSpec is the domain the child defines and starts.
type childSpec struct {
	// Root is the embedded libvirt's root directory.
	Root string
	Name string
	XML  string
}

// IsRawLibvirt says whether this process is the network part's raw
// libvirt: the bench re-executes its own binary for it inside the plain
// tap's namespace, and main must then call RawLibvirtMain and nothing else.
func IsRawLibvirt() bool {
	_, ok := os.LookupEnv(childEnv)
	return ok
}

// RawLibvirtMain runs the raw guest's embedded libvirt: it defines and
// starts the domain, says so on stdout, and destroys it when stdin ends
// (the bench closed it, or died) or on SIGTERM. It returns the exit code.
func RawLibvirtMain() int {
	if err := runRawLibvirt(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "raw libvirt:", err)
		return 1
	}
	return 0
}

func runRawLibvirt(stdin io.Reader, stdout io.Writer) (err error) {
	var spec childSpec
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &spec); err != nil {
		return fmt.Errorf("read %s: %w", childEnv, err)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	conn, err := hypervisor.Open(hypervisor.EmbedURI(spec.Root))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, conn.Close()) }()
	go func() {
		for range conn.Events() {
		}
	}()
	if err := conn.Define(spec.XML); err != nil {
		return err
	}
	if err := conn.Start(spec.Name); err != nil {
		return err
	}
	// From here on QEMU runs on its own (libvirt daemonizes it): every way
	// out destroys it.
	defer func() { err = errors.Join(err, conn.Destroy(spec.Name)) }()
	if _, err := fmt.Fprintln(stdout, runningLine); err != nil {
		return err
	}
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-term:
	}
	return nil
}

// rawGuest is the test guest under raw libvirt in the plain tap's
// namespace: a child process holding an embedded libvirt in a temporary
// directory.
type rawGuest struct {
	dir, root, name, serialLog, childLog string
	// domainType is the domain's type: kvm, or qemu for software emulation.
	domainType string

	cmd *exec.Cmd
	// stdin ends the child's life when closed.
	stdin   *os.File
	exited  chan struct{}
	waitErr error
}

// rawDomain is the raw guest's domain: the platform's VMI (VMI), defaulted
// as the API does, through the launcher's converter, with its pod-network
// interface on the plain tap.
func rawDomain(dir string, guest startup.Guest) (name, xml, serialLog, typ string, err error) {
	vmi := VMI(rawName)
	vmi.Namespace, vmi.UID = "bench", types.UID("00000000-0000-4000-8000-00000000e7e7")
	virtv1.SetObjectDefaults_VirtualMachineInstance(vmi)
	typ = domain.TypeQEMU
	if ok, _ := kvm.Usable(); ok {
		typ = domain.TypeKVM
	}
	host := domain.Host{
		Type: typ, Kernel: guest.Kernel, Initrd: guest.Initrd,
		SerialSocket: filepath.Join(dir, "serial0.sock"), SerialLog: filepath.Join(dir, "serial0.log"),
		VNCSocket:  filepath.Join(dir, "vnc.sock"),
		Interfaces: map[string]domain.Interface{virtv1.DefaultPodNetworkName: {Tap: tapName, MAC: guestMAC, MTU: linkMTU}},
	}
	d, err := domain.Convert(vmi, host)
	if err != nil {
		return "", "", "", "", fmt.Errorf("raw guest's domain: %w", err)
	}
	if xml, err = d.Marshal(); err != nil {
		return "", "", "", "", fmt.Errorf("raw guest's domain: %w", err)
	}
	return d.Name, xml, host.SerialLog, typ, nil
}

// startRawGuest starts the child in n's namespace and waits until the
// domain runs (the first start probes QEMU's capabilities: seconds).
func startRawGuest(ctx context.Context, n *tapNet, guest startup.Guest, timeout time.Duration) (g *rawGuest, err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "vb-net-")
	if err != nil {
		return nil, err
	}
	g = &rawGuest{dir: dir, root: filepath.Join(dir, "libvirt"), childLog: filepath.Join(dir, "libvirt-child.log")}
	defer func() {
		if err != nil {
			err = errors.Join(err, g.stop())
		}
	}()
	if err := hypervisor.PrepareEmbedRoot(g.root, ""); err != nil {
		return g, err
	}
	var xml string
	if g.name, xml, g.serialLog, g.domainType, err = rawDomain(dir, guest); err != nil {
		return g, err
	}
	spec, err := json.Marshal(childSpec{Root: g.root, Name: g.name, XML: xml})
	if err != nil {
		return g, err
	}
	log, err := os.Create(g.childLog)
	if err != nil {
		return g, err
	}
	defer log.Close()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return g, err
	}
	defer stdinR.Close()
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinW.Close()
		return g, err
	}
	defer stdoutW.Close()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, log
	// Its own process group: a Ctrl-C at the terminal reaches the bench
	// only, which then stops the child in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Forked from a thread in the namespace, the child is born there, and
	// so are its libvirt and QEMU.
	if err := n.inNS(func() error { return startAtNice0(cmd) }); err != nil {
		stdinW.Close()
		stdoutR.Close()
		return g, fmt.Errorf("start raw libvirt's process: %w", err)
	}
	g.cmd, g.stdin, g.exited = cmd, stdinW, make(chan struct{})
	go func() {
		g.waitErr = cmd.Wait()
		close(g.exited)
	}()
	running := make(chan struct{})
	go func() {
		defer stdoutR.Close()
		s := bufio.NewScanner(stdoutR)
		for s.Scan() {
			if s.Text() == runningLine {
				close(running)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdoutR)
	}()
	select {
	case <-running:
		return g, nil
	case <-g.exited:
		return g, fmt.Errorf("raw libvirt exited before the domain ran (%v): %s", g.waitErr, tail(g.childLog, 600))
	case <-time.After(timeout):
		return g, fmt.Errorf("raw libvirt did not start the domain within %s: %s", timeout, tail(g.childLog, 600))
	case <-ctx.Done():
		return g, ctx.Err()
	}
}

// startAtNice0 starts cmd at nice 0, where the kubelet starts the
// platform's QEMU, also when the bench itself runs under nice (make bench
// does): the raw guest must not be the one that yields the CPU. Linux
// keeps the nice value per thread and a child inherits its forking
// thread's, so the calling thread's is lowered for the fork and restored.
func startAtNice0(cmd *exec.Cmd) error {
	// The raw getpriority system call answers 20 - nice.
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return fmt.Errorf("read the thread's nice value: %w", err)
	}
	nice := 20 - prio
	if nice == 0 {
		return cmd.Start()
	}
	if err := unix.Setpriority(unix.PRIO_PROCESS, 0, 0); err != nil {
		return fmt.Errorf("set the thread's nice value to 0: %w", err)
	}
	err = cmd.Start()
	return errors.Join(err, unix.Setpriority(unix.PRIO_PROCESS, 0, nice))
}

// stop ends the child, which destroys the domain, kills a QEMU that
// outlived it, and removes the directory; it tolerates a partial start.
func (g *rawGuest) stop() error {
	var errs []error
	if g.cmd != nil {
		g.stdin.Close()
		select {
		case <-g.exited:
			if g.waitErr != nil {
				errs = append(errs, fmt.Errorf("raw libvirt: %w: %s", g.waitErr, tail(g.childLog, 600)))
			}
		case <-time.After(stopTimeout):
			_ = g.cmd.Process.Kill()
			<-g.exited
			errs = append(errs, fmt.Errorf("raw libvirt did not destroy its domain and exit within %s; killed", stopTimeout))
		}
		g.cmd = nil
	}
	if g.name != "" {
		errs = append(errs, killQEMU(g.root, g.name))
	}
	errs = append(errs, os.RemoveAll(g.dir))
	return errors.Join(errs...)
}

// killQEMU kills the domain's QEMU if it still runs: libvirt daemonizes
// QEMU, so a child that died without destroying the domain leaves it,
// holding the tap and the namespace. The pid comes from libvirt's pid file
// and must be a QEMU of that domain.
func killQEMU(root, name string) error {
	b, err := os.ReadFile(filepath.Join(root, "run", "qemu", name+".pid"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return fmt.Errorf("QEMU's pid file of %s: %q", name, b)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte("guest="+name)) {
		// Gone, or the pid now belongs to another process.
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill QEMU %d of %s: %w", pid, name, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("QEMU %d of %s outlived raw libvirt; killed", pid, name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("QEMU %d of %s outlived raw libvirt and survives SIGKILL", pid, name)
}

// tail is the end of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
