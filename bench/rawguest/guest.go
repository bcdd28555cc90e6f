package rawguest

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
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"kubevirt.dev/virt/launcher/domain"
	"kubevirt.dev/virt/launcher/hypervisor"
	"kubevirt.dev/virt/launcher/kvm"
)

// stopTimeout bounds the child's destroy of the domain and its exit.
const stopTimeout = time.Minute

// Guest is a domain under raw libvirt in a Net's namespace: a child
// process (this binary again) holding an embedded libvirt rooted in the
// guest's temporary directory.
type Guest struct {
	// Dir is the guest's temporary directory, for its files (disks, serial
	// log, sockets); Stop removes it.
	Dir string
	// DomainType is the type its domain must have: kvm where hardware
	// virtualization is usable, else qemu (software emulation).
	DomainType string

	root, name, childLog string

	cmd *exec.Cmd
	// stdin ends the child's life when closed.
	stdin   *os.File
	lines   chan string
	exited  chan struct{}
	waitErr error
}

// New makes the guest's directory (under the system's temporary directory,
// named prefix*) and its libvirt root. The caller puts the guest's files
// in Dir and converts its domain before Launch.
func New(prefix string) (*Guest, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	g := &Guest{Dir: dir, DomainType: domain.TypeQEMU, root: filepath.Join(dir, "libvirt"), childLog: filepath.Join(dir, "libvirt-child.log")}
	if ok, _ := kvm.Usable(); ok {
		g.DomainType = domain.TypeKVM
	}
	if err := hypervisor.PrepareEmbedRoot(g.root); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return g, nil
}

// Launch starts the child in n's namespace with the domain name of xml and
// waits until its libvirt is open and has probed QEMU, so that Boot is
// libvirt's define and start alone.
func (g *Guest) Launch(ctx context.Context, n *Net, name, xml string, timeout time.Duration) error {
	if g.cmd != nil {
		return fmt.Errorf("raw libvirt of %s: launched already", g.name)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	spec, err := json.Marshal(childSpec{Root: g.root, Name: name, XML: xml})
	if err != nil {
		return err
	}
	log, err := os.Create(g.childLog)
	if err != nil {
		return err
	}
	defer log.Close()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer stdinR.Close()
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinW.Close()
		return err
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
		return fmt.Errorf("start raw libvirt's process: %w", err)
	}
	// From here on Stop has something to stop, and the QEMU of name to kill
	// should the child die without destroying it.
	g.cmd, g.name, g.stdin, g.exited, g.lines = cmd, name, stdinW, make(chan struct{}), make(chan string, 2)
	go func() {
		g.waitErr = cmd.Wait()
		close(g.exited)
	}()
	go func() {
		defer stdoutR.Close()
		s := bufio.NewScanner(stdoutR)
		for s.Scan() {
			select {
			case g.lines <- s.Text():
			default: // nobody waits for more than the protocol's lines
			}
		}
		_, _ = io.Copy(io.Discard, stdoutR)
	}()
	return g.await(ctx, readyLine, "open libvirt", timeout)
}

// Boot defines and starts the domain and returns once it runs.
func (g *Guest) Boot(ctx context.Context, timeout time.Duration) error {
	if g.cmd == nil {
		return fmt.Errorf("raw libvirt: boot before launch")
	}
	if _, err := fmt.Fprintln(g.stdin, bootLine); err != nil {
		return fmt.Errorf("raw libvirt of %s: %w", g.name, err)
	}
	return g.await(ctx, runningLine, "start the domain", timeout)
}

// Start launches the child and boots the domain.
func (g *Guest) Start(ctx context.Context, n *Net, name, xml string, timeout time.Duration) error {
	if err := g.Launch(ctx, n, name, xml, timeout); err != nil {
		return err
	}
	return g.Boot(ctx, timeout)
}

// await waits for the child's line want.
func (g *Guest) await(ctx context.Context, want, what string, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		select {
		case l := <-g.lines:
			if l == want {
				return nil
			}
		case <-g.exited:
			return fmt.Errorf("raw libvirt exited before it could %s (%v): %s", what, g.waitErr, g.ChildLog(600))
		case <-deadline:
			return fmt.Errorf("raw libvirt did not %s within %s: %s", what, timeout, g.ChildLog(600))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Exited is closed once the child has exited; ExitErr is then its
// wait status.
func (g *Guest) Exited() <-chan struct{} { return g.exited }

// ExitErr is the child's wait status once Exited is closed.
func (g *Guest) ExitErr() error { return g.waitErr }

// ChildLog is the end (n bytes at most) of the child's log, for errors.
func (g *Guest) ChildLog(n int) string { return tail(g.childLog, n) }

// PIDFile is where libvirt keeps the domain's QEMU's pid.
func (g *Guest) PIDFile() string {
	return filepath.Join(g.root, "run", "qemu", g.name+".pid")
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

// Stop ends the child, which destroys the domain, kills a QEMU that
// outlived it, and removes the directory; it tolerates a partial start
// and a second call.
func (g *Guest) Stop() error {
	var errs []error
	if g.cmd != nil {
		g.stdin.Close()
		select {
		case <-g.exited:
			if g.waitErr != nil {
				errs = append(errs, fmt.Errorf("raw libvirt: %w: %s", g.waitErr, g.ChildLog(600)))
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
	errs = append(errs, os.RemoveAll(g.Dir))
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
