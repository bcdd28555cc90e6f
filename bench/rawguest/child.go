package rawguest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"kubevirt.dev/virt/launcher/hypervisor"
)

// childEnv carries the domain to the child process; its presence makes
// the process the child (IsChild).
const childEnv = "VIRT_BENCH_RAW_LIBVIRT"

// The child's protocol: it says readyLine on stdout once its libvirt is
// open and has probed QEMU, defines and starts the domain when bootLine
// comes on stdin, says runningLine once the domain runs, and destroys it
// when stdin ends or on SIGTERM.
const (
	readyLine   = "ready"
	bootLine    = "boot"
	runningLine = "running"
)

// childSpec is the domain the child defines and starts.
type childSpec struct {
	// Root is the embedded libvirt's root directory.
	Root string
	Name string
	XML  string
}

// IsChild says whether this process is a raw guest's libvirt: the bench
// re-executes its own binary for it inside the plain tap's namespace, and
// main (or a test's TestMain) must then call ChildMain and nothing else.
func IsChild() bool {
	_, ok := os.LookupEnv(childEnv)
	return ok
}

// ChildMain runs the raw guest's embedded libvirt (see the protocol
// above) and returns the exit code.
func ChildMain() int {
	if err := runChild(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "raw libvirt:", err)
		return 1
	}
	return 0
}

func runChild(stdin io.Reader, stdout io.Writer) (err error) {
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
	// The host's capabilities make libvirt probe QEMU (seconds on a fresh
	// root), which a running libvirtd has long done: before anyone times
	// the define and start.
	if _, err := conn.Info(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(stdout, readyLine); err != nil {
		return err
	}
	// Lines from stdin until it ends, which closes lines.
	lines := make(chan string)
	go func() {
		s := bufio.NewScanner(stdin)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		if !ok {
			return nil
		}
		if l != bootLine {
			return fmt.Errorf("want %q on stdin, got %q", bootLine, l)
		}
	case <-term:
		return nil
	}
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
	for {
		select {
		case _, ok := <-lines:
			if !ok {
				return nil
			}
		case <-term:
			return nil
		}
	}
}
