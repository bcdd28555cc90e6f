package hypervisor

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// The private libvirtd of a migration target.
//
// An embedded driver (qemu:///embed) can send a guest away but cannot
// receive one: nothing can connect to it. A target launcher therefore runs
// libvirt's monolithic daemon as its own user, for itself only:
//
//   - unprivileged (the pod's uid, no capabilities): its QEMU driver is the
//     session driver, its state under the XDG directories pointed into the
//     daemon's root (Daemon.Root), as short as they can be since QEMU's
//     monitor and agent sockets end up below them;
//   - only the QEMU driver: LIBVIRT_DRIVER_DIR names a directory holding
//     nothing but it, so no network, storage or nwfilter driver starts (and
//     none touches the pod's network);
//   - a random host_uuid: libvirt refuses a migration between two ends with
//     the same host UUID, which two pods of one node with readable DMI have;
//   - its one socket is the launcher's: the launcher binds the path (mode
//     0600, owner the pod's uid) and hands the listening descriptor over by
//     systemd's socket activation protocol (LISTEN_FDS). With activation,
//     libvirtd creates no socket of its own (no read-only, no admin
//     socket) and listens on no TCP port;
//   - QEMU's output to a file (stdio_handler "file"): no virtlogd runs.

// Daemon is a running private libvirtd.
type Daemon struct {
	// Root holds the daemon's configuration and state.
	Root string
	// Socket is the daemon's RPC socket.
	Socket string
	// Seeded is what went into its capabilities cache
	// (DaemonConfig.CapabilitiesSeedDir).
	Seeded Seeded
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// DaemonConfig says where and how to run a private libvirtd.
type DaemonConfig struct {
	// Binary is libvirtd; empty: DaemonBinary.
	Binary string
	// Root is the daemon's directory (created).
	Root string
	// Socket is where the daemon listens (its directory must exist).
	Socket string
	// CapabilitiesSeedDir, when set, seeds the daemon's QEMU capabilities
	// cache (SeedCapabilities).
	CapabilitiesSeedDir string
	// Stderr receives the daemon's log (errors and warnings).
	Stderr *os.File
}

// DaemonBinary is where Debian installs libvirtd (a variable for tests).
var DaemonBinary = "/usr/sbin/libvirtd"

// DaemonURI is the URI of the private daemon listening on socket: its
// (unprivileged) QEMU driver, reached through that socket and nowhere else.
// A migration source gives it to libvirt as the destination.
func DaemonURI(socket string) string {
	return "qemu+unix:///session?socket=" + url.QueryEscape(socket)
}

// daemonDirs are the XDG directories of the daemon below its root; libvirt
// appends libvirt/... to each.
func daemonDirs(root string) (runtime, config, cache string) {
	return root, filepath.Join(root, "etc"), filepath.Join(root, "cache")
}

// DaemonQEMULogDir is where the daemon's QEMU driver writes each domain's
// QEMU log (<name>.log).
func DaemonQEMULogDir(root string) string {
	_, _, cache := daemonDirs(root)
	return filepath.Join(cache, "libvirt", "qemu", "log")
}

// DaemonQEMUPidDir is where the daemon's QEMU driver keeps each domain's
// pid file.
func DaemonQEMUPidDir(root string) string {
	runtime, _, _ := daemonDirs(root)
	return filepath.Join(runtime, "libvirt", "qemu", "run")
}

// StartDaemon starts the private libvirtd and returns once it answers on
// its socket, or fails when it does not within timeout.
func StartDaemon(ctx context.Context, cfg DaemonConfig, timeout time.Duration) (*Daemon, error) {
	if cfg.Binary == "" {
		cfg.Binary = DaemonBinary
	}
	if _, err := os.Stat(cfg.Binary); err != nil {
		return nil, fmt.Errorf("private libvirtd: %w (the launcher image lacks the libvirt-daemon package)", err)
	}
	module := driverModule()
	if module == "" {
		return nil, fmt.Errorf("private libvirtd: libvirt's QEMU driver module not found")
	}
	runtime, config, cache := daemonDirs(cfg.Root)
	drivers := filepath.Join(cfg.Root, "drivers")
	for _, d := range []string{runtime, filepath.Join(config, "libvirt"), cache, drivers} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("private libvirtd: %w", err)
		}
	}
	link := filepath.Join(drivers, filepath.Base(module))
	if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("private libvirtd: %w", err)
	}
	if err := os.Symlink(module, link); err != nil {
		return nil, fmt.Errorf("private libvirtd: %w", err)
	}
	hostUUID, err := randomUUID()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(config, "libvirt", "libvirtd.conf")
	if err := os.WriteFile(conf, []byte(daemonConf(hostUUID)), 0o600); err != nil {
		return nil, fmt.Errorf("private libvirtd: %w", err)
	}
	qemuConf := QEMUConf(os.Getuid(), os.Getgid())
	if err := os.WriteFile(filepath.Join(config, "libvirt", "qemu.conf"), []byte(qemuConf), 0o600); err != nil {
		return nil, fmt.Errorf("private libvirtd: %w", err)
	}
	var seeded Seeded
	if cfg.CapabilitiesSeedDir != "" {
		// Only slower when it fails: libvirt probes QEMU itself.
		seeded, _ = seedCache(cfg.CapabilitiesSeedDir, filepath.Join(cache, "libvirt", "qemu", "cache", "capabilities"), cfg.Binary)
	}

	lis, err := listenUnixPrivate(cfg.Socket)
	if err != nil {
		return nil, fmt.Errorf("private libvirtd: %w", err)
	}
	f, err := lis.File()
	lis.Close()
	if err != nil {
		os.Remove(cfg.Socket)
		return nil, fmt.Errorf("private libvirtd: %w", err)
	}
	defer f.Close()

	// LISTEN_PID must be the daemon's own pid, known only after the fork:
	// a shell sets it and execs the daemon in its place.
	cmd := exec.Command("/bin/sh", "-c", `LISTEN_PID=$$ exec "$0" "$@"`, cfg.Binary, "--config", conf)
	cmd.ExtraFiles = []*os.File{f}
	cmd.Env = []string{
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + cfg.Root,
		"XDG_RUNTIME_DIR=" + runtime,
		"XDG_CONFIG_HOME=" + config,
		"XDG_CACHE_HOME=" + cache,
		"LIBVIRT_DRIVER_DIR=" + drivers,
		"LISTEN_FDS=1",
		"LISTEN_FDNAMES=libvirtd.socket",
		// No desktop session, no logind: nothing to tie the daemon to.
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent",
		"DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent",
	}
	cmd.Env = append(cmd.Env, libvirtLogEnv()...)
	cmd.Stdout, cmd.Stderr = cfg.Stderr, cfg.Stderr
	// Its own process group: a signal to the launcher's group (a terminal's
	// ^C in a test) is the launcher's to handle, and the launcher stops the
	// daemon itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.Remove(cfg.Socket)
		return nil, fmt.Errorf("start private libvirtd: %w", err)
	}
	d := &Daemon{Root: cfg.Root, Socket: cfg.Socket, Seeded: seeded, cmd: cmd, exited: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.exited)
	}()
	if err := d.waitAnswering(ctx, timeout); err != nil {
		d.Stop()
		return nil, err
	}
	return d, nil
}

// waitAnswering waits for the daemon to have initialised its drivers: a
// connection opens and names its QEMU driver.
func (d *Daemon) waitAnswering(ctx context.Context, timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		select {
		case <-d.exited:
			return false, fmt.Errorf("private libvirtd exited while starting: %v", d.err)
		default:
		}
		conn, err := Open(DaemonURI(d.Socket))
		if err == nil {
			_, err = conn.conn.GetType()
			conn.Close()
		}
		last = err
		return err == nil, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("private libvirtd did not answer within %v: %w", timeout, last)
	}
	return err
}

// Exited is closed when the daemon has exited; Err then says how.
func (d *Daemon) Exited() <-chan struct{} { return d.exited }

// Err is how the daemon exited, once Exited is closed.
func (d *Daemon) Err() error {
	select {
	case <-d.exited:
		if d.err == nil {
			return errors.New("private libvirtd exited")
		}
		return fmt.Errorf("private libvirtd exited: %w", d.err)
	default:
		return nil
	}
}

// Stop ends the daemon (SIGTERM, then SIGKILL after 10 s) and removes its
// socket. Its QEMU processes are not its children's lifetime: a running
// guest survives the daemon as it would survive a daemon restart.
func (d *Daemon) Stop() {
	select {
	case <-d.exited:
	default:
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(10 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
	}
	os.Remove(d.Socket)
}

// daemonConf is the private daemon's libvirtd.conf.
func daemonConf(hostUUID string) string {
	return fmt.Sprintf(`# Written by virt-launcher (--migration-target); see docs/migration.md.
# Distinct from every other libvirt's: libvirt refuses to migrate between two
# ends with the same host UUID.
host_uuid = "%s"
# The socket is the launcher's (socket activation, mode 0600, the pod's uid);
# only the node's migration proxy and the launcher reach it.
auth_unix_rw = "none"
auth_unix_ro = "none"
# Errors and warnings to the launcher container's log.
log_outputs = "3:stderr"
`, hostUUID)
}

func randomUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("host UUID: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// listenUnixPrivate binds a unix socket that appears at path with mode
// 0600 already (bound under a temporary name, restricted, renamed).
func listenUnixPrivate(path string) (*net.UnixListener, error) {
	tmp := path + ".new"
	os.Remove(tmp)
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, err
	}
	lis.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		lis.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		lis.Close()
		os.Remove(tmp)
		return nil, err
	}
	return lis, nil
}

// libvirtLogEnv is the launcher's libvirt log settings (LIBVIRT_LOG_FILTERS,
// LIBVIRT_LOG_OUTPUTS: the VMI's debug-log annotation, docs/launcher.md),
// passed on to the private libvirtd, whose own configuration they override:
// the daemon logs what the embedded driver would.
func libvirtLogEnv() []string {
	var env []string
	for _, k := range []string{"LIBVIRT_LOG_FILTERS", "LIBVIRT_LOG_OUTPUTS"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
